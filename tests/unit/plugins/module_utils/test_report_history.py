"""history.py and history_render.py: runs of known documents in time order, series keyed by what they measured, and
regressions that are change points at least the minimum effect slower, each reported once."""
from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
from tests.support import report_samples as sample

BASE = sample.csi_lifecycle(volumes=100, with_objects=False)


def run(day: int, factors: dict[str, float] | None = None, status: str = "ok", run_id: str | None = None) -> dict:
    """The seed document as a run on June `day`, each step named in factors that many times slower, every step
    within +-3 % of its level (run to run noise, the same for every day)."""
    doc = copy.deepcopy(BASE)
    doc["run_id"] = run_id or "csi_lifecycle-202606%02dT090000Z-aaaaaa" % day
    doc["started"] = "2026-06-%02dT09:00:00.000000Z" % day
    doc["finished"] = "2026-06-%02dT09:32:15.000000Z" % day
    for v in doc["variants"]:
        for r in v["runs"]:
            for s in r["steps"]:
                f = (factors or {}).get(s["name"], 1.0) * (1 + 0.03 * math.sin(day * 2.1))
                s["wall_s"] *= f
                s["rate"] /= f
        del v["summary"]
    return D.finalize(doc, status=status, finished=doc["finished"], reason="API unreachable" if status != "ok" else None)


def write(root: Path, cluster: str, doc: dict) -> None:
    D.write_atomic(doc, str(root / cluster))


def history_of(tmp_path: Path, docs: list[dict], **kwargs) -> dict:
    for doc in docs:
        write(tmp_path, "prod-a", doc)
    return H.build_history(H.find_results(str(tmp_path)), **kwargs)


def flagged(history: dict, key: str = "regressions") -> list[tuple[str, str, str]]:
    return [(r["variant"], r["run_id"][14:22], r["step"]) for r in history[key]]


def test_equal_runs_flag_nothing(tmp_path):
    h = history_of(tmp_path, [run(d) for d in range(1, 7)])
    assert h["summary"]["documents"] == 6 and h["summary"]["series"] == 2  # concurrency off and on, 100 volumes
    assert h["regressions"] == [] and h["summary"]["flagged_steps"] == 0
    latest = h["series"][0]["runs"][-1]["steps"][0]
    assert latest["evidence"]["kind"] == "wall time" and "change" not in latest


def test_a_step_twice_as_slow_is_a_change_point_and_a_regression_with_its_levels(tmp_path):
    h = history_of(tmp_path, [run(d) for d in range(1, 7)] + [run(7, {"create_volume": 3.0})])
    assert flagged(h) == [("concurrency off", "20260607", "create_volume"),
                          ("concurrency on", "20260607", "create_volume")]
    r = h["regressions"][0]
    assert r["field"] == "wall_s" and r["runs_after"] == 1 and r["pvalue"] <= H.DEFAULT_MAX_PVALUE
    assert r["change_pct"] == pytest.approx(100 * (r["candidate"] / r["baseline"] - 1), abs=0.01)
    assert r["change_pct"] > 150 and r["baseline"] == pytest.approx(417, rel=0.03)
    assert r["baseline_runs"] == ["csi_lifecycle-202606%02dT090000Z-aaaaaa" % d for d in range(1, 7)]
    assert r["limit"] == "a change point at p ≤ 0.001, ≥ +100% (newest run alone)" and r["known_since"] is None
    assert h["series"][0]["regressions"] == 1 and h["summary"]["regressions"] == 2


def test_a_shift_below_the_minimum_effect_is_a_change_but_no_regression(tmp_path):
    # three runs 30 % slower, as machine load alone made them on the twin: significant, but below 50 %
    h = history_of(tmp_path, [run(d) for d in range(1, 7)] + [run(d, {"publish": 1.3}) for d in (7, 8, 9)])
    assert h["regressions"] == [] and h["summary"]["flagged_steps"] == 0
    (change,) = [c for c in h["series"][0]["changes"] if c["step"] == "publish"]
    assert change["regression"] is False and 25 < change["change_pct"] < 35 and change["run_id"][14:22] == "20260607"
    # a quieter cluster that asks for 25 % gets it
    assert flagged(H.build_history(H.find_results(str(tmp_path)), min_effect_pct=25))[0][2] == "publish"


def test_a_regression_is_reported_once_then_known_since_the_run_that_reported_it(tmp_path):
    h1 = history_of(tmp_path, [run(d) for d in range(1, 7)] + [run(7, {"create_volume": 3.0})])
    assert len(h1["regressions"]) == 2
    again = H.build_history(H.find_results(str(tmp_path)), state=h1["state"])
    assert again["regressions"] == [] and flagged(again, "known_regressions") == flagged(h1)
    write(tmp_path, "prod-a", run(8, {"create_volume": 3.0}))  # one more slow run: the change point is the same
    h2 = H.build_history(H.find_results(str(tmp_path)), state=again["state"])
    assert h2["regressions"] == [] and h2["summary"]["known_regressions"] == 2
    known = h2["known_regressions"][0]
    assert known["known_since"] == "csi_lifecycle-20260607T090000Z-aaaaaa" and known["runs_after"] == 2
    assert known["text"].endswith("known since run csi_lifecycle-20260607T090000Z-aaaaaa")
    # another step slowed later is new
    write(tmp_path, "prod-a", run(9, {"create_volume": 3.0, "delete_volume": 3.0}))
    h3 = H.build_history(H.find_results(str(tmp_path)), state=h2["state"])
    assert {r["step"] for r in h3["regressions"]} == {"delete_volume"}


def test_a_failed_run_is_shown_but_is_no_evidence(tmp_path):
    docs = [run(d) for d in range(1, 6)] + [run(6, {"create_volume": 9.0}, status="failed")]
    h = history_of(tmp_path, docs)
    off = h["series"][0]["runs"]
    assert off[-1]["status"] == "failed" and off[-1]["baseline"] is False and off[-1]["baseline_note"] == H.NOT_A_BASELINE
    assert off[-1]["steps"][0]["evidence"] is None and h["regressions"] == []
    assert h["summary"]["failed_runs"] == 2  # one per variant's series


def test_operations_latencies_are_the_evidence_where_the_document_kept_them():
    objects = [{"name": "a", "latency": 1.0}, {"name": "b", "latency": 4.0}, {"name": "c", "latency": None}]
    steps = [{"status": "ok", "wall_s": 9.0, "objects": objects},
             {"status": "failed", "objects": [{"name": "d", "latency": 100.0}]}]
    assert H.evidence(steps) == {"log_mean": pytest.approx(math.log(2.0)), "n": 2, "kind": "operations"}
    assert H.evidence([{"status": "ok", "wall_s": 4.0}, {"status": "ok", "wall_s": 1.0}])["kind"] == "wall time"
    assert H.evidence([{"status": "failed", "wall_s": 4.0}]) is None


def test_series_are_keyed_by_what_they_measured(tmp_path):
    write(tmp_path, "prod-a", run(1))
    write(tmp_path, "prod-b", run(1, {"create_volume": 5.0}))  # another cluster's figure is not prod-a's baseline
    big = sample.csi_lifecycle(volumes=1000, with_objects=False)
    big["run_id"], big["started"] = "csi_lifecycle-20260602T090000Z-bbbbbb", "2026-06-02T09:00:00.000000Z"
    write(tmp_path, "prod-a", big)
    # a rollout's probes: the same variant as configured, before and after the change
    for phase, day in (("before", 3), ("after", 4)):
        write(tmp_path, "prod-a", run(day, run_id="rollout-20260603T0900-%s-20260603T090000" % phase))
    (tmp_path / "prod-a" / "broken-run").mkdir()
    (tmp_path / "prod-a" / "broken-run" / "result.json").write_text("{not json")
    (tmp_path / "fleet-x").mkdir()
    (tmp_path / "fleet-x" / "fleet.json").write_text("{}")  # a fleet report beside the clusters is no run
    h = H.build_history(H.find_results(str(tmp_path)))
    keys = [(s["cluster"], s["variant"], s["size"], s["config"].get("rollout_phase"), len(s["runs"])) for s in h["series"]]
    assert keys == [
        ("prod-a", "concurrency off", 100, None, 1), ("prod-a", "concurrency off", 100, "after", 1),
        ("prod-a", "concurrency off", 100, "before", 1), ("prod-a", "concurrency off", 1000, None, 1),
        ("prod-a", "concurrency on", 100, None, 1), ("prod-a", "concurrency on", 100, "after", 1),
        ("prod-a", "concurrency on", 100, "before", 1), ("prod-a", "concurrency on", 1000, None, 1),
        ("prod-b", "concurrency off", 100, None, 1), ("prod-b", "concurrency on", 100, None, 1)]
    on = next(s for s in h["series"] if s["variant"] == "concurrency on")
    assert on["config"] == {"enableConcurrency": True, "storage_class": "ontap-nas"}
    assert on["config_text"] == "enableConcurrency True, storage_class ontap-nas"
    assert h["regressions"] == []
    assert [(p["cluster"], p["error"][:14]) for p in h["problems"]] == [("prod-a", "not valid JSON")]


def test_bad_settings_and_state_are_refused_naming_the_field():
    with pytest.raises(H.HistoryError, match="max_pvalue must be a probability"):
        H.build_history([], max_pvalue=0)
    with pytest.raises(H.HistoryError, match="min_effect_pct must be a percentage from 0 to 1000"):
        H.build_history([], min_effect_pct=-5)
    with pytest.raises(H.HistoryError, match="reported must be a list of {series, step, run_id, known_since}"):
        H.build_history([], state={"reported": [{"series": "x"}]})


def test_rendered_history_marks_the_regression_and_the_fleet_report_links_to_it(tmp_path):
    h = history_of(tmp_path / "reports", [run(d) for d in range(1, 6)] + [run(6, {"publish": 3.0})])
    files = HR.write_history(h, str(tmp_path / "reports" / "history"))
    md = Path(files["markdown"]["path"]).read_text()
    assert "| prod-a | csi_lifecycle | concurrency off [enableConcurrency False, storage_class ontap-nas] | 100 |" in md
    change = h["regressions"][0]["change_pct"]
    assert "| publish |" in md and "| +%.1f%% |" % change in md and "| new |" in md
    assert "▲ +%.1f%% (p " % change in md
    html = Path(files["html"]["path"]).read_text()
    assert "Regressions in the latest runs" in html and "regression</span>" in html
    assert json.loads(Path(files["json"]["path"]).read_text())["summary"]["regressions"] == 2
    state = json.loads(Path(files["state"]["path"]).read_text())
    assert [(r["step"], r["known_since"][14:22]) for r in state["reported"]] == [("publish", "20260606")] * 2
    known = H.build_history(H.find_results(str(tmp_path / "reports")), state=state)
    assert "| known since run csi_lifecycle-20260606T090000Z-aaaaaa |" in HR.to_markdown(known)
    # a second write changes nothing (no timestamp of its own)
    assert not any(w["changed"] for w in HR.write_history(h, str(tmp_path / "reports" / "history")).values())
    fleet = F.build_fleet([{"cluster": "prod-a", "document": run(3)}], name="fleet-1")
    written = FR.write_fleet(fleet, str(tmp_path / "reports"))
    assert "[history](../history/history.html)" in Path(written["markdown"]["path"]).read_text()
    assert 'href="../history/history.html"' in Path(written["html"]["path"]).read_text()


def test_without_a_history_the_fleet_report_has_no_link(tmp_path):
    fleet = F.build_fleet([{"cluster": "prod-a", "document": run(3)}], name="fleet-1")
    written = FR.write_fleet(fleet, str(tmp_path))
    assert "history" not in Path(written["markdown"]["path"]).read_text()


def test_the_page_folds_each_series_opens_those_with_a_regression_and_draws_no_chart_of_one_run(tmp_path):
    docs = [run(d) for d in range(1, 6)] + [run(6, {"publish": 3.0})]
    bigger = run(7, run_id="csi_lifecycle-20260607T090000Z-bbbbbb")
    bigger["parameters"]["volumes"] = 200  # a series of its own, of one run
    h = history_of(tmp_path, docs + [bigger])
    assert [(s["size"], len(s["runs"]), s["regressions"]) for s in h["series"]] == [(100, 6, 1), (200, 1, 0)] * 2
    html = HR.to_html(h)
    folds = re.findall(r'<section class="series" id="series-([^"]*)"><details( open)?><summary><b>([^<]*)</b>', html)
    assert [(open_, title.split(" · ")[3]) for _, open_, title in folds] == [
        (" open", "100 volumes"), ("", "200 volumes"), (" open", "100 volumes"), ("", "200 volumes")]
    assert "6 runs · latest 2026-06-06 09:00 ok · ▲ 1 regression in force" in html
    assert "1 run · latest 2026-06-07 09:00 ok</span>" in html
    # a chart for each series of six runs, none for a run alone: a dot says nothing its table does not
    charts = re.findall(r'<figure id="chart-([^"]*)">', html)
    assert sorted(charts) == sorted(s["id"] for s in h["series"] if len(s["runs"]) > 1) and len(charts) == 2
