"""document.py: building, finalizing, writing and loading result documents."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import ResultValidationError, validate


def _doc():
    doc = D.new_result("attach_stress", parameters={"replicas": 28}, cluster={"server": "https://k", "nodes": 3},
                       components={"csi-plugin": "v1.30.4"})
    return doc


def test_new_result_starts_interrupted_with_a_sortable_run_id():
    doc = _doc()
    assert doc["status"] == "interrupted" and doc["finished"] is None
    assert doc["run_id"].startswith("attach_stress-") and len(doc["run_id"].split("-")) == 3
    validate(doc)


def test_add_step_derives_rate_and_latency_from_objects():
    doc = _doc()
    run = D.add_run(D.add_variant(doc, "serial"))
    step = D.add_step(run, "scale_up", count=4, wall_s=2.0, unit="pod",
                      objects=[{"name": "p%d" % i, "start": 0.0, "end": 0.5 * (i + 1)} for i in range(4)])
    assert step["rate"] == 2.0
    assert step["objects"][3]["latency"] == 2.0
    assert step["latency"]["min"] == 0.5 and step["latency"]["max"] == 2.0
    assert step["errors"] == [] and step["unfinished"] == []


def test_add_step_rejects_unknown_status_and_duplicate_variants():
    doc = _doc()
    run = D.add_run(D.add_variant(doc, "serial"))
    with pytest.raises(ValueError, match="status must be one of"):
        D.add_step(run, "x", status="done")
    with pytest.raises(ValueError, match="already exists"):
        D.add_variant(doc, "serial")


def test_finalize_marks_failed_runs_and_summarizes_repetitions():
    doc = _doc()
    v = D.add_variant(doc, "parallel")
    for wall in (10.0, 30.0, 20.0):
        D.add_step(D.add_run(v), "scale_up", count=28, wall_s=wall, unit="pod")
    D.add_step(D.add_run(v), "scale_up", status="timeout", count=28, unit="pod", unfinished=["p-3"])
    D.finalize(doc)
    assert doc["status"] == "failed" and doc["finished"]
    s = v["summary"]["steps"][0]
    assert (s["runs"], s["ok_runs"], s["status"], s["unfinished"]) == (4, 3, "timeout", 1)
    assert s["wall_s"]["median"] == 20.0 and (s["wall_s"]["min"], s["wall_s"]["max"]) == (10.0, 30.0)
    assert v["summary"]["sum_wall_s"] == 20.0
    assert [r["status"] for r in v["runs"]] == ["failed", "failed", "failed", "failed"]
    validate(doc)


def test_finalize_ok_when_every_step_ok():
    doc = _doc()
    D.add_step(D.add_run(D.add_variant(doc, "a")), "s", count=1, wall_s=1.0)
    assert D.finalize(doc)["status"] == "ok"


def test_write_atomic_writes_reports_dir_run_id_result_json(tmp_path):
    doc = D.finalize(_doc())
    path = D.write_atomic(doc, str(tmp_path))
    assert path == str(tmp_path / doc["run_id"] / "result.json")
    assert json.loads(open(path).read())["run_id"] == doc["run_id"]
    assert [f for f in os.listdir(os.path.dirname(path)) if f.startswith(".")] == []  # no temp files left
    assert D.load(os.path.dirname(path)) == json.loads(D.dumps(doc))


def test_a_failed_run_still_writes_what_it_has(tmp_path):
    doc = _doc()
    run = D.add_run(D.add_variant(doc, "serial"))
    D.add_step(run, "scale_up", count=28, wall_s=199.0, unit="pod")
    D.finalize(doc, status="interrupted", reason="KeyboardInterrupt during scale_down")
    loaded = D.load(D.write_atomic(doc, str(tmp_path)))
    assert loaded["status"] == "interrupted" and loaded["reason"].startswith("KeyboardInterrupt")
    assert loaded["variants"][0]["runs"][0]["steps"][0]["wall_s"] == 199.0


def test_write_text_atomic_reports_changes(tmp_path):
    p = str(tmp_path / "sub" / "f.txt")
    assert D.write_text_atomic(p, "a") is True
    assert D.write_text_atomic(p, "a") is False
    assert D.write_text_atomic(p, "b") is True


def test_load_names_the_file_on_bad_input(tmp_path):
    bad = tmp_path / "result.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        D.load(str(bad))
    with pytest.raises(ValueError, match="cannot read"):
        D.load(str(tmp_path / "missing.json"))
    bad.write_text(json.dumps({"schema_version": 1}))
    with pytest.raises(ResultValidationError, match="run_id"):
        D.load(str(bad))
