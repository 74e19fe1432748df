"""history.py and history_render.py: runs of known documents in time order, regressions judged as compare judges them."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
from tests.support import report_samples as sample

BASE = sample.csi_lifecycle(volumes=100, with_objects=False)


def run(day: int, factors: dict[str, float] | None = None, status: str = "ok") -> dict:
    """The seed document as a run on June `day`, each step named in factors that many times slower."""
    doc = copy.deepcopy(BASE)
    doc["run_id"] = "csi_lifecycle-202606%02dT090000Z-aaaaaa" % day
    doc["started"] = "2026-06-%02dT09:00:00.000000Z" % day
    doc["finished"] = "2026-06-%02dT09:32:15.000000Z" % day
    for v in doc["variants"]:
        for r in v["runs"]:
            for s in r["steps"]:
                f = (factors or {}).get(s["name"], 1.0)
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


def flagged(history: dict) -> list[tuple[str, str, str]]:
    return [(r["variant"], r["run_id"][14:22], r["step"]) for r in history["regressions"]]


def test_equal_runs_flag_nothing(tmp_path):
    h = history_of(tmp_path, [run(d) for d in (1, 2, 3)])
    assert h["summary"]["documents"] == 3 and h["summary"]["series"] == 2  # concurrency off and on, 100 volumes
    assert h["regressions"] == [] and h["summary"]["flagged_steps"] == 0
    latest = h["series"][0]["runs"][-1]["steps"][0]
    assert latest["checks"][0]["change_pct"] == 0.0 and latest["checks"][0]["status"] == "pass"


def test_a_run_slower_beyond_the_tolerance_is_flagged_with_compares_row(tmp_path):
    h = history_of(tmp_path, [run(1), run(2), run(3, {"create_volume": 1.5})])
    assert flagged(h) == [("concurrency off", "20260603", "create_volume"),
                          ("concurrency on", "20260603", "create_volume")]
    r = h["regressions"][0]
    assert r["field"] == "wall_s" and r["baseline"] == 417 and r["candidate"] == pytest.approx(625.5)
    assert r["change_pct"] == pytest.approx(50.0) and r["limit"] == "≤ +10%"
    assert r["baseline_runs"] == ["csi_lifecycle-20260601T090000Z-aaaaaa", "csi_lifecycle-20260602T090000Z-aaaaaa"]
    # the same verdict compare gives for these two documents
    row = next(x for x in C.compare(run(2), run(3, {"create_volume": 1.5}), H.DEFAULT_TOLERANCES)["rows"]
               if x["step"] == "create_volume" and x["variant"] == "concurrency off")
    assert (row["status"], row["reason"]) == ("fail", r["reason"])
    assert h["series"][0]["regressions"] == 1 and h["summary"]["regressions"] == 2


def test_noise_within_the_tolerance_is_not_flagged(tmp_path):
    noisy = [run(1, {"create_volume": 1.04}), run(2, {"create_volume": 0.95}), run(3, {"create_volume": 1.09}),
             run(4, {"publish": 1.08, "create_volume": 0.97})]
    h = history_of(tmp_path, noisy)
    assert h["regressions"] == [] and h["summary"]["flagged_steps"] == 0


def test_the_baseline_is_the_median_of_the_previous_ok_runs_so_one_outlier_does_not_move_it(tmp_path):
    docs = [run(1), run(2, {"create_volume": 3.0}), run(3), run(4, {"create_volume": 1.2})]
    h = history_of(tmp_path, docs, baseline_runs=3)
    off = h["series"][0]["runs"]
    assert [any(s["regression"] for s in r["steps"]) for r in off] == [False, True, False, True]
    # run 4: median(1, 3, 1) x 417 s, not the mean
    assert off[3]["steps"][0]["checks"][0]["baseline"] == 417


def test_a_failed_run_is_shown_but_never_a_baseline(tmp_path):
    docs = [run(1), run(2, {"create_volume": 0.5}, status="failed"), run(3, {"create_volume": 1.5})]
    h = history_of(tmp_path, docs)
    off = h["series"][0]["runs"]
    assert [r["status"] for r in off] == ["ok", "failed", "ok"] and off[1]["baseline"] is False
    assert off[1]["baseline_note"] == H.NOT_A_BASELINE
    # run 2 is faster but failed: run 3 is judged against run 1 alone, and is flagged
    assert off[2]["steps"][0]["checks"][0]["baseline_runs"] == ["csi_lifecycle-20260601T090000Z-aaaaaa"]
    assert ("concurrency off", "20260603", "create_volume") in flagged(h)
    assert h["summary"]["failed_runs"] == 2  # one per variant's series


def test_the_first_run_has_no_baseline_and_runs_are_ordered_by_start_time(tmp_path):
    h = history_of(tmp_path, [run(3), run(1, {"create_volume": 2.0})])  # written newest first
    off = h["series"][0]["runs"]
    assert [r["run_id"][14:22] for r in off] == ["20260601", "20260603"]
    assert off[0]["steps"][0]["checks"] == []
    assert h["regressions"] == []  # run 3 is faster than run 1


def test_clusters_and_sizes_are_separate_series_and_unreadable_documents_are_listed(tmp_path):
    write(tmp_path, "prod-a", run(1))
    write(tmp_path, "prod-b", run(1, {"create_volume": 5.0}))  # another cluster's figure is not prod-a's baseline
    big = sample.csi_lifecycle(volumes=1000, with_objects=False)
    big["run_id"], big["started"] = "csi_lifecycle-20260602T090000Z-bbbbbb", "2026-06-02T09:00:00.000000Z"
    write(tmp_path, "prod-a", big)
    (tmp_path / "prod-a" / "broken-run").mkdir()
    (tmp_path / "prod-a" / "broken-run" / "result.json").write_text("{not json")
    (tmp_path / "fleet-x").mkdir()
    (tmp_path / "fleet-x" / "fleet.json").write_text("{}")  # a fleet report beside the clusters is no run
    h = H.build_history(H.find_results(str(tmp_path)))
    assert [(s["cluster"], s["variant"], s["size"]) for s in h["series"]] == [
        ("prod-a", "concurrency off", 100), ("prod-a", "concurrency off", 1000), ("prod-a", "concurrency on", 100),
        ("prod-a", "concurrency on", 1000), ("prod-b", "concurrency off", 100), ("prod-b", "concurrency on", 100)]
    assert h["regressions"] == []
    assert [(p["cluster"], p["error"][:14]) for p in h["problems"]] == [("prod-a", "not valid JSON")]


def test_speedup_tolerances_are_refused_naming_the_key():
    with pytest.raises(C.ToleranceError, match=r"tolerances\['speedup'\].*'\*\.wall_s'"):
        H.build_history([], tolerances={"speedup": {"min": 4}})
    with pytest.raises(C.ToleranceError, match="baseline_runs"):
        H.build_history([], baseline_runs=0)


def test_rendered_history_marks_the_regression_and_the_fleet_report_links_to_it(tmp_path):
    h = history_of(tmp_path / "reports", [run(1), run(2), run(3, {"publish": 2.0}, status="ok")])
    files = HR.write_history(h, str(tmp_path / "reports" / "history"))
    md = Path(files["markdown"]["path"]).read_text()
    assert "| prod-a | csi_lifecycle | concurrency off | 100 |" in md and "publish.wall_s" in md and "+100.0%" in md
    assert "▲ wall_s +100.0%" in md
    html = Path(files["html"]["path"]).read_text()
    assert "Regressions in the latest runs" in html and "regression</span>" in html
    assert json.loads(Path(files["json"]["path"]).read_text())["summary"]["regressions"] == 2
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
