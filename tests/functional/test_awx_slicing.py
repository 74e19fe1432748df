"""Job slicing, AWX's way of spreading a fleet over execution nodes (docs/awx.md, "Job slicing"), run as AWX runs it.

A job template with job_slice_count N becomes N jobs, slice k getting an inventory of every Nth host from the k-th
(awx/main/models/inventory.py, get_sliced_hosts: hosts[k-1::N]), each run by ansible-runner on its own. The slices
share nothing but what they write outside the job: here a reports_dir every job sees (a persistent volume in AWX).
Then the workflow's next node, playbooks/fleet_report.yml over the whole inventory, puts the slices' runs in ONE
fleet report. The fleet: 3 twin clusters, 3 slices of one cluster each, a 10-volume CSI lifecycle benchmark.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.fleet import Fleet
from tests.support.twin import REPO, VENV_BIN

ansible_runner = pytest.importorskip("ansible_runner")

SLICES = 3
FLEET_INVENTORY = REPO / "inventories" / "twin-fleet"


def slice_inventory(base: Path, hosts: list[str], number: int) -> Path:
    """Slice `number` (1-based) of the fleet inventory: its hosts only, with the fleet's group variables."""
    inventory = base / f"slice-{number}" / "inventory"
    inventory.mkdir(parents=True)
    shutil.copytree(FLEET_INVENTORY / "group_vars", inventory / "group_vars")
    members = hosts[number - 1::SLICES]
    fleet = yaml.safe_load((FLEET_INVENTORY / "hosts.yml").read_text())
    group = fleet["all"]["children"]["k8s_clusters"]
    group["hosts"] = dict.fromkeys(members)
    (inventory / "hosts.yml").write_text(yaml.safe_dump(fleet))
    return inventory


def artifacts(runner) -> dict:
    [stats] = [e for e in runner.events if e["event"] == "playbook_on_stats"]
    return stats["event_data"].get("artifact_data") or {}


def output(runner) -> str:
    return runner.stdout.read() if hasattr(runner.stdout, "read") else str(runner.stdout)


def test_a_sliced_fleet_benchmark_lands_in_one_fleet_report(tmp_path):
    reports = tmp_path / "reports"  # the path every slice's container sees
    with Fleet(tmp_path / "fleet", clusters=3, nodes=2, time_scale=0.01) as fleet:
        hosts = sorted(fleet.names)
        env = {"STORAGEPERF_TWIN_DIR": str(fleet.dir), "HOME": str(fleet.dir / "home"),
               "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections"),
               "PATH": f"{VENV_BIN}:/usr/bin:/bin", **fleet.front.credentials}
        jobs = []
        for number in range(1, SLICES + 1):
            inventory = slice_inventory(tmp_path, hosts, number)
            thread, runner = ansible_runner.run_async(
                private_data_dir=str(tmp_path / f"slice-{number}"), project_dir=str(REPO),
                playbook=str(REPO / "playbooks" / "bench_csi_lifecycle.yml"), inventory=str(inventory),
                envvars=env, extravars={"volumes": 10, "reports_dir": str(reports)}, quiet=True)
            jobs.append((thread, runner))
        for thread, _ in jobs:
            thread.join()
        runs = {}
        for number, (_, runner) in enumerate(jobs, 1):
            assert runner.status == "successful", output(runner)
            last = artifacts(runner)["storageperf_stats_bench_last"]
            assert sorted(last) == hosts[number - 1::SLICES]  # each slice benchmarked its own clusters only
            runs.update({host: summary["run_id"] for host, summary in last.items()})

        (tmp_path / "fleet-report").mkdir()
        report_job = ansible_runner.run(
            private_data_dir=str(tmp_path / "fleet-report"), project_dir=str(REPO),
            playbook=str(REPO / "playbooks" / "fleet_report.yml"), inventory=str(FLEET_INVENTORY),
            envvars=env, extravars={"reports_dir": str(reports), "benchmark": "csi_lifecycle"}, quiet=True)
        assert report_job.status == "successful", output(report_job)

    fleet_report = artifacts(report_job)["storageperf_stats_fleet_report"]
    assert fleet_report["summary"]["clusters"] == 3 and fleet_report["summary"]["ok"] == 3, fleet_report
    doc = json.loads(Path(fleet_report["paths"]["json"]).read_text())
    # one report of all three slices: every cluster with the run its slice made
    assert {row["cluster"]: row["run_id"] for row in doc["clusters"]} == runs
    assert Path(fleet_report["output_dir"]).parent == reports


def test_a_cluster_no_slice_reached_is_a_row_that_says_so(tmp_path):
    """The fleet report of runs nobody made: every cluster is a row with its reason, and the job fails."""
    reports = tmp_path / "reports"
    run = reports / "twin-1" / "attach_stress-20260101T000000Z-abc123"
    run.mkdir(parents=True)
    (run / "result.json").write_text("{}")
    env = {"STORAGEPERF_TWIN_DIR": str(tmp_path / "no-fleet"), "HOME": str(tmp_path), "PATH": f"{VENV_BIN}:/usr/bin:/bin",
           "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections")}
    (tmp_path / "job").mkdir()
    job = ansible_runner.run(private_data_dir=str(tmp_path / "job"), project_dir=str(REPO),
                             playbook=str(REPO / "playbooks" / "fleet_report.yml"), inventory=str(FLEET_INVENTORY),
                             envvars=env, extravars={"reports_dir": str(reports), "benchmark": "csi_lifecycle"},
                             quiet=True)
    assert job.status == "failed"
    failed = {e["event_data"]["host"]: e["event_data"]["res"]["msg"] for e in job.events
              if e["event"] == "runner_on_failed"}
    assert sorted(failed) == ["twin-1", "twin-2", "twin-3"]
    assert f"no run of csi_lifecycle under {reports / 'twin-1'}" in failed["twin-1"]
    fleet_report = artifacts(job)["storageperf_stats_fleet_report"]
    assert fleet_report["summary"] == {**fleet_report["summary"], "clusters": 3, "ok": 0, "failed": 3}
