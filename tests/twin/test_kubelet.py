"""The twin's kubelet: pod status as real clients read it, attach gating, mounts, graceful deletion."""
from __future__ import annotations

import hashlib
import ipaddress

import pytest
import yaml

from tests.support.twin import Twin

FAKE_DRIVER = "fake.csi.example.com"  # attachRequired, and no attacher serves it: the test attaches


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("kubelet") / "twin", nodes=2, time_scale=0.005) as t:
        yield t


@pytest.fixture(scope="module")
def node(twin) -> dict:
    return twin.kubectl_json("get", "nodes")["items"][0]


def pod(name: str, node: str, host_network: bool = False, claim: str | None = None) -> str:
    spec: dict = {"nodeSelector": {"kubernetes.io/hostname": node}, "hostNetwork": host_network,
                  "containers": [{"name": "main", "image": "registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox",
                                  "command": ["/bin/sh", "-c", "trap exit TERM; while true; do sleep 1; done"]}]}
    if claim:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def internal_ip(node: dict) -> str:
    return next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")


def event_reasons(twin, name: str) -> list[str]:
    items = twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name}")["items"]
    return [e["reason"] for e in items]


def wait_for_event(twin, name: str, reason: str, bound: int = 120) -> None:
    """Until an event `reason` about `name` exists: a list, then a watch from its resourceVersion (a bound, not a
    measurement)."""
    from kubernetes import client, watch

    core = client.CoreV1Api(twin.api_client())
    selector = f"involvedObject.name={name},reason={reason}"
    listed = core.list_namespaced_event("default", field_selector=selector)
    if listed.items:
        return
    w = watch.Watch()
    for _ in w.stream(core.list_namespaced_event, "default", field_selector=selector,
                      resource_version=listed.metadata.resource_version, timeout_seconds=bound):
        w.stop()
        return
    raise AssertionError(f"no {reason} event about {name} within {bound} s")


def volumes_in_use(twin, node: str) -> list[str]:
    return twin.kubectl_json("get", "node", node)["status"].get("volumesInUse", [])


def test_running_pods_have_a_complete_status_for_the_python_client(twin, node):
    from kubernetes import client

    name = node["metadata"]["name"]
    twin.kubectl("apply", "-f", "-", input=pod("plain", name) + "---\n" + pod("hostnet", name, host_network=True))
    twin.kubectl("wait", "--for=condition=Ready", "pod/plain", "pod/hostnet", "--timeout=120s")

    core = client.CoreV1Api(twin.api_client())
    p = core.read_namespaced_pod("plain", "default")  # the pydantic models reject an incomplete status
    st = p.status
    assert st.phase == "Running" and st.start_time is not None
    assert st.host_ip == internal_ip(node) and [i.ip for i in st.host_ips] == [st.host_ip]
    assert ipaddress.ip_address(st.pod_ip) in ipaddress.ip_network(node["spec"]["podCIDR"])
    assert [c.type for c in st.conditions] == ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                               "PodScheduled"]
    assert all(c.status == "True" and c.last_transition_time is not None for c in st.conditions)
    (cs,) = st.container_statuses
    assert (cs.name, cs.image, cs.ready, cs.started, cs.restart_count) == \
        ("main", "registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox", True, True, 0)
    assert cs.image_id.startswith("registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox@sha256:")
    assert cs.container_id.startswith("containerd://") and cs.state.running.started_at is not None
    assert core.read_namespaced_pod("hostnet", "default").status.pod_ip == internal_ip(node)
    assert len(core.list_namespaced_pod("default").items) >= 2

    assert {"Scheduled", "Pulled", "Created", "Started"} <= set(event_reasons(twin, "plain"))
    assert twin.kubectl("get", "pod", "plain", "-o", "jsonpath={.status.phase}").stdout == "Running"


def test_deleted_pods_stop_their_containers_before_they_go(twin, node):
    from kubernetes import client, watch

    name = node["metadata"]["name"]
    twin.kubectl("apply", "-f", "-", input=pod("doomed", name))
    twin.kubectl("wait", "--for=condition=Ready", "pod/doomed", "--timeout=120s")
    core = client.CoreV1Api(twin.api_client())
    rv = core.list_namespaced_pod("default", field_selector="metadata.name=doomed").metadata.resource_version
    twin.kubectl("delete", "pod", "doomed", "--wait=true", "--timeout=120s")

    seen = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", field_selector="metadata.name=doomed",
                       resource_version=rv, timeout_seconds=30):
        p = ev["object"]
        state = p.status.container_statuses[0].state
        seen.append((ev["type"], p.metadata.deletion_timestamp is not None, p.status.phase,
                     state.terminated.exit_code if state.terminated else None))
        if ev["type"] == "DELETED":
            w.stop()
    # marked, then its container terminated (the busybox loop traps TERM and exits 0), then gone
    assert seen[0][:2] == ("MODIFIED", True) and seen[0][3] is None
    assert ("MODIFIED", True, "Succeeded", 0) in seen
    assert seen[-1][0] == "DELETED"
    assert "Killing" in event_reasons(twin, "doomed")


def test_pod_waits_for_its_volume_to_attach_then_mounts_it(twin, node):
    name = node["metadata"]["name"]
    objs = [
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": FAKE_DRIVER},
         "spec": {"attachRequired": True}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "fake-pv"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                  "persistentVolumeReclaimPolicy": "Retain", "csi": {"driver": FAKE_DRIVER, "volumeHandle": "vol-1"},
                  "claimRef": {"namespace": "default", "name": "fake-claim"}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "fake-claim"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "fake-pv",
                  "resources": {"requests": {"storage": "1Gi"}}}}]
    twin.kubectl("apply", "-f", "-", input="---\n".join(yaml.safe_dump(o) for o in objs))
    twin.kubectl("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/fake-claim", "--timeout=120s")
    twin.kubectl("apply", "-f", "-", input=pod("gated", name, claim="fake-claim"))

    # the attach-detach controller asks for the attachment under the name the kubelet looks for
    va = "csi-" + hashlib.sha256(f"vol-1{FAKE_DRIVER}{name}".encode()).hexdigest()
    twin.kubectl("wait", "--for=create", f"volumeattachment/{va}", "--timeout=120s")
    twin.kubectl("wait", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ContainerCreating",
                 "pod/gated", "--timeout=120s")
    # FailedMount comes after the kubelet's mount timeout (2 min 3 s, time-scaled): watched for, however long the
    # twin needs for it on this machine
    wait_for_event(twin, "gated", "FailedMount")
    failed = twin.kubectl_json("get", "events", "--field-selector", "involvedObject.name=gated,reason=FailedMount")
    assert failed["items"], "no FailedMount event while the volume stayed unattached"
    assert failed["items"][0]["message"].startswith(
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]")
    unique = f"kubernetes.io/csi/{FAKE_DRIVER}^vol-1"
    assert unique not in volumes_in_use(twin, name)
    assert twin.kubectl_json("get", "pod", "gated")["status"]["phase"] == "Pending"

    twin.kubectl("patch", "volumeattachment", va, "--subresource=status", "--type=merge",
                 "-p", '{"status":{"attached":true}}')
    twin.kubectl("wait", "--for=condition=Ready", "pod/gated", "--timeout=120s")
    assert unique in volumes_in_use(twin, name)
    assert "SuccessfulMountVolume" in event_reasons(twin, "gated")

    twin.kubectl("delete", "pod", "gated", "--wait=true", "--timeout=120s")
    assert unique not in volumes_in_use(twin, name)  # unmounted before the pod object went
    twin.kubectl("wait", "--for=delete", f"volumeattachment/{va}", "--timeout=120s")
