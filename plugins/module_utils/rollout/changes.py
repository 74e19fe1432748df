# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The changes a rollout can make, and the probe that proves each: the one table.

A probe is the benchmark of the seed that motivates the change, sized small and repeated, so that the gate has
several repetitions on both sides (docs/rollout.md, "Probes"). `repeat` repetitions before the change;
after it `warmup` repetitions the gate does not weigh (the change settling: the first repetition after Trident's
restart was 25 to 60 % slower than the next ones) and `repeat_after` it does. 3 a side is the shape whose error
rates docs/rollout-gate.md publishes; 2 before and 5 after gave no more power in its simulation (the baseline's
spread then rests on one degree of freedom) and cost a third more probe time. `steps` are the benchmark steps it
runs, ALL for every step of the benchmark's own list (probe() spells them out from the benchmark table); `judged`
the ones the gate weighs, the steps the change is expected to speed up.
`tuning` is the advisor's name for the change (tuning_advice), whose expected_speedup the gate asks for.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import (
    SEED002_SIDECARS, SEED002_SNAPSHOT_CONTROLLER)

# every step of the probe's benchmark, in its order (its STEPS)
ALL = None
# The steps Trident's controller serves with the external-provisioner and -attacher alone. Snapshots also pass the
# snapshot-controller, whose default QPS 5 / burst 10 hides concurrency's gain there (seed 002): they are the
# snapshot_controller change's to prove.
TRIDENT_JUDGED = ["create_volume", "publish", "unpublish", "clone_from_snapshot", "delete_clone", "delete_volume"]

# the probe's StorageClass is the benchmark role's variable
PROBE_CLASS = ("role", "bench_csi_lifecycle", "bench_csi_lifecycle_storage_class")

CHANGES: dict[str, dict[str, Any]] = {
    "trident_concurrency": {
        "tuning": "trident_concurrency",
        "what": "Trident's concurrent core (TridentOrchestrator spec.enableConcurrency)",
        "probe": {"benchmark": "csi_lifecycle", "volumes": 20, "repeat": 3, "repeat_after": 3, "warmup": 1,
                  "steps": ALL, "judged": TRIDENT_JUDGED},
        "parameters": {"allow_tech_preview": False, "k8s_api_qps": 0, "trident_namespace": "",
                       "storage_class": "ontap-nas"},
        # what applies each parameter, whose argument spec checks it (plugins/plugin_utils/change_specs.py)
        "spec": {"allow_tech_preview": ("role", "trident_concurrency", "trident_concurrency_allow_tech_preview"),
                 "k8s_api_qps": ("role", "trident_concurrency", "trident_concurrency_k8s_api_qps"),
                 "trident_namespace": ("role", "trident_concurrency", "trident_concurrency_namespace"),
                 "storage_class": PROBE_CLASS},
    },
    "snapshot_controller": {
        "tuning": "snapshot_controller_tuning",
        "what": "the snapshot-controller's worker threads, QPS and burst",
        "probe": {"benchmark": "csi_lifecycle", "volumes": 20, "repeat": 3, "repeat_after": 3, "warmup": 1,
                  "steps": ["create_volume", "create_snapshot", "delete_snapshot", "delete_volume"],
                  "judged": ["create_snapshot", "delete_snapshot"]},
        "parameters": dict(SEED002_SNAPSHOT_CONTROLLER, storage_class="ontap-nas"),
        "spec": {"worker_threads": ("role", "snapshot_controller_tuning", "snapshot_controller_tuning_worker_threads"),
                 "kube_api_qps": ("role", "snapshot_controller_tuning", "snapshot_controller_tuning_kube_api_qps"),
                 "kube_api_burst": ("role", "snapshot_controller_tuning", "snapshot_controller_tuning_kube_api_burst"),
                 "storage_class": PROBE_CLASS},
        "rates": ["worker_threads", "kube_api_qps", "kube_api_burst"],
    },
    "csi_sidecars": {
        "tuning": "csi_sidecar_tuning",
        "what": "the CSI sidecars' worker threads, QPS and burst in one CSI controller Deployment",
        "probe": {"benchmark": "csi_lifecycle", "volumes": 20, "repeat": 3, "repeat_after": 3, "warmup": 1,
                  "steps": ["create_volume", "publish", "unpublish", "delete_volume"],
                  "judged": ["create_volume", "publish", "unpublish", "delete_volume"]},
        "parameters": {"csi_deployment": "", "csi_namespace": "", "storage_class": "",
                       "sidecars": [dict(name=sidecar, **SEED002_SIDECARS) for sidecar in ("csi-provisioner", "csi-attacher")]},
        "required": ["csi_deployment", "csi_namespace", "storage_class"],
        "spec": {"csi_deployment": ("module", "csi_sidecar_tuning", "name"),
                 "csi_namespace": ("module", "csi_sidecar_tuning", "namespace"),
                 "sidecars": ("module", "csi_sidecar_tuning", "sidecars"),
                 "storage_class": PROBE_CLASS},
    },
    "parallel_attach": {
        "tuning": "parallel_attach",
        "what": "ACK parallel cloud-disk attach (csi FeatureGates, ECS and node-pool tags)",
        "probe": {"benchmark": "attach_stress", "replicas": 28, "repeat": 3, "repeat_after": 3, "warmup": 1,
                  "steps": ALL, "judged": ["scale_up"]},
        "parameters": {"detach": False},
        "spec": {"detach": ("role", "ack_parallel_attach", "ack_parallel_attach_detach")},
    },
}


class ChangeError(StoragePerfError):
    pass


def get(name: str) -> dict[str, Any]:
    if name not in CHANGES:
        raise ChangeError("change=%r is not a change the rollout makes: use one of %s"
                          % (name, ", ".join(sorted(CHANGES))))
    return CHANGES[name]


def parameters(name: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The change's variables: its defaults overlaid with what was given; unknown or missing ones are refused."""
    row = get(name)
    given = dict(given or {})
    unknown = sorted(set(given) - set(row["parameters"]))
    if unknown:
        raise ChangeError("change_parameters has %s, which %s does not take: its parameters are %s"
                          % (", ".join(unknown), name, ", ".join(sorted(row["parameters"]))))
    out = dict(row["parameters"], **given)
    missing = [k for k in row.get("required", []) if out.get(k) in (None, "", [])]
    if missing:
        raise ChangeError("change %s needs change_parameters %s (e.g. -e '{\"change_parameters\": {\"%s\": ...}}')"
                          % (name, ", ".join(missing), missing[0]))
    return out


def rollout_id(name: str, params: Mapping[str, Any]) -> str:
    """A rollout is its change and the change's parameters: the same two resume the same rollout."""
    digest = hashlib.sha256(json.dumps([name, params], sort_keys=True).encode("utf-8")).hexdigest()
    return "%s-%s" % (name, digest[:8])


def probe(name: str) -> dict[str, Any]:
    """The change's probe as the plan hands it to the rollout role, its steps spelled out."""
    p = dict(get(name)["probe"])
    if p["steps"] is ALL:
        p["steps"] = benchmark_steps(p["benchmark"])
    return p


def benchmark_steps(benchmark: str) -> list[str]:
    """The steps of a benchmark, in its order: its own list (STEPS in bench/<benchmark>.py), never a copy."""
    # imported here: the benchmark table brings the engine and the Kubernetes client, which the advisor and the
    # controller-side check of change_parameters (plugin_utils/change_specs.py) load this table without
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.runner import BENCHMARKS
    return [step for step, _title in BENCHMARKS[benchmark].STEPS]


def probe_text(name: str) -> str:
    p = get(name)["probe"]
    size = "%d volumes" % p["volumes"] if "volumes" in p else "%d pods" % p["replicas"]
    return "%s, %s x %d repetitions before, %d warm-up + %d after; judged on %s" % (
        p["benchmark"], size, p["repeat"], p["warmup"], p["repeat_after"], ", ".join(p["judged"]))
