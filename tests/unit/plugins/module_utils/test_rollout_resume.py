"""rollout/resume.py: where a cluster's turn starts, from its record (a write-ahead log) and the cluster read now."""
from __future__ import annotations

import datetime

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import resume as R

NOW = datetime.datetime(2026, 12, 7, 12, 0, 0, tzinfo=datetime.UTC)
ME = {"server": "https://127.0.0.1:6443", "uid": "uid-1"}


@pytest.fixture
def probe(tmp_path):
    result = tmp_path / "result.json"
    result.write_text("{}")
    return {"result": str(result), "run_id": "r-before", "finished": "2026-12-07T11:30:00Z"}


def rec(state, decision="pending", identity=ME, **parts):
    return dict({"state": state, "decision": decision, "reason": "because", "updated": "2026-12-07T11:40:00Z",
                 "identity": identity, "applied": state in ("applying", "applied", "after_measured", "rolling_back"),
                 "history": []}, **parts)


def start(record, on, **kw):
    return R.start(record, on, ME, now=NOW, **kw)


def test_no_record_runs_and_an_on_change_without_a_record_is_skipped():
    assert start(None, False)["start"] == "run"
    assert start(None, True)["start"] == "skip"
    assert start(None, False, applies=False)["start"] == "not_applicable"


@pytest.mark.parametrize("state", ["applying", "applied"])
def test_a_change_being_applied_or_applied_is_measured_and_judged_never_skipped(state, probe):
    for on in (True, False):
        got = start(rec(state, baseline=probe), on)
        assert got["start"] == "after" and got["resumed_from"] == state
        assert got["baseline"]["reused"] is True
    # without its baseline it cannot be judged: turned off first, then the whole sequence
    assert start(rec(state), True)["start"] == "restore"


def test_after_measured_is_judged_again_from_its_probes(probe):
    got = start(rec("after_measured", baseline=probe, after=probe), True)
    assert got["start"] == "gate" and got["after"]["result"] == probe["result"]
    assert start(rec("after_measured", baseline=probe, after={"result": "/gone"}), True)["start"] == "after"
    off = start(rec("after_measured", baseline=probe, after=probe), False)
    assert off["start"] == "run" and "reads the change off" in off["drift"]


def test_a_rollback_under_way_is_finished(probe):
    got = start(rec("rolling_back", gate={"passed": False, "reasons": ["slow"]}), True)
    assert got["start"] == "rollback" and got["gate"]["passed"] is False


def test_baseline_measured_goes_on_with_the_change(probe):
    assert start(rec("baseline_measured", baseline=probe), False)["start"] == "apply"
    # on after the baseline, with no intent recorded: not this rollout's doing
    assert start(rec("baseline_measured", baseline=probe), True)["start"] == "skip"
    old = dict(probe, finished="2026-12-01T00:00:00Z")
    assert start(rec("baseline_measured", baseline=old), False, baseline_max_age=3600)["start"] == "run"


def test_a_decided_record_is_believed_only_where_the_cluster_agrees(probe):
    assert start(rec("promoted", "promoted"), True)["start"] == "leave"
    drift = start(rec("promoted", "promoted"), False)
    assert drift["start"] == "run" and "reads the change off" in drift["drift"]
    assert start(rec("rolled_back", "rolled_back"), False)["start"] == "leave"
    assert start(rec("rolled_back", "rolled_back"), False, retry_rolled_back=True)["start"] == "run"
    back_on = start(rec("rolled_back", "rolled_back"), True)
    assert back_on["start"] == "restore" and "reads the change on" in back_on["drift"]


def test_records_of_another_cluster_under_the_same_name_are_not_believed():
    other = rec("promoted", "promoted", identity={"server": ME["server"], "uid": "uid-old"})
    got = start(other, False)
    assert got["start"] == "run" and "another cluster under this name" in got["drift"]
    # a record written before any cluster was read (planned) names none and is this cluster's
    assert R.same_cluster(rec("planned", identity=None), ME)


def test_a_failed_cluster_the_rollout_changed_is_never_skipped(probe):
    failed = rec("failed", "failed", applied=True)
    assert start(failed, True)["start"] == "restore"
    assert start(failed, False)["start"] == "run"
    # a skipped record whose history shows the change: not skipped again while the change is on
    skipped = rec("skipped", "skipped", history=[{"decision": "pending", "state": "applied", "reason": "x",
                                                  "updated": "2026-12-07T11:00:00Z"}])
    assert start(skipped, True)["start"] == "restore"


def test_records_without_states_say_it_through_their_decision(probe):
    old = {"decision": "pending", "reason": "baseline measured", "updated": "2026-12-07T11:40:00Z",
           "baseline": probe, "applied": False, "history": []}
    assert R.state_of(old) == "baseline_measured"
    assert R.state_of(dict(old, applied=True)) == "applying"
    assert start(dict(old, applied=True), True)["start"] == "after"


def test_abort_rolls_back_what_the_rollout_changed_and_leaves_the_rest():
    assert R.abort(rec("promoted", "promoted"), True, ME)["start"] == "abort"
    assert R.abort(rec("after_measured"), True, ME)["start"] == "abort"
    assert R.abort(rec("planned"), True, ME)["start"] == "leave"
    assert R.abort(None, True, ME)["start"] == "leave"
    assert R.abort(rec("aborted", "aborted"), False, ME)["start"] == "leave"
    assert R.abort(rec("rolled_back", "rolled_back"), False, ME)["start"] == "leave"
    assert R.abort(rec("rolled_back", "rolled_back"), True, ME)["start"] == "abort"
