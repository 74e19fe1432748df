"""Seed a disk without a serial number (created before 2020-06-10), in use on a node by a PV, PVC and pod.

Such a disk cannot be attached by the controller once DiskADController is on (the node finds devices by
serial), which is what a preflight must warn about. The PV is a CSI disk volume whose volumeHandle is the
disk id, as the ACK disk driver provisions it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..controllers.podstatus import random_suffix
from ..store import now_iso

if TYPE_CHECKING:
    from ..context import ClusterContext

DRIVER = "diskplugin.csi.alibabacloud.com"


def seed_legacy_disk(cluster: ClusterContext, body: dict[str, Any]) -> dict[str, Any]:
    """body: {"node": node name (default: the first node), "name": base name, "namespace": "default",
    "size_gib": 20, "pod": true}. Returns the ids and names it created."""
    cloud, store = cluster.cloud, cluster.store
    node = body.get("node") or cluster.nodes[0]["name"]
    inst = cloud.instance_by_node(node)
    if inst is None:
        return {"error": f"no instance for node {node}"}
    ns = body.get("namespace") or "default"
    base = body.get("name") or f"legacy-{random_suffix()}"
    size = int(body.get("size_gib", 20))
    disk = cloud.create_disk(size, category="cloud_efficiency", pv_name=f"{base}-pv", serial=False)
    disk.instance_id, disk.status, disk.device = inst.id, "In_use", "/dev/xvdb"
    pv_name, pvc_name, pod_name = f"{base}-pv", f"{base}-pvc", f"{base}-pod"
    store.create(store.rt("", "v1", "persistentvolumes"), None, {
        "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": DRIVER}},
        "spec": {"capacity": {"storage": f"{size}Gi"}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "alicloud-disk-efficiency",
                 "csi": {"driver": DRIVER, "volumeHandle": disk.id, "fsType": "ext4"},
                 "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": pvc_name},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "topology.diskplugin.csi.alibabacloud.com/zone", "operator": "In",
                      "values": [disk.zone]}]}]}}},
        "status": {"phase": "Bound"}})
    store.create(store.rt("", "v1", "persistentvolumeclaims"), ns, {
        "metadata": {"name": pvc_name, "namespace": ns,
                     "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": f"{size}Gi"}},
                 "storageClassName": "alicloud-disk-efficiency", "volumeName": pv_name, "volumeMode": "Filesystem"},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": f"{size}Gi"}}})
    out = {"disk_id": disk.id, "instance_id": inst.id, "node": node, "pv": pv_name, "pvc": pvc_name,
           "namespace": ns}
    if body.get("pod", True):
        ts = now_iso()
        store.create(store.rt("", "v1", "pods"), ns, {
            "metadata": {"name": pod_name, "namespace": ns, "labels": {"app": base}},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": "busybox",
                                                       "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": pvc_name}}]},
            "status": {"phase": "Running", "startTime": ts, "hostIP": "192.168.0.1", "podIP": "10.100.0.9",
                       "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                       "lastTransitionTime": ts}],
                       "containerStatuses": [{"name": "app", "image": "busybox", "imageID": "busybox@sha256:" + "0" * 64,
                                              "ready": True, "restartCount": 0, "started": True,
                                              "state": {"running": {"startedAt": ts}}}]}})
        out["pod"] = pod_name
    cloud.notify(f"disk {disk.id}")
    return out
