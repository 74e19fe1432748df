"""Seed 000 on the twin: the attach-stress manifest through kubectl, serial vs parallel disk attach.

Concurrency is read from the twin's own counters of ECS AttachDisk/DetachDisk calls in flight per node
(POST /_twin/storage); durations only as the ratio of two batches' attach spans (first start to last end in
the twin's scheduled time) on the same twin.
"""
from __future__ import annotations

from kubernetes import client

from tests.support.waits import watch_until
from tests.twin.storage_helpers import (ATTACH_STRESS, DISK, admin, apply, enable_parallel_attach, events, kube_wait,
                                        pvc_manifest, storage, wait_event)


def node_stats(twin, node):
    return storage(twin, "backends")[DISK]["nodes"].get(node, {})


def reset(twin):
    admin(twin, "storage", {"only": ["backends"], "reset": ["attach"]})


def vas(twin):
    return twin.kubectl_json("get", "volumeattachments")["items"]


def watch_pods(twin, done, what):
    core = client.CoreV1Api(twin.api_client())
    watch_until(core.list_namespaced_pod, done, what, "default", label_selector="app=attach-stress")


def scale(twin, replicas):
    if replicas:
        # hold the attach-detach controller until every pod is on the node, so that the batch's attach span
        # measures attaching, not how fast the StatefulSet controller and the scheduler bring the pods
        admin(twin, "fault", {"name": "stall:attachdetach-controller", "rule": {}})
        twin.kubectl("scale", "sts", "attach-stress", "--replicas", str(replicas))
        watch_pods(twin, lambda pods: sum(1 for p in pods if p.spec.node_name) >= replicas, "pods scheduled")
        admin(twin, "fault", {"clear": True, "name": "stall:attachdetach-controller"})
        twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=300s", timeout=320)
        return
    twin.kubectl("scale", "sts", "attach-stress", "--replicas", "0")
    watch_pods(twin, lambda pods: not pods, "pods gone")
    watch_until(client.StorageV1Api(twin.api_client()).list_volume_attachment, lambda v: not v,
                "volume attachments gone")


def test_attach_stress_serial_then_parallel(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    node = twin.kubectl_json("get", "nodes")["items"][0]["metadata"]["name"]
    twin.kubectl("apply", "-f", "-", input=ATTACH_STRESS.read_text().replace("<YOUR-HOSTNAME>", node))
    twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=120s")
    va = vas(twin)
    assert len(va) == 2 and all(v["status"]["attached"] for v in va)
    assert {v["spec"]["nodeName"] for v in va} == {node}
    assert all(v["metadata"]["name"].startswith("csi-") and len(v["metadata"]["name"]) == 68 for v in va)
    scale(twin, 0)

    reset(twin)
    scale(twin, 28)
    st = node_stats(twin, node)
    serial = st["attach_span"]
    assert st["max_attaching"] == 1, st  # one slot shared by attach and detach
    assert st["attaches"] == 56 and st["conflicts"] == 0
    assert len([v for v in vas(twin) if v["status"]["attached"]]) == 56
    pvs = twin.kubectl_json("get", "pv")["items"]
    assert len(pvs) == 56 and all(p["spec"]["csi"]["driver"] == DISK for p in pvs)

    reset(twin)
    scale(twin, 0)
    st = node_stats(twin, node)
    assert st["detaches"] == 56 and st["max_detaching"] == 1  # detach stays serial

    enable_parallel_attach(twin)
    reset(twin)
    scale(twin, 28)
    st = node_stats(twin, node)
    parallel = st["attach_span"]
    assert 1 < st["max_attaching"] <= 32, st
    assert st["attaches"] == 56 and st["conflicts"] == 0
    # first attach start to last attach end in the twin's scheduled (cluster) time: seed 000's 5x effect
    assert serial / parallel > 4, (serial, parallel)
    cloud = admin(twin, "cloud")
    inst = next(i for i in cloud["instances"].values() if i["node_name"] == node)
    assert inst["limits"] == [32, 1] and inst["driver_limits"] == [32, 1]


def test_gates_on_without_tag_conflicts_and_retries(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    node = twin.kubectl_json("get", "nodes")["items"][0]["metadata"]["name"]
    enable_parallel_attach(twin, tag=False)
    cloud = admin(twin, "cloud")
    inst = next(i for i in cloud["instances"].values() if i["node_name"] == node)
    assert inst["driver_limits"] == [32, 1] and inst["limits"] == [1, 1]
    twin.kubectl("apply", "-f", "-", input=ATTACH_STRESS.read_text().replace("<YOUR-HOSTNAME>", node))
    twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=120s")
    twin.kubectl("scale", "sts", "attach-stress", "--replicas", "4")
    twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=300s", timeout=320)
    st = node_stats(twin, node)
    assert st["conflicts"] > 0 and st["max_attaching"] == 1, st  # ECS let one through at a time
    failed = events(twin, "FailedAttachVolume")
    assert failed and all("InvalidOperation.Conflict" in e["message"] and "code = Aborted" in e["message"] for e in failed)
    assert all(v["status"]["attached"] for v in vas(twin)) and len(vas(twin)) == 8


def test_disk_without_serial_number_cannot_be_attached_by_the_controller(twin_factory):
    twin = twin_factory(nodes=1, time_scale=0.01)
    admin(twin, "cloud", {"disk": {"id": "d-old2019", "serial_number": None, "size_gib": 20}})
    enable_parallel_attach(twin)
    apply(twin,
          {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "old-disk"},
           "spec": {"capacity": {"storage": "20Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                    "persistentVolumeReclaimPolicy": "Retain",
                    "csi": {"driver": DISK, "volumeHandle": "d-old2019", "fsType": "ext4"}}},
          dict(pvc_manifest("old", "", "20Gi"), spec=dict(pvc_manifest("old", "", "20Gi")["spec"], volumeName="old-disk")),
          {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "uses-old"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}],
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "old"}}]}})
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/old")
    failed = wait_event(twin, "uses-old", "FailedAttachVolume")
    assert "InvalidArgument" in failed[0]["message"] and "serial number" in failed[0]["message"]
    va = vas(twin)
    assert len(va) == 1 and va[0]["status"]["attached"] is False and "serial" in va[0]["status"]["attachError"]["message"]
    # with DiskADController off the node attaches by itself, serial number or not
    admin(twin, "cloud", {"addon": "csi-plugin", "feature_gates": "DiskADController=false"})
    watch_until(client.StorageV1Api(twin.api_client()).list_volume_attachment,
                lambda v: all(a.status and a.status.attached for a in v), "attached")
    kube_wait(twin, "condition=Ready", "pod/uses-old")
