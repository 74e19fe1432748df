"""Helpers of the storage control plane tests: the twin's admin door and waiting on real API objects."""
from __future__ import annotations

import json
import ssl
import time
import urllib.request
from pathlib import Path
from typing import Any
from collections.abc import Callable

from tests.support.twin import Twin

ATTACH_STRESS = Path(__file__).resolve().parents[2] / "benchmarks" / "attach-stress.yaml"
DISK = "diskplugin.csi.alibabacloud.com"


def admin(twin: Twin, verb: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """POST /_twin/<verb> with the twin's token (cloud state, storage figures, faults)."""
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(f"{twin.server}/_twin/{verb}", data=json.dumps(body or {}).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {twin.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.loads(r.read())


def storage(twin: Twin, only: str, **body: Any) -> dict[str, Any]:
    return admin(twin, "storage", dict(body, only=[only]))[only]


def wait_for(what: str, fn: Callable[[], Any], timeout: float = 60.0, every: float = 0.05) -> Any:
    """Poll fn until it returns something truthy; fail naming `what` after timeout (a bound, not a measurement).

    Only for state that no watch shows (the twin's own counters behind /_twin/storage, or a predicate over
    several objects); an API object's phase, condition or deletion is awaited with kube_wait, an event with
    wait_event."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def kube_wait(twin: Twin, condition: str, *objects: str, namespace: str | None = "default", bound: int = 120) -> None:
    """`kubectl wait --for=<condition> <objects>`: kubectl watches; the bound is for a hang, not a measurement."""
    ns = ["-n", namespace] if namespace else []
    twin.kubectl("wait", *ns, f"--for={condition}", *objects, f"--timeout={bound}s", timeout=bound + 60)


def wait_event(twin: Twin, name: str, reason: str, namespace: str = "default", count: int = 1,
               bound: int = 120) -> list[dict[str, Any]]:
    """Until `count` events `reason` about `name` exist (a list, then a watch from its resourceVersion); returns
    them as kubectl shows them."""
    from kubernetes import client

    from tests.support.waits import watch_until

    core = client.CoreV1Api(twin.api_client())
    watch_until(core.list_namespaced_event, lambda evs: len(evs) >= count, f"{count} {reason} event(s) about {name}",
                namespace, field_selector=f"involvedObject.name={name},reason={reason}", bound=bound)
    return [e for e in events(twin, reason, namespace) if e["involvedObject"]["name"] == name]


def events(twin: Twin, reason: str, namespace: str = "default") -> list[dict[str, Any]]:
    return [e for e in twin.kubectl_json("get", "events", "-n", namespace)["items"] if e.get("reason") == reason]


def pvc_manifest(name: str, sc: str, size: str = "1Gi", source: dict[str, Any] | None = None,
                 mode: str = "ReadWriteOnce") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": [mode], "storageClassName": sc, "resources": {"requests": {"storage": size}}}
    if source:
        spec["dataSource"] = source
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}


def apply(twin: Twin, *objs: dict[str, Any]) -> None:
    import yaml

    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(list(objs)))


def phase(twin: Twin, kind: str, name: str, namespace: str = "default") -> str | None:
    p = twin.kubectl("get", kind, name, "-n", namespace, "-o", "jsonpath={.status.phase}", check=False)
    return p.stdout if p.returncode == 0 else None


def gone(twin: Twin, kind: str, name: str, namespace: str | None = "default") -> bool:
    args = ["get", kind, name] + (["-n", namespace] if namespace else [])
    return twin.kubectl(*args, check=False).returncode != 0


def enable_parallel_attach(twin: Twin, tag: bool = True) -> None:
    """What the seed's enable script does, through the twin's cloud door: gates on both addons (+ the ECS tag)."""
    if tag:
        admin(twin, "cloud", {"instance": "all", "tags": {"supportConcurrencyAttach": "true"}})
    admin(twin, "cloud", {"addon": "managed-csiprovisioner", "feature_gates": "DiskADController=true,DiskParallelAttach=true"})
    admin(twin, "cloud", {"addon": "csi-plugin", "feature_gates": "DiskADController=true"})
