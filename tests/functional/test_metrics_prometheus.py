"""metrics_push end to end: a fleet of three twin clusters runs a small CSI lifecycle benchmark with
metrics_pushgateway_url; a real Prometheus, scraping a real Pushgateway (both the Debian packages, started here),
then answers a PromQL query with one series per cluster holding the figure of that cluster's result document. With
the Pushgateway gone the run still passes, warns with the URL, and writes metrics.prom."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.fleet_runs import HOSTS, INVENTORY, fleet_env, results_per_cluster, run_on_fleet
from tests.support import prometheus as P
from tests.support.fleet import Fleet
from tests.support.s3 import free_port
from tests.support.twin import REPO, PlaybookRun, run_playbook

pytest.importorskip("prometheus_client")
if not (P.PROMETHEUS and P.PUSHGATEWAY):
    pytest.skip("apt-get install prometheus prometheus-pushgateway (bindep.txt)", allow_module_level=True)

SMALL = {"volumes": 4, "pvcs_per_pod": 4, "steps": "create_volume,delete_volume"}


def figure(doc: dict, step: str) -> float:
    """The report's figure: the median wall time of the step in the document's (only) variant."""
    [variant] = doc["variants"]
    [summary] = [s for s in variant["summary"]["steps"] if s["name"] == step]
    return summary["wall_s"]["median"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("fleet"), clusters=3, nodes=2) as f:
        yield f


def test_a_fleet_run_reaches_prometheus_one_series_per_cluster(fleet, tmp_path):
    reports = tmp_path / "reports"
    with P.pushgateway(tmp_path) as gateway, P.prometheus(tmp_path, gateway.split("//", 1)[1]) as (prom, proc):
        run = run_on_fleet(fleet, "bench_csi_lifecycle.yml", reports, {**SMALL, "metrics_pushgateway_url": gateway})
        assert run.rc == 0, run.stdout + run.stderr
        docs = {host: doc for host, [doc] in results_per_cluster(reports).items()}
        assert sorted(docs) == HOSTS

        promql = 'storageperf_step_duration_seconds{step="create_volume"}'
        series = P.wait_for(proc, lambda: (lambda r: r if len(r) == 3 else None)(P.query(prom, promql)),
                            f"three series of {promql}")
    got = {s["metric"]["cluster"]: (s["metric"]["run_id"], float(s["value"][1])) for s in series}
    assert got == {h: (d["run_id"], pytest.approx(figure(d, "create_volume"))) for h, d in docs.items()}
    for s in series:  # the labels of docs/results.md and the grouping key, kept by honor_labels
        assert s["metric"]["job"] == "storageperf" and s["metric"]["benchmark"] == "csi_lifecycle"
        assert s["metric"]["variant"] == docs[s["metric"]["cluster"]]["variants"][0]["name"]
    for host, doc in docs.items():
        text = (reports / host / doc["run_id"] / "metrics.prom").read_text()
        assert f'cluster="{host}"' in text and text.endswith("# EOF\n")
    # bench_finish writes metrics.prom (the plan's metrics) and pushes (issue 33: no metrics_push module run of its own)
    pushes = [r["result"]["metrics"] for r in run.results if "write metrics.prom" in r["task"]]
    assert len(pushes) == 3 and all(p["pushed"] for p in pushes), pushes


def run_on_one(fleet: Fleet, tmp_path: Path, reports: Path, extra_vars: dict) -> PlaybookRun:
    """The benchmark on twin-1 alone (the fleet's inventory with one host): half the time of three."""
    one = tmp_path / "inventory"
    shutil.copytree(INVENTORY, one)
    hosts = (one / "hosts.yml").read_text()
    (one / "hosts.yml").write_text(hosts.replace("        twin-2:\n", "").replace("        twin-3:\n", ""))
    return run_playbook(REPO / "playbooks" / "bench_csi_lifecycle.yml", inventory=one, env=fleet_env(fleet, reports),
                        record_dir=fleet.dir, extra_vars={"reports_dir": str(reports), **SMALL, **extra_vars})


def test_a_pushgateway_that_is_down_warns_and_the_run_passes(fleet, tmp_path):
    reports = tmp_path / "reports"
    gateway = "http://127.0.0.1:%d" % free_port()  # nothing listens there
    run = run_on_one(fleet, tmp_path, reports, {"metrics_pushgateway_url": gateway})
    assert run.rc == 0, run.stdout + run.stderr
    docs = {host: doc for host, [doc] in results_per_cluster(reports).items()}
    assert sorted(docs) == ["twin-1"]
    for host, doc in docs.items():
        assert doc["status"] == "ok"
        assert f"metrics_pushgateway_url {gateway}: the push of run {doc['run_id']} failed" in run.stdout + run.stderr
        assert (reports / host / doc["run_id"] / "metrics.prom").is_file()


def test_a_bad_url_fails_before_anything_runs(fleet, tmp_path):
    reports = tmp_path / "reports"
    run = run_on_one(fleet, tmp_path, reports, {"metrics_pushgateway_url": "pg:9091"})
    assert run.rc != 0
    assert "metrics_pushgateway_url='pg:9091' is not an http(s) URL" in run.stdout + run.stderr
    assert not list(reports.glob("*/*/result.json"))  # nothing measured, nothing written
