"""schema.py: good documents pass, bad ones fail naming the field; docs/result.schema.json in sync."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema
from tests.support import report_samples as sample

REPO = Path(__file__).resolve().parents[4]
VALIDATORS = [pytest.param(True, id="jsonschema"), pytest.param(False, id="builtin")]


@pytest.fixture(scope="module")
def good():
    return sample.csi_lifecycle(repetitions=2, failure=True)


@pytest.mark.parametrize("use_jsonschema", VALIDATORS)
@pytest.mark.parametrize("build", [sample.csi_lifecycle, sample.fio_classes, sample.gluster_handshake])
def test_sample_documents_are_valid(build, use_jsonschema):
    doc = build()
    assert schema.validate(doc, use_jsonschema=use_jsonschema) is doc


BAD = [
    # (mutation, the field the error must name, words of the message)
    (lambda d: d.pop("run_id"), "(document)", "run_id"),
    (lambda d: d.update(status="done"), "status", "done"),
    (lambda d: d.update(schema_version=2), "schema_version", "1 was expected"),
    (lambda d: d["variants"][0]["runs"][0]["steps"][1].update(status="finished"),
     "variants[0].runs[0].steps[1].status", "finished"),
    (lambda d: d["variants"][1]["runs"][0]["steps"][0].update(count=-1),
     "variants[1].runs[0].steps[0].count", "minimum"),
    (lambda d: d["variants"][0]["runs"][0]["steps"][0]["latency"].pop("p99"),
     "variants[0].runs[0].steps[0].latency", "p99"),
    (lambda d: d["variants"][0]["runs"][0]["steps"][0].update(metrics={"iops": "fast"}),
     "variants[0].runs[0].steps[0].metrics.iops", "fast"),
    (lambda d: d["variants"][0]["runs"][0]["steps"][0]["errors"].append({"object": "pvc-1"}),
     "variants[0].runs[0].steps[0].errors[0]", "reason"),
    (lambda d: d.update(started="yesterday"), "started", "yesterday"),
]


@pytest.mark.parametrize("use_jsonschema", VALIDATORS)
@pytest.mark.parametrize("mutate,field,word", BAD)
def test_bad_documents_are_rejected_naming_the_field(good, mutate, field, word, use_jsonschema):
    doc = copy.deepcopy(good)
    mutate(doc)
    with pytest.raises(schema.ResultValidationError) as err:
        schema.validate(doc, use_jsonschema=use_jsonschema)
    assert any(p.startswith(field + ":") and word in p for p in err.value.problems), err.value.problems
    assert "docs/results.md" in str(err.value)


def test_problems_lists_nothing_for_a_valid_document(good):
    assert schema.problems(good) == []


def test_docs_schema_file_is_in_sync():
    """Regenerate with: PYTHONPATH=collections .venv/bin/python -m
    ansible_collections.storageperf.k8s.plugins.module_utils.report.schema > docs/result.schema.json"""
    on_disk = (REPO / "docs" / "result.schema.json").read_text(encoding="utf-8")
    assert json.loads(on_disk) == schema.RESULT_SCHEMA
    assert on_disk == schema.schema_json()
