# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which tunings a cluster has on, which it could turn on, and what blocks the others. Reads only.

Every check is the one the tuning's own module runs before it changes anything (version and driver
preflights, disks without a serial number, finding the Deployments and reading their flags); this file only
turns their answers into one verdict per tuning:
- on: the cluster runs with the tuning;
- available: it is off and nothing the preflight checks stands in the way;
- blocked: it is off (or cannot be told) and the preflight names what stands in the way;
- not_applicable: the cluster lacks what the tuning tunes (no Trident, no ACK cluster id, no PMEM nodes).
The figures each tuning is expected to bring are in tuning_seeds.TUNINGS.
"""
from __future__ import annotations


import copy
from typing import Any, Callable, Iterable, Mapping, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import storage_facts
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem import plugin as pmem
from ansible_collections.storageperf.k8s.plugins.module_utils.trident import concurrency as trident
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.cluster import DISK_DRIVER, describe_ack_cluster
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.parallel_attach import version_problems
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    OPERATOR_HINTS, UPSTREAM_RATE_DEFAULTS, ContainerArgsError, image_basename, operator_managed, tuning_values)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.snapshot_controller import (
    SnapshotControllerMissing, find_deployment, pick_snapshot_container)
from ansible_collections.storageperf.k8s.plugins.module_utils.advice.seeds import ORDER, TUNINGS
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

STATES = ("on", "available", "blocked", "not_applicable")

# Worker threads the kubernetes-csi binaries use without --worker-threads (docs/reference/kubernetes.md, external-snapshotter,
# external-provisioner, external-attacher, external-resizer main.go).
SNAPSHOT_CONTROLLER_DEFAULT_WORKERS = 10
SIDECAR_DEFAULT_WORKERS = {"csi-provisioner": 100, "csi-attacher": 10, "csi-snapshotter": 10, "csi-resizer": 10}
# ack_parallel_attach warns at this DiskQuantity (its disk_quantity_warning default): parallel attach helps little there.
LOW_DISK_QUANTITY = 16
EXAMPLES = 3


def entry(name: str, state: str, reasons: Sequence[str | None] | None = None, current: dict[str, Any] | None = None, expected: str | None = None,
          apply_with: str | None = None, expected_speedup: float | None = None) -> dict[str, Any]:
    """One row of the advice, with the seed's figure (as text and as a number), the seed and the playbook."""
    row = TUNINGS[name]
    return {"name": name, "state": state, "reasons": [r for r in (reasons or []) if r], "current": current or {},
            "recommended": copy.deepcopy(row["recommended"]), "expected": expected or row["expected"],
            "expected_speedup": expected_speedup if expected_speedup is not None else row["expected_speedup"],
            "seed": row["seed"], "apply_with": apply_with or row["apply_with"]}


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None  # e.g. "$(QPS)" from an env var: cannot be told, so it does not count as tuned


def _effective(values: Mapping[str, Any], default_workers: int) -> dict[str, float | None]:
    """The three settings as the binary runs them: the flag's value, else the binary's default."""
    defaults = dict(UPSTREAM_RATE_DEFAULTS, worker_threads=default_workers)
    return {k: _number(v if v is not None else defaults.get(k)) for k, v in values.items()}


def _short_of(effective: Mapping[str, float | None], recommended: Mapping[str, float]) -> list[str]:
    """Settings below the recommendation (an unreadable value counts as below)."""
    return sorted(k for k, want in recommended.items() if effective.get(k) is None or effective[k] < want)  # type: ignore[operator]  # None: .get() above


# ACK parallel disk attach (seed 000) -------------------------------------------------------------------------
def _disk_text(d: Mapping[str, Any]) -> str:
    where = d.get("node_name") or d.get("instance_id") or "no instance"
    users = ", PV %s" % d["pv"] if d.get("pv") else ""
    return "%s on %s%s" % (d["disk_id"], where, users)


def parallel_attach(ack_client: Any, cluster_id: str | None, k8s: Any, facts: Mapping[str, Any]) -> dict[str, Any]:
    name = "parallel_attach"
    if not cluster_id:
        return entry(name, "not_applicable", [
            "no ACK cluster id given (host variable ack_cluster_id, module option cluster_id): parallel disk attach is "
            "an ACK feature, read through the ACK and ECS APIs"])
    info = describe_ack_cluster(ack_client, cluster_id, k8s)
    addons, provisioner, summary = info["addons"], info["provisioner"], info["parallel_attach"]
    reasons = version_problems(info["cluster"], addons, provisioner)
    blocked = bool(reasons)
    legacy = info["disks_without_serial"]
    if legacy:
        blocked = True
        reasons.append("%d disk(s) without a serial number (created before 2020-06-10), e.g. %s: the controller cannot "
                       "attach such a disk again once it is detached; migrate their data to new disks first"
                       % (len(legacy), "; ".join(_disk_text(d) for d in legacy[:EXAMPLES])))
    low = sorted({(n["instance_type"], n["disk_quantity"]) for n in info["nodes"]
                  if n.get("disk_quantity") is not None and n["disk_quantity"] <= LOW_DISK_QUANTITY})
    for itype, quantity in low:
        reasons.append("note: instance type %s attaches at most %s disks, so parallel attach helps little on its nodes"
                       % (itype, quantity))
    current = {
        "cluster_id": info["cluster"].get("cluster_id"),
        "cluster_version": info["cluster"].get("version"),
        "provisioner": provisioner,
        "addons": {a: {"version": addons[a].get("version"), "feature_gate": addons[a].get("feature_gate")}
                   for a in ("csi-plugin", provisioner) if a in addons},
        "controller_gates": summary["controller_gates"], "node_gates": summary["node_gates"],
        "node_pools_tagged": summary["node_pools_tagged"], "node_pools_total": summary["node_pools_total"],
        "instances_tagged": summary["instances_tagged"], "instances_total": summary["instances_total"],
        "disks_without_serial": len(legacy),
        "disk_quantity": {n["instance_type"]: n["disk_quantity"] for n in info["nodes"] if n.get("instance_type")},
        "csi_node_limits": {node: limits.get(DISK_DRIVER) for node, limits in facts["csi_node_limits"].items()
                            if DISK_DRIVER in limits},
    }
    state = "on" if summary["enabled"] else "blocked" if blocked else "available"
    return entry(name, state, reasons, current)


# Trident concurrent core (seed 002) --------------------------------------------------------------------------
def _trident_expected(drivers: list[str]) -> str:
    row = TUNINGS["trident_concurrency"]
    known = [row["expected_by_driver"][d] for d in drivers if d in row["expected_by_driver"]]
    return "%s (seed 002)" % "; ".join(known) if known else row["expected"]


def _trident_expected_speedup(drivers: list[str]) -> float | None:
    """The least speedup among the cluster's drivers: the gate asks a share of it, and the slowest backend sets it."""
    row = TUNINGS["trident_concurrency"]
    known = [row["expected_speedup_by_driver"][d] for d in drivers if d in row["expected_speedup_by_driver"]]
    return min(known) if known else row["expected_speedup"]


def trident_concurrency(k8s: Any, namespace: str | None) -> dict[str, Any]:
    name = "trident_concurrency"
    try:
        install = trident.discover(k8s, namespace)
    except trident.TridentNotInstalled as e:
        return entry(name, "not_applicable", [e.msg])
    except trident.TridentError as e:
        return entry(name, "blocked", [e.msg])
    backends = trident.list_backends(k8s, install.namespace)
    observed = trident.observed(install)
    drivers = sorted({b["driver"] for b in backends if b.get("driver")})
    current = dict(observed, install=install.summary(),
                   backends=[{"name": b["name"], "driver": b.get("driver")} for b in backends])
    if observed["controller_flag"] is not None:
        on = trident.as_bool(observed["controller_flag"])
    else:
        on = trident.as_bool(observed["current_enable_concurrency"])
    reasons, blocked = [], False
    try:
        trident.preflight(install, backends, allow_tech_preview=False)
    except trident.TridentError as e:
        blocked = True
        reasons.append(e.msg)
    apply_with = None
    if install.method == "tridentctl" and not on:
        reasons.append(trident.tridentctl_message(install, True))
        apply_with = "tridentctl install --enable-concurrency (reinstall; see reasons)"
    state = "on" if on else "blocked" if blocked else "available"
    return entry(name, state, reasons, current, expected=_trident_expected(drivers), apply_with=apply_with,
                 expected_speedup=_trident_expected_speedup(drivers))


# snapshot-controller (seed 002, external-snapshotter issue 1344) ----------------------------------------------
def snapshot_controller_tuning(k8s: Any, facts: Mapping[str, Any], trident_installed: bool) -> dict[str, Any]:
    name = "snapshot_controller_tuning"
    row = TUNINGS[name]
    apply_with = row["apply_with"] if trident_installed else row["apply_with_without_trident"]
    try:
        dep = find_deployment(k8s, None, None)
        _index, container = pick_snapshot_container(dep)
    except SnapshotControllerMissing as e:
        reasons = [str(e)]
        if not facts["snapshot_crds_installed"]:
            reasons.append("the VolumeSnapshot CRDs (snapshot.storage.k8s.io/v1) are not installed either")
        return entry(name, "not_applicable", reasons, apply_with=apply_with)
    except ContainerArgsError as e:
        return entry(name, "blocked", [str(e)], apply_with=apply_with)
    values = tuning_values(container)
    effective = _effective(values, SNAPSHOT_CONTROLLER_DEFAULT_WORKERS)
    short = _short_of(effective, row["recommended"])
    md = dep["metadata"]
    current = dict(values, deployment="%s/%s" % (md["namespace"], md["name"]), container=container.get("name"),
                   effective=effective, below_recommended=short)
    return entry(name, "available" if short else "on", [], current, apply_with=apply_with)


# kubernetes-csi sidecars of CSI controller Deployments -------------------------------------------------------
def _sidecar_kind(container: Mapping[str, Any]) -> str | None:
    for candidate in (container.get("name"), image_basename(container.get("image"))):
        if candidate in SIDECAR_DEFAULT_WORKERS:
            return candidate
    return None


TRIDENT_DRIVER = "csi.trident.netapp.io"


def _sidecar_rollout(key: str, dep: Mapping[str, Any], facts: Mapping[str, Any]) -> dict[str, str] | None:
    """The csi_sidecars rollout's change_parameters for Deployment key (namespace/name): its StorageClass is one of
    its driver's (the default first); None where the driver cannot be told from the Deployment (only Trident's
    operator labels its controller)."""
    if (dep["metadata"].get("labels") or {}).get(OPERATOR_HINTS[0]) != OPERATOR_HINTS[1]:
        return None
    classes = sorted((sc for sc in facts.get("storage_classes") or [] if sc.get("provisioner") == TRIDENT_DRIVER),
                     key=lambda sc: (not sc.get("default"), sc["name"]))
    if not classes:
        return None
    namespace, _, name = key.partition("/")
    return {"csi_deployment": name, "csi_namespace": namespace, "storage_class": classes[0]["name"]}


def csi_sidecar_tuning(k8s: Any, facts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    name = "csi_sidecar_tuning"
    row = TUNINGS[name]
    deployments, _rv = k8s.list("apps/v1", "Deployment")
    current, short_deps, reasons = {}, [], []
    for dep in deployments:
        sidecars = {}
        for c in dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []:
            kind = _sidecar_kind(c)
            if kind is None:
                continue
            values = tuning_values(c)
            effective = _effective(values, SIDECAR_DEFAULT_WORKERS[kind])
            sidecars[c["name"]] = dict(values, effective=effective, below_recommended=_short_of(effective, row["recommended"]))
        if not sidecars:
            continue
        md = dep["metadata"]
        key = "%s/%s" % (md["namespace"], md["name"])
        managed = operator_managed(dep)
        current[key] = {"operator_managed": managed, "sidecars": sidecars}
        if any(s["below_recommended"] for s in sidecars.values()):
            short_deps.append((key, dep, managed))
    if not current:
        return entry(name, "not_applicable", [
            "no Deployment in the cluster runs a kubernetes-csi sidecar (%s); managed CSI controllers such as ACK's "
            "managed-csiprovisioner run outside the cluster" % ", ".join(sorted(SIDECAR_DEFAULT_WORKERS))])
    apply_with, state, rollout = None, "on", None
    for key, dep, managed in short_deps:
        state = "available"
        rollout = rollout or _sidecar_rollout(key, dep, facts or {})
        trident_owned = (dep["metadata"].get("labels") or {}).get(OPERATOR_HINTS[0]) == OPERATOR_HINTS[1]
        if trident_owned:
            apply_with = row["apply_with_operator"]
        elif managed:
            state = "blocked"
            reasons.append("Deployment %s is owned by an operator (ownerReferences), which would revert edited "
                           "sidecar flags: change them through that operator's settings" % key)
    out = entry(name, state, reasons, current, apply_with=apply_with)
    if rollout:
        out["rollout_parameters"] = rollout
    return out


# PMEM local volumes (seed 001) -------------------------------------------------------------------------------
def pmem_storageclasses(facts: Mapping[str, Any]) -> dict[str, Any]:
    name = "pmem_storageclasses"
    labelled = [n for n in facts["nodes"] if pmem.TYPE_LABEL in n["labels"]]
    if not labelled:
        return entry(name, "not_applicable", [
            "no node is labelled %s: the cluster has no nodes prepared for persistent memory (PMEM instance types "
            "such as ecs.re6p); storageperf.k8s.deploy_pmem -e nodes=<node,...> prepares them" % pmem.TYPE_LABEL])
    reasons = [pmem.node_type_problem({"metadata": {"name": n["name"], "labels": n["labels"]}}) for n in labelled]
    reasons = [r for r in reasons if r]
    if pmem.DRIVER not in [d["name"] for d in facts["csi_drivers"]]:
        reasons.append("the CSIDriver %s is not installed: install the csi-local-plugin add-on first" % pmem.DRIVER)
    classes = sorted(sc["name"] for sc in facts["storage_classes"]
                     if sc["provisioner"] == pmem.DRIVER and sc["parameters"].get("volumeType") == "PMEM")
    current = {"pmem_nodes": {n["name"]: n["labels"][pmem.TYPE_LABEL] for n in labelled},
               "storageclasses": classes}
    state = "on" if classes else "blocked" if reasons else "available"
    return entry(name, state, reasons, current)


# the whole cluster ------------------------------------------------------------------------------------------
def summarize(tunings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    return {s: sum(1 for t in tunings if t["state"] == s) for s in STATES}


def cluster_uid(k8s: Any) -> str | None:
    """The uid of the kube-system namespace: the cluster's identity for its life (another cluster may reuse the API
    server's address, never this uid); None where the identity may not read namespaces."""
    # here, not at the top: the advisor's other readers never load the client's error classes
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError

    try:
        ns = k8s.get("v1", "Namespace", "kube-system", missing_ok=True)
    except K8sError as e:
        if e.status in (401, 403):
            return None
        raise
    return ((ns or {}).get("metadata") or {}).get("uid")


def advise(k8s: Any, ack_client: Any = None, cluster_id: str | None = None, trident_namespace: str | None = None) -> dict[str, Any]:
    """The advice for one cluster: {"cluster": {server, version, uid}, "tunings": [...], "summary": {state: n}}."""
    facts = storage_facts.gather(k8s)
    by_name = {
        "parallel_attach": parallel_attach(ack_client, cluster_id, k8s, facts),
        "trident_concurrency": trident_concurrency(k8s, trident_namespace),
    }
    by_name["snapshot_controller_tuning"] = snapshot_controller_tuning(
        k8s, facts, by_name["trident_concurrency"]["state"] != "not_applicable")
    by_name["csi_sidecar_tuning"] = csi_sidecar_tuning(k8s, facts)
    by_name["pmem_storageclasses"] = pmem_storageclasses(facts)
    tunings = [by_name[n] for n in ORDER]
    return {"cluster": {"server": facts["api_host"], "version": facts["server_version"]["git_version"],
                        "uid": cluster_uid(k8s)},
            "tunings": tunings, "summary": summarize(tunings)}


def tuning_advice(p: Mapping[str, Any], client_of: Callable[[str], Any]) -> dict[str, Any]:
    """The tuning_advice module: read-only advice; the ACK API is asked only when a cluster id is given.

    client_of(system) builds the module's client of "k8s" or "alibaba" (the module base's client())."""
    cluster_id = (p["cluster_id"] or "").strip() or None
    if not 1 <= p["concurrency"] <= 64:
        raise StoragePerfError("concurrency must be between 1 and 64, got %d" % p["concurrency"])
    k8s = client_of("k8s")
    ack = client_of("alibaba") if cluster_id else None
    return {"changed": False, "advice": advise(k8s, ack, cluster_id, p["trident_namespace"] or None)}
