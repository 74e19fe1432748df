"""The twin's NetApp Trident: operator, CRs, backends, and the CSI controller's locking (seed 002).

Objects created at start (Trident 26.06.0 as in the seed, docs/reference/trident.md):
- namespace trident; TridentOrchestrator `trident` (cluster scoped; spec.namespace trident, enableConcurrency
  false) whose status goes Installing -> Installed (status.version, currentInstallationParams with every value
  a STRING, e.g. enableConcurrency "false", k8sAPIQPS "100"); TridentVersion `trident`.
- Deployment trident/trident-controller: trident-main args carry --enable_concurrency=<bool>; the sidecars
  csi-provisioner / csi-attacher / csi-snapshotter carry --kube-api-qps = max(k8sAPIQPS/4, 10) and burst 2x,
  and --worker-threads=25 under concurrency. The operator reconciles the CR into the Deployment: a spec change
  makes the status Updating, the Deployment is re-rendered, then Installed again.
- TridentBackendConfig + TridentBackend per driver (ontap-nas, ontap-nas-economy, ontap-san, ontap-san-economy:
  phase Bound, lastOperationStatus Success, backendInfo {backendName, backendUUID}), a StorageClass per backend
  (same name, parameters.backendType) and the VolumeSnapshotClass trident-snapshotclass.

Behaviour (read from the Deployment's args, not the CR, as the real pod would): concurrency off = ONE global
lock around every CSI controller call; on = a lock per volume and at most 20 ONTAP API calls in flight per
management LIF, each call also passing through its backend's serialized section (calibration.yaml, `serial`).
A call's figures follow its rank in the busy run of its kind (the calls since the controller last had none of
them): seed 002's 100- and 1000-volume tables are the anchors (calibration.yaml "Load", backlog_factor).
The sidecars' client throttles and workers follow their containers' args (tokenbucket.Throttle).
An overloaded ONTAP (the cluster setting `ontap_serial`, read when a call starts): every ONTAP call, whatever
the concurrency, passes one at a time through one Lane per ONTAP (its management LIF) taking its whole cost
(median + serial), so the concurrent core cannot help and ON measures about as slow as OFF.

Registry for the ONTAP endpoint (cluster.trident): .volumes {internal name: {name, pv, size, driver, pool,
aggregate, svm, backend, backend_uuid, kind flexvol|qtree|lun, clone_of, snapshots, exports}}, .pools
{flexvol name: {name, driver, svm, backend, aggregate, members, kind}}, .snapshots {handle: {...}},
.backends {name: {...}}. PV volumeAttributes.internalName is the volume's (qtree's / LUN's) name; economy
volumes also record their FlexVol in volumeAttributes.pool.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import random
import string
import time
import uuid
from typing import Any

from .. import calibration
from ..apimachinery import errors
from ..netapp.sizes import MAX_FLEXVOL, flexvol_size_error
from . import vclock
from .base import Controller
from .csi import TRIDENT, Backend, CSIError, backends, stats_registry
from .serviceaccounts import ensure_service_account
from .tokenbucket import Throttle, container_args, follow_deployment, parse_args, throttles

log = logging.getLogger("twin")

NS = "trident"
DRIVERS = ("ontap-nas", "ontap-nas-economy", "ontap-san", "ontap-san-economy")
SVM = "svm0"
AGGREGATE = "aggr1"
MANAGEMENT_LIF = "10.193.48.10"
DATA_LIF = "10.193.48.11"
SIDECARS = {"provisioner": "csi-provisioner", "attacher": "csi-attacher", "snapshotter": "csi-snapshotter"}
SIDECAR_IMAGES = {"csi-provisioner": "registry.k8s.io/sig-storage/csi-provisioner:v5.3.0",
                  "csi-attacher": "registry.k8s.io/sig-storage/csi-attacher:v4.9.0",
                  "csi-resizer": "registry.k8s.io/sig-storage/csi-resizer:v1.14.0",
                  "csi-snapshotter": "registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0"}


def _bool(v: Any) -> bool:
    return str(v).lower() in ("true", "1", "yes")


def render_controller(version: str, concurrency: bool, qps: int) -> dict[str, Any]:
    """The trident-controller Deployment the operator renders from the TridentOrchestrator."""
    side_qps = max(qps // 4, 10)
    side = [f"--kube-api-qps={side_qps}", f"--kube-api-burst={side_qps * 2}"]
    if concurrency:
        side.append("--worker-threads=25")
    labels = {"app": "controller.csi.trident.netapp.io"}

    def sidecar(name: str, extra: list[str]) -> dict[str, Any]:
        return {"name": name, "image": SIDECAR_IMAGES[name], "imagePullPolicy": "IfNotPresent",
                "args": ["--v=2", "--csi-address=$(ADDRESS)", *extra, *side],
                "env": [{"name": "ADDRESS", "value": "/var/lib/csi/sockets/pluginproxy/csi.sock"}]}

    main_args = ["--crd_persistence", "--k8s_pod", "--https_rest", "--https_port=8443",
                 "--csi_node_name=$(KUBE_NODE_NAME)", "--csi_endpoint=$(CSI_ENDPOINT)", "--csi_role=controller",
                 "--log_format=text", "--log_level=info", "--address=127.0.0.1", "--http_request_timeout=1m30s",
                 "--enable_force_detach=false", "--metrics", f"--k8s_api_qps={qps}", f"--k8s_api_burst={qps * 2}",
                 f"--enable_concurrency={'true' if concurrency else 'false'}"]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "trident-controller", "namespace": NS,
                         "labels": dict(labels, **{"app.kubernetes.io/managed-by": "trident-operator"})},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": {
                         "serviceAccountName": "trident-controller",
                         "containers": [
                             {"name": "trident-main", "image": f"docker.io/netapp/trident:{version}",
                              "imagePullPolicy": "IfNotPresent", "command": ["/trident_orchestrator"], "args": main_args,
                              "env": [{"name": "CSI_ENDPOINT", "value": "unix://plugin/csi.sock"},
                                      {"name": "KUBE_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]},
                             sidecar("csi-provisioner", ["--timeout=600s", "--retry-interval-start=8s",
                                                         "--retry-interval-max=30s"]),
                             sidecar("csi-attacher", ["--timeout=60s", "--retry-interval-start=10s"]),
                             sidecar("csi-resizer", ["--timeout=300s"]),
                             sidecar("csi-snapshotter", ["--timeout=300s"])]}}}}


class TridentState:
    """cluster.trident: what ONTAP holds, for the ONTAP endpoint, plus the controller's lock figures."""

    def __init__(self) -> None:
        self.version = "26.06.0"
        self.svm = SVM
        self.management_lif = MANAGEMENT_LIF
        self.data_lif = DATA_LIF
        self.backends: dict[str, dict[str, Any]] = {}
        self.volumes: dict[str, dict[str, Any]] = {}
        self.pools: dict[str, dict[str, Any]] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.concurrency = False
        self.inflight = 0
        self.max_inflight = 0
        self.ops: collections.Counter[str] = collections.Counter()
        self.max_run: collections.Counter[str] = collections.Counter()  # longest busy run per operation

    def doc(self) -> dict[str, Any]:
        return {"version": self.version, "concurrency": self.concurrency, "inflight": self.inflight,
                "max_inflight": self.max_inflight, "ops": dict(self.ops), "max_run": dict(self.max_run), "volumes": len(self.volumes),
                "pools": len(self.pools), "snapshots": len(self.snapshots),
                "backends": {k: {kk: vv for kk, vv in v.items() if kk in ("name", "uuid", "driver", "svm",
                                                                          "managementLIF", "inflight", "max_inflight")}
                             for k, v in self.backends.items()}}


class TridentCSI(Backend):
    """csi.trident.netapp.io, controller side."""

    driver = TRIDENT

    def __init__(self, cluster, state: TridentState) -> None:
        super().__init__(cluster)
        self.state = state
        self.global_lock = asyncio.Lock()
        self.volume_locks: dict[str, asyncio.Lock] = collections.defaultdict(asyncio.Lock)
        self.lif_slots: dict[str, vclock.Slots] = {}
        self.global_lane = vclock.Lane()
        self.serial: dict[str, vclock.Lane] = collections.defaultdict(vclock.Lane)
        self.ontap_lanes: dict[str, vclock.Lane] = collections.defaultdict(vclock.Lane)  # per management LIF
        # (backend, operation) -> [calls of that kind in the controller now, calls since it was last without one]
        self.runs: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
        self.sidecars: dict[str, Throttle] = {}
        self.rng = random.Random(7)
        self.vol_rt = self.cluster.store.rt("trident.netapp.io", "v1", "tridentvolumes")

    def sidecar(self, role: str) -> Throttle | None:
        return self.sidecars.get(SIDECARS.get(role, ""))

    def default_fstype(self, params: dict[str, Any]) -> str:
        return "ext4" if "san" in str(params.get("backendType", "")) else ""

    # the lock ------------------------------------------------------------------------------------
    async def _op(self, backend: dict[str, Any], op: str, volume: str) -> None:
        """One CSI controller call's ONTAP work under Trident's locking (timing kept on Lanes: vclock.py)."""
        run = self.runs[backend["name"], op]
        run[0] += 1
        run[1] += 1
        self.state.max_run[op] = max(self.state.max_run[op], run[1])
        try:
            await self._timed(backend, op, volume, run[1])
        finally:
            run[0] -= 1
            if run[0] == 0:
                run[1] = 0

    async def _timed(self, backend: dict[str, Any], op: str, volume: str, backlog: int) -> None:
        """The call's delays. `backlog` is its rank in the busy run of its kind: the sidecars' worker threads and
        the LIF's 20 API calls cap what is in flight at once at any batch size, but a run lasts as long as the
        batch, and the seed's per-volume costs differ between its 100- and 1000-volume tables (calibration.yaml)."""
        driver = backend["driver"]
        scale = self.cluster.time_scale
        p = self.cal.latency(driver, op) * self.cal.backlog_factor(driver, op, "median", backlog) * scale
        s = self.cal.serial(driver, op) * self.cal.backlog_factor(driver, op, "serial", backlog) * scale
        self.state.ops[op] += 1
        arrival = vclock.now()
        lif = backend["managementLIF"]
        # an overloaded ONTAP answers one call at a time: the call's whole cost on that ONTAP's one lane
        ontap = self.ontap_lanes[lif] if self.ontap_serial() else None
        if not self.state.concurrency:
            async with self.global_lock:
                self._enter(backend)
                try:
                    await (ontap or self.global_lane).run(p + s, arrival)
                finally:
                    self._exit(backend)
            return
        slots = self.lif_slots.get(lif)
        if slots is None:
            slots = self.lif_slots[lif] = vclock.Slots(self.cal.limit("trident", "lif_api_calls"))
        async with self.volume_locks[volume]:
            start = await slots.acquire()
            end = None
            self._enter(backend)
            try:
                if ontap is not None:
                    end = await ontap.run(p + s, start)
                else:
                    end = await self.serial[backend["name"]].run(s, start + p)
            finally:
                self._exit(backend)
                slots.release(vclock.now() if end is None else end)

    def ontap_serial(self) -> bool:
        """The cluster setting `ontap_serial` (python -m twin settings): this cluster's ONTAP is overloaded."""
        return bool((self.cluster.settings or {}).get("ontap_serial"))

    def _enter(self, backend: dict[str, Any]) -> None:
        self.state.inflight += 1
        self.state.max_inflight = max(self.state.max_inflight, self.state.inflight)
        backend["inflight"] = backend.get("inflight", 0) + 1
        backend["max_inflight"] = max(backend.get("max_inflight", 0), backend["inflight"])

    def _exit(self, backend: dict[str, Any]) -> None:
        self.state.inflight -= 1
        backend["inflight"] -= 1

    # helpers -------------------------------------------------------------------------------------
    def _backend_for(self, params: dict[str, Any]) -> dict[str, Any]:
        want = params.get("backendType")
        for b in self.state.backends.values():
            if not want or b["driver"] == want:
                return b
        raise CSIError("ResourceExhausted", f"no available backends for storage class with backendType {want}")

    def _volume(self, handle: str) -> dict[str, Any] | None:
        v = self.state.volumes.get("trident_" + handle.replace("-", "_"))
        if v is not None and v["pv"] == handle:
            return v
        return next((v for v in self.state.volumes.values() if v["pv"] == handle), None)

    def _pool_for(self, backend: dict[str, Any], kind: str) -> dict[str, Any]:
        cap = self.cal.limit("trident", "qtrees_per_flexvol" if kind == "qtree" else "luns_per_flexvol")
        for p in self.state.pools.values():
            if p["backend"] == backend["name"] and len(p["members"]) < cap:
                return p
        prefix = "trident_qtree_pool" if kind == "qtree" else "trident_lun_pool"
        name = f"{prefix}_trident_{''.join(self.rng.choice(string.ascii_uppercase) for _ in range(10))}"
        pool = {"name": name, "driver": backend["driver"], "svm": SVM, "backend": backend["name"],
                "aggregate": AGGREGATE, "members": set(), "kind": "flexvol", "size": 0}
        self.state.pools[name] = pool
        return pool

    # CSI calls ---------------------------------------------------------------------------------
    async def create_volume(self, req: dict[str, Any]) -> dict[str, Any]:
        params = req.get("parameters") or {}
        backend = self._backend_for(params)
        pv_name = req["name"]
        src = req.get("source")
        parent = None
        if src:
            parent = self.state.snapshots.get(src["handle"]) if src["kind"] == "snapshot" else self._volume(src["handle"])
            if parent is None:
                raise CSIError("NotFound", f"source {src['kind']} {src['handle']} not found")
        await self._op(backend, "clone_volume" if src else "create_volume", pv_name)
        internal = "trident_" + pv_name.replace("-", "_")
        # ONTAP refuses a FlexVol above its maximum (Trident raises a smaller request to its 20MiB minimum itself)
        refused = flexvol_size_error(int(req["capacity_bytes"])) if int(req["capacity_bytes"]) > MAX_FLEXVOL else None
        if refused:
            code, message = refused
            raise CSIError("Unknown", f"error creating volume {internal}: API status: failed, Reason: {message}, "
                                      f"Code: {code}")
        kind = {"ontap-nas": "flexvol", "ontap-san": "lun", "ontap-nas-economy": "qtree",
                "ontap-san-economy": "lun"}[backend["driver"]]
        vol = {"name": internal, "pv": pv_name, "size": int(req["capacity_bytes"]), "driver": backend["driver"],
               "backend": backend["name"], "backend_uuid": backend["uuid"], "svm": SVM, "aggregate": AGGREGATE,
               "pool": AGGREGATE, "kind": kind, "clone_of": (src or {}).get("handle"), "snapshots": [],
               "exports": [], "created": time.time()}
        attrs = {"backendUUID": backend["uuid"], "internalName": internal, "name": pv_name,
                 "protocol": "block" if "san" in backend["driver"] else "file",
                 "storage.kubernetes.io/csiProvisionerIdentity": f"{int(time.time() * 1000)}-1-{TRIDENT}"}
        if backend["driver"].endswith("economy"):
            pool = self._pool_for(backend, "qtree" if kind == "qtree" else "lun")
            pool["members"].add(internal)
            vol["pool"] = pool["name"]
            attrs["pool"] = pool["name"]
        self.state.volumes[internal] = vol
        self._write_volume_cr(vol, req)
        return {"volume_handle": pv_name, "capacity_bytes": int(req["capacity_bytes"]), "attributes": attrs,
                "accessible_topology": None}

    def _write_volume_cr(self, vol: dict[str, Any], req: dict[str, Any]) -> None:
        body = {"apiVersion": "trident.netapp.io/v1", "kind": "TridentVolume",
                "metadata": {"name": vol["pv"], "namespace": NS, "finalizers": ["trident.netapp.io"]},
                "config": {"version": "1", "name": vol["pv"], "internalName": vol["name"], "size": str(vol["size"]),
                           "protocol": "block" if "san" in vol["driver"] else "file",
                           "storageClass": req.get("storage_class", ""), "accessMode": "",
                           "volumeMode": (req.get("pvc") or {}).get("spec", {}).get("volumeMode", "Filesystem"),
                           "cloneSourceSnapshot": vol["clone_of"] or "", "importOriginalName": ""},
                "backendUUID": vol["backend_uuid"], "pool": vol["pool"], "orphaned": False, "state": "online"}
        try:
            self.cluster.store.create(self.vol_rt, NS, body)
        except errors.ApiError:
            pass

    async def delete_volume(self, pv: dict[str, Any]) -> None:
        handle = pv["spec"]["csi"]["volumeHandle"]
        vol = self._volume(handle)
        if vol is None:
            return  # idempotent
        backend = self.state.backends[vol["backend"]]
        await self._op(backend, "delete_clone" if vol["clone_of"] else "delete_volume", handle)
        self.state.volumes.pop(vol["name"], None)
        for sh in list(vol["snapshots"]):
            self.state.snapshots.pop(sh, None)
        pool = self.state.pools.get(vol["pool"])
        if pool is not None:
            pool["members"].discard(vol["name"])
            if not pool["members"]:
                self.state.pools.pop(pool["name"], None)  # Trident removes an emptied economy FlexVol
        if self.cluster.store.exists(self.vol_rt, NS, handle):
            self.cluster.store.finalize(self.vol_rt, NS, handle, "trident.netapp.io")
            if self.cluster.store.exists(self.vol_rt, NS, handle):
                self.cluster.store.delete(self.vol_rt, NS, handle)

    async def publish(self, pv: dict[str, Any], node: str) -> dict[str, str]:
        handle = pv["spec"]["csi"]["volumeHandle"]
        vol = self._volume(handle)
        if vol is None:
            raise CSIError("NotFound", f"volume {handle} not found")
        await self._op(self.state.backends[vol["backend"]], "publish", handle)
        if node not in vol["exports"]:
            vol["exports"].append(node)
        if "san" in vol["driver"]:
            return {"protocol": "block", "sharedTarget": "true", "iscsiTargetIqn": f"iqn.1992-08.com.netapp:sn.{SVM}",
                    "iscsiLunNumber": str(len(vol["exports"]) - 1), "filesystem": "ext4"}
        path = f"/{vol['pool']}/{vol['name']}" if vol["kind"] == "qtree" else f"/{vol['name']}"
        return {"protocol": "file", "nfsServerIp": DATA_LIF, "nfsPath": path, "filesystemType": "nfs"}

    async def unpublish(self, pv: dict[str, Any], node: str) -> None:
        handle = pv["spec"]["csi"]["volumeHandle"]
        vol = self._volume(handle)
        if vol is None:
            return
        await self._op(self.state.backends[vol["backend"]], "unpublish", handle)
        if node in vol["exports"]:
            vol["exports"].remove(node)

    async def create_snapshot(self, pv: dict[str, Any], name: str, parameters: dict[str, Any]) -> dict[str, Any]:
        handle = pv["spec"]["csi"]["volumeHandle"]
        vol = self._volume(handle)
        if vol is None:
            raise CSIError("NotFound", f"volume {handle} not found")
        await self._op(self.state.backends[vol["backend"]], "create_snapshot", handle)
        snap_handle = f"{handle}/{name}"
        now = time.time_ns()
        self.state.snapshots[snap_handle] = {"name": name, "volume": vol["name"], "pv": handle, "size": vol["size"],
                                             "driver": vol["driver"], "backend": vol["backend"], "svm": SVM,
                                             "created": now}
        vol["snapshots"].append(snap_handle)
        return {"snapshot_handle": snap_handle, "restore_size": vol["size"], "creation_time": now}

    async def delete_snapshot(self, handle: str) -> None:
        snap = self.state.snapshots.get(handle)
        if snap is None:
            return
        await self._op(self.state.backends[snap["backend"]], "delete_snapshot", snap["pv"])
        self.state.snapshots.pop(handle, None)
        vol = self.state.volumes.get(snap["volume"])
        if vol and handle in vol["snapshots"]:
            vol["snapshots"].remove(handle)

    def stats(self, body: dict[str, Any] | None = None) -> dict[str, Any]:
        if body and "trident" in (body.get("reset") or []):
            self.state.max_inflight = self.state.inflight
            for b in self.state.backends.values():
                b["max_inflight"] = b.get("inflight", 0)
            self.state.ops.clear()
            self.state.max_run.clear()
        return dict(self.state.doc(), ontap_serial=self.ontap_serial())


class Trident(Controller):
    """trident-operator + the controller pod's configuration."""

    name = "trident"

    def setup(self) -> None:
        self.enabled = "trident" in self.cluster.crd_sets
        self.state = TridentState()
        self.cal = calibration.load()
        self.state.version = str(self.cal.trident("version", sampled=False) or self.state.version)
        self.cluster.trident = self.state
        # an operation fault's `"while": "trident_concurrency"` (twin/faults.py): the flag as the controller runs it
        self.cluster.faults.conditions["trident_concurrency"] = lambda: self.state.concurrency
        self.csi = TridentCSI(self.cluster, self.state) if self.enabled else None
        if self.csi is None:  # not enabled
            return
        csi = self.csi
        backends(self.cluster)[TRIDENT] = csi
        stats_registry(self.cluster)["trident"] = csi.stats
        defaults = {"qps": self.cal.number("csi-sidecar", "kube_api_qps"),
                    "burst": self.cal.limit("csi-sidecar", "kube_api_burst")}
        for role, container in SIDECARS.items():
            workers = self.cal.limit("csi-sidecar", f"{role}_workers")
            th = Throttle(f"trident/{container}", defaults["qps"], int(defaults["burst"]), workers, self.cluster.time_scale)
            csi.sidecars[container] = th
            throttles(self.cluster)[th.name] = th
        self._create_objects()

    def _rt(self, plural: str):
        return self.store.rt("trident.netapp.io", "v1", plural)

    def _create_objects(self) -> None:
        s = self.store
        ns_rt = s.rt("", "v1", "namespaces")
        if not s.exists(ns_rt, None, NS):
            s.create(ns_rt, None, {"metadata": {"name": NS}})
        torc_rt = self._rt("tridentorchestrators")
        if not s.exists(torc_rt, None, "trident"):
            s.create(torc_rt, None, {"apiVersion": "trident.netapp.io/v1", "kind": "TridentOrchestrator",
                                     "metadata": {"name": "trident"},
                                     "spec": {"debug": False, "namespace": NS, "enableConcurrency": False,
                                              "imagePullPolicy": "IfNotPresent"}})
            torc = s.get(torc_rt, None, "trident")
            torc["status"] = {"status": "Installing", "message": "Installing Trident", "version": "", "namespace": NS,
                              "currentInstallationParams": {}}
            s.update(torc_rt, None, "trident", torc, subresource="status")
        dep_rt = s.rt("apps", "v1", "deployments")
        if not s.exists(dep_rt, NS, "trident-controller"):
            ensure_service_account(s, NS, "trident-controller")
            s.create(dep_rt, NS, render_controller(self.state.version, False, 100))
        tver_rt = self._rt("tridentversions")
        if not s.exists(tver_rt, NS, "trident"):
            s.create(tver_rt, NS, {"apiVersion": "trident.netapp.io/v1", "kind": "TridentVersion",
                                   "metadata": {"name": "trident", "namespace": NS},
                                   "trident_version": self.state.version, "trident_api_version": "1",
                                   "go_version": "go1.24.4", "client_version": "", "client_api_version": "",
                                   "client_go_version": ""})
        sec_rt = s.rt("", "v1", "secrets")
        if not s.exists(sec_rt, NS, "ontap-credentials"):
            import base64
            s.create(sec_rt, NS, {"metadata": {"name": "ontap-credentials", "namespace": NS}, "type": "Opaque",
                                  "data": {"username": base64.b64encode(b"vsadmin").decode(),
                                           "password": base64.b64encode(b"netapp123").decode()}})
        tbc_rt, tbe_rt = self._rt("tridentbackendconfigs"), self._rt("tridentbackends")
        sc_rt = s.rt("storage.k8s.io", "v1", "storageclasses")
        for drv in DRIVERS:
            name = f"backend-{drv}"
            buid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.cluster.seed}/{drv}"))
            tbe_name = "tbe-" + buid.split("-")[0][:5]
            self.state.backends[drv] = {"name": drv, "uuid": buid, "driver": drv, "svm": SVM,
                                        "managementLIF": MANAGEMENT_LIF, "dataLIF": DATA_LIF, "aggregate": AGGREGATE,
                                        "config": name, "tbe": tbe_name, "inflight": 0, "max_inflight": 0}
            spec = {"version": 1, "storageDriverName": drv, "backendName": drv, "managementLIF": MANAGEMENT_LIF,
                    "dataLIF": DATA_LIF, "svm": SVM, "credentials": {"name": "ontap-credentials"},
                    "defaults": {"spaceReserve": "none", "exportPolicy": "default"}}
            if drv.startswith("ontap-san"):
                spec["sanType"] = "iscsi"
                spec.pop("dataLIF")
            if not s.exists(tbc_rt, NS, name):
                s.create(tbc_rt, NS, {"apiVersion": "trident.netapp.io/v1", "kind": "TridentBackendConfig",
                                      "metadata": {"name": name, "namespace": NS, "finalizers": ["trident.netapp.io"]},
                                      "spec": spec})
                tbc = s.get(tbc_rt, NS, name)
                tbc["status"] = {"phase": "Bound", "lastOperationStatus": "Success", "deletionPolicy": "delete",
                                 "message": f"Backend '{drv}' created", "backendInfo": {"backendName": drv, "backendUUID": buid}}
                s.update(tbc_rt, NS, name, tbc, subresource="status")
            if not s.exists(tbe_rt, NS, tbe_name):
                s.create(tbe_rt, NS, {"apiVersion": "trident.netapp.io/v1", "kind": "TridentBackend",
                                      "metadata": {"name": tbe_name, "namespace": NS,
                                                   "finalizers": ["trident.netapp.io"]},
                                      "backendName": drv, "backendUUID": buid, "online": True, "state": "online",
                                      "userState": "normal", "version": "1", "configRef": "",
                                      "config": {"ontap_config": dict(spec, version=1)}})
            if not s.exists(sc_rt, None, drv):
                params = {"backendType": drv}
                if drv.startswith("ontap-san"):
                    params["csi.storage.k8s.io/fstype"] = "ext4"
                s.create(sc_rt, None, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                       "metadata": {"name": drv}, "provisioner": TRIDENT, "parameters": params,
                                       "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
                                       "allowVolumeExpansion": True})
        if "snapshot" in self.cluster.crd_sets:
            vsc_rt = s.rt("snapshot.storage.k8s.io", "v1", "volumesnapshotclasses")
            if not s.exists(vsc_rt, None, "trident-snapshotclass"):
                s.create(vsc_rt, None, {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotClass",
                                        "metadata": {"name": "trident-snapshotclass", "annotations": {
                                            "snapshot.storage.kubernetes.io/is-default-class": "true"}},
                                        "driver": TRIDENT, "deletionPolicy": "Delete"})

    async def run(self) -> None:
        csi = self.csi
        if csi is None:  # not enabled
            return
        waits = [self._operator(), self._controller_args()]
        defaults = {"qps": self.cal.number("csi-sidecar", "kube_api_qps"),
                    "burst": self.cal.limit("csi-sidecar", "kube_api_burst")}
        for role, container in SIDECARS.items():
            d = dict(defaults, workers=self.cal.limit("csi-sidecar", f"{role}_workers"))
            waits.append(follow_deployment(self, csi.sidecars[container], NS, "trident-controller", container, d))
        await asyncio.gather(*waits)

    async def _controller_args(self) -> None:
        """trident-main's --enable_concurrency, read as the restarted pod would."""
        async for etype, dep in self.watch("apps", "v1", "deployments", ns=NS, field_selector="metadata.name=trident-controller"):
            if etype == "DELETED":
                continue
            flags = parse_args(container_args(dep, "trident-main"))
            on = _bool(flags.get("enable_concurrency", "false"))
            if on != self.state.concurrency:
                log.info("trident: %s", "Concurrency is enabled" if on else "Concurrency is disabled")
            self.state.concurrency = on

    def _params(self, spec: dict[str, Any]) -> dict[str, str]:
        qps = int(spec.get("k8sAPIQPS") or self.cal.limit("trident", "controller_qps"))
        return {"IPv6": "false", "debug": str(bool(spec.get("debug", False))).lower(),
                "enableConcurrency": "true" if _bool(spec.get("enableConcurrency", False)) else "false",
                "enableForceDetach": str(bool(spec.get("enableForceDetach", False))).lower(),
                "excludeAutosupport": "false", "imagePullPolicy": spec.get("imagePullPolicy", "IfNotPresent"),
                "imageRegistry": "", "k8sAPIQPS": str(qps), "k8sTimeout": "30", "kubeletDir": "/var/lib/kubelet",
                "logFormat": "text", "logLevel": "info", "probePort": "17546", "silenceAutosupport": "false",
                "tridentImage": f"docker.io/netapp/trident:{self.state.version}",
                "autosupportImage": f"docker.io/netapp/trident-autosupport:{self.state.version[:5]}"}

    async def _operator(self) -> None:
        torc_rt = self._rt("tridentorchestrators")
        dep_rt = self.store.rt("apps", "v1", "deployments")
        applied: dict[str, Any] | None = None
        async for etype, torc in self.watch("trident.netapp.io", "v1", "tridentorchestrators"):
            if etype == "DELETED" or torc["metadata"]["name"] != "trident":
                continue
            if not self.store.exists(torc_rt, None, "trident"):
                continue
            torc = self.store.get(torc_rt, None, "trident")  # act on the latest, not on a queued event's copy
            params = self._params(torc.get("spec") or {})
            st = torc.get("status") or {}
            if st.get("status") == "Installed" and st.get("currentInstallationParams") == params:
                applied = params
                continue
            first = applied is None
            phase = "Installing" if first else "Updating"
            cur = self.store.get(torc_rt, None, "trident")
            if (cur.get("status") or {}).get("status") != phase:
                cur["status"] = dict(cur.get("status") or {}, status=phase,
                                     message="Installing Trident" if first else "Updating Trident")
                self.store.update(torc_rt, None, "trident", cur, subresource="status")
            await self.sleep(self.cal.trident("install" if first else "rollout"))
            want = render_controller(self.state.version, params["enableConcurrency"] == "true", int(params["k8sAPIQPS"]))
            exists = self.store.exists(dep_rt, NS, "trident-controller")
            dep = self.store.get(dep_rt, NS, "trident-controller") if exists else None
            if dep is None:
                ensure_service_account(self.store, NS, "trident-controller")
                self.store.create(dep_rt, NS, want)
            elif dep["spec"]["template"] != want["spec"]["template"]:
                dep["spec"]["template"] = want["spec"]["template"]
                self.store.update(dep_rt, NS, "trident-controller", dep)
            applied = params
            if not self.store.exists(torc_rt, None, "trident"):
                continue
            latest = self.store.get(torc_rt, None, "trident")
            if self._params(latest.get("spec") or {}) != params:
                continue  # changed again meanwhile: the next event reconciles it
            latest["status"] = {"status": "Installed", "message": "Trident installed", "version": self.state.version,
                                "namespace": NS, "currentInstallationParams": params,
                                "observedGeneration": latest["metadata"].get("generation", 1)}
            self.store.update(torc_rt, None, "trident", latest, subresource="status")
