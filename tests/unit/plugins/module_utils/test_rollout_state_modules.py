"""rollout/state_modules.py: what rollout_record and rollout_report do with their options."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import state_modules as M
from tests.support import rollout_samples as sample

ROLLOUT = {"id": "trident_concurrency-1a2b3c", "change": "trident_concurrency", "parameters": {"enable": True}}


def record_params(rollout_dir: Path, records: list[dict], keep_existing: bool = False, rollout: dict | None = None):
    return {"rollout_dir": str(rollout_dir), "rollout": rollout or ROLLOUT, "records": records,
            "keep_existing": keep_existing}


def report_params(rollout_dir: Path, **extra):
    p = {"rollout_dir": str(rollout_dir), "output_dir": None, "max_fail_percentage": None, "title": None,
         "bucket": None, "prefix": ""}
    p.update(extra)
    return p


PENDING = [{"cluster": "twin-1", "wave": 1, "decision": "pending", "reason": "not started yet"},
           {"cluster": "twin-2", "wave": 2, "decision": "pending", "reason": "not started yet"}]


def test_pending_at_the_start_keeps_earlier_decisions_and_a_rerun_changes_nothing(tmp_path):
    first = M.rollout_record(record_params(tmp_path, PENDING))
    assert first["changed"] and sorted(first["records"]) == ["twin-1", "twin-2"]
    assert first["records"]["twin-1"]["rollout"]["max_fail_percentage"] == 0  # the defaults filled in
    gate = sample.gate()
    promoted = [{"cluster": "twin-1", "wave": 1, "decision": "promoted", "reason": "the gate passed", "gate": gate,
                 "applied": True}]
    out = M.rollout_record(record_params(tmp_path, promoted), diff=True)
    assert out["changed"] and out["diff"]["before"]["twin-1"]["decision"] == "pending"
    assert out["diff"]["after"]["twin-1"]["history"][0]["decision"] == "pending"
    again = M.rollout_record(record_params(tmp_path, PENDING, keep_existing=True))
    assert not again["changed"] and again["records"]["twin-1"]["decision"] == "promoted"
    assert not M.rollout_record(record_params(tmp_path, promoted))["changed"]


def test_check_mode_writes_nothing(tmp_path):
    out = M.rollout_record(record_params(tmp_path, PENDING), check_mode=True, diff=True)
    assert out["changed"] and out["diff"]["before"] == {"twin-1": None, "twin-2": None}
    assert not tmp_path.joinpath("clusters").exists()


@pytest.mark.parametrize("records, rollout, field", [
    ([dict(PENDING[0], decision="done")], None, "records[1].decision"),
    ([dict(PENDING[0], wave=0)], None, "records[1].wave"),
    ([dict(PENDING[0], cluster="")], None, "records[1].cluster"),
    ([dict(PENDING[0], colour="red")], None, "records[1].colour: unknown key"),
    ([PENDING[0], PENDING[0]], None, "records[2].cluster: 'twin-1' is also records[1]"),
    ([{"cluster": "twin-1"}], None, "records[1].wave: required"),
    ([dict(PENDING[0], decision="rolled_back")], None, "records[1].gate: a rolled_back record"),
    (PENDING, dict(ROLLOUT, max_fail_percentage=150), "rollout.max_fail_percentage"),
    (PENDING, {"change": "x"}, "rollout: 'id' is a required property"),
])
def test_bad_input_fails_naming_the_field_before_anything_is_written(tmp_path, records, rollout, field):
    with pytest.raises(StoragePerfError) as e:  # after a good record: nothing is written before every one is checked
        M.rollout_record(record_params(tmp_path, [PENDING[1]] + records, rollout=rollout))
    assert field in e.value.message()
    assert not tmp_path.joinpath("clusters").exists()


def test_another_rollouts_id_fails_naming_both(tmp_path):
    M.rollout_record(record_params(tmp_path, PENDING))
    with pytest.raises(StoragePerfError) as e:
        M.rollout_record(record_params(tmp_path, PENDING[:1], rollout=dict(ROLLOUT, id="csi_sidecars-000001")))
    assert "csi_sidecars-000001" in str(e.value) and "trident_concurrency-1a2b3c" in str(e.value)


def test_report_writes_the_three_files_once_and_names_a_bad_record(tmp_path):
    for record in sample.records().values():
        M.D.write_record(str(tmp_path), record)
    (tmp_path / "clusters" / "twin-4.json").write_text("[]")
    dry = M.rollout_report(report_params(tmp_path), check_mode=True)
    assert dry["changed"] and not (tmp_path / "rollout.json").exists()
    out = M.rollout_report(report_params(tmp_path))
    assert out["changed"] and sorted(out["paths"]) == ["html", "json", "md"]
    assert out["summary"]["rolled_back"] == ["twin-3"] and out["halted"] is None
    assert out["headline"] == "3 clusters: 2 promoted, 1 rolled back; wave 2 of 2 done"
    assert out["warnings"] == ["%s was left out: not a rollout record: (record): not a JSON object"
                               % (tmp_path / "clusters" / "twin-4.json")]
    assert json.loads(Path(out["paths"]["json"]).read_text()) == out["rollout"]
    assert not M.rollout_report(report_params(tmp_path))["changed"]
    halted = M.rollout_report(report_params(tmp_path, max_fail_percentage=0.0, output_dir=str(tmp_path / "strict")))
    # the last wave halts nothing: its failures are counted, the report does not say halted
    assert halted["halted"] is None and [w["verdict"] for w in halted["rollout"]["waves"]] == ["passed", "done"]


def test_report_of_nothing_fails(tmp_path):
    with pytest.raises(StoragePerfError, match="no rollout record"):
        M.rollout_report(report_params(tmp_path))
    with pytest.raises(StoragePerfError, match="not a directory"):
        M.rollout_report(report_params(tmp_path / "missing"))
    with pytest.raises(StoragePerfError, match="max_fail_percentage: 101"):
        M.rollout_report(report_params(tmp_path, max_fail_percentage=101))
