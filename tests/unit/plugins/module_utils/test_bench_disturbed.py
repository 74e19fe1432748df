"""A delete step whose objects someone else already deleted is disturbed, not a fast success."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options, Step, build_result
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item, Tracker
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import World

NS = "csi-lifecycle-1a2b3c4d-1-1"


def delete_step_with_missing_pvcs():
    """Two PVCs to delete, already gone when the step starts: their 'gone' condition holds at once."""
    world = World([K.PVC, K.PV, K.EVENT], C.MARK_RULES)
    items = [Item(n, C.pvc_and_pv_gone(NS + "/" + n), subjects=[(C.PVC, NS + "/" + n)]) for n in ("vol-0", "vol-1")]
    tracker = Tracker(world, items)
    tracker.started(["vol-0", "vol-1"], 1.0)
    step = Step("delete_volume", "Delete Volume", "vol", [], None, "PVC and PV gone")
    return step, tracker, world


def test_objects_gone_before_the_request_make_the_step_disturbed():
    step, tracker, world = delete_step_with_missing_pvcs()
    assert all(i.end is not None for i in tracker.items.values())  # what used to be reported as a success
    r = build_result(step, tracker, world, False, 1.0, Options(), vanished={"vol-0", "vol-1"})
    assert r["status"] == "disturbed"
    assert r["reason"].startswith("not a measurement: 2 of 2 objects were gone") and "vol-0" in r["reason"]


def test_a_vanished_lease_disturbs_the_step_even_when_every_object_finished():
    step, tracker, world = delete_step_with_missing_pvcs()
    lost = "the run's Lease ns/storageperf-run was deleted while the run measured"
    r = build_result(step, tracker, world, False, 1.0, Options(disturbance=lambda check: lost))
    assert r["status"] == "disturbed" and lost in r["reason"]


def test_an_undisturbed_step_stays_ok():
    step, tracker, world = delete_step_with_missing_pvcs()
    r = build_result(step, tracker, world, False, 1.0, Options(disturbance=lambda check: None))
    assert r["status"] == "ok" and r["reason"] is None
