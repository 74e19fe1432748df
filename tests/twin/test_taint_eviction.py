"""NoExecute taints evict as kube-controller-manager's taint-eviction-controller does: pods that do not tolerate the
taint at once, pods with tolerationSeconds once that much cluster time has passed, pods tolerating it without
tolerationSeconds never; taking the taint off first cancels the timer. Every deletion is a graceful DELETE."""
from __future__ import annotations

import uuid

import pytest
import yaml
from kubernetes import client, watch

from tests.support.twin import Twin

KEY = "maintenance"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("taints") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


@pytest.fixture(scope="module")
def nodes(twin) -> list[str]:
    return sorted(twin.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").stdout.split())


@pytest.fixture
def untaint(twin, nodes):
    yield
    for n in nodes:
        for taint in (f"{KEY}-", "node.kubernetes.io/not-ready:NoExecute-"):
            twin.kubectl("taint", "node", n, taint, check=False)


def pod(name: str, node: str, tolerations: list[dict] | None = None) -> dict:
    spec: dict = {"nodeName": node, "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "inf"]}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"run": name}}, "spec": spec}


def tolerating(seconds: int | None = None, key: str = KEY) -> list[dict]:
    t: dict = {"key": key, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return [t]


def start(twin, *pods: dict) -> None:
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(pods))
    twin.kubectl("wait", "--for=condition=Ready", *(f"pod/{p['metadata']['name']}" for p in pods), "--timeout=60s")


def marked(twin, name: str) -> list[dict]:
    return twin.kubectl_json("get", "events", "--field-selector",
                             f"involvedObject.name={name},reason=TaintManagerEviction")["items"]


def alive(twin, name: str) -> bool:
    out = twin.kubectl("get", "pod", name, "-o", "jsonpath={.metadata.deletionTimestamp}", check=False)
    return out.returncode == 0 and out.stdout == ""


def test_untolerated_at_once_bounded_after_its_seconds_unbounded_never(twin, api, nodes, untaint):
    core = client.CoreV1Api(api)
    tag = uuid.uuid4().hex[:6]
    none, bounded, forever = f"none-{tag}", f"bounded-{tag}", f"forever-{tag}"
    start(twin, pod(none, nodes[0]), pod(bounded, nodes[0], tolerating(300)), pod(forever, nodes[0], tolerating()))

    # watched from before the taint: the eviction is immediate, so it may be over before a later list
    selector = f"metadata.name={none}"
    rv = core.list_namespaced_pod("default", field_selector=selector).metadata.resource_version
    twin.kubectl("taint", "node", nodes[0], f"{KEY}=now:NoExecute")
    seen: list[tuple[bool, object]] = []  # (DisruptionTarget condition, deletionTimestamp) of `none`, per event
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", field_selector=selector, resource_version=rv,
                       timeout_seconds=60):
        p = ev["object"]
        dt = [c for c in p.status.conditions or [] if c.type == "DisruptionTarget"]
        seen.append((bool(dt) and (dt[0].status, dt[0].reason) == ("True", "DeletionByTaintManager"),
                     p.metadata.deletion_timestamp))
        if ev["type"] == "DELETED":
            w.stop()
    assert seen, "no event of the evicted pod"
    # the DELETE was graceful (the pod was seen Terminating) and came after the DisruptionTarget condition
    assert next(dt for dt, ts in seen if ts), seen
    events = marked(twin, none)
    assert [(e["type"], e["message"], e["source"]["component"], e["involvedObject"]["kind"]) for e in events] == \
        [("Normal", f"Marking for deletion Pod default/{none}", "taint-eviction-controller", "Pod")]
    # 300 cluster seconds are 3 s of wall time here: the bounded pod is still there when the first is gone
    assert alive(twin, bounded) and marked(twin, bounded) == []

    twin.kubectl("wait", "--for=delete", f"pod/{bounded}", "--timeout=60s")
    assert [e["message"] for e in marked(twin, bounded)] == [f"Marking for deletion Pod default/{bounded}"]
    assert alive(twin, forever) and marked(twin, forever) == []
    twin.kubectl("delete", "pod", forever, "--wait=true")


def test_taint_removed_before_the_deadline_cancels_the_eviction(twin, api, nodes, untaint):
    tag = uuid.uuid4().hex[:6]
    spared, sentinel = f"spared-{tag}", f"sentinel-{tag}"
    start(twin, pod(spared, nodes[0], tolerating(300)), pod(sentinel, nodes[1], tolerating(300)))
    twin.kubectl("taint", "node", nodes[0], f"{KEY}=soon:NoExecute")
    twin.kubectl("taint", "node", nodes[1], f"{KEY}=soon:NoExecute")  # the sentinel's timer starts after spared's
    twin.kubectl("taint", "node", nodes[0], f"{KEY}-")
    twin.kubectl("wait", "--for=delete", f"pod/{sentinel}", "--timeout=60s")
    # had its timer run, spared would have gone first
    assert alive(twin, spared)
    assert [e["message"] for e in marked(twin, spared)] == [f"Cancelling deletion of Pod default/{spared}"]
    twin.kubectl("delete", "pod", spared, "--wait=true")


def test_not_ready_taint_evicts_after_the_default_toleration_but_keeps_daemon_pods(twin, nodes, untaint):
    """The API server gives every pod not-ready and unreachable tolerations of 300 s (DefaultTolerationSeconds);
    a DaemonSet's pods tolerate both forever."""
    tag = uuid.uuid4().hex[:6]
    plain, ds = f"plain-{tag}", f"agent-{tag}"
    start(twin, pod(plain, nodes[1]))
    assert {t["key"]: t.get("tolerationSeconds") for t in twin.kubectl_json("get", "pod", plain)["spec"]["tolerations"]} \
        == {"node.kubernetes.io/not-ready": 300, "node.kubernetes.io/unreachable": 300}
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": ds},
        "spec": {"selector": {"matchLabels": {"app": ds}}, "template": {"metadata": {"labels": {"app": ds}}, "spec": {
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "inf"]}]}}}}))
    twin.kubectl("rollout", "status", f"ds/{ds}", "--timeout=60s")
    daemon = next(p["metadata"]["name"] for p in twin.kubectl_json("get", "pods", "-l", f"app={ds}")["items"]
                  if p["spec"]["nodeName"] == nodes[1])

    twin.kubectl("taint", "node", nodes[1], "node.kubernetes.io/not-ready:NoExecute")
    twin.kubectl("wait", "--for=delete", f"pod/{plain}", "--timeout=60s")
    assert alive(twin, daemon) and marked(twin, daemon) == []
    st = twin.kubectl_json("get", "ds", ds)["status"]
    assert (st["desiredNumberScheduled"], st["numberMisscheduled"]) == (2, 0)
    twin.kubectl("delete", "ds", ds)
