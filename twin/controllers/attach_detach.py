"""kube-controller-manager's attach-detach controller plus the csi-attacher sidecar of each driver.

attach-detach: for every pod bound to a node whose PVC-backed volumes belong to a CSI driver with
attachRequired (CSIDriver object), a VolumeAttachment `csi-<sha256(volumeHandle + driver + nodeName)>` (the
name pkg/volume/csi/csi_attacher.go computes) with spec.attacher / nodeName / source.persistentVolumeName.
When no pod on that node uses the volume any more (the pod object is gone or it finished), the volume is to be
detached - but, as reconciler.go does, only once the node's kubelet no longer lists it in node.status.volumesInUse
(`kubernetes.io/csi/<driver>^<handle>`, written by kubelet_volumes.py while it mounts, uses and unmounts it) or
after maxWaitForUnmountDuration (6 min, times the time scale) since the detach was first wanted (a forced detach);
a pod that wants the volume again meanwhile cancels it. Then the volume leaves node.status.volumesAttached and the
VolumeAttachment is deleted. node.status.volumesAttached lists (devicePath "", as for CSI) each volume whose
VolumeAttachment reported attached. Events on the pods: SuccessfulAttachVolume, FailedAttachVolume
("AttachVolume.Attach failed for volume ...: rpc error: ...").

csi-attacher: adds the finalizer external-attacher/<driver>, calls ControllerPublish on the driver backend
(with its per-node slots, ECS conflicts, Trident locks), sets status.attached + attachmentMetadata, or
status.attachError and retries with backoff (1 s doubling up to 5 min). A deleted VolumeAttachment is detached
(ControllerUnpublish; status.detachError on failure) and its finalizer dropped.
Deviations: the kubelet mounts once the VolumeAttachment is attached instead of waiting for the volume in
node.status.volumesAttached; a volume counts as mounted exactly while it is in volumesInUse (the real controller
assumes a newly attached volume mounted until a node status first lists it, so a pod deleted before its kubelet ever
reported the volume waits the whole 6 min there; here it detaches at once).
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import defaultdict
from typing import Any

from .. import calibration
from ..apimachinery import errors
from ..store import now_iso
from .base import Controller
from .csi import CSIError, backends, with_faults
from .node_status import NodeStatusList
from .tokenbucket import WorkerPool
from .workqueue import Retry, WorkQueue

log = logging.getLogger("twin")

# reconcilerMaxWaitForUnmountDuration of attach_detach_controller.go: past it a still-mounted volume is detached anyway
MAX_WAIT_FOR_UNMOUNT_SECONDS = 360.0


def attachment_name(volume_handle: str, driver: str, node: str) -> str:
    """The VolumeAttachment name kubelet and attach-detach controller agree on."""
    return "csi-" + hashlib.sha256(f"{volume_handle}{driver}{node}".encode()).hexdigest()


def attacher_finalizer(driver: str) -> str:
    return "external-attacher/" + driver.replace(".", "-").replace("/", "-")


class AttachDetachController(Controller):
    name = "attachdetach-controller"

    def setup(self) -> None:
        self.cal = calibration.load()
        # desired state: (pv, node) -> pods (ns/name) that need it attached
        self.desired: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.pod_wants: dict[str, set[tuple[str, str]]] = {}
        self.pod_nodes: dict[str, str] = {}
        self.waiting_claims: dict[tuple[str, str], set[str]] = defaultdict(set)  # unbound claim -> pods
        self.pods: dict[str, dict] = {}
        self.queues: dict[str, WorkQueue] = {}
        self.attached_events: set[tuple[str, str]] = set()
        # detach wanted but the node still lists the volume in use: node -> (pv, node) -> (VA name, unique name,
        # when first wanted, forced-detach timer)
        self.to_detach: dict[str, dict[tuple[str, str], tuple[str, str, float, asyncio.TimerHandle]]] = defaultdict(dict)
        self.in_use: dict[str, set[str]] = {}  # node -> its status.volumesInUse
        self.reported: dict[str, dict[str, str]] = defaultdict(dict)  # node -> unique name -> VA, for volumesAttached
        self.attached_status = NodeStatusList(self.store, self.nodes_rt, "volumesAttached", lambda node: [
            {"name": u, "devicePath": ""} for u in sorted(self.reported[node])])

    # attach-detach controller ------------------------------------------------------------------
    async def run(self) -> None:
        await asyncio.gather(self._pods(), self._claims(), self._attachments(), self._nodes())

    async def _pods(self) -> None:
        async for etype, pod in self.watch("", "v1", "pods"):
            await self.gate()
            key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
            try:
                if etype == "DELETED" or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                    self.pods.pop(key, None)
                    self._set_wants(key, set())
                elif pod["spec"].get("nodeName"):
                    self.pods[key] = pod
                    self._set_wants(key, self._volumes_of(pod, key))
            except errors.ApiError as e:
                log.debug("attach-detach: pod %s: %s", key, e)

    async def _claims(self) -> None:
        async for etype, pvc in self.watch("", "v1", "persistentvolumeclaims"):
            if etype == "DELETED" or not pvc["spec"].get("volumeName"):
                continue
            ck = (pvc["metadata"]["namespace"], pvc["metadata"]["name"])
            for key in list(self.waiting_claims.pop(ck, ())):
                pod = self.pods.get(key)
                if pod:
                    self._set_wants(key, self._volumes_of(pod, key))

    def _attach_required(self, driver: str) -> bool:
        if not self.store.exists(self.drv_rt, None, driver):
            return True  # no CSIDriver object: Kubernetes assumes attach is required
        return bool(self.store.get(self.drv_rt, None, driver).get("spec", {}).get("attachRequired", True))

    def _volumes_of(self, pod: dict, key: str) -> set[tuple[str, str]]:
        ns, node = pod["metadata"]["namespace"], pod["spec"]["nodeName"]
        out = set()
        for v in pod["spec"].get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if not claim:
                continue
            if not self.store.exists(self.pvc_rt, ns, claim):
                self.waiting_claims[(ns, claim)].add(key)
                continue
            pv_name = self.store.get(self.pvc_rt, ns, claim)["spec"].get("volumeName")
            if not pv_name or not self.store.exists(self.pv_rt, None, pv_name):
                self.waiting_claims[(ns, claim)].add(key)
                continue
            csi = self.store.get(self.pv_rt, None, pv_name)["spec"].get("csi")
            if csi and self._attach_required(csi["driver"]):
                out.add((pv_name, node))
        return out

    def _set_wants(self, key: str, wants: set[tuple[str, str]]) -> None:
        old = self.pod_wants.get(key, set())
        for pv_node in wants - old:
            self.desired[pv_node].add(key)
            self._ensure(pv_node)
        for pv_node in old - wants:
            pods = self.desired.get(pv_node)
            if pods is not None:
                pods.discard(key)
                if not pods:
                    self.desired.pop(pv_node, None)
                    self._release(pv_node)
        if wants:
            self.pod_wants[key] = wants
        else:
            self.pod_wants.pop(key, None)

    def _ensure(self, pv_node: tuple[str, str]) -> None:
        pv_name, node = pv_node
        pending = self.to_detach[node].pop(pv_node, None)
        if pending is not None:
            pending[3].cancel()  # wanted again before it was detached (ResetDetachRequestTime)
        if not self.store.exists(self.pv_rt, None, pv_name):
            return
        csi = self.store.get(self.pv_rt, None, pv_name)["spec"]["csi"]
        name = attachment_name(csi["volumeHandle"], csi["driver"], node)
        if self.store.exists(self.va_rt, None, name):
            return  # exists (if it is being detached, it is re-created once gone: see _attachments)
        self.store.create(self.va_rt, None, {
            "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": name},
            "spec": {"attacher": csi["driver"], "nodeName": node, "source": {"persistentVolumeName": pv_name}},
            "status": {"attached": False}})

    def _release(self, pv_node: tuple[str, str]) -> None:
        pv_name, node = pv_node
        # the attachment's name follows from the PV's handle (as in _ensure): no scan of every VolumeAttachment
        # per released volume, which made detaching N volumes cost N^2 reads (docs/calibration.md, 1000 volumes)
        csi = self.store.get(self.pv_rt, None, pv_name)["spec"].get("csi") if self.store.exists(self.pv_rt, None, pv_name) else None
        if csi:
            name = attachment_name(csi["volumeHandle"], csi["driver"], node)
            if self.store.exists(self.va_rt, None, name):
                va = self.store.get(self.va_rt, None, name)
                if (va["spec"].get("source") or {}).get("persistentVolumeName") == pv_name and va["spec"].get("nodeName") == node:
                    if not va["metadata"].get("deletionTimestamp") and pv_node not in self.to_detach[node]:
                        unique = f"kubernetes.io/csi/{csi['driver']}^{csi['volumeHandle']}"
                        wait = MAX_WAIT_FOR_UNMOUNT_SECONDS * self.cluster.time_scale
                        timer = asyncio.get_running_loop().call_later(wait, self._detach, pv_node, True)
                        self.to_detach[node][pv_node] = (name, unique, time.monotonic(), timer)
                        if unique not in self.in_use.get(node, ()):
                            self._detach(pv_node)
                    return
        for e in self.store.list_entries(self.va_rt):  # the PV is gone: find its attachment the long way
            sp = e.obj["spec"]
            if sp.get("nodeName") == node and sp.get("source", {}).get("persistentVolumeName") == pv_name \
                    and not e.obj["metadata"].get("deletionTimestamp"):
                self.store.delete(self.va_rt, None, e.obj["metadata"]["name"])

    async def _nodes(self) -> None:
        """The nodes' volumesInUse as the informer shows them; a volume leaving it releases its pending detach."""
        async for etype, node in self.watch("", "v1", "nodes"):
            name = node["metadata"]["name"]
            if etype == "DELETED":
                self.in_use.pop(name, None)  # no kubelet holds anything there any more
                in_use: set[str] = set()
            else:
                in_use = self.in_use[name] = set((node.get("status") or {}).get("volumesInUse") or [])
            for pv_node, (_, unique, _, _) in list(self.to_detach.get(name, {}).items()):
                if unique not in in_use:
                    self._detach(pv_node)

    def _detach(self, pv_node: tuple[str, str], forced: bool = False) -> None:
        """Detach now: off node.status.volumesAttached, then the VolumeAttachment deleted (reconciler.go)."""
        pv_name, node = pv_node
        pending = self.to_detach[node].pop(pv_node, None)
        if pending is None:
            return
        name, unique, since, timer = pending
        timer.cancel()
        if forced:
            log.warning("attach-detach: volume %s on node %s is not safe to detach, but maxWaitForUnmountDuration "
                        "expired (%.0f s), force detaching", pv_name, node, time.monotonic() - since)
        if self.reported[node].pop(unique, None) is not None:
            self._write_attached(node)
        if self.store.exists(self.va_rt, None, name) and not self.store.get(self.va_rt, None, name)["metadata"].get("deletionTimestamp"):
            self.store.delete(self.va_rt, None, name)

    def _report_attached(self, va: dict) -> None:
        pv_name, node = va["spec"]["source"].get("persistentVolumeName"), va["spec"]["nodeName"]
        pv = self.store.peek(self.pv_rt, None, pv_name)
        csi = (pv["spec"].get("csi") if pv is not None else None) or {}
        if csi and (pv_name, node) not in self.to_detach[node]:
            unique = f"kubernetes.io/csi/{csi['driver']}^{csi['volumeHandle']}"
            if self.reported[node].get(unique) != va["metadata"]["name"]:
                self.reported[node][unique] = va["metadata"]["name"]
                self._write_attached(node)

    def _write_attached(self, node: str) -> None:
        """node.status.volumesAttached as the nodeStatusUpdater writes it."""
        self.attached_status.soon(node)

    def pod_event(self, va: dict, etype: str, reason: str, message: str) -> None:
        key = (va["spec"]["source"].get("persistentVolumeName"), va["spec"]["nodeName"])
        for pk in sorted(self.desired.get(key, ())):
            pod = self.pods.get(pk)
            if pod:
                self.event(pod, etype, reason, message, self.name)

    # csi-attacher -----------------------------------------------------------------------------
    def queue(self, driver: str) -> WorkQueue:
        q = self.queues.get(driver)
        if q is None:
            th = backends(self.cluster)[driver].sidecar("attacher")
            if th is not None:
                pool = th.pool
            else:
                try:
                    size = self.cal.limit(driver, "attacher_workers")
                except KeyError:
                    size = self.cal.limit("csi-sidecar", "attacher_workers")
                pool = WorkerPool(size)
            start, cap = 1.0, 300.0
            try:
                start, cap = self.cal.number(driver, "retry_start"), self.cal.number(driver, "retry_max")
            except KeyError:
                pass
            q = WorkQueue(f"csi-attacher/{driver}", self.sync_attachment, pool, self.cluster.time_scale, start, cap,
                          gate=lambda: self.gate("csi-attacher"))
            q.start()
            self.queues[driver] = q
        return q

    async def _attachments(self) -> None:
        async for etype, va in self.watch("storage.k8s.io", "v1", "volumeattachments"):
            drv = va["spec"].get("attacher")
            if etype == "DELETED":
                pv = va["spec"].get("source", {}).get("persistentVolumeName")
                key = (pv, va["spec"].get("nodeName"))
                self.attached_events.discard(key)
                for unique, va_name in list(self.reported.get(key[1], {}).items()):
                    if va_name == va["metadata"]["name"]:  # deleted by someone else: no longer attached
                        self.reported[key[1]].pop(unique, None)
                        self._write_attached(key[1])
                if key in self.desired:
                    self._ensure(key)  # a pod wants it again: attach anew
                continue
            if drv not in backends(self.cluster):
                continue
            if va["metadata"].get("deletionTimestamp") or not va.get("status", {}).get("attached"):
                self.queue(drv).add(va["metadata"]["name"])

    async def _call(self, driver: str, verb: str) -> None:
        th = backends(self.cluster)[driver].sidecar("attacher")
        if th is not None:
            await th.call("kube", verb)

    async def sync_attachment(self, name: str) -> None:
        if not self.store.exists(self.va_rt, None, name):
            return
        va = self.store.get(self.va_rt, None, name)
        drv = va["spec"]["attacher"]
        fin = attacher_finalizer(drv)
        backend = backends(self.cluster)[drv]
        pv_name = va["spec"]["source"].get("persistentVolumeName")
        node = va["spec"]["nodeName"]
        if va["metadata"].get("deletionTimestamp"):
            if fin not in (va["metadata"].get("finalizers") or []):
                return
            pv = self.store.get(self.pv_rt, None, pv_name) if self.store.exists(self.pv_rt, None, pv_name) else None
            if pv is not None and (va.get("status", {}).get("attached") or backend_attached(backend, pv, node)):
                try:
                    await with_faults(self.cluster, "detach", pv_name, drv, lambda: backend.unpublish(pv, node))
                except CSIError as e:
                    await self._call(drv, "patch volumeattachments/status")
                    cur = self.store.get(self.va_rt, None, name)
                    cur["status"] = dict(cur.get("status") or {}, detachError={"message": str(e), "time": now_iso()})
                    self.store.update(self.va_rt, None, name, cur, subresource="status")
                    raise Retry() from e
            await self._call(drv, "patch volumeattachments/status")
            if self.store.exists(self.va_rt, None, name):
                cur = self.store.get(self.va_rt, None, name)
                cur["status"] = {"attached": False}
                self.store.update(self.va_rt, None, name, cur, subresource="status")
                await self._call(drv, "patch volumeattachments")
                self.store.finalize(self.va_rt, None, name, fin)
            return
        if va.get("status", {}).get("attached"):
            return
        if not self.store.exists(self.pv_rt, None, pv_name):
            raise Retry()
        pv = self.store.get(self.pv_rt, None, pv_name)
        if fin not in (va["metadata"].get("finalizers") or []):
            await self._call(drv, "patch volumeattachments")
            va["metadata"]["finalizers"] = (va["metadata"].get("finalizers") or []) + [fin]
            va = self.store.update(self.va_rt, None, name, va, _internal=True)
        try:
            meta = await with_faults(self.cluster, "attach", pv_name, drv, lambda: backend.publish(pv, node))
        except CSIError as e:
            await self._call(drv, "patch volumeattachments/status")
            if self.store.exists(self.va_rt, None, name):
                cur = self.store.get(self.va_rt, None, name)
                cur["status"] = {"attached": False, "attachError": {"message": str(e), "time": now_iso()}}
                self.store.update(self.va_rt, None, name, cur, subresource="status")
                self.pod_event(cur, "Warning", "FailedAttachVolume",
                               f'AttachVolume.Attach failed for volume "{pv_name}" : {e}')
            raise Retry() from e
        await self._call(drv, "patch volumeattachments/status")
        if not self.store.exists(self.va_rt, None, name):
            return
        cur = self.store.get(self.va_rt, None, name)
        cur["status"] = {"attached": True, "attachmentMetadata": {k: str(v) for k, v in (meta or {}).items()}}
        cur = self.store.update(self.va_rt, None, name, cur, subresource="status")
        self._report_attached(cur)
        key = (pv_name, node)
        if key not in self.attached_events:
            self.attached_events.add(key)
            self.pod_event(cur, "Normal", "SuccessfulAttachVolume", f'AttachVolume.Attach succeeded for volume "{pv_name}" ')


def backend_attached(backend: Any, pv: dict, node: str) -> bool:
    """Whether the backend still has the volume on the node (a VA deleted mid-attach still needs a detach)."""
    fn = getattr(backend, "is_attached", None)
    return bool(fn(pv, node)) if fn else False
