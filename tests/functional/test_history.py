"""playbooks/history.yml over real runs of the CSI lifecycle benchmark on one twin: equal runs flag nothing, a run
made slower with a twin fault is flagged on the step the fault slowed, and the AWX outputs say so."""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.twin import REPO

BENCH = REPO / "playbooks" / "bench_csi_lifecycle.yml"
HISTORY = REPO / "playbooks" / "history.yml"
# Time scale 0.02: create_volume of 6 volumes takes ~0.5 s (Trident's serial creates), delete_volume ~0.2 s.
TIME_SCALE = 0.02
# Wide enough that two unfaulted runs stay inside it on a loaded 2-CPU machine, where the client's own CPU is part of
# such short steps, narrow enough that the fault below (+3 s or more on create_volume, +500 %) breaks it.
TOLERANCES = {"*.wall_s": {"max_increase_pct": 200}}
# CreateVolume of the first two attempts hangs 150 s of cluster time (3 s at 0.02), then fails DeadlineExceeded and
# the provisioner retries, as external-provisioner does after its --timeout: the step ends ok, only later.
SLOW_PROVISIONING = {"mode": "timeout", "seconds": 150, "fraction": 1.0, "count": 2}


def bench(twin, reports: Path) -> None:
    run = twin.playbook(BENCH, extra_vars={"volumes": 6, "steps": "create_volume,delete_volume",
                                           "reports_dir": str(reports)})
    assert run.rc == 0, run.stdout[-3000:]


def test_equal_runs_flag_nothing_and_a_slowed_step_is_flagged(twin_factory, tmp_path):
    twin = twin_factory(nodes=2, time_scale=TIME_SCALE)
    reports = tmp_path / "reports"
    bench(twin, reports)
    bench(twin, reports)
    twin.twin_cmd("fault", "--name", "provision", "--rule", json.dumps(SLOW_PROVISIONING))
    bench(twin, reports)
    twin.twin_cmd("fault", "--clear")

    # one history over the three runs: the second is judged against the first, the third against both
    run = twin.playbook(HISTORY, extra_vars={"reports_dir": str(reports), "tolerances": TOLERANCES,
                                             "fail_on_regression": True})
    assert run.rc != 0  # fail_on_regression: what an AWX job template alerts on
    out = run.task("Read every result document")["result"]
    assert out["summary"]["documents"] == 3 and out["summary"]["series"] == 1 and out["summary"]["runs"] == 3
    (series,) = json.loads(Path(out["paths"]["json"]).read_text())["series"]
    assert series["cluster"] == "localhost" and series["size"] == 6

    # two equal runs: the second passed every check against the first (the six steps not selected show as skipped)
    equal = series["runs"][1]
    assert [(s["name"], c["status"]) for s in equal["steps"] for c in s["checks"]] == [
        ("create_volume", "pass"), ("delete_volume", "pass")]
    assert not any(s["regression"] for s in equal["steps"])

    # the slowed run: create_volume flagged against the median of the two before it
    (regression,) = [r for r in out["regressions"] if r["step"] == "create_volume"]
    assert regression["field"] == "wall_s" and regression["change_pct"] > 200
    assert regression["run_id"] == series["runs"][2]["run_id"] == series["latest"]
    assert regression["baseline_runs"] == [r["run_id"] for r in series["runs"][:2]]
    assert out["summary"]["flagged_steps"] == len(out["regressions"])  # nothing flagged before the fault
    assert "create_volume.wall_s" in run.task("Fail when the latest run")["result"]["msg"]
    stats = run.task("Keep the history as a fact")["result"]["ansible_facts"]["storageperf_history"]
    assert int(stats["regressions"]) == len(out["regressions"]) and stats["list"][0]["run_id"] == regression["run_id"]
    assert "create_volume.wall_s" in Path(out["paths"]["markdown"]).read_text()

    # runs on a twin: each run's time scale is recorded, and the history shows its steps in cluster time (labelled);
    # 6 volumes are no seed's experiment, so no seed column stands beside them
    assert [r["time_scale"] for r in series["runs"]] == [TIME_SCALE] * 3
    markdown = Path(out["paths"]["markdown"]).read_text()
    assert "localhost · csi_lifecycle · as configured · 6 volumes · cluster time" in markdown
    assert "| Run | Time scale | Create Volume · cluster time |" in markdown and "seed (field report)" not in markdown
