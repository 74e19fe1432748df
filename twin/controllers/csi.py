"""The CSI controller calls as the twin's sidecars make them: a Backend per driver, its gRPC errors, and the
registry `cluster.csi_backends[driver]` the provisioner, attacher and snapshotter look drivers up in.

Backends implement the CSI controller calls as coroutines and raise CSIError with a gRPC code; the sidecars
turn errors into events / status and retry with backoff. POST /_twin/storage answers every storage
controller's figures (throttles, attach slots, Trident's locks, fault hits): `cluster.storage_stats[name] =
fn(body) -> dict` adds one. Drivers: alibaba_csi.py (disk, local), trident.py; csi_drivers.py registers them.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Coroutine

from .. import calibration

if TYPE_CHECKING:
    from ..context import ClusterContext

DISK = "diskplugin.csi.alibabacloud.com"
LOCAL = "localplugin.csi.alibabacloud.com"
TRIDENT = "csi.trident.netapp.io"
DISK_TOPOLOGY_KEY = "topology.diskplugin.csi.alibabacloud.com/zone"


class CSIError(Exception):
    """A CSI call's gRPC error: code (Aborted, InvalidArgument, Internal, DeadlineExceeded, ...) and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"rpc error: code = {code} desc = {message}")
        self.code = code
        self.message = message


class Backend:
    """The controller side of one CSI driver. Subclasses override what their driver supports."""

    driver = ""
    topology_key: str | None = None

    def __init__(self, cluster: ClusterContext) -> None:
        self.cluster = cluster
        self.cal = calibration.load()

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        return asyncio.sleep(seconds * self.cluster.time_scale)

    # throttles of this driver's sidecars (None: not modelled, the managed sidecar is not the bottleneck)
    def sidecar(self, role: str) -> Any:
        return None

    async def create_volume(self, req: dict[str, Any]) -> dict[str, Any]:
        """req: name (pv name), capacity_bytes, parameters (SC), pvc, node (selected node or None),
        source: None | {"kind": "snapshot"|"volume", "handle": ...}.
        Returns {"volume_handle", "capacity_bytes", "attributes": {...}, "accessible_topology": {k: v} | None}."""
        raise CSIError("Unimplemented", f"{self.driver} cannot create volumes")

    async def delete_volume(self, pv: dict[str, Any]) -> None:
        raise CSIError("Unimplemented", f"{self.driver} cannot delete volumes")

    async def publish(self, pv: dict[str, Any], node: str) -> dict[str, str]:
        return {}

    async def unpublish(self, pv: dict[str, Any], node: str) -> None:
        return None

    async def create_snapshot(self, pv: dict[str, Any], name: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """Returns {"snapshot_handle", "restore_size" (bytes), "creation_time" (ns since epoch)}."""
        raise CSIError("Unimplemented", f"{self.driver} cannot take snapshots")

    async def delete_snapshot(self, handle: str) -> None:
        raise CSIError("Unimplemented", f"{self.driver} cannot delete snapshots")

    def stats(self, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return {}


def backends(cluster: ClusterContext) -> dict[str, Backend]:
    return cluster.csi_backends


def stats_registry(cluster: ClusterContext) -> dict[str, Callable[[dict[str, Any]], Any]]:
    return cluster.storage_stats


async def with_faults(cluster: ClusterContext, operation: str, key: str, driver: str, call: Any) -> Any:
    """Run one CSI call (an awaitable factory) unless an injected fault fails or hangs it first."""
    f = cluster.faults.op_fault(operation, key, driver)
    if f is not None:
        if f.mode == "timeout":
            await asyncio.sleep(f.seconds * cluster.time_scale)
        raise CSIError(f.code, f.message)
    return await call()
