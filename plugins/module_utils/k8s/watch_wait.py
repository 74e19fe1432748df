# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waits that watch: one object to reach a state, from watch events (no per-object polling), and a
Deployment's rollout. What every wait shares (deadline, backoff, WaitTimeout) is common/waiter.py.

`wait_for` reads the object once, and if it is not there yet it watches it from that read's
resourceVersion until the predicate holds or the deadline passes. A watch that ends (server
timeout, 410 Gone) is restarted from a fresh read, so no change is missed.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import WaitTimeout  # noqa: F401 (re-exported)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client, K8sError


def wait_for(client: Client, api_version: str, kind: str, name: str, namespace: str | None, predicate: Callable[[dict[str, Any] | None], object],
             timeout: float, what: str = "the expected state") -> dict[str, Any] | None:
    """Return the first version of the object for which predicate(obj) is true (obj may be None: deleted)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        obj = client.get(api_version, kind, name, namespace=namespace, missing_ok=True)
        last = obj
        if predicate(obj):
            return obj
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        rv = (obj or {}).get("metadata", {}).get("resourceVersion")
        try:
            for etype, ev_obj, _ in client.watch(api_version, kind, namespace=namespace,
                                                 field_selector="metadata.name=%s" % name,
                                                 resource_version=rv,
                                                 timeout_seconds=max(1, int(min(remaining, 60)) + 1)):
                if etype == "ERROR":
                    break  # 410 Gone or similar: re-read and watch again
                if etype == "BOOKMARK":
                    continue
                last = None if etype == "DELETED" else ev_obj
                if predicate(last):
                    return last
                if time.monotonic() >= deadline:
                    break
        except K8sError:
            time.sleep(0.2)
        if time.monotonic() >= deadline:
            break
    raise WaitTimeout("%s %s did not reach %s within %s s" % (kind, _qualified(namespace, name), what, timeout), last)


def _qualified(namespace: str | None, name: str) -> str:
    return "%s/%s" % (namespace, name) if namespace else name


def rollout_status(deployment: dict[str, Any] | None) -> tuple[bool, str]:
    """(done, message) for a Deployment, by the rules of `kubectl rollout status`."""
    if not deployment:
        return False, "the Deployment is gone"
    md = deployment.get("metadata", {})
    spec = deployment.get("spec", {})
    status = deployment.get("status") or {}
    want = spec.get("replicas", 1)
    if status.get("observedGeneration", 0) < md.get("generation", 0):
        return False, "waiting for the deployment spec update to be observed"
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            return False, "deployment exceeded its progress deadline: %s" % cond.get("message", "")
    updated = status.get("updatedReplicas", 0)
    if updated < want:
        return False, "%d of %d updated replicas are available" % (updated, want)
    if status.get("replicas", 0) > updated:
        return False, "%d old replicas are pending termination" % (status.get("replicas", 0) - updated)
    available = status.get("availableReplicas", status.get("readyReplicas", 0))
    if available < updated or status.get("readyReplicas", 0) < want:
        return False, "%d of %d updated replicas are ready" % (status.get("readyReplicas", 0), updated)
    return True, "successfully rolled out"


def wait_for_rollout(client: Client, name: str, namespace: str | None, timeout: float,
                     extra: Callable[[dict[str, Any] | None], object] | None = None) -> dict[str, Any]:
    """Wait until the Deployment is rolled out (and extra(deployment) holds, if given); return it."""
    def done(obj: dict[str, Any] | None) -> object:
        return rollout_status(obj)[0] and (extra is None or extra(obj))

    try:
        # ignore: done() holds for no None (a Deployment that is gone is not rolled out)
        return wait_for(client, "apps/v1", "Deployment", name, namespace, done, timeout, "a finished rollout")  # type: ignore[return-value]
    except WaitTimeout as e:
        e.msg += ": %s" % rollout_status(e.last)[1]
        raise
