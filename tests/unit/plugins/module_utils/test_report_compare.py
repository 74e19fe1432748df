"""compare.py and junit.py: verdicts against baselines and tolerances."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from tests.support import report_samples as sample
from ansible_collections.storageperf.k8s.plugins.module_utils.report.junit import to_junit
from ansible_collections.storageperf.k8s.plugins.module_utils.report.verdict_text import verdict_lines


@pytest.fixture(scope="module")
def base():
    return sample.csi_lifecycle()


def slower(doc, step, factor):
    """A copy of doc where `step` in every variant took `factor` times longer, objects too."""
    doc = copy.deepcopy(doc)
    doc["run_id"] = "candidate-1"
    for v in doc["variants"]:
        for r in v["runs"]:
            for s in r["steps"]:
                if s["name"] == step:
                    s["wall_s"] *= factor
                    s["rate"] /= factor
                    s["latency"] = {k: x * factor for k, x in s["latency"].items()}
        del v["summary"]
    return D.finalize(doc, finished=doc["finished"])


def test_identical_runs_pass(base):
    v = C.compare(base, base, {"*.p99": {"max_increase_pct": 1}, "speedup": {"min": 4}})
    assert v["passed"] and not v["failed"]
    assert v["checks"] == 17  # 8 steps x 2 variants + speedup


def test_slower_p99_fails_with_change_and_limit(base):
    v = C.compare(base, slower(base, "publish", 1.25), {"concurrency on/publish.p99": {"max_increase_pct": 10}})
    (row,) = v["rows"]
    assert row["status"] == "fail" and row["change_pct"] == pytest.approx(25.0)
    assert row["limit"] == "≤ +10%" and "+25.0% above the baseline" in row["reason"]
    assert v["message"].startswith("1 of 1 checks failed")


def test_throughput_drop_uses_max_decrease(base):
    cand = slower(base, "create_volume", 2.0)
    v = C.compare(base, cand, {"create_volume.rate": {"max_decrease_pct": 10}})
    assert [r["status"] for r in v["rows"]] == ["fail", "fail"]
    assert C.compare(base, cand, {"publish.rate": {"max_decrease_pct": 10}})["passed"]


def test_in_document_speedup(base):
    s = C.speedups(base)
    assert s["overall"] == pytest.approx(1715 / 220)
    assert [r["step"] for r in s["steps"]][0] == "create_volume"
    assert C.compare(None, base, {"speedup": {"min": 4}})["passed"]
    failed = C.compare(None, base, {"speedup": {"min": 9}, "create_volume.speedup": {"min": 10}})
    assert [r["status"] for r in failed["rows"]] == ["fail", "pass"]


def test_relative_limit_without_baseline_fails_clearly(base):
    v = C.compare(None, base, {"publish.p99": {"max_increase_pct": 10}})
    assert v["failed"] and "needs a baseline" in v["rows"][0]["reason"]


def test_unmatched_key_fails_instead_of_passing_silently(base):
    v = C.compare(base, base, {"attach.p99": {"max": 1}})
    assert v["failed"] and "no step matches 'attach.p99'" in v["rows"][0]["reason"]


@pytest.mark.parametrize("tolerances,words", [
    ({"publish.p99": {"max_increase": 10}}, "unknown limit 'max_increase'"),
    ({"publish.p99": {"max": "fast"}}, "must be a number"),
    ({"publish.p99": 10}, "must be a mapping"),
    ({"publish": {"max": 1}}, "expected '<step>.<field>'"),
    ({"publish.p99": {}}, "sets no limit"),
    (["publish.p99"], "must be a mapping of metric key"),
    ({}, "tolerances is empty, so the comparison would check nothing"),  # it used to pass with "nothing was checked"
    (None, "give at least one"),
])
def test_bad_tolerances_name_the_key(base, tolerances, words):
    with pytest.raises(C.ToleranceError, match=words.replace("(", r"\(").replace(".", r"\.")):
        C.compare(base, base, tolerances)


def test_survey_strings_are_accepted_as_numbers(base):
    assert C.compare(base, base, {"speedup": {"min": "4"}})["passed"]


def test_junit_xml_parses_and_marks_failures(base):
    v = C.compare(base, slower(base, "publish", 1.5), {"publish.p99": {"max_increase_pct": 10}, "speedup": {"min": 2}})
    root = ET.fromstring(to_junit(v))
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["concurrency on/publish.p99"].find("failure") is not None
    assert cases["speedup"].find("failure") is None
    assert "above the baseline" in cases["concurrency off/publish.p99"].find("failure").get("message")


def test_verdict_lines_are_a_table(base):
    lines = verdict_lines(C.compare(base, base, {"speedup": {"min": 4}}))
    assert lines[0].split()[:2] == ["Metric", "Baseline"] and set(lines[1]) <= {"-", " "}
    assert lines[-1] == "all 1 checks passed"
