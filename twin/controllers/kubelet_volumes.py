"""The kubelet's volume manager: wait for claims to bind and volumes to attach, mount, unmount.

A claim's volume is ready to mount once the PVC is Bound to an existing PV and, for a CSI driver whose
CSIDriver object says attachRequired (or that has no CSIDriver object, as in kubelet's csi plugin), once
the VolumeAttachment for (PV, node) reports status.attached. Waiting is event-driven: the store hook
wakes exactly the pods that wait on the PVC, PV, VolumeAttachment or CSIDriver that changed.
node.status.volumesInUse lists `kubernetes.io/csi/<driver>^<handle>` for every volume mounted or being
mounted on the node, as the real kubelet reports it for the attach-detach controller.
"""
from __future__ import annotations

import asyncio
import base64
import collections
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from .. import calibration
from . import kubelet_runtime
from .base import Kind
from .node_status import NodeStatusList


@dataclass
class Volume:
    name: str                 # the pod's volume name
    kind: str                 # pvc, emptyDir, configMap, secret, hostPath, projected, other
    driver: str = ""          # CSI driver (or kubernetes.io/<plugin>) of a claim's volume
    unique: str = ""          # unique volume name as in node.status.volumesInUse
    pv: dict | None = None
    source: dict = field(default_factory=dict)


class VolumeManager:
    cm_rt = Kind("", "v1", "configmaps")
    secret_rt = Kind("", "v1", "secrets")

    def __init__(self, kubelet) -> None:
        self.k = kubelet
        s = self.store = kubelet.store
        self.waiters: dict[tuple, set[asyncio.Future]] = collections.defaultdict(set)
        self.va_index: dict[tuple[str, str], str] = {}  # (pv, node) -> VolumeAttachment name
        self.in_use: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.status = NodeStatusList(s, kubelet.nodes_rt, "volumesInUse", lambda node: sorted(self.in_use[node]))
        for e in s.list_entries(self.k.va_rt):
            self._index_va("ADDED", e.obj)

    # store events ---------------------------------------------------------------------------
    def on_change(self, rtype, etype: str, obj: dict) -> None:
        key, md = rtype.key, obj["metadata"]
        if key == self.k.pvc_rt.key:
            self._wake(("pvc", md["namespace"], md["name"]))
        elif key == self.k.pv_rt.key:
            self._wake(("pv", md["name"]))
        elif key == self.k.va_rt.key:
            self._index_va(etype, obj)
        elif key == self.k.drv_rt.key:
            self._wake(("csidriver", md["name"]))
        elif key == self.cm_rt.key:
            self._wake(("configmap", md["namespace"], md["name"]))
        elif key == self.secret_rt.key:
            self._wake(("secret", md["namespace"], md["name"]))

    def _index_va(self, etype: str, va: dict) -> None:
        spec = va.get("spec") or {}
        pv = (spec.get("source") or {}).get("persistentVolumeName")
        node = spec.get("nodeName")
        if not pv or not node:
            return
        if etype == "DELETED":
            if self.va_index.get((pv, node)) == va["metadata"]["name"]:
                del self.va_index[(pv, node)]
        else:
            self.va_index[(pv, node)] = va["metadata"]["name"]
        self._wake(("va", pv, node))

    def _wake(self, key: tuple) -> None:
        for fut in self.waiters.pop(key, ()):
            if not fut.done():
                fut.set_result(None)

    async def wait(self, check: Callable[[], tuple[bool, list[tuple]]], timeout: float) -> bool:
        """Wait until check() says ready, woken by changes of the objects it names; False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            ready, keys = check()
            if ready:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            fut = asyncio.get_running_loop().create_future()
            for k in keys:
                self.waiters[k].add(fut)
            try:
                await asyncio.wait_for(fut, left)
            except TimeoutError:
                pass
            finally:
                for k in keys:
                    ws = self.waiters.get(k)
                    if ws is not None:
                        ws.discard(fut)
                        if not ws:
                            self.waiters.pop(k, None)

    # readiness of one volume ----------------------------------------------------------------
    def resolve(self, pod: dict, vol: dict, node: str) -> tuple[Volume | None, list[tuple], str]:
        """(volume when ready to mount, keys to wait on, what is missing: unbound / unattached / missing)."""
        ns = pod["metadata"]["namespace"]
        objs = self.store.objects
        if vol.get("persistentVolumeClaim"):
            claim = vol["persistentVolumeClaim"].get("claimName", "")
            ce = objs[self.k.pvc_rt.key].get((ns, claim))
            if ce is None or ce.obj.get("status", {}).get("phase") != "Bound" or not ce.obj["spec"].get("volumeName"):
                return None, [("pvc", ns, claim)], "unbound"
            pv_name = ce.obj["spec"]["volumeName"]
            pve = objs[self.k.pv_rt.key].get(("", pv_name))
            if pve is None:
                return None, [("pv", pv_name), ("pvc", ns, claim)], "unbound"
            pv = pve.obj
            csi = pv["spec"].get("csi")
            if csi:
                driver = csi.get("driver", "")
                unique = f"kubernetes.io/csi/{driver}^{csi.get('volumeHandle', pv_name)}"
                de = objs[self.k.drv_rt.key].get(("", driver))
                attach = (de.obj.get("spec") or {}).get("attachRequired", True) if de else True
                if attach:
                    va_name = self.va_index.get((pv_name, node))
                    vae = objs[self.k.va_rt.key].get(("", va_name)) if va_name else None
                    if vae is None or not (vae.obj.get("status") or {}).get("attached"):
                        return None, [("va", pv_name, node), ("csidriver", driver), ("pvc", ns, claim)], "unattached"
            else:
                plugin = next((k for k in pv["spec"] if k not in _PV_COMMON), "unknown")
                driver, unique = f"kubernetes.io/{plugin}", f"kubernetes.io/{plugin}/{pv_name}"
            return Volume(vol["name"], "pvc", driver, unique, pv, vol), [], ""
        for kind, rt_name, optional_key in (("configMap", "configmap", "name"), ("secret", "secret", "secretName")):
            src = vol.get(kind)
            if src is not None:
                ref = src.get(optional_key, "")
                rt = self.cm_rt if kind == "configMap" else self.secret_rt
                if not src.get("optional") and (ns, ref) not in objs[rt.key]:
                    return None, [(rt_name, ns, ref)], "missing"
                return Volume(vol["name"], kind, source=vol), [], ""
        for kind in ("emptyDir", "hostPath", "projected", "downwardAPI", "csi", "ephemeral"):
            if kind in vol:
                return Volume(vol["name"], kind, source=vol), [], ""
        return Volume(vol["name"], "other", source=vol), [], ""

    # mount / unmount ------------------------------------------------------------------------
    async def mount(self, node: str, v: Volume) -> None:
        if v.unique:
            self.in_use[node][v.unique] += 1
            self._flush_soon(node)
        if v.kind == "pvc":
            await self.k.sleep(self._latency("mount", v.driver))

    async def unmount(self, node: str, v: Volume) -> None:
        try:
            if v.kind == "pvc":
                await self.k.gate("kubelet-unmount")  # `stall:kubelet-unmount` holds the volume in use
                await self.k.sleep(self._latency("unmount", v.driver))
        finally:
            self.release(node, v)

    def release(self, node: str, v: Volume) -> None:
        if v.unique and self.in_use[node][v.unique] > 0:
            self.in_use[node][v.unique] -= 1
            if not self.in_use[node][v.unique]:
                del self.in_use[node][v.unique]
            self._flush_soon(node)

    @staticmethod
    def _latency(op: str, driver: str) -> float:
        try:
            return calibration.load().kubelet_latency(op, driver or None)
        except calibration.CalibrationError:
            return 0.3

    def flush(self, node: str) -> None:
        """Write node.status.volumesInUse now (before the pod whose volumes went is deleted)."""
        self.status.now(node)

    def _flush_soon(self, node: str) -> None:
        self.status.soon(node)

    # host directories for containers that run as host processes -----------------------------
    def plan_host_dirs(self, pod: dict, volumes: dict[str, Volume], pod_dir: Path) -> list[tuple]:
        """What host_dirs() must do, read from the store on the loop's thread (the files' bytes included)."""
        back = kubelet_runtime.backing()
        plan: list[tuple] = []
        for name, v in volumes.items():
            if v.kind == "pvc" and back is not None and v.pv is not None:
                plan.append((name, "backing", v.pv))
            elif v.kind == "hostPath":
                plan.append((name, "path", Path(v.source["hostPath"].get("path", "/"))))
            else:
                d = pod_dir / "volumes" / f"kubernetes.io~{v.kind.lower()}" / name
                files = self._keys(pod["metadata"]["namespace"], v) if v.kind in ("configMap", "secret") else {}
                plan.append((name, "dir", (d, files)))
        return plan

    @staticmethod
    def host_dirs(plan: list[tuple]) -> dict[str, Path]:
        """Volume name -> host directory, created; blocking (mkfs of the PMEM backing), so run off the loop."""
        out: dict[str, Path] = {}
        for name, kind, arg in plan:
            back = kubelet_runtime.backing()
            if kind == "backing" and back is not None:
                out[name] = Path(back.volume_dir(arg))
            elif kind == "path":
                out[name] = arg
            else:
                d, files = arg
                d.mkdir(parents=True, exist_ok=True)
                for rel, raw in files.items():
                    f = d / rel
                    f.parent.mkdir(parents=True, exist_ok=True)
                    f.write_bytes(raw)
                out[name] = d
        return out

    def _keys(self, ns: str, v: Volume) -> dict[str, bytes]:
        """The files a configMap / secret volume shows: key (or items[].path) -> content."""
        src = v.source[v.kind]
        rt = self.cm_rt if v.kind == "configMap" else self.secret_rt
        e = self.store.objects[rt.key].get((ns, src.get("name") or src.get("secretName", "")))
        if e is None:
            return {}
        data: dict[str, bytes] = {}
        for k, val in (e.obj.get("data") or {}).items():
            data[k] = base64.b64decode(val) if v.kind == "secret" else str(val).encode()
        for k, val in (e.obj.get("binaryData") or {}).items():
            data[k] = base64.b64decode(val)
        items = src.get("items")
        if items is None:
            return data
        return {i.get("path", i["key"]): data[i["key"]] for i in items if i.get("key") in data}


# keys of a PV spec that are not its volume source
_PV_COMMON = {"accessModes", "capacity", "claimRef", "mountOptions", "nodeAffinity", "persistentVolumeReclaimPolicy",
              "storageClassName", "volumeMode", "volumeAttributesClassName"}
