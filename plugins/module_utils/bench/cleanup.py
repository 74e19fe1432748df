# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Delete everything a benchmark run created, in the order that lets each deletion finish.

What belongs to a run: its owner namespaces (label storageperf.k8s/run-id) and everything in them,
objects labelled with the run id anywhere (the StorageClass attach_stress creates), the PVs bound
to claims in those namespaces, the VolumeAttachments of those PVs and the VolumeSnapshotContents
of snapshots in them. Order:

  1. StatefulSets, then pods                 so no pod holds a volume (pods cascade from StatefulSets)
  2. VolumeSnapshots, then leftover contents snapshots go before the PVCs they were taken from
  3. PVCs; then PVs still there (Released under reclaimPolicy Retain) are deleted
  4. wait until those PVs and their VolumeAttachments are gone (detach finished)
  5. labelled cluster-scoped objects (StorageClass), then the namespaces, waited for

It works the same after a failed or killed run: every stage lists what is there, so whatever a
previous run or cleanup left half done is picked up.

Each wait is for what takes time on a cluster: a deleted pod stays (Terminating) through its grace period,
until the kubelet has stopped its containers and unmounted its volumes; a PVC stays while a pod uses it
(kubernetes.io/pvc-protection); a PV goes once the provisioner deleted the volume, a VolumeAttachment once the
disk is detached. So a stage waits until the objects are gone, not until they carry a deletionTimestamp: one
list says what is left, then a watch of the kind from before that list drops each name as its DELETED event
arrives (a watch that ends or answers 410 is reopened from a fresh list). A user who may not watch the kind
(403) gets the same wait by a list twice a second.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.lease import live_runs
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError, WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import Predicate, poll

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

SNAP = "snapshot.storage.k8s.io/v1"
NOTHING_LEFT = Predicate("nothing left", lambda names: not names)
CLUSTER_SCOPED = ("PersistentVolume", "VolumeAttachment", "Namespace", "VolumeSnapshotContent", "StorageClass")


class CleanupTimeout(WaitTimeout):
    """remaining: the names still there (also `last`, as for every wait)."""

    def __init__(self, msg: str, remaining: list[str], hint: str | None = None, result: Mapping[str, Any] | None = None) -> None:
        super().__init__(msg, last=remaining, hint=hint, result=result)
        self.remaining = remaining


def _name(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata") or {}
    return "%s/%s" % (md["namespace"], md["name"]) if md.get("namespace") else md.get("name")  # type: ignore[return-value]  # objects have names


class Cleanup:
    def __init__(self, client: Client, run_id: str | None = None, namespaces: Iterable[str] | None = None, timeout: float = 600.0,
                 poll: float = 0.5, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 skip_runs: Iterable[str] = ()) -> None:
        """run_id None and namespaces None: every storageperf run. namespaces: only those owner namespaces.
        skip_runs: run ids left alone (live runs, whose Lease has not expired)."""
        self.client = client
        self.skip_runs = frozenset(skip_runs)
        self.run_id = run_id
        self.only_namespaces = list(namespaces) if namespaces else None
        self.selector = L.run_selector(run_id)
        self.timeout = float(timeout)
        self.poll = poll
        self.sleep = sleep
        self.clock = clock
        self.deleted: dict[str, int] = {}
        self.snapshots_served: bool | None = None

    # discovery of what belongs to the run ---------------------------------------------------
    def namespaces(self) -> list[str]:
        if self.only_namespaces is not None:
            out = []
            for ns in self.only_namespaces:
                if self.client.get("v1", "Namespace", ns, missing_ok=True) is not None:
                    out.append(ns)
            return out
        items, _ = self.client.list("v1", "Namespace", label_selector=self.selector)
        return sorted(i["metadata"]["name"] for i in items if not self._skipped(i))

    def _skipped(self, obj: Mapping[str, Any]) -> bool:
        return ((obj.get("metadata") or {}).get("labels") or {}).get(L.RUN_ID_LABEL) in self.skip_runs

    def _in(self, api_version: str, kind: str, namespaces: Iterable[str], labelled_anywhere: bool = True) -> dict[str, dict[str, Any]]:
        """Objects of a namespaced kind in the owner namespaces, plus labelled ones elsewhere."""
        found: dict[str, dict[str, Any]] = {}
        for ns in namespaces:
            for o in self.client.list(api_version, kind, namespace=ns)[0]:
                found[_name(o)] = o
        if labelled_anywhere and self.only_namespaces is None:
            for o in self.client.list(api_version, kind, label_selector=self.selector)[0]:
                if not self._skipped(o):
                    found[_name(o)] = o
        return found

    def _snapshots_served(self) -> bool:
        if self.snapshots_served is None:
            self.snapshots_served = self.client.has_resource(SNAP, "VolumeSnapshot")
        return self.snapshots_served

    def inventory(self) -> dict[str, list[str]]:
        """Everything that belongs to the run, by kind: {kind: [names]}."""
        namespaces = self.namespaces()
        inv = {"Namespace": namespaces}
        inv["StatefulSet"] = sorted(self._in("apps/v1", "StatefulSet", namespaces))
        inv["Pod"] = sorted(self._in("v1", "Pod", namespaces))
        if self._snapshots_served():
            snaps = self._in(SNAP, "VolumeSnapshot", namespaces)
            inv["VolumeSnapshot"] = sorted(snaps)
            inv["VolumeSnapshotContent"] = sorted(c["metadata"]["name"] for c in self._contents(namespaces))
        pvcs = self._in("v1", "PersistentVolumeClaim", namespaces)
        inv["PersistentVolumeClaim"] = sorted(pvcs)
        pvs = self._pvs(namespaces, pvcs)
        inv["PersistentVolume"] = sorted(pvs)
        inv["VolumeAttachment"] = sorted(va["metadata"]["name"] for va in self._vas(pvs))
        if self.only_namespaces is None:
            inv["StorageClass"] = sorted(o["metadata"]["name"] for o in self._classes())
        return {k: v for k, v in inv.items() if v}

    def _classes(self) -> list[dict[str, Any]]:
        return [o for o in self.client.list("storage.k8s.io/v1", "StorageClass", label_selector=self.selector)[0]
                if not self._skipped(o)]

    def _contents(self, namespaces: Iterable[str]) -> list[dict[str, Any]]:
        contents, _ = self.client.list(SNAP, "VolumeSnapshotContent")
        ns = set(namespaces)
        out = []
        for c in contents:
            ref = (c.get("spec") or {}).get("volumeSnapshotRef") or {}
            labels = (c["metadata"].get("labels") or {})
            if ref.get("namespace") in ns or (self.only_namespaces is None and self._label_matches(labels)):
                out.append(c)
        return out

    def _label_matches(self, labels: Mapping[str, str]) -> bool:
        if labels.get(L.RUN_ID_LABEL) in self.skip_runs:
            return False
        if self.run_id:
            return labels.get(L.RUN_ID_LABEL) == self.run_id
        return L.RUN_ID_LABEL in labels

    def _pvs(self, namespaces: Iterable[str], pvcs: Mapping[str, Mapping[str, Any]], names: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
        """PVs claimed from the owner namespaces, bound to the given PVCs, named, or labelled with the run."""
        pvs, _ = self.client.list("v1", "PersistentVolume")
        ns = set(namespaces)
        bound = {(p.get("spec") or {}).get("volumeName") for p in pvcs.values()} | set(names)
        out: dict[str, dict[str, Any]] = {}
        for pv in pvs:
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            if ref.get("namespace") in ns or pv["metadata"]["name"] in bound or \
                    (self.only_namespaces is None and self._label_matches(pv["metadata"].get("labels") or {})):
                out[pv["metadata"]["name"]] = pv
        return out

    def _vas(self, pvs: Collection[str]) -> list[dict[str, Any]]:
        if not pvs:
            return []
        vas, _ = self.client.list("storage.k8s.io/v1", "VolumeAttachment")
        return [va for va in vas if ((va.get("spec") or {}).get("source") or {}).get("persistentVolumeName") in pvs]

    # deletion ----------------------------------------------------------------------------------
    def _delete(self, api_version: str, kind: str, objs: Iterable[Mapping[str, Any]]) -> None:
        for o in objs:
            md = o["metadata"]
            if md.get("deletionTimestamp"):
                continue
            try:
                self.client.delete(api_version, kind, md["name"], namespace=md.get("namespace"))
                self.deleted[kind] = self.deleted.get(kind, 0) + 1
            except K8sError as e:
                if e.status not in (404, 409):
                    raise

    def _wait(self, what: str, api_version: str, kind: str, left: Callable[[], list[str]], deadline: float) -> None:
        """Until left() -> [names] is empty, from one list and a watch of the kind (module docstring); raise
        CleanupTimeout listing what is left."""
        names: set[str] = set()  # was [], then rebound to a set: one type from the start
        while True:
            try:
                rv = self._resource_version(api_version, kind)
                names = set(left())
                if not names:
                    return
                if self.clock() >= deadline:
                    break
                if self._watched_gone(api_version, kind, names, rv, deadline):
                    return
            except K8sError as e:
                if e.status != 403:
                    raise
                return self._poll(what, left, deadline)  # may list but not watch the kind
        raise self._timeout(what, sorted(names))

    def _resource_version(self, api_version: str, kind: str) -> str | None:
        """The kind's current resourceVersion, from a one-item list (read before the list of what is left)."""
        doc = self.client.request("GET", self.client.path(api_version, kind, self._watch_namespace(kind)),
                                  query={"limit": 1}, what="list %s" % kind)
        return ((doc or {}).get("metadata") or {}).get("resourceVersion")

    def _watch_namespace(self, kind: str) -> str | None:
        if kind in CLUSTER_SCOPED or not self.only_namespaces or len(self.only_namespaces) != 1:
            return None
        return self.only_namespaces[0]

    def _watched_gone(self, api_version: str, kind: str, names: set[str], rv: str | None, deadline: float) -> bool:
        """Watch the kind from rv, dropping names as they are deleted; True once none is left, False when the
        watch ended first (timeout, 410 Gone, the deadline)."""
        remaining = deadline - self.clock()
        for etype, obj, _ in self.client.watch(api_version, kind, namespace=self._watch_namespace(kind),
                                               resource_version=rv, bookmarks=False,
                                               timeout_seconds=max(1, int(min(remaining, 60)))):
            if etype == "ERROR":
                return False
            if etype == "DELETED":
                names.discard(_name(obj))
                if not names:
                    return True
            if self.clock() >= deadline:
                return False
        return False

    def _poll(self, what: str, left: Callable[[], list[str]], deadline: float) -> None:
        try:
            poll(left, NOTHING_LEFT, deadline - self.clock(), what="%s gone" % what, first=self.poll, cap=self.poll,
                 sleep=self.sleep, clock=self.clock)
        except WaitTimeout as e:
            raise self._timeout(what, e.last) from e

    def _timeout(self, what: str, names: list[str]) -> CleanupTimeout:
        return CleanupTimeout("cleanup timed out after %ss waiting for %s to go: %s%s" % (
            self.timeout, what, ", ".join(names[:10]), " (and %d more)" % (len(names) - 10) if len(names) > 10 else ""),
            names)

    def run(self) -> dict[str, Any]:
        """Delete everything of the run; returns {deleted: {kind: n}, namespaces: [...]}. Raises CleanupTimeout."""
        deadline = self.clock() + self.timeout
        namespaces = self.namespaces()
        # 1. workloads
        self._delete("apps/v1", "StatefulSet", self._in("apps/v1", "StatefulSet", namespaces).values())
        self._delete("v1", "Pod", self._in("v1", "Pod", namespaces).values())
        self._wait("pods", "v1", "Pod", lambda: sorted(self._in("v1", "Pod", namespaces)), deadline)
        # 2. snapshots before the volumes they were taken from
        if self._snapshots_served():
            self._delete(SNAP, "VolumeSnapshot", self._in(SNAP, "VolumeSnapshot", namespaces).values())
            self._wait("VolumeSnapshots", SNAP, "VolumeSnapshot", lambda: sorted(self._in(SNAP, "VolumeSnapshot", namespaces)),
                       deadline)
            # contents under deletionPolicy Retain stay behind: remove the API objects (the backend keeps the snapshot)
            self._delete(SNAP, "VolumeSnapshotContent", self._contents(namespaces))
            self._wait("VolumeSnapshotContents", SNAP, "VolumeSnapshotContent",
                       lambda: [c["metadata"]["name"] for c in self._contents(namespaces)], deadline)
        # 3. claims, then volumes that outlive them
        pvcs = self._in("v1", "PersistentVolumeClaim", namespaces)
        run_pvs = set(self._pvs(namespaces, pvcs))
        self._delete("v1", "PersistentVolumeClaim", pvcs.values())
        # a claim stays while a pod uses it (pvc-protection): the pods are gone by now, so this ends
        self._wait("PVCs", "v1", "PersistentVolumeClaim", lambda: sorted(self._in("v1", "PersistentVolumeClaim", namespaces)),
                   deadline)
        # reclaimPolicy Retain (or a PV nobody deletes): remove the API object; the backend keeps the volume
        self._delete("v1", "PersistentVolume", [
            pv for pv in self._pvs(namespaces, {}, run_pvs).values()
            if (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") != "Delete"
            or (pv.get("status") or {}).get("phase") == "Available"])
        # 4. volumes and their attachments gone (detach and backend delete finished)
        self._wait("PersistentVolumes", "v1", "PersistentVolume", lambda: sorted(self._pvs(namespaces, {}, run_pvs)),
                   deadline)
        self._wait("VolumeAttachments", "storage.k8s.io/v1", "VolumeAttachment",
                   lambda: sorted(va["metadata"]["name"] for va in self._vas(run_pvs)), deadline)
        # 5. cluster-scoped labelled objects, then the namespaces
        if self.only_namespaces is None:
            self._delete("storage.k8s.io/v1", "StorageClass", self._classes())
        for ns in namespaces:
            try:
                self.client.delete("v1", "Namespace", ns)
                self.deleted["Namespace"] = self.deleted.get("Namespace", 0) + 1
            except K8sError as e:
                if e.status not in (404, 409):
                    raise
        self._wait("namespaces", "v1", "Namespace",
                   lambda: [ns for ns in namespaces if self.client.get("v1", "Namespace", ns, missing_ok=True) is not None],
                   deadline)
        return {"deleted": dict(self.deleted), "namespaces": namespaces}


def _live_message(live: Mapping[str, Mapping[str, Any]]) -> str:
    if not live:
        return ""
    return ("left %d live run(s) alone, still measuring (Lease renewed, not expired): %s. Run the cleanup after they "
            "finish, or with force=true to delete their objects anyway (they then report disturbed steps)" % (
                len(live), ", ".join("%s (namespace %s, Lease expires in %ss)" % (r, v["namespace"], v["expires_in_s"])
                                     for r, v in sorted(live.items()))))


def bench_cleanup(client: Client, p: Mapping[str, Any], check_mode: bool = False,
                  warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The bench_cleanup module: delete what one run (run_id) or every run (all_runs) left, sparing live runs."""
    if bool(p["run_id"]) == bool(p["all_runs"]):
        raise StoragePerfError("give exactly one of run_id (one run) and all_runs=true (every storageperf run)")
    problem = L.run_id_problem(p["run_id"]) if p["run_id"] else None
    if problem:
        raise StoragePerfError(problem)
    cleanup = Cleanup(client, run_id=p["run_id"] or None, namespaces=p["namespaces"], timeout=p["timeout"])
    try:
        return _clean(cleanup, p, check_mode, warn)
    except K8sError as e:
        raise StoragePerfError("cleanup of %s: %s" % (p["run_id"] or "every storageperf run", e.msg),
                               result={"deleted": cleanup.deleted}) from e


def _clean(cleanup: Cleanup, p: Mapping[str, Any], check_mode: bool, warn: Callable[[str], None] | None) -> dict[str, Any]:
    live = {} if p["force"] else live_runs(cleanup.client)
    if p["run_id"] and p["run_id"] not in live:
        live = {}
    msg = _live_message(live)
    if msg and warn is not None:
        warn(msg)
    if p["run_id"] and live:
        return dict(changed=False, found={}, deleted={}, remaining={}, live_runs=live, msg=msg)
    cleanup.skip_runs = frozenset(live)
    found = cleanup.inventory()
    if check_mode:
        return dict(changed=bool(found), found=found, remaining=found, live_runs=live,
                    msg=msg or "would delete what was found")
    if not found:
        return dict(changed=False, found={}, deleted={}, remaining={}, live_runs=live, msg=msg or "nothing to delete")
    try:
        done = cleanup.run()
    except CleanupTimeout as e:
        raise StoragePerfError(e.msg, hint="Check the controllers that should remove them (kubectl describe), then run "
                                           "the cleanup again",
                               result=dict(found=found, deleted=cleanup.deleted, remaining=cleanup.inventory(),
                                           live_runs=live)) from e
    return dict(changed=True, found=found, deleted=done["deleted"], remaining=cleanup.inventory(), live_runs=live,
                msg=msg or "deleted what was found")
