"""The storage controllers do O(1) store reads per volume, so a batch of N costs O(N): the csi-snapshotter used
to scan every PV per content, the snapshot-controller every snapshot of the namespace per PVC release, and the
attach-detach controller every VolumeAttachment per detached volume, which made the twin's 1000-volume steps
cost N^2 reads. Counted in store entries read, not in time (docs/calibration.md)."""
from __future__ import annotations

import asyncio
from collections import defaultdict
from types import SimpleNamespace

import pytest

from twin.controllers.snapshot import AS_SOURCE, BOUND, PVC_SOURCE, CSISnapshotter, SnapshotController
from twin.controllers.workqueue import Retry

DRIVER = "csi.trident.netapp.io"


class CountingStore:
    """exists / get / peek / list_entries / update over plain dicts, counting every object it hands out."""

    def __init__(self) -> None:
        self.objs: dict[tuple, dict[tuple[str, str], dict]] = {}
        self.reads = 0

    def rt(self, group: str, version: str, plural: str) -> SimpleNamespace:
        return SimpleNamespace(key=(group, plural))

    def put(self, rt, obj: dict) -> None:
        md = obj["metadata"]
        self.objs.setdefault(rt.key, {})[(md.get("namespace") or "", md["name"])] = obj

    def exists(self, rt, ns, name) -> bool:
        return (ns or "", name) in self.objs.get(rt.key, {})

    def get(self, rt, ns, name) -> dict:
        self.reads += 1
        return self.objs[rt.key][(ns or "", name)]

    def peek(self, rt, ns, name) -> dict | None:
        obj = self.objs.get(rt.key, {}).get((ns or "", name))
        self.reads += obj is not None
        return obj

    def list_entries(self, rt, ns=None, *a, **kw):
        out = [SimpleNamespace(obj=o) for (n, _), o in sorted(self.objs.get(rt.key, {}).items()) if not ns or n == ns]
        self.reads += len(out)
        return out

    def update(self, rt, ns, name, obj, **kw) -> dict:
        self.put(rt, obj)
        return obj


def _pv(i: int) -> dict:
    return {"metadata": {"name": f"pvc-{i}"}, "spec": {"csi": {"driver": DRIVER, "volumeHandle": f"pvc-{i}"}}}


def _snapshot(i: int, ready: bool) -> dict:
    return {"metadata": {"namespace": "ns", "name": f"snap-{i}"}, "spec": {"source": {"persistentVolumeClaimName": f"vol-{i}"}},
            "status": {"readyToUse": ready}}


def _claim(i: int) -> dict:
    return {"metadata": {"namespace": "ns", "name": f"vol-{i}", "finalizers": [PVC_SOURCE]}, "spec": {}}


def _snapshotter(n: int) -> tuple[CSISnapshotter, CountingStore]:
    store = CountingStore()
    ctl = CSISnapshotter.__new__(CSISnapshotter)
    ctl.store = store
    for i in range(n):
        store.put(ctl.pv_rt, _pv(i))
    ctl.pv_names = {}
    return ctl, store


def test_pv_lookup_per_content_reads_o1_entries():
    per_snapshot = {}
    for n in (100, 400):
        ctl, store = _snapshotter(n)
        for i in range(n):
            assert ctl._pv_by_handle(DRIVER, f"pvc-{i}")["metadata"]["name"] == f"pvc-{i}"
        per_snapshot[n] = store.reads / n
    # one scan to fill the index, then one read per lookup: about 2 reads per snapshot at any N (a scan per
    # lookup reads N/2 on average: 50 at 100, 200 at 400)
    assert per_snapshot[400] <= per_snapshot[100] * 1.2, per_snapshot
    assert per_snapshot[400] < 4, per_snapshot


def test_pv_lookup_sees_a_pv_created_after_the_index_was_filled():
    ctl, store = _snapshotter(3)
    assert ctl._pv_by_handle(DRIVER, "pvc-0") is not None
    store.put(ctl.pv_rt, _pv(7))
    assert ctl._pv_by_handle(DRIVER, "pvc-7")["metadata"]["name"] == "pvc-7"
    assert ctl._pv_by_handle(DRIVER, "pvc-99") is None


def _release_all(n: int) -> tuple[float, CountingStore, SnapshotController]:
    store = CountingStore()
    ctl = SnapshotController.__new__(SnapshotController)
    ctl.store = store
    ctl.by_claim = {}
    ctl.vs_rt = store.rt("snapshot.storage.k8s.io", "v1", "volumesnapshots")
    calls = []

    async def call(client, verb):
        calls.append(verb)

    ctl.call = call
    for i in range(n):
        vs = _snapshot(i, ready=True)
        store.put(ctl.vs_rt, vs)
        ctl.index("ADDED", vs)
        store.put(ctl.pvc_rt, _claim(i))
    store.reads = 0

    async def run():
        for i in range(n):
            await ctl._release_pvc(store.get(ctl.vs_rt, "ns", f"snap-{i}"))
    asyncio.run(run())
    assert len(calls) == n  # every PVC's finalizer was released
    return store.reads / n, store, ctl


def test_pvc_release_per_snapshot_reads_o1_entries():
    per_snapshot = {n: _release_all(n)[0] for n in (100, 400)}
    assert per_snapshot[400] <= per_snapshot[100] * 1.2, per_snapshot
    assert per_snapshot[400] < 8, per_snapshot


def test_pvc_release_waits_for_another_snapshot_of_the_same_claim():
    _, store, ctl = _release_all(2)
    claim = store.get(ctl.pvc_rt, "ns", "vol-0")
    claim["metadata"]["finalizers"] = [PVC_SOURCE]
    other = dict(_snapshot(0, ready=False), metadata={"namespace": "ns", "name": "snap-0b"})
    store.put(ctl.vs_rt, other)
    ctl.index("ADDED", other)
    asyncio.run(ctl._release_pvc(store.get(ctl.vs_rt, "ns", "snap-0")))
    assert PVC_SOURCE in store.get(ctl.pvc_rt, "ns", "vol-0")["metadata"]["finalizers"]
    ctl.index("DELETED", other)
    asyncio.run(ctl._release_pvc(store.get(ctl.vs_rt, "ns", "snap-0")))
    assert PVC_SOURCE not in (store.get(ctl.pvc_rt, "ns", "vol-0")["metadata"].get("finalizers") or [])


def _deleting(n: int) -> tuple[SnapshotController, CountingStore, list[str]]:
    """n snapshots marked for deletion (no content yet) of n Bound PVCs, each PVC indexed as the PVC writes'
    hook would; the events the controller records, by reason."""
    store = CountingStore()
    ctl = SnapshotController.__new__(SnapshotController)
    ctl.store, ctl.enabled, ctl.by_claim, ctl.restores = store, True, {}, {}
    ctl.vs_rt = store.rt("snapshot.storage.k8s.io", "v1", "volumesnapshots")
    ctl.vsc_rt = store.rt("snapshot.storage.k8s.io", "v1", "volumesnapshotcontents")
    events: list[str] = []

    async def call(client, verb):
        pass

    ctl.call = call
    ctl.event = lambda obj, etype, reason, message: events.append(reason)
    for i in range(n):
        vs = _snapshot(i, ready=True)
        vs["metadata"].update(uid=f"uid-{i}", deletionTimestamp="2026-01-01T00:00:00Z", finalizers=[AS_SOURCE, BOUND])
        store.put(ctl.vs_rt, vs)
        claim = dict(_claim(i), spec={"volumeName": f"pvc-{i}"})
        store.put(ctl.pvc_rt, claim)
        ctl.on_change(ctl.pvc_rt, "ADDED", claim, None)
    store.reads = 0
    return ctl, store, events


def test_snapshot_delete_reads_o1_pvc_entries():
    """Deleting a snapshot looks for PVCs still being restored from it: through the index of restores, not a
    scan of the namespace's PVCs per snapshot."""
    per_snapshot = {}
    for n in (100, 400):
        ctl, store, _ = _deleting(n)
        for i in range(n):
            asyncio.run(ctl._delete(store.get(ctl.vs_rt, "ns", f"snap-{i}")))
        per_snapshot[n] = store.reads / n
        assert not any(store.get(ctl.vs_rt, "ns", f"snap-{i}")["metadata"].get("finalizers") for i in range(n))
    assert per_snapshot[400] <= per_snapshot[100] * 1.2, per_snapshot
    assert per_snapshot[400] < 8, per_snapshot


def test_snapshot_delete_waits_for_a_pvc_restored_from_it():
    ctl, store, events = _deleting(1)
    restore = {"metadata": {"namespace": "ns", "name": "restore"},
               "spec": {"dataSource": {"kind": "VolumeSnapshot", "name": "snap-0", "apiGroup": "snapshot.storage.k8s.io"}}}
    store.put(ctl.pvc_rt, restore)
    ctl.on_change(ctl.pvc_rt, "ADDED", restore, None)
    with pytest.raises(Retry):
        asyncio.run(ctl._delete(store.get(ctl.vs_rt, "ns", "snap-0")))
    assert events == ["SnapshotDeletePending"]
    bound = dict(restore, spec=dict(restore["spec"], volumeName="pvc-restore"))
    store.put(ctl.pvc_rt, bound)
    ctl.on_change(ctl.pvc_rt, "MODIFIED", bound, restore)
    asyncio.run(ctl._delete(store.get(ctl.vs_rt, "ns", "snap-0")))
    assert not store.get(ctl.vs_rt, "ns", "snap-0")["metadata"].get("finalizers")
    ctl.on_change(ctl.pvc_rt, "DELETED", bound, None)
    assert ctl.restores == {}


def test_detach_release_reads_o1_entries():
    from twin.controllers.attach_detach import AttachDetachController, attachment_name

    per_volume = {}
    for n in (100, 400):
        store = CountingStore()
        deleted: list[str] = []
        store.delete = lambda rt, ns, name, deleted=deleted: deleted.append(name)
        ctl = AttachDetachController.__new__(AttachDetachController)
        ctl.store, ctl.cluster = store, SimpleNamespace(time_scale=1.0)
        ctl.to_detach, ctl.reported, ctl.in_use = defaultdict(dict), defaultdict(dict), {}  # no volume in use
        for i in range(n):
            store.put(ctl.pv_rt, _pv(i))
            store.put(ctl.va_rt, {"metadata": {"name": attachment_name(f"pvc-{i}", DRIVER, "node-0")},
                                  "spec": {"nodeName": "node-0", "source": {"persistentVolumeName": f"pvc-{i}"}}})
        store.reads = 0

        async def release_all(ctl=ctl, n=n):
            for i in range(n):
                ctl._release((f"pvc-{i}", "node-0"))
        asyncio.run(release_all())
        assert len(deleted) == n
        per_volume[n] = store.reads / n
    assert per_volume[400] <= per_volume[100] * 1.2, per_volume
    assert per_volume[400] < 4, per_volume
