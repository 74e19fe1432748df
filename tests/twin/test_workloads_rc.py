"""The ReplicationController controller (upstream's ReplicationManager, the ReplicaSet controller on core/v1): it
keeps spec.replicas pods with its controller reference, replaces those that go, and reports replicas,
fullyLabeledReplicas, readyReplicas, availableReplicas and observedGeneration; through kubectl and the Python
client."""
from __future__ import annotations

import json
import re

from tests.twin.kinds_support import row


def _rc(name: str, replicas: int, labels: dict, selector: dict | None = None) -> dict:
    spec = {"replicas": replicas, "template": {"metadata": {"labels": labels},
                                               "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}
    if selector:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name}, "spec": spec}


def _live_pods(twin, ns: str, selector: str) -> list[dict]:
    pods = twin.kubectl_json("get", "pods", "-n", ns, "-l", selector)["items"]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def test_rc_creates_its_pods_and_reports_them(twin, api, ns):
    from kubernetes import client

    core = client.CoreV1Api(api)
    made = core.create_namespaced_replication_controller(ns, _rc("web", 3, {"app": "web"}))
    twin.kubectl("wait", "-n", ns, "rc/web", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=120s")
    rc = core.read_namespaced_replication_controller("web", ns)
    st = rc.status
    assert (st.replicas, st.fully_labeled_replicas, st.ready_replicas, st.available_replicas,
            st.observed_generation) == (3, 3, 3, 3, 1)
    pods = _live_pods(twin, ns, "app=web")
    assert len(pods) == 3
    for p in pods:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", p["metadata"]["name"])
        (ref,) = p["metadata"]["ownerReferences"]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"], ref["blockOwnerDeletion"]) \
            == ("v1", "ReplicationController", "web", made.metadata.uid, True, True)
    assert row(twin, "rc", "web", "-n", ns)[:4] == ["web", "3", "3", "3"]
    events = twin.kubectl_json("get", "events", "-n", ns, "--field-selector", "involvedObject.kind=ReplicationController")
    reasons = [e["reason"] for e in events["items"]]
    assert reasons.count("SuccessfulCreate") == 3


def test_kubectl_scale_rc_and_a_lost_pod_is_replaced(twin, ns):
    twin.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(_rc("sc", 2, {"app": "sc"})))
    twin.kubectl("wait", "-n", ns, "rc/sc", "--for=jsonpath={.status.readyReplicas}=2", "--timeout=120s")
    out = twin.kubectl("scale", "-n", ns, "rc", "sc", "--replicas=4").stdout
    assert "replicationcontroller/sc scaled" in out
    twin.kubectl("wait", "-n", ns, "rc/sc", "--for=jsonpath={.status.readyReplicas}=4", "--timeout=120s")
    rc = twin.kubectl_json("get", "rc", "sc", "-n", ns)
    assert (rc["metadata"]["generation"], rc["status"]["observedGeneration"], rc["status"]["replicas"]) == (2, 2, 4)
    # a precondition that does not hold is refused by kubectl before it scales
    bad = twin.kubectl("scale", "-n", ns, "rc", "sc", "--current-replicas=9", "--replicas=1", check=False)
    assert bad.returncode != 0 and "Expected replicas to be 9, was 4" in bad.stderr

    lost = _live_pods(twin, ns, "app=sc")[0]["metadata"]["name"]
    twin.kubectl("delete", "pod", lost, "-n", ns, "--wait=true")
    twin.kubectl("wait", "-n", ns, "rc/sc", "--for=jsonpath={.status.readyReplicas}=4", "--timeout=120s")
    names = {p["metadata"]["name"] for p in _live_pods(twin, ns, "app=sc")}
    assert len(names) == 4 and lost not in names

    twin.kubectl("scale", "-n", ns, "rc", "sc", "--replicas=1")
    twin.kubectl("wait", "-n", ns, "rc/sc", "--for=jsonpath={.status.replicas}=1", "--timeout=120s")
    assert len(_live_pods(twin, ns, "app=sc")) == 1


def test_fully_labeled_replicas_counts_pods_with_every_template_label(twin, ns):
    twin.kubectl("apply", "-n", ns, "-f", "-",
                 input=json.dumps(_rc("fl", 2, {"app": "fl", "tier": "front"}, selector={"app": "fl"})))
    twin.kubectl("wait", "-n", ns, "rc/fl", "--for=jsonpath={.status.fullyLabeledReplicas}=2", "--timeout=120s")
    pod = _live_pods(twin, ns, "app=fl")[0]["metadata"]["name"]
    twin.kubectl("label", "pod", pod, "-n", ns, "tier-")  # still selected and owned, no longer fully labeled
    twin.kubectl("wait", "-n", ns, "rc/fl", "--for=jsonpath={.status.fullyLabeledReplicas}=1", "--timeout=120s")
    st = twin.kubectl_json("get", "rc", "fl", "-n", ns)["status"]
    assert (st["replicas"], st["fullyLabeledReplicas"]) == (2, 1)


def test_deleting_an_rc_deletes_its_pods_unless_orphaned(twin, ns):
    for name in ("gone", "kept"):
        twin.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(_rc(name, 2, {"app": name})))
        twin.kubectl("wait", "-n", ns, f"rc/{name}", "--for=jsonpath={.status.readyReplicas}=2", "--timeout=120s")
    twin.kubectl("delete", "rc", "gone", "-n", ns)
    twin.kubectl("wait", "--for=delete", "pod", "-l", "app=gone", "-n", ns, "--timeout=120s")
    assert twin.kubectl_json("get", "pods", "-n", ns, "-l", "app=gone")["items"] == []

    twin.kubectl("delete", "rc", "kept", "-n", ns, "--cascade=orphan")
    kept = _live_pods(twin, ns, "app=kept")
    assert len(kept) == 2 and all(not p["metadata"].get("ownerReferences") for p in kept)
