"""bench/csi_lifecycle.py and attach_stress.py: names, parameter checks and which steps may run."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle as L


def plan(**kw):
    params = {"storage_class": "ontap-nas", "volumes": 10, "pvcs_per_pod": 4}
    params.update(kw)
    return L.Plan(params)


def result(name, status="ok", reason=None):
    return {"name": name, "status": status, "reason": reason}


def test_pods_take_pvcs_per_pod_volumes_and_the_last_one_the_rest():
    p = plan()
    assert [len(v) for _, v in p.pods] == [4, 4, 2]
    assert sum((v for _, v in p.pods), []) == p.vols
    assert len(set(p.vols + p.snaps + p.clones)) == 30


def test_problems_name_the_field_and_the_fix():
    found = L.problems({"volumes": 0, "pvcs_per_pod": 4, "storage_class": "", "steps": ["create_volume", "nope"]})
    text = " | ".join(found)
    assert "volumes must be at least 1" in text
    assert "storage_class is required" in text
    assert "unknown step(s) nope" in text and "create_volume" in text
    assert L.problems({"storage_class": "x"}) == []


def test_snapshot_steps_are_skipped_with_the_reason_and_deletes_still_run():
    p = plan()
    p.snapshot_skip = "no VolumeSnapshotClass for driver csi.trident.netapp.io: create one, or give snapshot_class"
    done = [result("create_volume"), result("publish"), result("unpublish")]
    for name in ("create_snapshot", "clone_from_snapshot", "delete_clone", "delete_snapshot"):
        assert L.skip_reason(name, p, done) == p.snapshot_skip
        done.append(result(name, "skipped", p.snapshot_skip))
    assert L.skip_reason("delete_volume", p, done) is None


def test_a_failed_step_skips_every_later_step():
    p = plan()
    done = [result("create_volume", "timeout")]
    assert L.skip_reason("publish", p, done) == "not run: step create_volume timed out"
    assert L.skip_reason("delete_volume", p, done) == "not run: step create_volume timed out"


def test_unselected_steps_and_their_dependents_are_skipped():
    p = plan(steps=["create_volume", "delete_volume"])
    done = [result("create_volume")]
    assert L.skip_reason("publish", p, done).startswith("not selected")
    done.append(result("publish", "skipped", "not selected"))
    assert L.skip_reason("delete_volume", p, done) is None


def test_attach_stress_problems_and_claim_names_follow_the_statefulset():
    assert attach_stress.problems({"replicas": 0})[0].startswith("replicas must be at least 1")
    p = attach_stress.Plan({"replicas": 3})
    assert p.claims(2) == ["volume-0-attach-stress-2", "volume-1-attach-stress-2"]
