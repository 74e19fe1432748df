"""bench_fio.yml and bench_sysbench.yml on a fleet of three twin clusters (inventories/twin-fleet) at forks 3, through
ansible-runner as AWX runs them: each cluster keeps its own result document and run id, the fleet report lands beside
the clusters' directories and draws their report.html, the job's artifacts hold every cluster, and nothing labelled
with the benchmark is left on any cluster (read back with the kubernetes client, every resource type).

The tools run for real on this machine for every cluster at once, so the runs are the smallest that still measure:
one StorageClass (the disk), one fio job of one second, one sysbench test of one second on one small table. One
unhappy path, with fio: a cluster that stops answering after its plan fails alone. The fleet's part of it
(record_error, the fleet report, the verdict) is the lifecycle's, tested in test_fleet_playbooks.py; what is fio's own
is the role's path from a failed bench_measure to its result document, its fact and its artifacts.
"""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from kubernetes import client, config

from tests.support.fleet import Fleet
from tests.support.fleet_runs import (GIVE_UP_SOON, HOSTS, fleet_report, labelled, results_per_cluster, run_as_awx,
                                      server_of, silence)
from tests.support.waits import watch_until

pytest.importorskip("ansible_runner")
pytestmark = pytest.mark.skipif(not Path("/dev/loop-control").exists(), reason="needs loop devices")

CLASS = "alicloud-disk-topology"  # the twin's disk class; PMEM would need a labelled node per cluster
FIO = {"bench_fio_storage_classes": CLASS, "bench_fio_baseline": "", "bench_fio_size": "16M", "bench_fio_runtime": 1,
       "bench_fio_jobs": [{"name": "randwrite_4k", "rw": "randwrite", "bs": "4k", "numjobs": 1, "iodepth": 1}]}
SYSBENCH = {"bench_sysbench_storage_classes": CLASS, "bench_sysbench_baseline": "",
            "bench_sysbench_tests": ["oltp_point_select"], "bench_sysbench_tables": 1, "bench_sysbench_table_size": 100,
            "bench_sysbench_threads": 2, "bench_sysbench_time": 1}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("fleet"), clusters=3, nodes=2) as f:
        yield f


def watch_first_namespace(fleet: Fleet, host: str, selector: str, seen: list[str]) -> threading.Thread:
    """In the background, the first namespace of the host that matches the selector: proof that the selector the
    leftover check uses is the one the benchmark labels its objects with."""
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(fleet.dir / host / "kubeconfig")))

    def first() -> None:
        found = watch_until(api.list_namespace, bool, f"a namespace labelled {selector} on {host}",
                            label_selector=selector, bound=300)
        seen.append(found[0].metadata.name)

    thread = threading.Thread(target=first, daemon=True)
    thread.start()
    return thread


def events_of(job, event: str, task_prefix: str) -> list[dict]:
    return [e["event_data"] for e in job.events
            if e["event"] == event and e["event_data"].get("task", "").startswith(task_prefix)]


def run_and_check(fleet: Fleet, tmp_path: Path, tool: str, options: dict) -> list[dict]:
    """Run the tool's playbook on the fleet and check what every fleet benchmark must leave; the documents."""
    reports = tmp_path / "reports"
    selector = f"storageperf.k8s/benchmark={tool}"
    seen: list[str] = []
    watcher = watch_first_namespace(fleet, "twin-1", selector, seen)
    job, artifacts = run_as_awx(fleet, f"bench_{tool}.yml", reports, tmp_path / "job",
                                {**options, f"bench_{tool}_reports_dir": str(reports)})
    assert job.status == "successful", (job.status, job.stats, job.stdout.read()[-4000:])
    watcher.join(timeout=60)
    assert seen, f"twin-1 never had a namespace labelled {selector}"

    # one document per cluster, each with its own run id, cluster and server
    docs = results_per_cluster(reports)
    assert sorted(docs) == HOSTS and all(len(d) == 1 for d in docs.values()), {h: len(d) for h, d in docs.items()}
    run_ids = {h: d[0]["run_id"] for h, d in docs.items()}
    assert len(set(run_ids.values())) == 3, run_ids
    for host, [doc] in docs.items():
        assert doc["status"] == "ok" and doc["benchmark"] == tool, (host, doc["status"], doc.get("reason"))
        assert doc["cluster"]["name"] == host and doc["cluster"]["server"] == server_of(fleet, host)
        [variant] = doc["variants"]
        steps = variant["runs"][0]["steps"]
        assert variant["name"] == CLASS and steps and all(s["status"] == "ok" for s in steps), steps
        assert (reports / host / doc["run_id"] / "report.html").is_file()

    # report.html left to the fleet report (bench_report_defer_html), which drew all three in its one run
    finished = events_of(job, "runner_on_ok", "Give the result document its final status")
    assert sorted(e["host"] for e in finished) == HOSTS
    assert all("html" not in e["res"]["report"]["paths"] for e in finished), [e["res"]["report"] for e in finished]
    [drawn] = events_of(job, "runner_on_ok", "Draw the report.html the clusters left")
    assert sorted(Path(r["paths"]["html"]).parent.parent.name for r in drawn["res"]["reports"]) == HOSTS

    # the fleet report, beside the clusters' directories (bench_<tool>_reports_dir), names all three
    side_by_side = fleet_report(reports)
    assert side_by_side["summary"]["clusters"] == 3 and side_by_side["summary"]["ok"] == 3
    assert sorted(r["cluster"] for r in side_by_side["clusters"]) == HOSTS

    # what AWX keeps: every cluster under the by-cluster keys, every run under the by-run key
    last = artifacts["storageperf_stats_bench_last"]
    assert {h: s["run_id"] for h, s in last.items()} == run_ids and {s["status"] for s in last.values()} == {"ok"}
    assert set(artifacts["storageperf_stats_bench_runs"]) == set(run_ids.values())
    assert set(artifacts["storageperf_stats_bench_baseline"]) == set(HOSTS)
    assert artifacts["storageperf_stats_fleet_report"]["summary"]["clusters"] == 3

    # nothing labelled with the benchmark is left on any cluster
    assert {h: labelled(fleet, h, selector) for h in HOSTS} == {h: [] for h in HOSTS}
    return [d[0] for d in docs.values()]


@pytest.mark.skipif(not shutil.which("fio"), reason="needs fio (apt-get install fio)")
def test_fio_on_every_cluster_at_once(fleet, tmp_path):
    for doc in run_and_check(fleet, tmp_path, "fio", FIO):
        [step] = doc["variants"][0]["runs"][0]["steps"]
        assert step["name"] == "randwrite_4k" and step["metrics"]["iops"] > 0


@pytest.mark.skipif(not all(shutil.which(p) for p in ("sysbench", "mariadbd", "mariadb-install-db")),
                    reason="needs sysbench and MariaDB (apt-get install sysbench mariadb-server)")
def test_sysbench_on_every_cluster_at_once(fleet, tmp_path):
    for doc in run_and_check(fleet, tmp_path, "sysbench", SYSBENCH):
        [step] = doc["variants"][0]["runs"][0]["steps"]
        assert step["name"] == "oltp_point_select" and step["metrics"]["tps"] > 0


@pytest.mark.skipif(not shutil.which("fio"), reason="needs fio (apt-get install fio)")
def test_fio_cluster_that_stops_answering_fails_alone(tmp_path):
    """twin-2's API server stops once its plan is written: it is reported unreachable, the others finish."""
    reports = tmp_path / "reports"
    with Fleet(tmp_path / "fleet", clusters=3, nodes=2) as fleet:
        stopped = []

        def on_event(event: dict) -> bool:
            data = event.get("event_data") or {}
            if (event.get("event") == "runner_on_ok" and data.get("host") == "twin-2" and not stopped
                    and data.get("task", "").startswith("Check the inputs and the StorageClasses")):
                fleet.down("twin-2")
                stopped.append(True)
            return True

        job, artifacts = run_as_awx(fleet, "bench_fio.yml", reports, tmp_path / "job",
                                    {**FIO, "bench_fio_reports_dir": str(reports)}, event_handler=on_event,
                                    envvars=GIVE_UP_SOON)
        assert stopped, "twin-2's plan never finished"
        assert job.status == "failed" and set(job.stats["failures"]) == {"twin-2"}, job.stats
        docs = results_per_cluster(reports)
        for host in ("twin-1", "twin-3"):
            [doc] = docs[host]
            assert doc["status"] == "ok" and doc["variants"][0]["runs"][0]["steps"][0]["status"] == "ok", host
            assert labelled(fleet, host, "storageperf.k8s/benchmark=fio") == []
        [dead] = docs["twin-2"]
        assert dead["status"] == "unreachable" and dead["unreachable"]["server"] == server_of(fleet, "twin-2")
        # given up after the job's 5 s of silence (GIVE_UP_SOON), at most a backoff step (5 s) past it; by default
        # after 20 s, or once a request's 10 tries failed, whose backoff sleeps add up to at least 13 s
        assert silence(dead["unreachable"]["message"]) < 13, dead["unreachable"]["message"]

        last = artifacts["storageperf_stats_bench_last"]
        assert set(last) == set(HOSTS) and last["twin-2"]["status"] == "unreachable"
        assert {last[h]["status"] for h in ("twin-1", "twin-3")} == {"ok"}
        assert artifacts["storageperf_stats_fleet_report"]["summary"]["failed_clusters"] == ["twin-2"]
        assert fleet_report(reports)["summary"]["ok"] == 2
