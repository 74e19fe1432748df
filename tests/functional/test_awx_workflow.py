"""docs/awx.md's workflow, run the way AWX runs it: four jobs through ansible-runner (AWX's engine) against a fleet
of two twin clusters, each job getting the artifacts of the jobs before it as extra vars.

AWX takes a job's artifacts from its set_stats (the playbook_on_stats event's artifact_data) and launches the next
node with its extra vars updated by the accumulated artifacts of every ancestor, top-level key by key: a key a
later job publishes replaces the earlier job's value (awx/main/models/workflow.py, WorkflowJobNode.get_job_kwargs).
Workflow.job below does the same. The jobs: 1. the CSI lifecycle benchmark (the baseline), 2. tune_trident.yml
(enable), 3. the benchmark again, 4. compare.yml with no candidate: every cluster's last run against its baseline,
then one fleet report and the upload of everything to S3 (moto_server).
"""
from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.fleet import Fleet
from tests.support.s3 import MOTO, moto_s3
from tests.support.twin import REPO, VENV_BIN

ansible_runner = pytest.importorskip("ansible_runner")
pytest.importorskip("boto3", reason="pip install --no-deps -r requirements-s3.txt")

HOSTS = ["twin-1", "twin-2"]
SMALL_BENCH = {"volumes": 8}
ACCESS_KEY, SECRET_KEY, BUCKET = "AKIAWORKFLOWTEST0001", "workflow-upload-secret-0a1b2c", "perf-reports"
# passes whatever the twin measures: the test is about what reaches the compare job, not about the figures
TOLERANCES = {"create_volume.count": {"min": 8}, "*.errors": {"max": 0}}


class Workflow:
    """Jobs run one after another with AWX's hand-over of artifacts."""

    def __init__(self, base: Path, envvars: dict[str, str]) -> None:
        self.base = base
        self.envvars = envvars
        self.artifacts: dict[str, Any] = {}  # AWX: the node's ancestor_artifacts
        self.received: list[dict[str, Any]] = []

    def job(self, playbook: str, extra_vars: dict[str, Any] | None = None):
        n = len(self.received) + 1
        # the job template's extra vars, then the ancestors' artifacts on top of them, as AWX launches a node
        extravars = {**(extra_vars or {}), **self.artifacts}
        self.received.append(extravars)
        data_dir = self.base / f"job-{n}"
        data_dir.mkdir()
        job = ansible_runner.run(private_data_dir=str(data_dir), project_dir=str(REPO),
                                 playbook=str(REPO / "playbooks" / playbook),
                                 inventory=str(REPO / "inventories" / "twin-fleet"), limit=",".join(HOSTS),
                                 envvars=self.envvars, extravars=extravars, forks=2, quiet=True)
        [stats] = [e for e in job.events if e["event"] == "playbook_on_stats"]
        artifacts = stats["event_data"].get("artifact_data") or {}
        self.artifacts.update(artifacts)  # top-level keys: the newest job's value of a key wins
        return job, artifacts


def output(job) -> str:
    return job.stdout.read() if hasattr(job.stdout, "read") else str(job.stdout)


def test_baseline_enable_benchmark_compare_as_an_awx_workflow(tmp_path):
    if not MOTO:
        pytest.skip("no moto_server: pip install --no-deps -r requirements-s3-dev.txt")
    reports = tmp_path / "reports"  # a reports_dir every job of the workflow sees (docs/awx.md: a persistent volume)
    with Fleet(tmp_path / "fleet", clusters=2, nodes=2) as fleet, moto_s3(ACCESS_KEY, SECRET_KEY, BUCKET) as (url, s3):
        env = {"STORAGEPERF_TWIN_DIR": str(fleet.dir), "HOME": str(fleet.dir / "home"),
               "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections"),
               "PATH": f"{VENV_BIN}:/usr/bin:/bin",
               # what the job templates' credentials inject: the fleet's keys and ONTAP user, and the bucket's keys
               **fleet.front.credentials, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
               "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"), "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials")}
        flow = Workflow(tmp_path, env)

        baseline_job, first = flow.job("bench_csi_lifecycle.yml", {"reports_dir": str(reports), **SMALL_BENCH})
        assert baseline_job.status == "successful", output(baseline_job)
        baseline = {h: first["storageperf_stats_bench_last"][h]["run_id"] for h in HOSTS}
        assert first["storageperf_stats_bench_baseline"] == first["storageperf_stats_bench_last"]
        # what the playbook's header promises: the summary of the fact storageperf_bench_summary, per cluster (under a
        # name no fact has: as an extra var of the next job, the fact's own name would shadow that job's fact)
        for h in HOSTS:
            summary = first["storageperf_stats_bench_last"][h]
            assert summary["cluster"] == h and summary["benchmark"] == "csi_lifecycle" and summary["status"] == "ok"
            assert Path(summary["reports"]["json"]).parent.name == summary["run_id"]
        assert "storageperf_bench_summary" not in first

        enable_job, _ = flow.job("tune_trident.yml")
        assert enable_job.status == "successful", output(enable_job)
        # the enable job was handed the baseline's artifacts and passed them on untouched
        assert flow.received[1]["storageperf_stats_bench_baseline"] == first["storageperf_stats_bench_baseline"]

        again_job, third = flow.job("bench_csi_lifecycle.yml", {"reports_dir": str(reports), **SMALL_BENCH})
        assert again_job.status == "successful", output(again_job)
        candidate = {h: third["storageperf_stats_bench_last"][h]["run_id"] for h in HOSTS}
        assert set(candidate.values()).isdisjoint(baseline.values())
        # the second benchmark's artifacts keep the first one apart: its baseline and every run of both jobs
        assert {h: r["run_id"] for h, r in third["storageperf_stats_bench_baseline"].items()} == baseline
        assert set(third["storageperf_stats_bench_runs"]) == set(baseline.values()) | set(candidate.values())
        # the fleet fact of job 3 is its own: job 1's fleet report arrived as an extra var of another name
        assert third["storageperf_stats_fleet_report"]["name"] != first["storageperf_stats_fleet_report"]["name"]

        compare_job, fourth = flow.job("compare.yml", {
            "tolerances": TOLERANCES, "reports_dir": str(reports), "junit_path": str(tmp_path / "junit.xml"),
            "upload_bucket": BUCKET, "upload_endpoint_url": url, "upload_region": "us-east-1",
            "upload_addressing_style": "path"})
        assert compare_job.status == "successful", output(compare_job)
        verdicts = fourth["storageperf_stats_compare"]
        assert sorted(verdicts) == HOSTS
        for host in HOSTS:
            v = verdicts[host]
            assert v["verdict"] == "pass" and v["checks"] >= 9 and v["failures"] == 0, v
            # each cluster's baseline run of job 1 against its candidate of job 3
            assert Path(v["baseline"]).parent.name == baseline[host]
            assert Path(v["candidate"]).parent.name == candidate[host]
            assert Path(v["junit_path"]).name == f"junit-{host}.xml" and Path(v["junit_path"]).is_file()

        fleet_report = fourth["storageperf_stats_fleet_report"]
        assert fleet_report["name"] != third["storageperf_stats_fleet_report"]["name"]  # this job's, not job 3's
        doc = json.loads(Path(fleet_report["paths"]["json"]).read_text())
        assert {r["cluster"]: r["run_id"] for r in doc["clusters"]} == candidate
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
        prefix = f"storageperf/{fleet_report['name']}"
        assert f"{prefix}/fleet.html" in keys
        for host in HOSTS:
            for run_id in (baseline[host], candidate[host]):
                assert f"storageperf/{host}/{run_id}/result.json" in keys, sorted(keys)
        # the reports directory's layout in the bucket: fleet.html's links to the candidates' reports hold there
        page = s3.get_object(Bucket=BUCKET, Key=f"{prefix}/fleet.html")["Body"].read().decode("utf-8")
        links = set(re.findall(r'<a href="([^"]*)"', page))
        assert links == {f"../{host}/{candidate[host]}/report.html" for host in HOSTS}, links
        assert all(posixpath.normpath(f"{prefix}/{link}") in keys for link in links), sorted(keys)


def test_compare_from_artifacts_without_a_second_benchmark_says_so(tmp_path):
    """A workflow whose compare job follows one benchmark only: no run to compare with, named per cluster."""
    run_dir = tmp_path / "reports" / "twin-1" / "csi_lifecycle-run1"
    run_dir.mkdir(parents=True)
    (run_dir / "result.json").write_text("{}")
    summary = {"run_id": "csi_lifecycle-run1", "cluster": "twin-1", "reports": {"json": str(run_dir / "result.json")}}
    env = {"STORAGEPERF_TWIN_DIR": str(tmp_path / "no-twin"), "HOME": str(tmp_path), "PATH": f"{VENV_BIN}:/usr/bin:/bin",
           "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections")}
    flow = Workflow(tmp_path, env)
    flow.artifacts = {"storageperf_stats_bench_last": {"twin-1": summary},
                      "storageperf_stats_bench_baseline": {"twin-1": summary}}
    job, _ = flow.job("compare.yml", {"tolerances": TOLERANCES})
    assert job.status == "failed"
    [failed] = [e for e in job.events if e["event"] == "runner_on_failed" and e["event_data"]["host"] == "twin-1"]
    msg = failed["event_data"]["res"]["msg"]
    assert "twin-1: one benchmark (run csi_lifecycle-run1) is both the baseline and the candidate" in msg
    assert "after the change" in msg
