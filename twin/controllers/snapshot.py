"""snapshot-controller (kube-system Deployment) and the csi-snapshotter sidecar of each CSI driver.

The Deployment `snapshot-controller` is created at start with the upstream args --v=5 --leader-election=true and
no throttling flags, so the binary's defaults hold (cmd/snapshot-controller/main.go): --worker-threads 10,
--kube-api-qps 5, --kube-api-burst 10. The twin obeys the container's args whenever they change (a
`kubectl edit` or the collection's module): like main.go it has two clientsets, each with its own client-go
token bucket (snapshot API: VolumeSnapshot/Content; core API: PVCs and events), and --worker-threads workers.

API calls per dynamically created snapshot, as the v8 controller makes them (each waits for a token of its
clientset):
  snapshot client (5 + conflict_retries): patch the snapshot's finalizers (volumesnapshot-as-source-protection,
    volumesnapshot-bound-protection), create the VolumeSnapshotContent `snapcontent-<snapshot uid>`, patch the
    snapshot status (boundVolumeSnapshotContentName, readyToUse false), patch the content's finalizer
    (volumesnapshotcontent-bound-protection), patch the snapshot status once the content is ready
    (readyToUse, creationTime, restoreSize); plus `conflict_retries` GET-and-retry round trips of status
    patches that collide with the controller's own earlier writes. calibration.yaml sets 4 so that the
    snapshot client makes 9 calls per snapshot: external-snapshotter issue #1344 measured 80 snapshots in
    143 s at QPS 5 = (143 x 5 + 10) / 80 = 9.1 calls each, and about 8 s of throttling for the same 80 at
    QPS 75 / burst 150.
  core client (6): GET the source PV, patch the source PVC's finalizer
    snapshot.storage.kubernetes.io/pvc-as-source-protection on and off, events CreatingSnapshot,
    SnapshotCreated, SnapshotReady.
Deletion: annotate the content volumesnapshot-being-deleted, delete it (policy Delete) or drop its finalizer
(Retain), wait for the sidecar's DeleteSnapshot, drop the snapshot's finalizers. A snapshot still used as the
source of a PVC being provisioned stays (event SnapshotDeletePending).

csi-snapshotter: for a content of its driver without a snapshotHandle: annotate
snapshot.storage.kubernetes.io/volumesnapshot-being-created, CreateSnapshot on the driver backend, patch the
content status (snapshotHandle, creationTime in ns, readyToUse, restoreSize in bytes), remove the annotation;
on error content status.error + event SnapshotCreationFailed and a retry with backoff. For a deleted content:
DeleteSnapshot (policy Delete) and drop the finalizer. Its throttle and workers are the driver's sidecar ones
where modelled (Trident), else unthrottled with 10 workers.
"""
from __future__ import annotations

import asyncio
import logging
from datetime import datetime, UTC
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from .. import calibration
from ..apimachinery import errors
from ..store import now_iso
from .base import Controller
from .csi import CSIError, backends, with_faults
from .pv_controller import format_quantity
from .serviceaccounts import ensure_service_account
from .tokenbucket import Throttle, WorkerPool, follow_deployment, throttles
from .workqueue import Retry, WorkQueue

if TYPE_CHECKING:
    from ..registry.resources import ResourceType

log = logging.getLogger("twin")

G, V = "snapshot.storage.k8s.io", "v1"
AS_SOURCE = "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection"
BOUND = "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"
CONTENT_BOUND = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"
PVC_SOURCE = "snapshot.storage.kubernetes.io/pvc-as-source-protection"
BEING_CREATED = "snapshot.storage.kubernetes.io/volumesnapshot-being-created"
BEING_DELETED = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted"
DEFAULT_CLASS = "snapshot.storage.kubernetes.io/is-default-class"
PVC_KEY = ("", "persistentvolumeclaims")
IMAGE = "registry.k8s.io/sig-storage/snapshot-controller:v8.2.0"


def deployment() -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": "snapshot-controller"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "snapshot-controller", "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"replicas": 2, "selector": {"matchLabels": dict(labels)},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": {
                         "serviceAccountName": "snapshot-controller", "priorityClassName": "system-cluster-critical",
                         "containers": [{"name": "snapshot-controller", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                                         "args": ["--v=5", "--leader-election=true"]}]}}}}


def _restored_from(pvc: dict | None) -> str | None:
    """The VolumeSnapshot a PVC is restored from (its dataSource, else its dataSourceRef), if any."""
    if pvc is None:
        return None
    ds = pvc["spec"].get("dataSource") or pvc["spec"].get("dataSourceRef") or {}
    return ds.get("name") if ds.get("kind") == "VolumeSnapshot" else None


class SnapshotController(Controller):
    name = "snapshot-controller"

    def setup(self) -> None:
        self.enabled = "snapshot" in self.cluster.crd_sets
        cal = calibration.load()
        self.defaults = {"qps": cal.number("snapshot-controller", "kube_api_qps"),
                         "burst": cal.limit("snapshot-controller", "kube_api_burst"),
                         "workers": cal.limit("snapshot-controller", "worker_threads")}
        self.throttle = Throttle(self.name, self.defaults["qps"], int(self.defaults["burst"]), int(self.defaults["workers"]),
                                 self.cluster.time_scale, clients=("snapshot", "kube"))
        throttles(self.cluster)[self.name] = self.throttle
        self.retry = (cal.number("snapshot-controller", "retry_start"), cal.number("snapshot-controller", "retry_max"))
        self.conflict_retries = cal.limit("snapshot-controller", "conflict_retries")
        self.queue = WorkQueue(self.name, self.sync, self.throttle.pool, self.cluster.time_scale, *self.retry, gate=self.gate)
        self.ready = 0
        # (namespace, claim) -> names of the snapshots taken of it, from the snapshot watch: the controller's
        # informer index, so releasing a PVC looks at that PVC's snapshots, not at every snapshot of the namespace
        # (a scan per snapshot made a batch of N snapshots cost N^2: docs/calibration.md, 1000 volumes)
        self.by_claim: dict[tuple[str, str], set[str]] = {}
        # (namespace, snapshot) -> names of the PVCs restored from it, kept inside every PVC write (on_change):
        # deleting a snapshot looks at its restores as the controller's PVC lister would, not at every PVC of the
        # namespace (a scan per deleted snapshot made a batch of N deletions cost N^2)
        self.restores: dict[tuple[str, str], set[str]] = {}
        if self.enabled:
            for e in self.store.list_entries(self.pvc_rt):
                self.on_change(self.pvc_rt, "ADDED", e.obj, None)
            self.vs_rt = self.store.rt(G, V, "volumesnapshots")
            self.vsc_rt = self.store.rt(G, V, "volumesnapshotcontents")
            self.class_rt = self.store.rt(G, V, "volumesnapshotclasses")
            dep_rt = self.store.rt("apps", "v1", "deployments")
            if not self.store.exists(dep_rt, "kube-system", "snapshot-controller"):
                ensure_service_account(self.store, "kube-system", "snapshot-controller")
                self.store.create(dep_rt, "kube-system", deployment())

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key != PVC_KEY or not self.enabled:
            return
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        # a DELETED write carries the removed object as obj (and no old)
        before, after = (_restored_from(obj), None) if etype == "DELETED" else (_restored_from(old), _restored_from(obj))
        if before == after:
            return
        if before is not None:
            names = self.restores.get((ns, before))
            if names is not None:
                names.discard(name)
                if not names:
                    del self.restores[(ns, before)]
        if after is not None:
            self.restores.setdefault((ns, after), set()).add(name)

    async def run(self) -> None:
        if not self.enabled:
            return
        self.queue.start()
        await asyncio.gather(
            follow_deployment(self, self.throttle, "kube-system", "snapshot-controller", "snapshot-controller", self.defaults),
            self._snapshots(), self._contents(), self._claims())

    async def _snapshots(self) -> None:
        async for etype, vs in self.watch(G, V, "volumesnapshots"):
            self.index(etype, vs)
            if etype != "DELETED":
                self.queue.add((vs["metadata"]["namespace"], vs["metadata"]["name"]))

    def index(self, etype: str, vs: dict) -> None:
        ns, name = vs["metadata"]["namespace"], vs["metadata"]["name"]
        claim = (vs["spec"].get("source") or {}).get("persistentVolumeClaimName")
        if not claim:
            return
        names = self.by_claim.setdefault((ns, claim), set())
        if etype == "DELETED":
            names.discard(name)
            if not names:
                del self.by_claim[(ns, claim)]
        else:
            names.add(name)

    async def _contents(self) -> None:
        async for _etype, c in self.watch(G, V, "volumesnapshotcontents"):
            ref = c["spec"].get("volumeSnapshotRef") or {}
            if ref.get("name"):
                self.queue.add((ref.get("namespace"), ref["name"]))

    async def _claims(self) -> None:
        """A PVC restored from a snapshot got Bound: a snapshot waiting to be deleted may go now."""
        async for etype, pvc in self.watch("", "v1", "persistentvolumeclaims"):
            ds = pvc["spec"].get("dataSource") or {}
            if ds.get("kind") == "VolumeSnapshot" and (etype == "DELETED" or pvc.get("status", {}).get("phase") == "Bound"):
                self.queue.add((pvc["metadata"]["namespace"], ds.get("name")))

    async def call(self, client: str, verb: str) -> None:
        await self.throttle.call(client, verb)

    # sync ---------------------------------------------------------------------------------------
    async def sync(self, key: tuple[str, str]) -> None:
        ns, name = key
        vs = self.store.peek(self.vs_rt, ns, name)  # read only: writes go through _patch_meta and fresh copies
        if vs is None:
            return
        if vs["metadata"].get("deletionTimestamp"):
            await self._delete(vs)
            return
        st = vs.get("status") or {}
        if st.get("readyToUse") and st.get("boundVolumeSnapshotContentName"):
            await self._release_pvc(vs)
            return
        fins = vs["metadata"].get("finalizers") or []
        if AS_SOURCE not in fins or BOUND not in fins:
            await self.call("snapshot", "patch volumesnapshots")
            if not self._patch_meta(self.vs_rt, vs, add=[AS_SOURCE, BOUND]):
                return
            vs = self.store.peek(self.vs_rt, ns, name)
            if vs is None:
                return
        src = vs["spec"].get("source") or {}
        if src.get("volumeSnapshotContentName"):
            await self._bind_static(vs, src["volumeSnapshotContentName"])
            return
        content_name = f"snapcontent-{vs['metadata']['uid']}"
        content = self.store.peek(self.vsc_rt, None, content_name)
        if content is None:
            await self._create_content(vs, content_name)
            return
        cmd = content["metadata"]
        if CONTENT_BOUND not in (cmd.get("finalizers") or []) and not cmd.get("deletionTimestamp"):
            await self.call("snapshot", "patch volumesnapshotcontents")
            self._patch_meta(self.vsc_rt, content, add=[CONTENT_BOUND])
            return
        await self._sync_status(vs, content)

    def _patch_meta(self, rt, obj: dict, add: Sequence[str] = (), remove: Sequence[str] = (),
                    annotations: dict[str, str | None] | None = None) -> bool:
        """Write the finalizers and annotations of the current object; False if it is gone (now or before)."""
        md = obj["metadata"]
        ns = md.get("namespace")
        if not self.store.exists(rt, ns, md["name"]):
            return False
        cur = self.store.get(rt, ns, md["name"])
        fins = [f for f in cur["metadata"].get("finalizers") or [] if f not in remove]
        fins += [f for f in add if f not in fins]
        if fins:
            cur["metadata"]["finalizers"] = fins
        else:
            cur["metadata"].pop("finalizers", None)
        for k, v in (annotations or {}).items():
            ann = cur["metadata"].setdefault("annotations", {})
            if v is None:
                ann.pop(k, None)
            else:
                ann[k] = v
        self.store.update(rt, ns, md["name"], cur, _internal=True, raw=True)
        return self.store.exists(rt, ns, md["name"])

    def _snapshot_class(self, vs: dict, driver: str | None) -> dict | None:
        name = vs["spec"].get("volumeSnapshotClassName")
        if name:
            return self.store.peek(self.class_rt, None, name)
        for e in self.store.list_entries(self.class_rt):
            if e.obj.get("driver") == driver and (e.obj["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true":
                return self.store.peek(self.class_rt, None, e.obj["metadata"]["name"])
        return None

    async def _error(self, vs: dict, reason: str, message: str) -> None:
        await self.call("kube", "create events")
        self.event(vs, "Warning", reason, message)
        await self.call("snapshot", "patch volumesnapshots/status")
        if self.store.exists(self.vs_rt, vs["metadata"]["namespace"], vs["metadata"]["name"]):
            cur = self.store.get(self.vs_rt, vs["metadata"]["namespace"], vs["metadata"]["name"])
            cur["status"] = dict(cur.get("status") or {}, readyToUse=False, error={"message": message, "time": now_iso()})
            self.store.update(self.vs_rt, vs["metadata"]["namespace"], vs["metadata"]["name"], cur, subresource="status",
                              raw=True)

    async def _create_content(self, vs: dict, content_name: str) -> None:
        ns = vs["metadata"]["namespace"]
        claim = (vs["spec"].get("source") or {}).get("persistentVolumeClaimName")
        pvc = self.store.peek(self.pvc_rt, ns, claim) if claim else None
        if pvc is None:
            await self._error(vs, "SnapshotContentCreationFailed",
                              f'Failed to create snapshot content with error snapshot controller failed to update '
                              f'{ns}/{vs["metadata"]["name"]} on API server: cannot get claim from snapshot')
            raise Retry()
        pv_name = pvc["spec"].get("volumeName")
        if pvc.get("status", {}).get("phase") != "Bound" or not pv_name:
            await self._error(vs, "SnapshotContentCreationFailed", f"the PVC {claim} is not yet bound to a PV, "
                                                                   "will not attempt to take a snapshot")
            raise Retry()
        await self.call("kube", "get persistentvolumes")  # getVolumeFromVolumeSnapshot reads the PV from the API
        pv = self.store.peek(self.pv_rt, None, pv_name)
        if pv is None:
            raise Retry()
        csi = pv["spec"].get("csi") or {}
        cls = self._snapshot_class(vs, csi.get("driver"))
        if cls is None:
            await self._error(vs, "GetSnapshotClassFailed",
                              f"Failed to get snapshot class with error failed to retrieve snapshot class "
                              f"{vs['spec'].get('volumeSnapshotClassName') or '(default)'} for driver {csi.get('driver')}")
            raise Retry()
        if PVC_SOURCE not in (pvc["metadata"].get("finalizers") or []):
            await self.call("kube", "patch persistentvolumeclaims")
            self._patch_meta(self.pvc_rt, pvc, add=[PVC_SOURCE])
        content = {"apiVersion": f"{G}/{V}", "kind": "VolumeSnapshotContent",
                   "metadata": {"name": content_name},
                   "spec": {"deletionPolicy": cls.get("deletionPolicy", "Delete"), "driver": csi.get("driver"),
                            "source": {"volumeHandle": csi.get("volumeHandle")},
                            "sourceVolumeMode": pv["spec"].get("volumeMode", "Filesystem"),
                            "volumeSnapshotClassName": cls["metadata"]["name"],
                            "volumeSnapshotRef": {"kind": "VolumeSnapshot", "apiVersion": f"{G}/{V}", "namespace": ns,
                                                  "name": vs["metadata"]["name"], "uid": vs["metadata"]["uid"],
                                                  "resourceVersion": vs["metadata"]["resourceVersion"]}}}
        await self.call("snapshot", "create volumesnapshotcontents")
        try:
            self.store.create(self.vsc_rt, None, content, raw=True)
        except errors.ApiError as e:
            if e.code != 409:
                raise
        await self.call("kube", "create events")
        self.event(vs, "Normal", "CreatingSnapshot",
                   f"Waiting for a snapshot {ns}/{vs['metadata']['name']} to be created by the CSI driver.")
        for _ in range(self.conflict_retries):  # see calibration.yaml: snapshot-controller conflict_retries
            await self.call("snapshot", "get volumesnapshots (conflict retry)")
        await self.call("snapshot", "patch volumesnapshots/status")
        cur = self.store.get(self.vs_rt, ns, vs["metadata"]["name"])
        cur["status"] = {"boundVolumeSnapshotContentName": content_name, "readyToUse": False}
        self.store.update(self.vs_rt, ns, vs["metadata"]["name"], cur, subresource="status", raw=True)

    async def _bind_static(self, vs: dict, content_name: str) -> None:
        ns, name = vs["metadata"]["namespace"], vs["metadata"]["name"]
        if not self.store.exists(self.vsc_rt, None, content_name):
            await self._error(vs, "SnapshotContentMissing", f"VolumeSnapshotContent {content_name} is missing")
            raise Retry()
        content = self.store.get(self.vsc_rt, None, content_name)
        ref = content["spec"].get("volumeSnapshotRef") or {}
        if not ref.get("uid"):
            await self.call("snapshot", "patch volumesnapshotcontents")
            content["spec"]["volumeSnapshotRef"] = dict(ref, uid=vs["metadata"]["uid"], namespace=ns, name=name,
                                                        kind="VolumeSnapshot", apiVersion=f"{G}/{V}")
            content = self.store.update(self.vsc_rt, None, content_name, content, _internal=True)
        await self._sync_status(vs, content)

    async def _sync_status(self, vs: dict, content: dict) -> None:
        """Copy the content's status into the snapshot's (one status sync per content change)."""
        ns, name = vs["metadata"]["namespace"], vs["metadata"]["name"]
        cst = content.get("status") or {}
        cur = self.store.peek(self.vs_rt, ns, name)
        if cur is None:
            return
        st = dict(cur.get("status") or {})
        st["boundVolumeSnapshotContentName"] = content["metadata"]["name"]
        if cst.get("error"):
            st["error"] = cst["error"]
        if cst.get("snapshotHandle"):
            created = datetime.fromtimestamp(int(cst.get("creationTime", 0)) / 1e9, UTC)
            st["creationTime"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
            st["restoreSize"] = format_quantity(int(cst.get("restoreSize") or 0))
        became_ready = bool(cst.get("readyToUse")) and not st.get("readyToUse")
        st["readyToUse"] = bool(cst.get("readyToUse"))
        if st["readyToUse"]:
            st.pop("error", None)
        if st != cur.get("status"):  # updateSnapshotStatus patches only what changed
            await self.call("snapshot", "patch volumesnapshots/status")
            if not self.store.exists(self.vs_rt, ns, name):
                return
            cur = self.store.get(self.vs_rt, ns, name)
            cur["status"] = st
            self.store.update(self.vs_rt, ns, name, cur, subresource="status", raw=True)
        if became_ready:
            self.ready += 1
            await self.call("kube", "create events")
            self.event(cur, "Normal", "SnapshotCreated", f"Snapshot {ns}/{name} was successfully created by the CSI driver.")
            await self.call("kube", "create events")
            self.event(cur, "Normal", "SnapshotReady", f"Snapshot {ns}/{name} is ready to use.")
            await self._release_pvc(cur)

    async def _release_pvc(self, vs: dict) -> None:
        ns = vs["metadata"]["namespace"]
        claim = (vs["spec"].get("source") or {}).get("persistentVolumeClaimName")
        if not claim:
            return
        pvc = self.store.peek(self.pvc_rt, ns, claim)
        if pvc is None or PVC_SOURCE not in (pvc["metadata"].get("finalizers") or []):
            return
        for other in sorted(self.by_claim.get((ns, claim), ())):
            o = self.store.peek(self.vs_rt, ns, other)
            if o is None:
                continue
            if (o["spec"].get("source") or {}).get("persistentVolumeClaimName") == claim \
                    and not (o.get("status") or {}).get("readyToUse") and not o["metadata"].get("deletionTimestamp"):
                return  # another snapshot of this PVC is still being taken
        await self.call("kube", "patch persistentvolumeclaims")
        self._patch_meta(self.pvc_rt, pvc, remove=[PVC_SOURCE])

    async def _delete(self, vs: dict) -> None:
        ns, name = vs["metadata"]["namespace"], vs["metadata"]["name"]
        fins = vs["metadata"].get("finalizers") or []
        if not {AS_SOURCE, BOUND} & set(fins):
            return
        for claim in sorted(self.restores.get((ns, name), ())):
            pvc = self.store.peek(self.pvc_rt, ns, claim)
            if pvc is not None and not pvc["spec"].get("volumeName") and not pvc["metadata"].get("deletionTimestamp"):
                await self.call("kube", "create events")
                self.event(vs, "Warning", "SnapshotDeletePending", "Snapshot is being used to restore a PVC")
                raise Retry(5.0)
        await self._release_pvc(vs)
        content_name = (vs.get("status") or {}).get("boundVolumeSnapshotContentName") or f"snapcontent-{vs['metadata']['uid']}"
        content = self.store.peek(self.vsc_rt, None, content_name)
        if content is not None:
            if (content["spec"].get("volumeSnapshotRef") or {}).get("uid") == vs["metadata"]["uid"]:
                if content["spec"].get("deletionPolicy") == "Delete":
                    if not content["metadata"].get("deletionTimestamp"):
                        gone = False
                        if (content["metadata"].get("annotations") or {}).get(BEING_DELETED) != "yes":
                            await self.call("snapshot", "patch volumesnapshotcontents")
                            gone = not self._patch_meta(self.vsc_rt, content, annotations={BEING_DELETED: "yes"})
                        await self.call("snapshot", "delete volumesnapshotcontents")
                        if not gone and self.store.exists(self.vsc_rt, None, content_name):
                            self.store.delete(self.vsc_rt, None, content_name, raw=True)
                    return  # the content's DELETED event brings the snapshot back here
                if CONTENT_BOUND in (content["metadata"].get("finalizers") or []):
                    await self.call("snapshot", "patch volumesnapshotcontents")
                    self._patch_meta(self.vsc_rt, content, remove=[CONTENT_BOUND])
        await self.call("snapshot", "patch volumesnapshots")
        self._patch_meta(self.vs_rt, vs, remove=[AS_SOURCE, BOUND])


class CSISnapshotter(Controller):
    """The csi-snapshotter sidecars (one queue per driver)."""

    name = "csi-snapshotter"

    def setup(self) -> None:
        self.enabled = "snapshot" in self.cluster.crd_sets
        self.cal = calibration.load()
        self.queues: dict[str, WorkQueue] = {}
        # (driver, volumeHandle) -> PV name, refilled by one scan when a lookup misses: one scan per content
        # made a batch of N snapshots cost N^2 (docs/calibration.md, 1000 volumes)
        self.pv_names: dict[tuple[str | None, str | None], str] = {}
        if self.enabled:
            self.vsc_rt = self.store.rt(G, V, "volumesnapshotcontents")
            self.class_rt = self.store.rt(G, V, "volumesnapshotclasses")

    def queue(self, driver: str) -> WorkQueue:
        q = self.queues.get(driver)
        if q is None:
            th = backends(self.cluster)[driver].sidecar("snapshotter")
            pool = th.pool if th is not None else WorkerPool(self.cal.limit("csi-sidecar", "snapshotter_workers"))
            q = WorkQueue(f"{self.name}/{driver}", lambda name: self.sync(driver, name), pool,
                          self.cluster.time_scale, gate=self.gate)
            q.start()
            self.queues[driver] = q
        return q

    async def call(self, driver: str, verb: str) -> None:
        th = backends(self.cluster)[driver].sidecar("snapshotter")
        if th is not None:
            await th.call("kube", verb)

    async def run(self) -> None:
        if not self.enabled:
            return
        async for etype, c in self.watch(G, V, "volumesnapshotcontents"):
            drv = c["spec"].get("driver")
            if etype == "DELETED" or drv not in backends(self.cluster):
                continue
            st = c.get("status") or {}
            if c["metadata"].get("deletionTimestamp") or not st.get("snapshotHandle"):
                self.queue(drv).add(c["metadata"]["name"])

    def _pv_by_handle(self, driver: str, handle: str | None) -> dict | None:
        for attempt in range(2):
            name = self.pv_names.get((driver, handle))
            if name is not None and self.store.exists(self.pv_rt, None, name):
                pv = self.store.get(self.pv_rt, None, name)
                csi = pv["spec"].get("csi") or {}
                if csi.get("driver") == driver and csi.get("volumeHandle") == handle:
                    return pv
            if attempt == 0:  # missing or stale: re-read every PV once
                self.pv_names = {}
                for e in self.store.list_entries(self.pv_rt):
                    csi = e.obj["spec"].get("csi") or {}
                    self.pv_names.setdefault((csi.get("driver"), csi.get("volumeHandle")), e.obj["metadata"]["name"])
        return None

    def _status(self, name: str, status: dict[str, Any], merge: bool = False) -> None:
        """Write the content's status (merged into the current one when `merge`)."""
        if self.store.exists(self.vsc_rt, None, name):
            cur = self.store.get(self.vsc_rt, None, name)
            cur["status"] = dict(cur.get("status") or {}, **status) if merge else status
            self.store.update(self.vsc_rt, None, name, cur, subresource="status", raw=True)

    def _annotate(self, name: str, key: str, value: str | None) -> None:
        if self.store.exists(self.vsc_rt, None, name):
            cur = self.store.get(self.vsc_rt, None, name)
            ann = cur["metadata"].setdefault("annotations", {})
            if value is None:
                ann.pop(key, None)
            else:
                ann[key] = value
            self.store.update(self.vsc_rt, None, name, cur, _internal=True, raw=True)

    async def sync(self, driver: str, name: str) -> None:
        c = self.store.peek(self.vsc_rt, None, name)  # read only: _status and _annotate write fresh copies
        if c is None:
            return
        backend = backends(self.cluster)[driver]
        st = c.get("status") or {}
        if c["metadata"].get("deletionTimestamp"):
            if CONTENT_BOUND not in (c["metadata"].get("finalizers") or []):
                return
            handle = st.get("snapshotHandle") or c["spec"].get("source", {}).get("snapshotHandle")
            if c["spec"].get("deletionPolicy") == "Delete" and handle:
                try:
                    await with_faults(self.cluster, "delete_snapshot", name, driver, lambda: backend.delete_snapshot(handle))
                except CSIError as e:
                    await self.call(driver, "patch volumesnapshotcontents/status")
                    self._status(name, {"error": {"message": f"Failed to delete snapshot: {e}", "time": now_iso()}}, merge=True)
                    raise Retry() from e
            await self.call(driver, "patch volumesnapshotcontents")
            self.store.finalize(self.vsc_rt, None, name, CONTENT_BOUND)
            return
        if st.get("snapshotHandle"):
            return
        src = c["spec"].get("source") or {}
        if src.get("snapshotHandle"):  # pre-provisioned: the snapshot exists on the storage already
            await self.call(driver, "patch volumesnapshotcontents/status")
            self._status(name, {"snapshotHandle": src["snapshotHandle"], "readyToUse": True, "creationTime": 0, "restoreSize": 0})
            return
        pv = self._pv_by_handle(driver, src.get("volumeHandle"))
        if pv is None:
            raise Retry()
        params: dict[str, Any] = {}
        cls_name = c["spec"].get("volumeSnapshotClassName")
        if cls_name and self.store.exists(self.class_rt, None, cls_name):
            params = self.store.get(self.class_rt, None, cls_name).get("parameters") or {}
        if (c["metadata"].get("annotations") or {}).get(BEING_CREATED) != "yes":
            await self.call(driver, "patch volumesnapshotcontents")
            self._annotate(name, BEING_CREATED, "yes")
        snap_name = "snapshot-" + (c["spec"].get("volumeSnapshotRef") or {}).get("uid", name)
        ref = c["spec"].get("volumeSnapshotRef") or {}
        try:
            res = await with_faults(self.cluster, "snapshot", f"{ref.get('namespace')}/{ref.get('name')}", driver,
                                    lambda: backend.create_snapshot(pv, snap_name, params))
        except CSIError as e:
            await self.call(driver, "patch volumesnapshotcontents/status")
            self._status(name, {"readyToUse": False, "error": {
                "message": f"Failed to check and update snapshot content: failed to take snapshot of the volume "
                           f"{src.get('volumeHandle')}: {e}", "time": now_iso()}}, merge=True)
            await self.call(driver, "create events")
            self.event(c, "Warning", "SnapshotCreationFailed", f"Failed to create snapshot: {e}", f"csi-snapshotter {driver}")
            raise Retry() from e
        await self.call(driver, "patch volumesnapshotcontents/status")
        self._status(name, {"snapshotHandle": res["snapshot_handle"], "creationTime": int(res["creation_time"]),
                            "readyToUse": bool(res.get("ready", True)), "restoreSize": int(res["restore_size"])})
        await self.call(driver, "patch volumesnapshotcontents")
        self._annotate(name, BEING_CREATED, None)
