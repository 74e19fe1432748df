"""The twin's Deployment and ReplicaSet controllers, through kubectl and the kubernetes client."""
from __future__ import annotations

import pytest
import yaml

from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """One twin for the module: each test uses its own deployment."""
    with Twin(tmp_path_factory.mktemp("deploy") / "twin", nodes=3, time_scale=0.005) as t:
        yield t


def deployment(name: str, image: str, replicas: int = 4, strategy: dict | None = None) -> str:
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "web", "image": image}]}}}
    if strategy:
        spec["strategy"] = strategy
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec})


class PodWatch:
    """Pod events of one app from now on: (type, name, template hash, terminating, ready, phase). stop() replays
    them from the server's watch cache, from a list's resourceVersion taken now (a watch the server
    closes after a second), so nothing is missed; `initial` is the pods then (name -> Ready)."""

    def __init__(self, twin, app: str) -> None:
        from kubernetes import client

        self.api = client.CoreV1Api(twin.api_client())
        self.sel = f"app={app}"
        pods = self.api.list_namespaced_pod("default", label_selector=self.sel)
        self.rv = pods.metadata.resource_version
        self.initial = {p.metadata.name: _ready(p) for p in pods.items}

    def stop(self) -> list[tuple[str, str, str, bool, bool, str]]:
        from kubernetes import watch

        out = []
        for ev in watch.Watch().stream(self.api.list_namespaced_pod, "default", label_selector=self.sel,
                                       resource_version=self.rv, timeout_seconds=1):
            md = ev["object"].metadata
            out.append((ev["type"], md.name, md.labels.get("pod-template-hash", ""), md.deletion_timestamp is not None,
                        _ready(ev["object"]), ev["object"].status.phase))
        return out


def _ready(pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def replica_sets(twin, app: str) -> dict[str, dict]:
    items = twin.kubectl_json("get", "rs", "-l", f"app={app}")["items"]
    return {r["metadata"]["labels"]["pod-template-hash"]: r for r in items}


def test_rolling_update_ends_with_only_new_pods_within_max_surge(twin):
    twin.kubectl("apply", "-f", "-", input=deployment("roll", "nginx:1.25"))
    out = twin.kubectl("rollout", "status", "deploy", "roll", "--timeout=120s").stdout
    assert 'deployment "roll" successfully rolled out' in out
    (old_hash,) = replica_sets(twin, "roll")

    events = PodWatch(twin, "roll")
    twin.kubectl("apply", "-f", "-", input=deployment("roll", "nginx:1.26"))
    out = twin.kubectl("rollout", "status", "deploy", "roll", "--timeout=120s").stdout
    assert 'deployment "roll" successfully rolled out' in out
    seen = events.stop()

    rss = replica_sets(twin, "roll")
    (new_hash,) = set(rss) - {old_hash}
    assert rss[old_hash]["spec"]["replicas"] == 0 and rss[new_hash]["spec"]["replicas"] == 4
    assert rss[new_hash]["metadata"]["name"] == f"roll-{new_hash}"
    assert rss[new_hash]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    pods = twin.kubectl_json("get", "pods", "-l", "app=roll")["items"]
    assert len(pods) == 4 and {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == {new_hash}
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:1.26"}

    d = twin.kubectl_json("get", "deploy", "roll")
    st = d["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (4, 4, 4, 4)
    assert st["observedGeneration"] == d["metadata"]["generation"] == 2
    assert "unavailableReplicas" not in st
    conds = {c["type"]: c for c in st["conditions"]}
    assert (conds["Available"]["status"], conds["Available"]["reason"]) == ("True", "MinimumReplicasAvailable")
    assert (conds["Progressing"]["status"], conds["Progressing"]["reason"]) == ("True", "NewReplicaSetAvailable")
    assert new_hash in conds["Progressing"]["message"]

    # maxSurge 25% of 4 = 1 and maxUnavailable 25% of 4 = 1: never more than 5 pods that are not being
    # deleted, never fewer than 3 of them Ready
    live = dict(events.initial)
    peak, low = len(live), sum(live.values())
    for etype, name, _, terminating, ready, _ in seen:
        if etype == "DELETED" or terminating:
            live.pop(name, None)
        else:
            live[name] = ready
        peak, low = max(peak, len(live)), min(low, sum(live.values()))
    assert len(events.initial) == 4 and peak <= 5 and low >= 3


def test_recreate_removes_every_old_pod_before_creating_new_ones(twin):
    strategy = {"type": "Recreate"}
    twin.kubectl("apply", "-f", "-", input=deployment("rec", "nginx:1.25", 3, strategy))
    twin.kubectl("rollout", "status", "deploy", "rec", "--timeout=120s")
    (old_hash,) = replica_sets(twin, "rec")
    events = PodWatch(twin, "rec")
    twin.kubectl("apply", "-f", "-", input=deployment("rec", "nginx:1.26", 3, strategy))
    twin.kubectl("rollout", "status", "deploy", "rec", "--timeout=120s")
    seen = events.stop()

    old_gone = [i for i, e in enumerate(seen) if e[0] == "DELETED" and e[2] == old_hash]
    new_added = [i for i, e in enumerate(seen) if e[0] == "ADDED" and e[2] != old_hash]
    assert len(old_gone) == 3 and len(new_added) == 3
    # as upstream's oldPodsRunning: an old pod stops counting once it is terminal (Succeeded/Failed), which the
    # kubelet writes before the pod object goes; so every old pod has ended, if not yet gone, before a new one comes
    ended = {}
    for i, e in enumerate(seen):
        if e[2] == old_hash and (e[0] == "DELETED" or e[5] in ("Succeeded", "Failed")):
            ended.setdefault(e[1], i)
    assert len(ended) == 3 and max(ended.values()) < min(new_added), seen
    pods = twin.kubectl_json("get", "pods", "-l", "app=rec")["items"]
    assert len(pods) == 3 and all(p["metadata"]["labels"]["pod-template-hash"] != old_hash for p in pods)


def test_scaling_a_deployment_scales_its_replica_set_and_pods(twin):
    twin.kubectl("apply", "-f", "-", input=deployment("sc", "nginx:1.25", 2))
    twin.kubectl("rollout", "status", "deploy", "sc", "--timeout=120s")
    twin.kubectl("scale", "deploy", "sc", "--replicas", "5")
    # the ReplicaSet's pods exist as soon as the scale request is answered
    assert len(twin.kubectl_json("get", "pods", "-l", "app=sc")["items"]) == 5
    twin.kubectl("rollout", "status", "deploy", "sc", "--timeout=120s")
    twin.kubectl("scale", "deploy", "sc", "--replicas", "1")
    twin.kubectl("rollout", "status", "deploy", "sc", "--timeout=120s")
    (rs,) = replica_sets(twin, "sc").values()
    assert rs["spec"]["replicas"] == 1 and rs["status"]["readyReplicas"] == 1
    pods = [p for p in twin.kubectl_json("get", "pods", "-l", "app=sc")["items"]
            if not p["metadata"].get("deletionTimestamp")]
    assert len(pods) == 1
    ref = pods[0]["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("ReplicaSet", rs["metadata"]["name"], True)


def test_deleting_a_deployment_removes_its_replica_sets_and_pods(twin):
    twin.kubectl("apply", "-f", "-", input=deployment("gone", "nginx:1.25", 2))
    twin.kubectl("rollout", "status", "deploy", "gone", "--timeout=120s")
    twin.kubectl("delete", "deploy", "gone")
    twin.kubectl("wait", "--for=delete", "pod", "-l", "app=gone", "--timeout=120s")
    assert twin.kubectl_json("get", "rs", "-l", "app=gone")["items"] == []
    assert twin.kubectl_json("get", "pods", "-l", "app=gone")["items"] == []
