# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubernetes-csi sidecars of a CSI controller Deployment: their workers, QPS and burst (csi_sidecar_tuning).

Several containers of one Deployment go through the tuning engine (k8s/tuning.py) in one patch; a sidecar is
picked by container name, else by image base name, because drivers name them freely ("attacher").
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    TUNING_FLAGS,
    ContainerArgsError,
    operator_managed,
    pick_container,
    validate_tuning,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.tuning import (
    DeploymentTuning,
    Tunable,
)


def refuse_sidecars(sidecars: list[dict[str, Any]], state: str) -> None:
    """Before any request: the list not empty, each sidecar once, and (state present) valid values set in each."""
    names = [s["name"] for s in sidecars]
    if not names:
        raise ContainerArgsError("sidecars is empty: list at least one sidecar, e.g. [{name: csi-provisioner, worker_threads: 25}]")
    if len(set(names)) != len(names):
        raise ContainerArgsError("sidecars names the same sidecar twice (%s): merge its settings into one entry" % ", ".join(names))
    if state != "present":
        return
    errors = []
    for s in sidecars:
        errors.extend(validate_tuning(s, where="sidecars[%s]" % s["name"]))
        if all(s.get(opt) is None for opt, _ in TUNING_FLAGS):
            errors.append("sidecars[%s] sets nothing: give worker_threads, kube_api_qps or kube_api_burst, or use "
                          "state=absent to remove them" % s["name"])
    if errors:
        raise ContainerArgsError("; ".join(errors), errors=errors)


def _find(name: str, namespace: str) -> Callable[[Client], dict[str, Any]]:
    def find(client: Client) -> dict[str, Any]:
        dep = client.get("apps/v1", "Deployment", name, namespace=namespace, missing_ok=True)
        if dep is None:
            raise ContainerArgsError("Deployment %s/%s not found: give the name and namespace of the CSI controller "
                                     "Deployment (kubectl get deploy -A | grep csi)" % (namespace, name))
        return dep
    return find


def _report(outcome: dict[str, Any]) -> dict[str, Any]:
    result = dict(changed=outcome["changed"], rollout=outcome["rollout"], sidecars=outcome["containers"])
    if "diff" in outcome:
        result["diff"] = outcome["diff"]
    return result


def tune_sidecars(client: Client, params: Mapping[str, Any], check_mode: bool = False, diff: bool = False,
                  warn: Callable[[str], object] | None = None) -> dict[str, Any]:
    """Set (state present) or remove (absent) the listed sidecars' flags in one patch; wait; check."""
    refuse_sidecars(params["sidecars"], params["state"])
    targets = [Tunable(s["name"], lambda dep, s=s: pick_container(dep, [s["name"]], image_hint=s["name"]), s,
                       where="sidecars[%s]" % s["name"]) for s in params["sidecars"]]

    def warn_operator(dep: dict[str, Any], outcome: dict[str, Any]) -> None:
        if warn is not None and outcome["changed"] and operator_managed(dep):
            md = dep["metadata"]
            warn("Deployment %s/%s is managed by an operator (ownerReferences or Trident labels); it may revert these "
                 "arguments. For Trident, set k8s_api_qps with storageperf.k8s.trident_concurrency."
                 % (md["namespace"], md["name"]))

    run = DeploymentTuning(client, _find(params["name"], params["namespace"]), targets, params["state"],
                           check_mode=check_mode, diff=diff, report=_report, on_patched=warn_operator)
    return run.run(wait=params["wait"], wait_timeout=params["wait_timeout"])
