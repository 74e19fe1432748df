"""The CSI drivers the twin runs: their CSIDriver objects, CSINode entries, built-in StorageClasses, and the
registry of driver backends the sidecars (provisioner, attacher, snapshotter) call.

Drivers (docs/reference/kubernetes.md):
  diskplugin.csi.alibabacloud.com   Alibaba Cloud disks; attachRequired true; CSINode allocatable
                                    DiskQuantity (56; see calibration.yaml reserved_disks); topology key
                                    topology.diskplugin.csi.alibabacloud.com/zone
  localplugin.csi.alibabacloud.com  PMEM/LVM local volumes; attachRequired false, podInfoOnMount true
  csi.trident.netapp.io             NetApp Trident (twin/controllers/trident.py); attachRequired true, so NFS
                                    publishes create VolumeAttachments too

StorageClasses: the ones an ACK cluster comes with (alicloud-disk-*; seed 001 uses alicloud-disk-topology),
none of them default, as on ACK: a PVC without storageClassName stays Pending there too. Trident's per-backend
classes are created by trident.py. The backends and their registry are in csi.py.
"""
from __future__ import annotations

from typing import Any

from .. import calibration
from ..apimachinery import errors
from .alibaba_csi import DiskBackend, LocalBackend
from .base import Controller
from .csi import DISK, DISK_TOPOLOGY_KEY, LOCAL, TRIDENT, backends, stats_registry
from .tokenbucket import throttles

CSI_DRIVERS: dict[str, dict[str, Any]] = {
    DISK: {"attachRequired": True, "podInfoOnMount": False, "fsGroupPolicy": "ReadWriteOnceWithFSType"},
    LOCAL: {"attachRequired": False, "podInfoOnMount": True, "fsGroupPolicy": "ReadWriteOnceWithFSType"},
    TRIDENT: {"attachRequired": True, "podInfoOnMount": False, "fsGroupPolicy": "ReadWriteOnceWithFSType"},
}


def _disk_sc(name: str, disk_type: str, wffc: bool) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": DISK, "parameters": {"type": disk_type}, "reclaimPolicy": "Delete",
            "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer" if wffc else "Immediate"}


ACK_STORAGE_CLASSES = [
    _disk_sc("alicloud-disk-efficiency", "cloud_efficiency", False),
    _disk_sc("alicloud-disk-ssd", "cloud_ssd", False),
    _disk_sc("alicloud-disk-essd", "cloud_essd", False),
    _disk_sc("alicloud-disk-available", "available", False),
    _disk_sc("alicloud-disk-topology", "cloud_ssd", True),
    _disk_sc("alicloud-disk-topology-alltype", "cloud_essd,cloud_ssd,cloud_efficiency", True),
]


class CSIDrivers(Controller):
    """Creates the drivers' API objects at start and keeps every CSINode listing them."""

    name = "csi-drivers"

    def setup(self) -> None:
        reg = backends(self.cluster)
        reg[DISK] = DiskBackend(self.cluster)
        reg[LOCAL] = LocalBackend(self.cluster)
        stats = stats_registry(self.cluster)
        stats["faults"] = lambda body: {"rules": self.cluster.faults.rules, "hits": dict(getattr(self.cluster.faults, "hits", {}))}
        stats["backends"] = lambda body: {k: b.stats(body) for k, b in reg.items()}
        # {"log": true, "since": t} adds each call's (cluster time, client, verb): the pacing a test measures
        stats["throttles"] = lambda body: {k: t.doc(bool(body.get("log")), body.get("since"))
                                           for k, t in throttles(self.cluster).items()}
        self.cluster.admin_handlers["storage"] = self._admin
        self._create_objects()

    async def _admin(self, body: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, fn in list(stats_registry(self.cluster).items()):
            if body.get("only") and name not in body["only"]:
                continue
            out[name] = fn(body)
        return out

    def _create_objects(self) -> None:
        drv_rt = self.store.rt("storage.k8s.io", "v1", "csidrivers")
        for name, spec in CSI_DRIVERS.items():
            if not self.store.exists(drv_rt, None, name):
                self.store.create(drv_rt, None, {"metadata": {"name": name},
                                                 "spec": dict(spec, volumeLifecycleModes=["Persistent"])})
        sc_rt = self.store.rt("storage.k8s.io", "v1", "storageclasses")
        for sc in ACK_STORAGE_CLASSES:
            if not self.store.exists(sc_rt, None, sc["metadata"]["name"]):
                self.store.create(sc_rt, None, sc)
        if "snapshot" in self.cluster.crd_sets:
            vsc_rt = self.store.rt("snapshot.storage.k8s.io", "v1", "volumesnapshotclasses")
            if not self.store.exists(vsc_rt, None, "alibabacloud-disk-snapshot"):
                self.store.create(vsc_rt, None, {
                    "apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotClass",
                    "metadata": {"name": "alibabacloud-disk-snapshot",
                                 "annotations": {"snapshot.storage.kubernetes.io/is-default-class": "true"}},
                    "driver": DISK, "deletionPolicy": "Delete", "parameters": {"instantAccess": "true"}})
        for e in self.store.list_entries(self.store.rt("storage.k8s.io", "v1", "csinodes")):
            self._register(e.obj["metadata"]["name"])

    def _node_entry(self, driver: str, node: str) -> dict[str, Any]:
        if driver == DISK:
            inst = self.cluster.cloud.instance_by_node(node) if getattr(self.cluster, "cloud", None) else None
            reserved = calibration.load().limit(DISK, "reserved_disks")
            count = (self.cluster.cloud.disk_quantity(inst.id) - reserved) if inst else self._cal_limit()
            return {"name": DISK, "nodeID": inst.id if inst else node, "topologyKeys": [DISK_TOPOLOGY_KEY],
                    "allocatable": {"count": count}}
        if driver == LOCAL:
            return {"name": LOCAL, "nodeID": node, "topologyKeys": ["kubernetes.io/hostname"]}
        return {"name": driver, "nodeID": node, "topologyKeys": None}

    def _cal_limit(self) -> int:
        return calibration.load().limit(DISK, "allocatable")

    def _register(self, node: str) -> None:
        rt = self.store.rt("storage.k8s.io", "v1", "csinodes")
        try:
            obj = self.store.get(rt, None, node)
        except errors.ApiError:
            return
        drivers = obj.setdefault("spec", {}).get("drivers") or []
        have = {d["name"] for d in drivers}
        added = [self._node_entry(d, node) for d in CSI_DRIVERS if d not in have]
        if added:
            for a in added:
                if a.get("topologyKeys") is None:
                    a.pop("topologyKeys")
            obj["spec"]["drivers"] = drivers + added
            self.store.update(rt, None, node, obj, _internal=True)

    async def run(self) -> None:
        async for etype, obj in self.watch("storage.k8s.io", "v1", "csinodes"):
            if etype == "ADDED":
                self._register(obj["metadata"]["name"])
