"""The fleet_report role as the last play of a fleet playbook, run by ansible-runner the way AWX runs a job.

Three inventory hosts (one per cluster, connection local) publish pre-written result documents; the role
builds one fleet report over ansible_play_hosts_all. set_stats is read where AWX reads it: the
playbook_on_stats event's artifact_data.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from tests.support import report_samples as sample
from tests.support.twin import COLLECTIONS, REPO, VENV_BIN

ansible_runner = pytest.importorskip("ansible_runner", reason="pip install -r requirements-dev.txt (ansible-runner)")

HERE = Path(__file__).parent / "fleet"
CLUSTERS = ("c1", "c2", "c3")


@pytest.fixture(scope="module")
def collection():
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)


@pytest.fixture
def results(tmp_path):
    """<reports>/<cluster>/<run_id>/result.json for each cluster, as a fleet benchmark leaves them."""
    out = {}
    for i, c in enumerate(CLUSTERS):
        doc = sample.csi_lifecycle(volumes=100 * (i + 1), with_objects=False)
        doc["run_id"] = "csi_lifecycle-20260620T090000Z-%06d" % (i + 1)
        out[c] = D.write_atomic(doc, str(tmp_path / "reports" / c))
    return out


def run_job(tmp_path: Path, extravars: dict, cmdline: str | None = None) -> tuple:
    (tmp_path / "runner").mkdir(exist_ok=True)
    runner = ansible_runner.run(
        private_data_dir=str(tmp_path / "runner"), playbook=str(HERE / "bench_stand_in.yml"),
        inventory=str(HERE / "inventory.yml"), extravars=extravars, forks=3, quiet=True, cmdline=cmdline,
        envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
                 "PATH": "%s:%s" % (VENV_BIN, os.environ.get("PATH", ""))})
    events = list(runner.events)
    stats = [e for e in events if e["event"] == "playbook_on_stats"]
    assert len(stats) == 1, runner.stdout.read()
    return runner, events, stats[0]["event_data"].get("artifact_data") or {}


def task_result(events: list, task: str) -> dict:
    hits = [e["event_data"]["res"] for e in events
            if e["event"] == "runner_on_ok" and e["event_data"].get("task") == task]
    assert len(hits) == 1, "task %r ran %d times" % (task, len(hits))
    return hits[0]


def test_three_clusters_give_one_report_with_three_rows(collection, tmp_path, results):
    runner, events, artifacts = run_job(tmp_path, {"results": results, "fleet_dir": str(tmp_path / "reports")})
    assert runner.rc == 0, runner.stdout.read()
    published = artifacts["storageperf_stats_fleet_report"]
    assert published["summary"]["clusters"] == 3 and published["summary"]["ok"] == 3
    fleet_json = Path(published["paths"]["json"])
    assert fleet_json == tmp_path / "reports" / "fleet-test" / "fleet.json"
    fleet = json.loads(fleet_json.read_text())
    assert [r["cluster"] for r in fleet["clusters"]] == list(CLUSTERS)
    assert [r["variants"][1]["sum_wall_s"] for r in fleet["clusters"]] == pytest.approx([220.0, 440.0, 660.0])
    md = Path(published["paths"]["markdown"]).read_text()
    assert md.count("~7.8× overall") == 3
    # one report: the role's module ran once, on the controller, for the whole play
    built = task_result(events, "Build the fleet report")
    assert built["changed"] is True and built["summary"]["failed_clusters"] == []


def test_failed_and_rescued_clusters_are_rows_with_their_error(collection, tmp_path, results):
    runner, events, artifacts = run_job(tmp_path, {"results": results, "fleet_dir": str(tmp_path / "reports"),
                                                   "hard_fail": ["c2"], "rescued": ["c3"]})
    assert runner.rc == 2  # c2 failed: the job fails, and still writes the fleet report
    summary = artifacts["storageperf_stats_fleet_report"]["summary"]
    assert summary == {"clusters": 3, "ok": 1, "failed": 2, "failed_clusters": ["c2", "c3"],
                       "kind": "bench", "name": "fleet-test"}
    fleet = json.loads(Path(artifacts["storageperf_stats_fleet_report"]["paths"]["json"]).read_text())
    rows = {r["cluster"]: r for r in fleet["clusters"]}
    assert rows["c1"]["status"] == "ok" and rows["c1"]["variants"][0]["sum_wall_s"] == pytest.approx(1715.0)
    assert rows["c2"] == {"cluster": "c2", "status": "error", "source": None,
                          "error": "no result: the host failed or was unreachable"}
    assert rows["c3"]["status"] == "error" and rows["c3"]["error"] == "c3: Trident is not installed"


def test_check_mode_writes_nothing(collection, tmp_path, results):
    out = tmp_path / "reports"
    runner, events, _ = run_job(tmp_path, {"results": results, "fleet_dir": str(out)}, cmdline="--check")
    assert runner.rc == 0, runner.stdout.read()
    built = task_result(events, "Build the fleet report")
    assert built["changed"] is True and built["changed_files"] == ["html", "json", "markdown"]
    assert not (out / "fleet-test").exists()
