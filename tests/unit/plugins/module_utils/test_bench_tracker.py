"""bench/tracker.py + world.py + conditions.py: objects timed from watch events, with no cluster.

Events are fed by hand with explicit receive times, exactly as the watch threads feed them.
"""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item, Tracker
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import World

NS = "bench"


def pvc(name, phase="Pending", volume=None, rv="1"):
    obj = {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS, "resourceVersion": rv,
                                                         "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {}, "status": {"phase": phase}}
    if volume:
        obj["spec"]["volumeName"] = volume
    return obj


def pod(name, ready=False, node="n1"):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeName": node},
            "status": {"phase": "Running" if ready else "Pending",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def va(name, pv, node="n1", attached=False):
    return {"kind": "VolumeAttachment", "metadata": {"name": name},
            "spec": {"attacher": "x", "nodeName": node, "source": {"persistentVolumeName": pv}},
            "status": {"attached": attached}}


def warning(name, kind, obj_name, reason, count=1):
    return {"kind": "Event", "metadata": {"name": name, "namespace": NS}, "type": "Warning", "reason": reason,
            "message": "boom", "count": count,
            "involvedObject": {"kind": kind, "namespace": NS, "name": obj_name}}


def tracker(items, give_up=0):
    world = World([K.PVC, K.POD, K.VA, K.EVENT, K.PV], C.MARK_RULES)
    return Tracker(world, items, give_up_after_warnings=give_up)


def test_create_step_times_each_pvc_from_its_bound_event():
    items = [Item("a", C.pvc_bound(NS + "/a"), subjects=[(C.PVC, NS + "/a")]),
             Item("b", C.pvc_bound(NS + "/b"), subjects=[(C.PVC, NS + "/b")])]
    t = tracker(items)
    t.started(["a"], 10.0)
    t.started(["b"], 10.5)
    t.observe(C.PVC, "ADDED", pvc("a"), 10.1)
    t.observe(C.PVC, "ADDED", pvc("b"), 10.6)
    t.observe(C.PVC, "MODIFIED", pvc("b", "Bound", "pv-b"), 11.0)
    assert t.items["b"].end == 11.0 and t.items["a"].end is None
    assert not t.all_settled()
    t.observe(C.PVC, "MODIFIED", pvc("a", "Bound", "pv-a"), 12.0)
    assert t.items["a"].end == 12.0
    assert t.all_settled()
    assert t.first_start == 10.0 and t.last_end == 12.0
    assert t.counts() == {"total": 2, "done": 2, "errors": 0, "started": 2}


def test_event_received_before_the_request_never_gives_a_negative_latency():
    # applied late (after the lock was free), an event from before the request ends the object at its start
    items = [Item("a", C.pvc_bound(NS + "/a"))]
    t = tracker(items)
    t.started(["a"], 5.0)
    t.observe(C.PVC, "MODIFIED", pvc("a", "Bound"), 4.0)
    assert t.items["a"].end == 5.0


def test_publish_needs_pod_ready_and_its_volume_attached_on_the_pods_node():
    key = NS + "/vol-0"
    item = Item("vol-0", C.published(NS + "/pod-0", [key], True), subjects=[(C.POD, NS + "/pod-0")], volumes=[key])
    t = tracker([item])
    t.observe(C.PVC, "ADDED", pvc("vol-0", "Bound", "pv-0"), 0.0)
    t.started(["vol-0"], 1.0)
    t.observe(C.POD, "ADDED", pod("pod-0"), 1.1)
    t.observe(C.VA, "ADDED", va("csi-1", "pv-0", node="other", attached=True), 1.2)
    t.observe(C.POD, "MODIFIED", pod("pod-0", ready=True), 1.5)
    assert item.end is None, "a VolumeAttachment on another node does not count"
    assert "not attached" in item.missing
    t.observe(C.VA, "ADDED", va("csi-2", "pv-0", node="n1"), 1.6)
    assert item.end is None
    t.observe(C.VA, "MODIFIED", va("csi-2", "pv-0", node="n1", attached=True), 2.0)
    assert item.end == 2.0
    assert t.world.marks[(C.VA, "csi-2")]["attached"] == 2.0


def test_unpublish_waits_for_the_pod_and_every_attachment_to_go():
    key = NS + "/vol-0"
    item = Item("vol-0", C.unpublished(NS + "/pod-0", [key]), subjects=[(C.POD, NS + "/pod-0")], volumes=[key])
    t = tracker([])
    t.observe(C.PVC, "ADDED", pvc("vol-0", "Bound", "pv-0"), 0.0)
    t.observe(C.POD, "ADDED", pod("pod-0", ready=True), 0.0)
    t.observe(C.VA, "ADDED", va("csi-2", "pv-0", attached=True), 0.0)
    t.add([item])
    t.started(["vol-0"], 1.0)
    assert item.end is None and "VolumeAttachment left" in item.missing
    t.observe(C.POD, "DELETED", pod("pod-0"), 1.4)
    assert item.end is None
    t.observe(C.VA, "DELETED", va("csi-2", "pv-0"), 3.0)
    assert item.end == 3.0


def test_delete_step_waits_for_pvc_and_pv():
    key = NS + "/vol-0"
    item = Item("vol-0", C.pvc_and_pv_gone(key), subjects=[(C.PVC, key)])
    t = tracker([])
    t.observe(C.PVC, "ADDED", pvc("vol-0", "Bound", "pv-0"), 0.0)
    t.observe(C.PV, "ADDED", {"kind": "PersistentVolume", "metadata": {"name": "pv-0"}, "spec": {}}, 0.0)
    t.add([item])
    t.started(["vol-0"], 1.0)
    t.observe(C.PVC, "DELETED", pvc("vol-0", "Bound", "pv-0"), 1.2)
    assert item.end is None and "PV pv-0" in item.missing
    t.observe(C.PV, "DELETED", {"kind": "PersistentVolume", "metadata": {"name": "pv-0"}, "spec": {}}, 1.9)
    assert item.end == 1.9


def test_relist_turns_missing_objects_into_deletions():
    key = NS + "/vol-0"
    item = Item("vol-0", C.pvc_and_pv_gone(key), subjects=[(C.PVC, key)])
    t = tracker([])
    t.relisted(C.PVC, [pvc("vol-0", "Bound", "pv-0")], 0.0)
    t.add([item])
    t.started(["vol-0"], 1.0)
    t.relisted(C.PVC, [], 2.5)  # after a 410: the PVC is not in the fresh list any more
    assert item.end == 2.5


def test_warning_events_explain_unfinished_objects_and_give_up_settles_them():
    key = NS + "/vol-0"
    item = Item("vol-0", C.pvc_bound(key), subjects=[(C.PVC, key)])
    t = tracker([item], give_up=3)
    t.started(["vol-0"], 1.0)
    t.observe("Event", "ADDED", warning("e1", "PersistentVolumeClaim", "vol-0", "ProvisioningFailed"), 1.1)
    assert not item.settled
    assert Tracker.reason(item) == "ProvisioningFailed: boom"
    # the API server aggregates repeats into one Event whose count grows
    t.observe("Event", "MODIFIED", warning("e1", "PersistentVolumeClaim", "vol-0", "ProvisioningFailed", count=3), 1.5)
    assert item.settled and item.end is None
    assert item.error.startswith("ProvisioningFailed: boom (3 warning events)")
    assert t.counts()["errors"] == 1 and t.all_settled()


def test_warnings_from_before_the_object_started_are_not_its_failures():
    key = NS + "/vol-0"
    item = Item("vol-0", C.pvc_and_pv_gone(key), subjects=[(C.PVC, key)])
    t = tracker([])
    t.observe("Event", "ADDED", warning("old", "PersistentVolumeClaim", "vol-0", "ProvisioningFailed"), 0.5)
    t.add([item])
    t.started(["vol-0"], 1.0)
    assert item.warnings == {}


def test_failed_request_settles_the_object_with_the_reason():
    items = [Item("a", C.pvc_bound(NS + "/a")), Item("b", C.pvc_bound(NS + "/b"))]
    t = tracker(items)
    t.started(["a", "b"], 1.0)
    t.failed(["a"], "AlreadyExists: create PersistentVolumeClaim bench/a failed")
    assert t.items["a"].error.startswith("AlreadyExists")
    assert t.counts() == {"total": 2, "done": 0, "errors": 1, "started": 2}


def test_one_event_only_reevaluates_the_objects_that_read_it():
    calls = []

    def counting(key):
        inner = C.pvc_bound(key)

        def check(view):
            calls.append(key)
            return inner(view)
        return check
    items = [Item("v%d" % i, counting("%s/v%d" % (NS, i))) for i in range(50)]
    t = tracker(items)
    t.started([i.name for i in items], 1.0)
    calls.clear()
    t.observe(C.PVC, "MODIFIED", pvc("v7", "Bound"), 2.0)
    assert calls == [NS + "/v7"]


def test_duplicate_item_names_are_refused():
    with pytest.raises(ValueError, match="declared twice"):
        tracker([Item("a", C.pvc_bound("x/a")), Item("a", C.pvc_bound("x/a"))])
