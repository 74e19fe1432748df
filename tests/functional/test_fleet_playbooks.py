"""A fleet of three twin clusters run as one inventory (inventories/twin-fleet) with -f 3.

Every playbook runs on all three at once; each cluster keeps its own run id, result document and
report directory; a cluster that becomes unreachable mid-run fails alone while the others finish, and
the job's set_stats (what AWX keeps as artifacts, read here through ansible-runner) hold every cluster.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.fleet import Fleet
from tests.support.fleet_runs import (GIVE_UP_SOON, HOSTS, cluster_dirs, fleet_report, labelled, recap, results_per_cluster,
                                      run_as_awx, run_on_fleet, server_of, silence)

SMALL_BENCH = {"volumes": 8, "pvcs_per_pod": 4}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("fleet"), clusters=3, nodes=2) as f:
        yield f


def test_tuning_playbooks_run_on_every_cluster_at_once(fleet, tmp_path):
    info = run_on_fleet(fleet, "cluster_info.yml", tmp_path)
    assert info.rc == 0, info.stdout + info.stderr
    assert sorted(h for h in recap(info) if h != "localhost") == HOSTS
    servers = {r["host"]: r["result"]["api_host"] for r in info.results if r["task"] == "Read the cluster's storage facts"}
    assert servers == {h: server_of(fleet, h) for h in HOSTS} and len(set(servers.values())) == 3

    def advice(reports: Path) -> dict[str, dict[str, str]]:
        run = run_on_fleet(fleet, "advise.yml", reports)
        assert run.rc == 0, run.stdout + run.stderr
        files = {d.name: sorted(d.glob("advice-*.json")) for d in cluster_dirs(reports)}
        assert sorted(files) == HOSTS and all(len(f) == 1 for f in files.values()), files
        side_by_side = fleet_report(reports)
        assert side_by_side["kind"] == "advice" and sorted(r["cluster"] for r in side_by_side["clusters"]) == HOSTS
        return {h: {t["name"]: t["state"] for t in json.loads(f[0].read_text())["tunings"]} for h, f in files.items()}

    before = advice(tmp_path / "advice-before")
    assert all(b["parallel_attach"] == "available" and b["trident_concurrency"] == "available"
               for b in before.values()), before

    for playbook in ("enable_parallel_attach.yml", "tune_trident.yml"):
        run = run_on_fleet(fleet, playbook, tmp_path)
        assert run.rc == 0, run.stdout + run.stderr
        counts = recap(run)
        assert all(counts[h]["failed"] == 0 and counts[h]["changed"] > 0 for h in HOSTS), counts

    # each cluster's own ACK cluster id was changed, through one shared cloud endpoint
    stats = [r for r in run_on_fleet(fleet, "enable_parallel_attach.yml", tmp_path).results
             if "Publish what changed" in r["task"]]
    published = {}
    for r in stats:
        published.update(r["result"]["ansible_stats"]["data"]["storageperf_stats_ack_parallel_attach"])
    assert sorted(published) == HOSTS and not any(p["changed"] for p in published.values())  # idempotent rerun

    after = advice(tmp_path / "advice-after")
    assert all(a["parallel_attach"] == "on" and a["trident_concurrency"] == "on" and
               a["snapshot_controller_tuning"] == "on" for a in after.values()), after


def one_ok_result_per_cluster(fleet, run, reports: Path, stats_key: str) -> dict[str, dict]:
    """Each cluster's one result document, ok, with its own run id, name and server; the job's set_stats name the
    same run ids under stats_key; the fleet report has the three clusters, all ok. {host: document}."""
    assert run.rc == 0, run.stdout + run.stderr
    docs = results_per_cluster(reports)
    assert sorted(docs) == HOSTS and all(len(d) == 1 for d in docs.values())
    run_ids = {h: d[0]["run_id"] for h, d in docs.items()}
    assert len(set(run_ids.values())) == 3
    for host, [doc] in docs.items():
        assert doc["status"] == "ok" and doc["cluster"]["name"] == host
        assert doc["cluster"]["server"] == server_of(fleet, host)
    published = {}
    for r in run.results:
        if "Publish the outcome" in r["task"]:
            published.update(r["result"]["ansible_stats"]["data"][stats_key])
    assert {h: p["run_id"] for h, p in published.items()} == run_ids
    side_by_side = fleet_report(reports)
    assert side_by_side["summary"]["clusters"] == 3 and side_by_side["summary"]["ok"] == 3
    assert sorted(r["cluster"] for r in side_by_side["clusters"]) == HOSTS
    return {h: d[0] for h, d in docs.items()}


def test_benchmark_keeps_one_result_per_cluster(fleet, tmp_path):
    reports = tmp_path / "reports"
    run = run_on_fleet(fleet, "bench_csi_lifecycle.yml", reports, SMALL_BENCH)
    docs = one_ok_result_per_cluster(fleet, run, reports, "storageperf_stats_bench_csi_lifecycle")
    for host, doc in docs.items():
        [variant] = doc["variants"]
        steps = variant["runs"][0]["steps"]
        assert len(steps) == 8 and all(s["status"] == "ok" and s["count"] == 8 for s in steps), steps
        assert (reports / host / doc["run_id"] / "report.html").is_file()
    fleet = fleet_report(reports)
    # twins: each row carries its cluster's time scale and the page shows the step times in cluster time, labelled
    assert [r["time_scale"] for r in fleet["clusters"]] == [0.01] * 3  # the Fleet fixture's default time scale
    [fleet_md] = reports.glob("fleet-*/fleet.md")
    assert "### Step times in cluster time" in fleet_md.read_text()
    # the clusters' report.html were drawn by the fleet report's one module run, not on each cluster's path
    # each cluster's reports are rendered by its bench_finish run (its `report`), which had a bench_report run after it
    per_host = [r["result"]["report"] for r in run.results if r["task"].endswith("render report.md and report.html")]
    assert len(per_host) == 3 and all("html" not in r["paths"] for r in per_host), per_host
    drawn = run.task("Draw the report.html the clusters left")["result"]["reports"]
    assert sorted(Path(r["paths"]["html"]).parent.parent.name for r in drawn) == HOSTS
    # fleet.html links each cluster (its row, its run under Sources) to that report.html, relative to its own directory
    [fleet_html] = reports.glob("fleet-*/fleet.html")
    links = re.findall(r'<a href="([^"]*)"', fleet_html.read_text())
    assert sorted(links) == sorted(["../%s/%s/report.html" % (h, docs[h]["run_id"]) for h in HOSTS] * 2), links
    assert all((fleet_html.parent / link).is_file() for link in links)


def test_attach_stress_keeps_one_result_per_cluster(fleet, tmp_path):
    """bench_attach_stress.yml at -f 3: each cluster's StatefulSet on its own ACK cluster, one fleet report."""
    reports = tmp_path / "reports"
    run = run_on_fleet(fleet, "bench_attach_stress.yml", reports, {"replicas": 2})
    docs = one_ok_result_per_cluster(fleet, run, reports, "storageperf_stats_bench_attach_stress")
    for doc in docs.values():
        steps = {s["name"]: s for s in doc["variants"][0]["runs"][0]["steps"]}
        assert steps["scale_up"]["status"] == "ok" and steps["scale_up"]["count"] == 2, steps
        assert len(steps["scale_up"]["attachments"]) == 4  # two pods, two disks each, on this cluster
    # the fleet report's role was included once (run_once), and it drew the three pages the clusters left
    assert [r["host"] for r in run.results if r["task"] == "Put every cluster side by side"] == ["twin-1"]
    drawn = run.task("Draw the report.html the clusters left")["result"]["reports"]
    assert sorted(Path(r["paths"]["html"]).parent.parent.name for r in drawn) == HOSTS
    for host in HOSTS:
        assert not labelled(fleet, host, "storageperf.k8s/benchmark=attach_stress"), host


def test_benchmark_draws_each_cluster_report_on_its_path_when_asked(fleet, tmp_path):
    """-e bench_report_defer_html=false: today's per-cluster rendering, and the fleet report draws nothing."""
    reports = tmp_path / "reports"
    run = run_on_fleet(fleet, "bench_csi_lifecycle.yml", reports, dict(SMALL_BENCH, bench_report_defer_html=False))
    assert run.rc == 0, run.stdout + run.stderr
    # each cluster's reports are rendered by its bench_finish run (its `report`), which had a bench_report run after it
    per_host = [r["result"]["report"] for r in run.results if r["task"].endswith("render report.md and report.html")]
    assert sorted(Path(r["paths"]["html"]).parent.parent.name for r in per_host) == HOSTS
    assert run.task("Draw the report.html the clusters left")["status"] == "skipped"


def test_unreachable_cluster_fails_alone_and_awx_artifacts_keep_every_cluster(tmp_path):
    """Through ansible-runner, the engine AWX runs jobs with: twin-2's API server stops after its preflight."""
    pytest.importorskip("ansible_runner")
    reports = tmp_path / "reports"
    with Fleet(tmp_path / "fleet", clusters=3, nodes=2) as fleet:
        stopped = []

        def on_event(event: dict) -> bool:
            data = event.get("event_data") or {}
            # the preflight reached twin-2: from here on its cluster is gone, mid-run
            if (event.get("event") == "runner_on_ok" and data.get("host") == "twin-2"
                    and data.get("task", "").startswith("Check the inputs and the cluster") and not stopped):
                fleet.down("twin-2")
                stopped.append(True)
            return True

        job, artifacts = run_as_awx(fleet, "bench_csi_lifecycle.yml", reports, tmp_path / "job",
                                    {"reports_dir": str(reports), **SMALL_BENCH}, event_handler=on_event,
                                    envvars=GIVE_UP_SOON)
        assert stopped, "twin-2's preflight never finished"
        assert job.status == "failed"
        assert set(job.stats["failures"]) == {"twin-2"}, job.stats
        assert {"twin-1", "twin-3"} <= set(job.stats["ok"])

        docs = results_per_cluster(reports)
        for host in ("twin-1", "twin-3"):
            [doc] = docs[host]
            assert doc["status"] == "ok" and all(s["status"] == "ok" for s in doc["variants"][0]["runs"][0]["steps"])
        [failed] = docs["twin-2"]
        # its API server stopped answering: a state of the run, with the server and its last answer
        assert failed["status"] == "unreachable" and failed["cluster"]["name"] == "twin-2"
        assert failed["unreachable"]["server"] == server_of(fleet, "twin-2")
        # given up after the job's 5 s of silence (GIVE_UP_SOON), at most a backoff step (5 s) past it; by default
        # after 20 s, or once a request's 10 tries failed, whose backoff sleeps add up to at least 13 s
        assert silence(failed["unreachable"]["message"]) < 13, failed["unreachable"]["message"]

        assert set(artifacts["storageperf_stats_bench_csi_lifecycle"]) == set(HOSTS)
        assert artifacts["storageperf_stats_bench_csi_lifecycle"]["twin-2"]["status"] == "unreachable"
        assert {artifacts["storageperf_stats_bench_csi_lifecycle"][h]["status"] for h in ("twin-1", "twin-3")} == {"ok"}
        # the fleet report names the failed cluster beside the two that finished
        assert artifacts["storageperf_stats_fleet_report"]["summary"]["failed_clusters"] == ["twin-2"]
        assert fleet_report(reports)["summary"]["ok"] == 2
