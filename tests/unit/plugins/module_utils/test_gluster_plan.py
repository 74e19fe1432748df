"""gluster/plan.py and gluster/report.py: the gluster run writes the one result document (its plan stored once,
the bench engine's progress line), and the shared report modules read it like any other benchmark's."""
from __future__ import annotations

import json
import os

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import progress as P
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import plan as PL
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import report as G
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import modules as RM
from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema

MODES = [{"name": "brick-multiplex off", "settings": {"brick_multiplex": False}},
         {"name": "brick-multiplex on", "settings": {"brick_multiplex": True, "vol_count_per_thread": 20}}]


def point(mode: str, volumes: int, seconds: float, error: str = "") -> dict:
    return {"mode": mode, "volumes": volumes, "error": error,
            "create": {"seconds": 1.0, "created_count": volumes, "cli_calls": volumes + 1},
            "handshake": {"handshake_seconds": seconds, "peers_connected_seconds": seconds / 2,
                          "volume_status_seconds": seconds, "volume_info_seconds": 0.2, "volume_info_count": volumes}}


def params(reports_dir, run_id: str, points: list[dict], counts=(20, 50), status: str = "ok") -> dict:
    return {"points": points, "modes": MODES, "reports_dir": str(reports_dir), "run_id": run_id, "status": status,
            "reason": None, "parameters": {"volume_counts": list(counts), "compare": True, "replica": 3},
            "cluster": {"nodes": 3, "server": "10.244.77.11"}, "components": {"glusterfs": "glusterfs 10.3"},
            "reference": True, "started": None}


def measured(slow: float = 1.0) -> list[dict]:
    return [point(m["name"], n, f * n / 10 * slow) for m, f in zip(MODES, (1.0, 0.3)) for n in (20, 50)]


RUN = "gluster_volume_scale-20260101T000000Z-a0a0a0"


def test_the_plan_is_stored_before_any_point_in_the_bench_plan_shape(tmp_path):
    out = G.write_bench_report(params(tmp_path, RUN, [], status="interrupted"))
    assert out["progress"] == ""
    doc = D.load(out["paths"]["json"])  # validated against the one schema
    assert doc["status"] == "interrupted"
    plan = doc["plan"]
    assert plan["benchmark"] == "gluster_volume_scale" and plan["repeat"] == 1
    assert plan["variants"] == ["brick-multiplex off", "brick-multiplex on"]
    assert plan["settings"]["brick-multiplex on"] == {"brick_multiplex": True, "vol_count_per_thread": 20}
    assert plan["options"]["volume_counts"] == [20, 50]
    assert plan["read"] == {"cluster": {"nodes": 3, "server": "10.244.77.11"},
                            "components": {"glusterfs": "glusterfs 10.3"}}
    # every point written later keeps the same plan
    later = G.write_bench_report(params(tmp_path, RUN, measured()))
    assert D.load(later["paths"]["json"])["plan"] == plan


def test_another_plan_under_the_run_id_is_refused_before_anything_is_written(tmp_path):
    out = G.write_bench_report(params(tmp_path, RUN, measured()[:1], status="interrupted"))
    before = open(out["paths"]["json"], "rb").read()
    with pytest.raises(StoragePerfError, match=f"run_id {RUN}: .* holds the plan of another run .*differs in options"):
        G.write_bench_report(params(tmp_path, RUN, [], counts=(20, 50, 200)))
    assert open(out["paths"]["json"], "rb").read() == before
    # a document of an older run (no plan) is rewritten, as before the plan was stored
    doc = json.loads(before)
    del doc["plan"]
    D.write_atomic(doc, str(tmp_path))
    assert G.write_bench_report(params(tmp_path, RUN, [], counts=(20, 50, 200)))["status"] == "ok"


def test_the_progress_line_is_the_bench_engines():
    plan = PL.stored_plan(MODES, {"volume_counts": [20, 50, 200]}, {}, {})
    points = [point("brick-multiplex off", 20, 2.5), point("brick-multiplex on", 20, 1.25),
              point("brick-multiplex on", 50, 9.4)]
    line = PL.progress_line(points, plan)
    assert line == ("gluster_volume_scale · brick-multiplex on #1 · Restart handshake, 50 volumes: "
                    "2/3 volume counts done, 9.4s (step finished)")
    assert line == P.line({"benchmark": "gluster_volume_scale", "variant": "brick-multiplex on", "repetition": 1,
                           "label": "Restart handshake, 50 volumes", "done": 2, "total": 3,
                           "unit": "volume counts", "elapsed_s": 9.4, "final": True})
    failed = dict(point("brick-multiplex off", 200, 0), error="handshake not finished",
                  handshake={"waited_seconds": 600.0})
    assert PL.progress_line([failed], plan).endswith("1/3 volume counts done, 1 failed, 600.0s (step finished)")


def test_a_plan_without_its_benchmark_is_refused_by_the_schema():
    doc = G.build_document(measured(), MODES, run_id=RUN, plan={"options": {}})
    assert any(p.startswith("plan: ") and "benchmark" in p for p in schema.problems(doc))


def test_bench_report_compare_history_and_fleet_read_gluster_results(tmp_path):
    pool = tmp_path / "pool1"
    base = G.write_bench_report(params(pool, "gluster_volume_scale-20260101T000000Z-b0b0b0", measured()))
    cand = G.write_bench_report(params(pool, "gluster_volume_scale-20260102T000000Z-c0c0c0", measured(slow=1.5)))

    report = RM.bench_report({"result": cand["paths"]["json"], "document": None, "formats": ["markdown"],
                              "output_dir": str(tmp_path / "rendered"), "reports_dir": None})
    assert "Restart handshake, 50 volumes" in report["markdown"]
    assert report["summary"]["status"] == "ok"

    verdict = RM.bench_compare({"baseline": base["paths"]["json"], "candidate": cand["paths"]["json"],
                                "tolerances": {"*.wall_s": {"max_increase_pct": 10}}, "junit_path": None})
    assert verdict["verdict"] == "fail"
    assert "brick-multiplex off/handshake_50.wall_s" in verdict["message"], verdict["message"]

    history = RM.bench_history({"reports_dir": str(tmp_path), "bucket": None, "prefix": "", "endpoint_url": None,
                                "output_dir": None, "tolerances": None, "baseline_runs": None,
                                "max_pvalue": 0.001, "min_effect_pct": 50.0})
    assert history["summary"]["documents"] == 2 and history["summary"]["clusters"] == 1
    # the seed's reference rows are no runs of the pool: two measured modes, two runs each
    assert history["summary"]["series"] == 2 and history["summary"]["runs"] == 4

    fleet = RM.fleet_report({"name": "pools", "entries": [{"cluster": "pool1", "path": cand["paths"]["json"]}],
                             "kind": None, "title": None, "reports_dir": str(tmp_path)})
    assert fleet["kind"] == "bench"
    assert any(line.startswith("| pool1 | ok |") for line in fleet["table"]), fleet["table"]
    # the seed's reference rows are the same on every cluster: no column of theirs, and the speedup is on vs off
    header = fleet["table"][0]
    assert "seed" not in header and "brick-multiplex on vs brick-multiplex off" in header, header
    assert os.path.isfile(os.path.join(str(tmp_path), "pools", "fleet.json"))
