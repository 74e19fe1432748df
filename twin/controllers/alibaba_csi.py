"""The controller side of the Alibaba Cloud CSI plugins: cloud disks (ECS) and local PMEM volumes.

Disk attach/detach follows pkg/disk/attachdetach_slot.go and ECS as docs/reference/alibaba.md describes them:
- Per node slots from the FeatureGates (cloud.driver_limits): with (1, 1) ONE slot shared by attach and
  detach, detach first; with DiskADController + DiskParallelAttach (provisioner addon) and DiskADController
  (csi-plugin): 32 attach slots; detach 1, or 5 with DiskParallelDetach.
- ECS itself: an AttachDisk/DetachDisk while another disk operation runs on the same instance is rejected with
  InvalidOperation.Conflict (gRPC Aborted; the attacher retries with backoff) unless the instance carries the
  tag supportConcurrencyAttach=true (supportConcurrencyDetach=true for detaches). Accepted operations overlap,
  but the instance hot-plugs one disk at a time (attach_hotplug): that is why 56 parallel attaches take ~37 s
  and not ~3 s (seed 000).
- With DiskADController on, a disk without a serial number cannot be attached by the controller
  (InvalidArgument), checked before the slot is taken (attachDisk: `!fromNode && disk.SerialNumber == ""`).
- DiskADController without DiskParallelAttach (the attach-stress attribution's middle variant): the controller
  attaches, but still one disk at a time per node with one slot shared with detach - pkg/disk/controllerserver.go
  builds its slots with NewSlots(detach, attach), both 1 unless DiskParallelDetach / DiskParallelAttach, exactly
  as pkg/disk/nodeserver.go's NewSlots(1, 1) for the node's own attach ("if ADController is not enabled, we need
  serial attach to recognize old disk"). So it times like "off"; what it changes is who attaches and the serial
  number rule. cloud.driver_limits gives (1, 1) for both.
Deviation: with DiskADController off the real csi-plugin attaches on the node inside NodeStageVolume and the
VolumeAttachment is marked attached at once; the twin attaches in the controller in both modes (same slot,
same timing to pod start), so VolumeAttachment.status.attached always means "the disk is on the instance".
"""
from __future__ import annotations

import asyncio
import collections
import secrets
import time
import uuid
from typing import TYPE_CHECKING, Any

from . import vclock
from .csi import DISK, DISK_TOPOLOGY_KEY, LOCAL, Backend, CSIError

if TYPE_CHECKING:
    from ..context import ClusterContext

GIB = 1024 ** 3


class NodeSlots:
    """Attach/detach slots of one node, with limits re-read on every grant (gates may flip at run time)."""

    def __init__(self, limits) -> None:
        self.limits = limits
        self.inflight = {"attach": 0, "detach": 0}
        self.vend = 0.0  # scheduled end of the last operation that released a slot (see vclock.py)
        self.waiters: dict[str, collections.deque] = {"detach": collections.deque(), "attach": collections.deque()}

    def _can(self, kind: str) -> bool:
        a, d = self.limits()
        if (a, d) == (1, 1):  # one slot for both
            return self.inflight["attach"] + self.inflight["detach"] == 0
        return self.inflight[kind] < (a if kind == "attach" else d)

    def dispatch(self) -> None:
        for kind in ("detach", "attach"):  # detach first
            q = self.waiters[kind]
            while q and self._can(kind):
                fut = q.popleft()
                if fut.done():
                    continue
                self.inflight[kind] += 1
                fut.set_result(None)

    async def acquire(self, kind: str) -> float:
        """Wait for a slot; return the virtual start time of the operation (vclock.py)."""
        arrival = vclock.now()
        if not self.waiters["detach"] and not self.waiters[kind] and self._can(kind):
            self.inflight[kind] += 1
            return arrival
        fut = asyncio.get_running_loop().create_future()
        self.waiters[kind].append(fut)
        self.dispatch()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release(kind, vclock.now())
            raise
        # handed over by a finishing operation: start where it was scheduled to end, not when we woke up
        return vclock.handed_over(arrival, self.vend)

    def release(self, kind: str, vend: float) -> None:
        self.inflight[kind] -= 1
        self.vend = vend
        self.dispatch()


class NodeStats:
    def __init__(self) -> None:
        self.ecs_inflight = {"attach": 0, "detach": 0}
        self.max_ecs = {"attach": 0, "detach": 0}
        self.done = {"attach": 0, "detach": 0}
        self.conflicts = 0
        self.invalid = 0
        # scheduled (virtual) start of the first and end of the last ECS operation since the last reset, per kind:
        # the span of a batch in cluster time, free of the machine's scheduling noise (vclock.py)
        self.span: dict[str, list[float]] = {}

    def mark(self, kind: str, start: float, end: float) -> None:
        sp = self.span.setdefault(kind, [start, end])
        sp[0], sp[1] = min(sp[0], start), max(sp[1], end)

    def doc(self, scale: float = 1.0) -> dict[str, Any]:
        def span(kind: str) -> float:
            return round((self.span[kind][1] - self.span[kind][0]) / scale, 3) if kind in self.span else 0

        return {"attach_span": span("attach"), "detach_span": span("detach"),
                "max_attaching": self.max_ecs["attach"], "max_detaching": self.max_ecs["detach"],
                "attaching": self.ecs_inflight["attach"], "detaching": self.ecs_inflight["detach"],
                "attaches": self.done["attach"], "detaches": self.done["detach"],
                "conflicts": self.conflicts, "invalid_argument": self.invalid}


class DiskBackend(Backend):
    driver = DISK
    topology_key = DISK_TOPOLOGY_KEY

    def __init__(self, cluster: ClusterContext) -> None:
        super().__init__(cluster)
        self.slots: dict[str, NodeSlots] = {}
        self.node_stats: dict[str, NodeStats] = collections.defaultdict(NodeStats)
        self.hotplug: dict[str, vclock.Lane] = collections.defaultdict(vclock.Lane)
        self.snapshots: dict[str, dict[str, Any]] = {}
        cloud = getattr(cluster, "cloud", None)
        if cloud is not None:
            cloud.subscribe(self._redispatch)
            # an operation fault's `"while": "parallel_attach"` (twin/faults.py): DiskParallelAttach in effect,
            # i.e. the running gates give the driver more than one attach slot per node (as _slots reads them)
            cluster.faults.conditions["parallel_attach"] = lambda: cloud.driver_limits()[0] > 1

    def _redispatch(self, reason: str) -> None:
        """Gates or tags changed: the slot limits may have grown, so waiters may start."""
        for s in self.slots.values():
            s.dispatch()

    @property
    def cloud(self):
        return self.cluster.cloud

    def _slots(self, node: str, instance_id: str) -> NodeSlots:
        s = self.slots.get(node)
        if s is None:
            s = self.slots[node] = NodeSlots(lambda: self.cloud.driver_limits(instance_id))
        return s

    # provisioning ------------------------------------------------------------------------------
    async def create_volume(self, req: dict[str, Any]) -> dict[str, Any]:
        params = req.get("parameters") or {}
        category = str(params.get("type", "cloud_auto")).split(",")[0]
        size_gib = max(1, -(-int(req["capacity_bytes"]) // GIB))
        zone = req.get("zone") or "cn-hangzhou-k"
        src = req.get("source")
        if src and src["kind"] == "volume":
            raise CSIError("InvalidArgument", "disk volumes cannot be cloned from a volume directly; "
                                              "create a VolumeSnapshot and restore it")
        if src:
            snap = self.snapshots.get(src["handle"])
            if snap is None:
                raise CSIError("NotFound", f"snapshot {src['handle']} not found")
            size_gib = max(size_gib, snap["size_gib"])
            await self.sleep(self.cal.latency(DISK, "clone_volume"))
        else:
            await self.sleep(self.cal.latency(DISK, "create_volume"))
        disk = self.cloud.create_disk(size_gib, category, pv_name=req["name"], zone=zone)
        attrs = {k: str(v) for k, v in params.items() if not k.startswith("csi.storage.k8s.io/")}
        attrs["storage.kubernetes.io/csiProvisionerIdentity"] = f"{int(time.time() * 1000)}-1-{DISK}"
        return {"volume_handle": disk.id, "capacity_bytes": size_gib * GIB, "attributes": attrs,
                "accessible_topology": {DISK_TOPOLOGY_KEY: zone}}

    async def delete_volume(self, pv: dict[str, Any]) -> None:
        handle = pv["spec"]["csi"]["volumeHandle"]
        disk = self.cloud.disks.get(handle)
        if disk is None:
            return  # already gone: DeleteVolume is idempotent
        if disk.instance_id:
            raise CSIError("FailedPrecondition", f"disk {handle} is In_use on instance {disk.instance_id}; "
                                                 "ECS DeleteDisk refuses attached disks")
        await self.sleep(self.cal.latency(DISK, "delete_volume"))
        self.cloud.delete_disk(handle)

    # attach / detach ---------------------------------------------------------------------------
    async def _ecs(self, node: str, instance_id: str, kind: str, disk: Any, vstart: float) -> float:
        """One ECS AttachDisk/DetachDisk call and its wait, as ECS serves it; returns its scheduled end."""
        st = self.node_stats[node]
        scale = self.cluster.time_scale
        busy = st.ecs_inflight["attach"] + st.ecs_inflight["detach"]
        if busy and not self.cloud.ecs_allows_concurrent(instance_id, kind):
            end = vstart + self.cal.latency(DISK, "conflict") * scale
            await vclock.sleep_until(end)
            st.conflicts += 1
            op = "AttachDisk" if kind == "attach" else "DetachDisk"
            raise CSIError("Aborted", f"{op} {disk.id} to {instance_id}: InvalidOperation.Conflict: the "
                                      "instance has another disk operation in progress; tag it "
                                      f"supportConcurrency{kind.capitalize()}=true to run them in parallel")
        st.ecs_inflight[kind] += 1
        st.max_ecs[kind] = max(st.max_ecs[kind], st.ecs_inflight[kind])
        try:
            disk.status = "Attaching" if kind == "attach" else "Detaching"
            ready = vstart + self.cal.latency(DISK, kind) * scale
            # the instance hot-plugs one disk at a time
            end = await self.hotplug[instance_id].run(self.cal.latency(DISK, f"{kind}_hotplug") * scale, ready)
            st.mark(kind, vstart, end)
            if kind == "attach":
                disk.instance_id, disk.status = instance_id, "In_use"
                n = sum(1 for d in self.cloud.disks.values() if d.instance_id == instance_id)
                disk.device = f"/dev/vd{chr(ord('b') + n % 24)}"
            else:
                disk.instance_id, disk.status, disk.device = None, "Available", ""
            st.done[kind] += 1
            return end
        finally:
            st.ecs_inflight[kind] -= 1

    def _resolve(self, pv: dict[str, Any], node: str):
        inst = self.cloud.instance_by_node(node)
        if inst is None:
            raise CSIError("NotFound", f"node {node} is not an ECS instance of this cluster")
        handle = pv["spec"]["csi"]["volumeHandle"]
        disk = self.cloud.disks.get(handle)
        if disk is None:
            raise CSIError("NotFound", f"disk {handle} not found")
        return inst, disk

    async def publish(self, pv: dict[str, Any], node: str) -> dict[str, str]:
        inst, disk = self._resolve(pv, node)
        if disk.instance_id == inst.id:
            return {"diskId": disk.id, "serialNumber": disk.serial_number or ""}
        if disk.instance_id:
            raise CSIError("FailedPrecondition", f"disk {disk.id} is attached to {disk.instance_id}")
        if self.cloud.controller_attach() and not disk.serial_number:
            self.node_stats[node].invalid += 1
            raise CSIError("InvalidArgument", f"disk {disk.id} has no serial number (created before 2020-06-10): "
                                              "it cannot be attached by the controller with DiskADController "
                                              "enabled")
        await self._in_slot(node, inst.id, "attach", disk)
        return {"diskId": disk.id, "serialNumber": disk.serial_number or ""}

    def is_attached(self, pv: dict[str, Any], node: str) -> bool:
        inst = self.cloud.instance_by_node(node)
        disk = self.cloud.disks.get(pv["spec"]["csi"]["volumeHandle"])
        return bool(inst and disk and disk.instance_id == inst.id)

    async def unpublish(self, pv: dict[str, Any], node: str) -> None:
        inst, disk = self._resolve(pv, node)
        if disk.instance_id != inst.id:
            return  # not attached here: ControllerUnpublish is idempotent
        await self._in_slot(node, inst.id, "detach", disk)

    async def _in_slot(self, node: str, instance_id: str, kind: str, disk: Any) -> None:
        """One attach or detach: a slot of the node (NodeSlots), then the ECS call, then the slot is handed on."""
        slots = self._slots(node, instance_id)
        vstart = await slots.acquire(kind)
        vend = vclock.now()
        try:
            vend = await self._ecs(node, instance_id, kind, disk, vstart)
        finally:
            slots.release(kind, vend)

    # snapshots ---------------------------------------------------------------------------------
    async def create_snapshot(self, pv: dict[str, Any], name: str, parameters: dict[str, Any]) -> dict[str, Any]:
        disk = self.cloud.disks.get(pv["spec"]["csi"]["volumeHandle"])
        if disk is None:
            raise CSIError("NotFound", f"disk {pv['spec']['csi']['volumeHandle']} not found")
        await self.sleep(self.cal.latency(DISK, "create_snapshot"))
        sid = "s-" + secrets.token_hex(10)
        self.snapshots[sid] = {"disk": disk.id, "size_gib": disk.size_gib, "name": name}
        return {"snapshot_handle": sid, "restore_size": disk.size_gib * GIB, "creation_time": time.time_ns()}

    async def delete_snapshot(self, handle: str) -> None:
        if handle in self.snapshots:
            await self.sleep(self.cal.latency(DISK, "delete_snapshot"))
            self.snapshots.pop(handle, None)

    def stats(self, body: dict[str, Any] | None = None) -> dict[str, Any]:
        if body and "attach" in (body.get("reset") or []):
            for s in self.node_stats.values():
                s.max_ecs = dict(s.ecs_inflight)
                s.conflicts = s.invalid = 0
                s.done = {"attach": 0, "detach": 0}
                s.span = {}
        return {"nodes": {n: s.doc(self.cluster.time_scale) for n, s in self.node_stats.items()},
                "snapshots": len(self.snapshots)}


class LocalBackend(Backend):
    """PMEM/LVM local volumes: WaitForFirstConsumer, the volume lives on the selected node."""

    driver = LOCAL
    topology_key = "kubernetes.io/hostname"

    async def create_volume(self, req: dict[str, Any]) -> dict[str, Any]:
        node = req.get("node")
        if not node:
            raise CSIError("InvalidArgument", "local volumes need volumeBindingMode WaitForFirstConsumer "
                                              "(no selected node)")
        if req.get("source"):
            raise CSIError("InvalidArgument", "local volumes cannot be cloned")
        await self.sleep(self.cal.latency(LOCAL, "create_volume"))
        params = req.get("parameters") or {}
        attrs = {k: str(v) for k, v in params.items() if not k.startswith("csi.storage.k8s.io/")}
        attrs.setdefault("volumeType", "PMEM")
        if attrs.get("volumeType") == "PMEM":
            attrs.setdefault("pmemType", "lvm")
            if attrs["pmemType"] == "lvm":
                attrs.setdefault("lvmType", "linear")
                attrs.setdefault("vgName", "pmemvgregion0")
        attrs["storage.kubernetes.io/csiProvisionerIdentity"] = f"{int(time.time() * 1000)}-1-{LOCAL}"
        return {"volume_handle": req["name"] or str(uuid.uuid4()), "capacity_bytes": int(req["capacity_bytes"]),
                "attributes": attrs, "accessible_topology": {"kubernetes.io/hostname": node}}

    async def delete_volume(self, pv: dict[str, Any]) -> None:
        await self.sleep(self.cal.latency(LOCAL, "delete_volume"))
