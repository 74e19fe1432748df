"""rollout/document.py and schema.py: records written, read, merged and assembled; bad ones named, never merged."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import schema as RS
from tests.support import rollout_samples as sample

REPO = Path(__file__).resolve().parents[4]


def pending(cluster: str, wave: int = 1, updated: str = "2026-12-06T04:59:00Z", rollout: dict | None = None) -> dict:
    return D.new_record(rollout or sample.ROLLOUT, cluster, wave, "pending", "not started yet", updated=updated)


def write_all(rollout_dir: Path, records) -> None:
    for record in records:
        D.write_record(str(rollout_dir), record)


# --- one record ------------------------------------------------------------------------------------------------
def test_writing_a_record_twice_changes_nothing_and_a_new_decision_keeps_the_old_one_in_history(tmp_path):
    path, changed = D.write_record(str(tmp_path), pending("twin-1"))
    assert changed and path == str(tmp_path / "clusters" / "twin-1.json")
    first = Path(path).read_text()
    # the same decision written later: the file and its first time stay
    assert D.write_record(str(tmp_path), pending("twin-1", updated="2026-12-06T05:30:00Z")) == (path, False)
    assert Path(path).read_text() == first
    promoted = sample.promoted("twin-1", 1, 0)
    assert D.write_record(str(tmp_path), promoted, check=True) == (path, True)
    assert Path(path).read_text() == first  # check wrote nothing
    assert D.write_record(str(tmp_path), promoted)[1]
    stored = json.loads(Path(path).read_text())
    assert stored["decision"] == "promoted"
    assert stored["history"] == [{"decision": "pending", "reason": "not started yet", "updated": "2026-12-06T04:59:00Z",
                                  "state": "planned"}]


def test_history_keeps_the_last_twenty(tmp_path):
    for minute in range(25):
        decision = "pending" if minute % 2 else "failed"
        D.write_record(str(tmp_path), D.new_record(sample.ROLLOUT, "twin-1", 1, decision, "try %d" % minute,
                                                   updated="2026-12-06T05:%02d:00Z" % minute))
    stored = D.read_records(str(tmp_path))["twin-1"]
    assert stored["reason"] == "try 24"
    assert len(stored["history"]) == RS.HISTORY_MAX
    assert [h["reason"] for h in stored["history"]] == ["try %d" % m for m in range(4, 24)]


@pytest.mark.parametrize("change, problem", [
    (dict(decision="promotd"), "decision: 'promotd' is not one of"),
    (dict(wave=0), "wave: 0 is less than the minimum of 1"),
    (dict(cluster=""), "cluster: ''"),
    (dict(cluster="../twin-1"), "cluster: '../twin-1' does not match"),
    (dict(decision="promoted"), "gate: a promoted record names the gate's verdict"),
    (dict(rollback={"done": True}), "rollback: 'verified' is a required property"),
])
def test_a_bad_record_is_refused_naming_the_field_before_anything_is_written(tmp_path, change, problem):
    record = dict(pending("twin-1"), **change)
    with pytest.raises(RS.RecordValidationError) as e:
        D.write_record(str(tmp_path), record)
    assert any(p.startswith(problem) for p in e.value.problems), e.value.problems
    assert not (tmp_path / "clusters").exists()


def test_both_checkers_refuse_the_same_bad_record():
    record = dict(pending("twin-1"), decision="maybe", wave="1", extra=1)
    fields = []
    for use in (True, False):
        with pytest.raises(RS.RecordValidationError) as e:
            RS.validate_record(record, use_jsonschema=use)
        fields.append(sorted(p.split(":")[0] for p in e.value.problems))
    assert fields[0] == fields[1] and {"decision", "wave"} <= set(fields[0])


# --- reading, merging ----------------------------------------------------------------------------------------
def test_a_bad_record_file_is_left_out_and_named_with_its_path(tmp_path):
    write_all(tmp_path, [pending("twin-1"), pending("twin-2")])
    clusters = tmp_path / "clusters"
    (clusters / "twin-3.json").write_text("{half")
    (clusters / "twin-4.json").write_text(json.dumps({"cluster": "twin-4", "decision": "promoted"}))
    (clusters / "twin-5.json").write_text(json.dumps(pending("someone-else")))
    (clusters / ".twin-6.json.tmp").write_text("{")  # the atomic writer's temporary file: not a record
    records = D.read_records(str(tmp_path))
    assert sorted(records) == ["twin-1", "twin-2"]
    problems = {Path(p["source"]).name: p["error"] for p in records.problems}
    assert sorted(problems) == ["twin-3.json", "twin-4.json", "twin-5.json"]
    assert problems["twin-3.json"].startswith("not valid JSON")
    assert "'schema_version' is a required property" in problems["twin-4.json"]
    assert "not the cluster its file is named after" in problems["twin-5.json"]
    assert all(Path(p["source"]).is_absolute() for p in records.problems)
    doc = D.assemble(records)
    assert [p["source"] for p in doc["problems"]] == [p["source"] for p in records.problems]
    assert set(doc["clusters"]) == {"twin-1", "twin-2"}


def test_records_of_two_rollouts_in_one_directory_are_refused_naming_both_ids(tmp_path):
    write_all(tmp_path, [pending("twin-1")])
    other = dict(sample.ROLLOUT, id="snapshot_controller-9f9f9f", change="snapshot_controller")
    (tmp_path / "clusters" / "twin-2.json").write_text(json.dumps(pending("twin-2", rollout=other)))
    with pytest.raises(D.RolloutError) as e:
        D.read_records(str(tmp_path))
    assert "trident_concurrency-1a2b3c" in str(e.value) and "snapshot_controller-9f9f9f" in str(e.value)
    with pytest.raises(D.RolloutError, match="snapshot_controller-9f9f9f"):  # nor written over another's record
        D.write_record(str(tmp_path), pending("twin-2"))


def test_merge_of_slices_keeps_every_cluster_and_the_newest_record_with_the_others_in_history(tmp_path):
    host_a, host_b = tmp_path / "a", tmp_path / "b"
    write_all(host_a, [pending("twin-1"), sample.promoted("twin-2", 2, 10)])
    write_all(host_b, [pending("twin-2", wave=2), pending("twin-3", wave=2, updated="2026-12-06T05:00:00Z")])
    a, b = D.read_records(str(host_a)), D.read_records(str(host_b))
    for merged in (D.merge(a, b), D.merge(b, a)):  # newest wins whatever the order
        assert sorted(merged) == ["twin-1", "twin-2", "twin-3"]
        assert merged["twin-2"]["decision"] == "promoted"
        assert merged["twin-2"]["history"] == [history(pending("twin-2"))]
        assert sorted(merged.sources) == sorted([str(host_a), str(host_b)])
    # the inputs are left as they were
    assert a["twin-2"]["history"] == [] and b["twin-2"]["decision"] == "pending"


def history(record: dict) -> dict:
    return {k: record[k] for k in ("decision", "reason", "updated", "state")}


def test_merge_refuses_two_rollouts():
    other = dict(sample.ROLLOUT, id="csi_sidecars-000001")
    with pytest.raises(D.RolloutError, match="csi_sidecars-000001"):
        D.merge({"twin-1": pending("twin-1")}, {"twin-2": pending("twin-2", rollout=other)})


def test_newest_is_judged_by_time_not_by_its_spelling():
    earlier = pending("twin-1", updated="2026-12-06T05:00:00.900000Z")
    later = dict(sample.promoted("twin-1", 1, 0), updated="2026-12-06T07:00:01+02:00")  # 05:00:01Z
    assert D.merge({"twin-1": later}, {"twin-1": earlier})["twin-1"]["decision"] == "promoted"


# --- the assembled document -------------------------------------------------------------------------------------
def test_waves_pass_within_max_fail_percentage_50():
    doc = sample.document()  # the sample rollout's own limit: 50
    assert doc["max_fail_percentage"] == 50
    assert [(w["wave"], w["clusters"], w["failed"], w["verdict"]) for w in doc["waves"]] == [
        (1, ["twin-1"], 0, "passed"), (2, ["twin-2", "twin-3"], 1, "passed")]
    assert doc["halted"] is None
    assert doc["summary"] == {"promoted": ["twin-1", "twin-2"], "rolled_back": ["twin-3"], "failed": [], "skipped": [],
                              "pending": [], "aborted": []}
    assert doc["generated"] == "2026-12-06T05:20:00Z"  # the newest record: the same records, the same document


def test_one_failure_halts_a_wave_with_max_fail_percentage_0():
    doc = D.assemble(sample.records(), waves=3, max_fail_percentage=0)
    assert [w["verdict"] for w in doc["waves"]] == ["passed", "halted", "pending"]
    assert doc["halted"]["wave"] == 2
    assert "1 of 2 clusters" in doc["halted"]["reason"] and "max_fail_percentage 0%" in doc["halted"]["reason"]


def test_the_last_wave_halts_nothing_its_failures_are_counted():
    doc = sample.document(max_fail_percentage=0)
    assert [(w["verdict"], w["failed"]) for w in doc["waves"]] == [("passed", 0), ("done", 1)]
    assert doc["halted"] is None


def test_the_first_halted_wave_halts_later_waves_are_skipped_or_pending():
    records = sample.records()
    records["twin-1"] = sample.rolled_back("twin-1", 1, 0)
    records["twin-2"] = dict(records["twin-2"], decision="skipped", reason="wave 1 halted the rollout", gate=None)
    records["twin-3"] = dict(records["twin-3"], decision="skipped", reason="wave 1 halted the rollout", gate=None)
    doc = D.assemble(records, waves=3)
    assert [(w["wave"], w["verdict"]) for w in doc["waves"]] == [(1, "halted"), (2, "skipped"), (3, "pending")]
    assert doc["halted"]["wave"] == 1 and "1 of 1 cluster rolled back" in doc["halted"]["reason"]
    assert "above max_fail_percentage 50%" in doc["halted"]["reason"]


def test_an_inconclusive_gate_holds_the_rollout_whatever_max_fail_percentage():
    records = sample.records()
    back = sample.rolled_back("twin-1", 1, 0)
    back["gate"] = dict(back["gate"], decision="inconclusive", passed=False)
    records["twin-1"] = back
    doc = D.assemble(records, waves=3, max_fail_percentage=100)
    assert doc["waves"][0]["verdict"] == "halted" and doc["halted"]["wave"] == 1
    assert "the gate was inconclusive on twin-1" in doc["halted"]["reason"]
    # a gate that failed outright counts against max_fail_percentage only
    assert D.assemble(sample.records(), waves=3, max_fail_percentage=100)["halted"] is None


def test_a_wave_with_a_pending_member_is_pending_until_failures_already_pass_the_limit():
    records = sample.records()
    records["twin-2"] = pending("twin-2", wave=2)
    assert [w["verdict"] for w in D.assemble(records)["waves"]] == ["passed", "pending"]  # 1 of 2 = 50%: not above
    assert D.assemble(records, waves=3, max_fail_percentage=0)["waves"][1]["verdict"] == "halted"


def test_the_assembled_document_is_valid_with_and_without_jsonschema():
    doc = sample.document()
    for use in (True, False):
        assert RS.validate_rollout(doc, use_jsonschema=use) is doc
    broken = copy.deepcopy(doc)
    broken["waves"][0]["verdict"] = "fine"
    broken["clusters"]["twin-1"]["wave"] = 0
    for use in (True, False):
        with pytest.raises(RS.RolloutValidationError) as e:
            RS.validate_rollout(broken, use_jsonschema=use)
        assert sorted(p.split(":")[0] for p in e.value.problems) == ["clusters.twin-1.wave", "waves[0].verdict"]


def test_rollout_schema_json_is_in_sync():
    """Regenerate with: python -m ansible_collections.storageperf.k8s.plugins.module_utils.rollout.schema
    > docs/rollout.schema.json"""
    assert (REPO / "docs" / "rollout.schema.json").read_text(encoding="utf-8") == RS.schema_json()
    assert set(RS.ROLLOUT_SCHEMA["$defs"]) >= {"record", "gate_verdict"}
