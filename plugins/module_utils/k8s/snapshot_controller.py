# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Finding the external-snapshotter's snapshot-controller Deployment and its container.

Shared by snapshot_controller_tuning (which edits its flags through `tune`) and the tuning advisor (which
only reads them).
"""
from __future__ import annotations

from typing import Any, Mapping


from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    TUNING_FLAGS,
    ContainerArgsError,
    pick_container,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.tuning import DeploymentTuning, Tunable, refuse_settings

LABEL_SELECTORS = ("app.kubernetes.io/name=snapshot-controller", "app=snapshot-controller")
FALLBACK = ("kube-system", "snapshot-controller")
CONTAINER = "snapshot-controller"


class SnapshotControllerMissing(ContainerArgsError):
    """No snapshot-controller Deployment where one was looked for (as opposed to an ambiguous one)."""


def find_deployment(client: Client, name: str | None, namespace: str | None) -> dict[str, Any]:
    """The snapshot-controller Deployment: by name, else by label, else kube-system/snapshot-controller."""
    if name:
        ns = namespace or FALLBACK[0]
        dep = client.get("apps/v1", "Deployment", name, namespace=ns, missing_ok=True)
        if dep is None:
            raise SnapshotControllerMissing("Deployment %s/%s not found: check name and namespace (omit both to let "
                                            "the module find the snapshot-controller by its labels)" % (ns, name))
        return dep
    for selector in LABEL_SELECTORS:
        items, _ = client.list("apps/v1", "Deployment", namespace=namespace, label_selector=selector)
        if len(items) == 1:
            return items[0]
        if len(items) > 1:
            raise ContainerArgsError("several Deployments match %s: %s; set name and namespace to choose one" % (
                selector, ", ".join("%s/%s" % (d["metadata"]["namespace"], d["metadata"]["name"]) for d in items)))
    dep = client.get("apps/v1", "Deployment", FALLBACK[1], namespace=namespace or FALLBACK[0], missing_ok=True)
    if dep is None:
        raise SnapshotControllerMissing(
            "no snapshot-controller Deployment found (labels %s, or %s/%s): install the external-snapshotter's "
            "snapshot-controller, or set name and namespace" % (" or ".join(LABEL_SELECTORS), namespace or FALLBACK[0],
                                                                FALLBACK[1]))
    return dep


def pick_snapshot_container(deployment: dict[str, Any], container: str | None = None) -> tuple[int, dict[str, Any]]:
    """(index, container): the named one, else the snapshot-controller by name or image, else the only one."""
    if container:
        return pick_container(deployment, [container])
    return pick_container(deployment, [CONTAINER], image_hint=CONTAINER, only_fallback=True)


# the snapshot_controller_tuning module ------------------------------------------------------------------
def _report(outcome: dict[str, Any]) -> dict[str, Any]:
    """The module's result: one container, its settings at the top level."""
    result = dict(changed=outcome["changed"], rollout=outcome["rollout"])
    if outcome["deployment"]:
        result["deployment"] = outcome["deployment"]
    for step in outcome["containers"].values():
        result.update(container=step["container"], before=step["before"], after=step["after"], args=step["args"])
        if "running" in step:
            result["running"] = step["running"]
    if "diff" in outcome:
        result["diff"] = outcome["diff"]
    return result


def tune(client: Client, params: Mapping[str, Any], check_mode: bool = False, diff: bool = False) -> dict[str, Any]:
    """Set (state present) or remove (absent) the snapshot-controller's workers, QPS and burst; wait; check."""
    settings = {opt: params[opt] for opt, _ in TUNING_FLAGS}
    target = Tunable(CONTAINER, lambda dep: pick_snapshot_container(dep, params["container"]), settings)
    refuse_settings([target], params["state"])
    run = DeploymentTuning(client, lambda c: find_deployment(c, params["name"], params["namespace"]), [target],
                           params["state"], check_mode=check_mode, diff=diff, report=_report)
    return run.run(wait=params["wait"], wait_timeout=params["wait_timeout"])
