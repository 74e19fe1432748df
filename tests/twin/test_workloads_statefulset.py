"""The twin's StatefulSet controller, driven the way seed 000 and kubectl drive a real one."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.support.twin import Twin

SEED_000 = Path(__file__).parent / "data" / "seed000_attach_stress.txt"


def seed_manifest(node: str) -> str:
    """attach-stress.yaml exactly as seed 000 prints it, with the node name filled in."""
    text = SEED_000.read_text()
    return text[text.index("---\n"):].replace("<YOUR-HOSTNAME>  # Replace with the actual node name.", node)


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """One twin for the module: each test uses its own object names."""
    with Twin(tmp_path_factory.mktemp("sts") / "twin", nodes=2, time_scale=0.005) as t:
        yield t


def revisions_of(twin, sts: str) -> list[str]:
    items = twin.kubectl_json("get", "controllerrevisions")["items"]
    return sorted(r["metadata"]["name"] for r in items if r["metadata"]["ownerReferences"][0]["name"] == sts)


def first_node(twin) -> str:
    return twin.kubectl("get", "nodes", "-o", "jsonpath={.items[0].metadata.name}").stdout


def names(twin, kind: str, selector: str) -> list[str]:
    out = twin.kubectl("get", kind, "-l", selector, "-o", "name").stdout.split()
    return sorted(n.split("/", 1)[1] for n in out)


def sts_manifest(name: str, replicas: int, policy: str = "OrderedReady", claims: bool = False,
                 retention: dict | None = None, image: str = "busybox:1.36") -> str:
    spec = {"selector": {"matchLabels": {"app": name}}, "serviceName": name, "replicas": replicas,
            "podManagementPolicy": policy,
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "main", "image": image, "command": ["sleep", "inf"],
                                                  "volumeMounts": [{"name": "data", "mountPath": "/data"}] if claims else []}]}}}
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "alicloud-disk-topology",
            "resources": {"requests": {"storage": "1Gi"}}}}]
    if retention:
        spec["persistentVolumeClaimRetentionPolicy"] = retention
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": spec})


class PodEvents:
    """Pod events in arrival order from the moment of construction, as (type, name, ready, terminating).

    The resourceVersion of a list taken now is kept; stop() replays every event since then from the
    server's watch cache (a watch that the server closes after a second), so nothing is missed."""

    def __init__(self, twin, selector: str) -> None:
        from kubernetes import client

        self.api = client.CoreV1Api(twin.api_client())
        self.selector = selector
        self.rv = self.api.list_namespaced_pod("default", label_selector=selector).metadata.resource_version

    def stop(self) -> list[tuple[str, str, bool, bool]]:
        from kubernetes import watch

        out = []
        for ev in watch.Watch().stream(self.api.list_namespaced_pod, "default", label_selector=self.selector,
                                       resource_version=self.rv, timeout_seconds=1):
            pod = ev["object"]
            ready = any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))
            out.append((ev["type"], pod.metadata.name, ready, pod.metadata.deletion_timestamp is not None))
        return out


def index(events, etype: str | None, name: str, ready: bool = False, terminating: bool = False) -> int:
    """Position of the first event of pod `name` (of that type; Ready / terminating when asked)."""
    return next(i for i, (t, n, r, d) in enumerate(events)
                if n == name and (etype is None or t == etype) and (r or not ready) and (d or not terminating))


def test_seed_000_attach_stress_scales_to_28_ready_pods_and_cleans_up(twin, tmp_path):
    node = first_node(twin)
    manifest = tmp_path / "attach-stress.yaml"
    manifest.write_text(seed_manifest(node))

    assert "statefulset.apps/attach-stress created" in twin.kubectl("apply", "-f", str(manifest)).stdout
    out = twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=120s").stdout
    assert "partitioned roll out complete: 1 new pods have been updated" in out
    twin.kubectl("scale", "sts", "attach-stress", "--replicas", "0")
    twin.kubectl("wait", "--for=delete", "pod/attach-stress-0", "--timeout=120s")

    twin.kubectl("scale", "sts", "attach-stress", "--replicas", "28")
    # kubectl wait watches only the pods its list returns: all 28 must exist as the scale returns
    assert len(names(twin, "pods", "app=attach-stress")) == 28
    waited = twin.kubectl("wait", "--for=condition=Ready", "pod", "-l", "app=attach-stress", "--timeout=120s").stdout
    assert waited.count("condition met") == 28
    out = twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=120s").stdout
    assert "partitioned roll out complete: 28 new pods have been updated" in out

    pods = twin.kubectl_json("get", "pods", "-l", "app=attach-stress")["items"]
    assert {p["spec"]["nodeName"] for p in pods} == {node}  # the seed's required node affinity
    sts = twin.kubectl_json("get", "sts", "attach-stress")
    st = sts["status"]
    assert (st["replicas"], st["readyReplicas"], st["updatedReplicas"], st["currentReplicas"], st["availableReplicas"]) \
        == (28, 28, 28, 28, 28)
    assert st["observedGeneration"] == sts["metadata"]["generation"] and st["collisionCount"] == 0
    assert st["currentRevision"] == st["updateRevision"]
    assert revisions_of(twin, "attach-stress") == [st["updateRevision"]]
    for p in pods:
        labels, ref = p["metadata"]["labels"], p["metadata"]["ownerReferences"][0]
        assert labels["controller-revision-hash"] == st["updateRevision"]
        assert labels["statefulset.kubernetes.io/pod-name"] == p["metadata"]["name"]
        assert (ref["kind"], ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == \
            ("StatefulSet", "attach-stress", True, True)
        claims = sorted(v["persistentVolumeClaim"]["claimName"] for v in p["spec"]["volumes"]
                        if "persistentVolumeClaim" in v)  # next to the kube-api-access-* token volume
        assert claims == [f"volume-{i}-{p['metadata']['name']}" for i in (0, 1)]

    want = sorted(f"volume-{v}-attach-stress-{o}" for v in (0, 1) for o in range(28))
    assert names(twin, "pvc", "app=attach-stress") == want
    claim = twin.kubectl_json("get", "pvc", "volume-0-attach-stress-3")
    assert claim["status"]["phase"] == "Bound"
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    # whenDeleted: Delete -> every claim is owned by the set (and by nothing else, since whenScaled: Retain)
    assert [(r["kind"], r["name"]) for r in claim["metadata"]["ownerReferences"]] == [("StatefulSet", "attach-stress")]

    twin.kubectl("delete", "-f", str(manifest))
    twin.kubectl("wait", "--for=delete", "pvc", "-l", "app=attach-stress", "--timeout=120s")
    assert names(twin, "pvc", "app=attach-stress") == []
    assert names(twin, "pods", "app=attach-stress") == []


def test_scale_down_keeps_claims_by_default_and_when_scaled_delete_removes_them(twin):
    twin.kubectl("apply", "-f", "-", input=sts_manifest("keep", 3, "Parallel", claims=True))
    twin.kubectl("apply", "-f", "-", input=sts_manifest("drop", 3, "Parallel", claims=True,
                                                        retention={"whenScaled": "Delete", "whenDeleted": "Retain"}))
    for name in ("keep", "drop"):
        twin.kubectl("rollout", "status", "sts", name, "--timeout=120s")
        twin.kubectl("scale", "sts", name, "--replicas", "1")
    for name in ("keep", "drop"):
        twin.kubectl("wait", "--for=delete", f"pod/{name}-1", f"pod/{name}-2", "--timeout=120s")
    twin.kubectl("wait", "--for=delete", "pvc/data-drop-1", "pvc/data-drop-2", "--timeout=120s")

    assert names(twin, "pvc", "app=keep") == ["data-keep-0", "data-keep-1", "data-keep-2"]
    assert names(twin, "pvc", "app=drop") == ["data-drop-0"]
    # the claim of a pod that stays is not tied to anything under whenDeleted: Retain
    assert "ownerReferences" not in twin.kubectl_json("get", "pvc", "data-drop-0")["metadata"]

    twin.kubectl("delete", "sts", "drop", "keep")
    twin.kubectl("wait", "--for=delete", "pod/drop-0", "pod/keep-0", "--timeout=120s")
    assert names(twin, "pvc", "app=drop") == ["data-drop-0"]
    assert names(twin, "pvc", "app=keep") == ["data-keep-0", "data-keep-1", "data-keep-2"]


def test_ordered_ready_creates_each_pod_after_the_previous_is_ready_and_deletes_in_reverse(twin):
    events = PodEvents(twin, "app=ordered")
    twin.kubectl("apply", "-f", "-", input=sts_manifest("ordered", 4))
    twin.kubectl("rollout", "status", "sts", "ordered", "--timeout=120s")
    twin.kubectl("scale", "sts", "ordered", "--replicas", "0")
    twin.kubectl("wait", "--for=delete", "pod/ordered-0", "--timeout=120s")
    seen = events.stop()

    for i in range(1, 4):
        created = index(seen, "ADDED", f"ordered-{i}")
        ready_before = index(seen, None, f"ordered-{i - 1}", ready=True)
        assert ready_before < created, f"ordered-{i} was created before ordered-{i - 1} was Ready"
    # scale-down: ordered-3 first; each next pod is marked for deletion only once the previous one is gone
    for i in range(3, 0, -1):
        gone = index(seen, "DELETED", f"ordered-{i}")
        marked = index(seen, None, f"ordered-{i - 1}", terminating=True)
        assert gone < marked, f"ordered-{i - 1} was terminated before ordered-{i} was gone"


def test_parallel_creates_all_pods_before_any_is_ready(twin):
    events = PodEvents(twin, "app=par")
    twin.kubectl("apply", "-f", "-", input=sts_manifest("par", 5, "Parallel"))
    twin.kubectl("rollout", "status", "sts", "par", "--timeout=120s")
    seen = events.stop()
    added = [index(seen, "ADDED", f"par-{i}") for i in range(5)]
    first_ready = next(i for i, e in enumerate(seen) if e[2])
    assert max(added) < first_ready


def test_template_change_rolls_pods_from_the_highest_ordinal_to_a_new_revision(twin):
    twin.kubectl("apply", "-f", "-", input=sts_manifest("roll", 3))
    twin.kubectl("rollout", "status", "sts", "roll", "--timeout=120s")
    old_rev = twin.kubectl_json("get", "sts", "roll")["status"]["updateRevision"]
    events = PodEvents(twin, "app=roll")
    twin.kubectl("apply", "-f", "-", input=sts_manifest("roll", 3, image="busybox:1.37"))
    out = twin.kubectl("rollout", "status", "sts", "roll", "--timeout=120s").stdout
    assert "partitioned roll out complete: 3 new pods have been updated" in out
    seen = events.stop()

    st = twin.kubectl_json("get", "sts", "roll")["status"]
    assert st["updateRevision"] != old_rev and st["currentRevision"] == st["updateRevision"]
    assert revisions_of(twin, "roll") == sorted([old_rev, st["updateRevision"]])
    pods = twin.kubectl_json("get", "pods", "-l", "app=roll")["items"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {st["updateRevision"]}
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"busybox:1.37"}
    deleted = [e[1] for e in seen if e[0] == "DELETED"]
    assert deleted == ["roll-2", "roll-1", "roll-0"]


@pytest.mark.parametrize("patch_type", ["merge", "strategic"])
def test_scale_subresource_answers_scale_and_bumps_generation(twin, patch_type):
    from kubernetes import client

    apps = client.AppsV1Api(twin.api_client())
    name = f"sc-{patch_type}"
    twin.kubectl("apply", "-f", "-", input=sts_manifest(name, 1, "Parallel"))
    gen = twin.kubectl_json("get", "sts", name)["metadata"]["generation"]
    if patch_type == "merge":
        twin.kubectl("patch", "sts", name, "--subresource=scale", "--type=merge", "-p", '{"spec":{"replicas":3}}')
        scale = twin.kubectl_json("get", "sts", name, "--subresource=scale")
    else:  # the python client (and kubernetes.core's k8s_scale) send a strategic merge patch
        scale = apps.patch_namespaced_stateful_set_scale(name, "default", {"spec": {"replicas": 3}}).to_dict()
    assert scale["spec"]["replicas"] == 3
    assert re.fullmatch(f"app={name}", scale["status"]["selector"])
    sts = twin.kubectl_json("get", "sts", name)
    assert sts["metadata"]["generation"] == gen + 1 == sts["status"]["observedGeneration"]
    assert names(twin, "pods", f"app={name}") == [f"{name}-0", f"{name}-1", f"{name}-2"]
