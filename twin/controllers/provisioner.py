"""external-provisioner (csi-provisioner) for every CSI driver the twin runs.

A PVC whose StorageClass names one of the drivers in cluster.csi_backends is provisioned:
- Immediate at once; WaitForFirstConsumer once the scheduler has set volume.kubernetes.io/selected-node
  (the volume is created in that node's topology and the PV gets nodeAffinity for topology drivers).
- dataSource / dataSourceRef VolumeSnapshot (restore: the snapshot must be readyToUse) or
  PersistentVolumeClaim (clone: the source must be Bound, same driver; it carries
  provisioner.storage.kubernetes.io/cloning-protection while the clone runs).
- The PV (`pvc-<claim uid>`): spec.csi {driver, volumeHandle, fsType, volumeAttributes = the class parameters
  + what the driver returns}, capacity, accessModes, claimRef, reclaim policy, class, mountOptions, volumeMode,
  annotation pv.kubernetes.io/provisioned-by, finalizers kubernetes.io/pv-protection and
  external-provisioner.volume.kubernetes.io/finalizer. Events Provisioning, ProvisioningSucceeded,
  ProvisioningFailed (then a retry after --retry-interval-start doubling up to --retry-interval-max).
- reclaimPolicy Delete: once the PV is Released, DeleteVolume on the driver, then the PV object is deleted and
  the finalizer dropped; VolumeFailedDelete on error (retried). Retain leaves the PV Released.
Binding itself is the PV controller's (pv_controller.py). Each driver has its own worker pool; a driver whose
sidecar is modelled (Trident: backend.sidecar("provisioner")) also waits for a client token per API call.
"""
from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from .. import calibration
from ..apimachinery import errors
from .base import Controller
from .csi import CSIError, backends, with_faults
from .pv_controller import ANN_SELECTED_NODE, format_quantity, parse_quantity
from .tokenbucket import WorkerPool
from .workqueue import Retry, WorkQueue

log = logging.getLogger("twin")

PROVISIONER_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer"
CLONE_PROTECTION = "provisioner.storage.kubernetes.io/cloning-protection"
SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


class ExternalProvisioner(Controller):
    name = "csi-provisioner"

    def setup(self) -> None:
        self.cal = calibration.load()
        self.queues: dict[str, WorkQueue] = {}
        self.identity = uuid.uuid4().hex[:8]
        self.provisioned = 0
        self.failed = 0
        self.volumes_deleted: set[str] = set()  # PVs whose backend volume is gone (DeleteVolume done)

    # queues -------------------------------------------------------------------------------------
    def queue(self, driver: str) -> WorkQueue:
        q = self.queues.get(driver)
        if q is None:
            backend = backends(self.cluster)[driver]
            th = backend.sidecar("provisioner")
            pool = th.pool if th is not None else WorkerPool(int(self._limit(driver, "provisioner_workers", 100)))
            q = WorkQueue(f"{self.name}/{driver}", self.handle, pool, self.cluster.time_scale,
                          self._limit(driver, "retry_start", 1.0), self._limit(driver, "retry_max", 300.0),
                          gate=self.gate)
            q.start()
            self.queues[driver] = q
        return q

    def _limit(self, driver: str, name: str, default: float) -> float:
        for key in (driver, "trident" if driver == "csi.trident.netapp.io" else None, "csi-sidecar"):
            if key:
                try:
                    return self.cal.number(key, name)
                except KeyError:
                    continue
        return default

    async def _call(self, driver: str, verb: str) -> None:
        """One API request of the driver's csi-provisioner: wait for a client token where modelled."""
        th = backends(self.cluster)[driver].sidecar("provisioner")
        if th is not None:
            await th.call("kube", verb)

    def component(self, driver: str) -> str:
        return f"{driver}_csi-provisioner-{self.identity}"

    # watches ------------------------------------------------------------------------------------
    async def run(self) -> None:
        await asyncio.gather(self._claims(), self._volumes())

    def _driver_of_claim(self, pvc: dict) -> str | None:
        name = pvc["spec"].get("storageClassName")
        if not name or not self.store.exists(self.sc_rt, None, name):
            return None
        drv = self.store.get(self.sc_rt, None, name).get("provisioner")
        return drv if drv in backends(self.cluster) else None

    async def _claims(self) -> None:
        async for etype, pvc in self.watch("", "v1", "persistentvolumeclaims"):
            if etype == "DELETED" or pvc["spec"].get("volumeName") or pvc["metadata"].get("deletionTimestamp"):
                continue
            drv = self._driver_of_claim(pvc)
            if drv:
                self.queue(drv).add(("claim", pvc["metadata"]["namespace"], pvc["metadata"]["name"]))

    async def _volumes(self) -> None:
        async for etype, pv in self.watch("", "v1", "persistentvolumes"):
            if etype == "DELETED":
                continue
            drv = (pv["spec"].get("csi") or {}).get("driver")
            if drv not in backends(self.cluster):
                continue
            if pv.get("status", {}).get("phase") in ("Released", "Failed") \
                    and pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete" \
                    and (pv["metadata"].get("annotations") or {}).get("pv.kubernetes.io/provisioned-by") == drv:
                self.queue(drv).add(("delete", pv["metadata"]["name"]))
            elif pv["metadata"].get("deletionTimestamp") and PROVISIONER_FINALIZER in (pv["metadata"].get("finalizers") or []):
                self.queue(drv).add(("delete", pv["metadata"]["name"]))

    async def handle(self, key: tuple) -> None:
        if key[0] == "claim":
            await self.provision(key[1], key[2])
        else:
            await self.delete(key[1])

    # provisioning -------------------------------------------------------------------------------
    async def provision(self, ns: str, name: str) -> None:
        if not self.store.exists(self.pvc_rt, ns, name):
            return
        pvc = self.store.get(self.pvc_rt, ns, name)
        md = pvc["metadata"]
        if pvc["spec"].get("volumeName") or md.get("deletionTimestamp"):
            return
        drv = self._driver_of_claim(pvc)
        if drv is None:
            return
        sc = self.store.get(self.sc_rt, None, pvc["spec"]["storageClassName"])
        node = (md.get("annotations") or {}).get(ANN_SELECTED_NODE)
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not node:
            return
        pv_name = f"pvc-{md['uid']}"
        if self.store.exists(self.pv_rt, None, pv_name):
            return  # provisioned already; the PV controller binds it
        backend = backends(self.cluster)[drv]
        await self._call(drv, "create events")
        self.event(pvc, "Normal", "Provisioning", f'External provisioner is provisioning volume for claim "{ns}/{name}"',
                   self.component(drv))
        try:
            source = await self._source(pvc, drv)
        except CSIError as e:
            await self._fail(pvc, drv, sc, e)
            raise Retry() from e
        size = parse_quantity(pvc["spec"].get("resources", {}).get("requests", {}).get("storage", "1Gi"))
        zone = None
        if node:
            nodes_rt = self.store.rt("", "v1", "nodes")
            if self.store.exists(nodes_rt, None, node):
                labels = self.store.get(nodes_rt, None, node)["metadata"].get("labels") or {}
                zone = labels.get("topology.kubernetes.io/zone")
        req = {"name": pv_name, "capacity_bytes": size, "parameters": dict(sc.get("parameters") or {}), "pvc": pvc,
               "node": node, "zone": zone, "source": source, "storage_class": sc["metadata"]["name"]}
        try:
            res = await with_faults(self.cluster, "provision", f"{ns}/{name}", drv, lambda: backend.create_volume(req))
        except CSIError as e:
            await self._fail(pvc, drv, sc, e)
            raise Retry() from e
        finally:
            if source and source["kind"] == "volume":
                await self._call(drv, "patch pvc")
                self.store.finalize(self.pvc_rt, ns, source["name"], CLONE_PROTECTION)
        pv = self._pv(pvc, sc, drv, pv_name, res, backend)
        await self._call(drv, "create persistentvolumes")
        try:
            self.store.create(self.pv_rt, None, pv)
        except errors.ApiError as e:
            if e.code != 409:
                raise
        self.provisioned += 1
        await self._call(drv, "create events")
        self.event(pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}", self.component(drv))

    async def _fail(self, pvc: dict, drv: str, sc: dict, e: CSIError) -> None:
        self.failed += 1
        await self._call(drv, "create events")
        self.event(pvc, "Warning", "ProvisioningFailed",
                   f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": {e}', self.component(drv))

    async def _source(self, pvc: dict, drv: str) -> dict | None:
        ds = pvc["spec"].get("dataSourceRef") or pvc["spec"].get("dataSource")
        if not ds:
            return None
        ns = pvc["metadata"]["namespace"]
        kind = ds.get("kind")
        if kind == "VolumeSnapshot" and ds.get("apiGroup") == SNAPSHOT_GROUP:
            vs_rt = self.store.rt(SNAPSHOT_GROUP, "v1", "volumesnapshots")
            await self._call(drv, "get volumesnapshots")
            if not self.store.exists(vs_rt, ns, ds["name"]):
                raise CSIError("NotFound", f"error getting handle for DataSource Type VolumeSnapshot by Name "
                                           f"{ds['name']}: volumesnapshot.snapshot.storage.k8s.io \"{ds['name']}\" not found")
            vs = self.store.get(vs_rt, ns, ds["name"])
            st = vs.get("status") or {}
            if not st.get("readyToUse") or not st.get("boundVolumeSnapshotContentName"):
                raise CSIError("Unavailable", f"error getting handle for DataSource Type VolumeSnapshot by Name "
                                              f"{ds['name']}: snapshot {ds['name']} is not Ready")
            vsc_rt = self.store.rt(SNAPSHOT_GROUP, "v1", "volumesnapshotcontents")
            await self._call(drv, "get volumesnapshotcontents")
            content = self.store.get(vsc_rt, None, st["boundVolumeSnapshotContentName"])
            if content["spec"].get("driver") != drv:
                raise CSIError("InvalidArgument", f"snapshot {ds['name']} belongs to driver {content['spec'].get('driver')}")
            handle = (content.get("status") or {}).get("snapshotHandle")
            if not handle:
                raise CSIError("Unavailable", f"snapshot {ds['name']} has no snapshot handle yet")
            restore = int((content.get("status") or {}).get("restoreSize") or 0)
            want = parse_quantity(pvc["spec"].get("resources", {}).get("requests", {}).get("storage", "0"))
            if restore and want < restore:
                raise CSIError("OutOfRange", f"requested volume size {want} is less than the size {restore} "
                                             "for the source snapshot")
            return {"kind": "snapshot", "handle": handle, "name": ds["name"]}
        if kind == "PersistentVolumeClaim" and not ds.get("apiGroup"):
            await self._call(drv, "get persistentvolumeclaims")
            if not self.store.exists(self.pvc_rt, ns, ds["name"]):
                raise CSIError("NotFound", f"error getting PVC {ns}/{ds['name']} from api server: not found")
            src = self.store.get(self.pvc_rt, ns, ds["name"])
            if src.get("status", {}).get("phase") != "Bound" or not src["spec"].get("volumeName"):
                raise CSIError("Unavailable", f"the source PVC {ds['name']} is not Bound")
            pv = self.store.get(self.pv_rt, None, src["spec"]["volumeName"])
            if (pv["spec"].get("csi") or {}).get("driver") != drv:
                raise CSIError("InvalidArgument", f"the source PVC {ds['name']} is not provisioned by {drv}")
            if (src["spec"].get("storageClassName") or "") != (pvc["spec"].get("storageClassName") or ""):
                raise CSIError("InvalidArgument", "the source PVC and destination PVCs must be in the same storage class")
            if CLONE_PROTECTION not in (src["metadata"].get("finalizers") or []):
                src["metadata"]["finalizers"] = (src["metadata"].get("finalizers") or []) + [CLONE_PROTECTION]
                await self._call(drv, "patch persistentvolumeclaims")
                self.store.update(self.pvc_rt, ns, ds["name"], src, _internal=True)
            return {"kind": "volume", "handle": pv["spec"]["csi"]["volumeHandle"], "name": ds["name"], "pv": pv}
        raise CSIError("InvalidArgument", f"unsupported dataSource kind {kind}")

    def _pv(self, pvc: dict, sc: dict, drv: str, pv_name: str, res: dict, backend: Any) -> dict:
        md = pvc["metadata"]
        params = dict(sc.get("parameters") or {})
        attrs = {k: str(v) for k, v in params.items() if not k.startswith("csi.storage.k8s.io/")}
        attrs.update(res.get("attributes") or {})
        csi = {"driver": drv, "volumeHandle": res["volume_handle"], "volumeAttributes": attrs}
        fs = params.get("csi.storage.k8s.io/fstype") or getattr(backend, "default_fstype", lambda p: "ext4")(params)
        if fs and pvc["spec"].get("volumeMode", "Filesystem") == "Filesystem":
            csi["fsType"] = fs
        spec: dict[str, Any] = {
            "capacity": {"storage": format_quantity(int(res.get("capacity_bytes") or 0))},
            "accessModes": pvc["spec"].get("accessModes") or ["ReadWriteOnce"],
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": md["namespace"], "name": md["name"],
                         "uid": md["uid"], "apiVersion": "v1", "resourceVersion": md["resourceVersion"]},
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy", "Delete"),
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": pvc["spec"].get("volumeMode", "Filesystem"),
            "csi": csi,
        }
        if sc.get("mountOptions"):
            spec["mountOptions"] = list(sc["mountOptions"])
        topo = res.get("accessible_topology")
        if topo:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": k, "operator": "In", "values": [v]} for k, v in sorted(topo.items())]}]}}
        return {"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": drv,
                                                              "volume.kubernetes.io/provisioner-deletion-secret-name": "",
                                                              "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""},
                             "finalizers": ["kubernetes.io/pv-protection", PROVISIONER_FINALIZER]},
                "spec": spec, "status": {"phase": "Pending"}}

    # deletion -----------------------------------------------------------------------------------
    async def delete(self, pv_name: str) -> None:
        if not self.store.exists(self.pv_rt, None, pv_name):
            return
        pv = self.store.get(self.pv_rt, None, pv_name)
        drv = (pv["spec"].get("csi") or {}).get("driver")
        if drv not in backends(self.cluster):
            return
        deleting = bool(pv["metadata"].get("deletionTimestamp"))
        delete_policy = pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete"
        released = pv.get("status", {}).get("phase") in ("Released", "Failed") and delete_policy
        if not released and not deleting:
            return
        # DeleteVolume once per PV: for a Released PV with policy Delete, or a PV deleted by hand whose
        # policy is Delete (the finalizer makes the provisioner honour the policy then too)
        if pv_name not in self.volumes_deleted and (released or (deleting and delete_policy and
                                                                 pv.get("status", {}).get("phase") != "Bound")):
            try:
                await with_faults(self.cluster, "delete", pv_name, drv,
                                  lambda: backends(self.cluster)[drv].delete_volume(pv))
            except CSIError as e:
                await self._call(drv, "create events")
                self.event(pv, "Warning", "VolumeFailedDelete", str(e), self.component(drv))
                raise Retry() from e
            self.volumes_deleted.add(pv_name)
            if not deleting:
                await self._call(drv, "delete persistentvolumes")
                if self.store.exists(self.pv_rt, None, pv_name):
                    self.store.delete(self.pv_rt, None, pv_name)
        # the PV is marked for deletion: drop our finalizer (pv-protection is the PV controller's)
        if self.store.exists(self.pv_rt, None, pv_name):
            cur = self.store.get(self.pv_rt, None, pv_name)
            if PROVISIONER_FINALIZER in (cur["metadata"].get("finalizers") or []):
                await self._call(drv, "patch persistentvolumes")
                self.store.finalize(self.pv_rt, None, pv_name, PROVISIONER_FINALIZER)
        if not self.store.exists(self.pv_rt, None, pv_name):
            self.volumes_deleted.discard(pv_name)
