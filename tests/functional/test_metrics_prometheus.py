"""metrics_push end to end: a fleet of three twin clusters runs a small CSI lifecycle benchmark with
metrics_pushgateway_url; a real Prometheus, scraping a real Pushgateway (both the Debian packages, started here),
then answers a PromQL query with one series per cluster holding the figure of that cluster's result document, and
every query of the Grafana dashboard returns series. The run's metrics.prom files pass `promtool check metrics` and
node-exporter's textfile collector reads them; so do those of every benchmark kind. With the Pushgateway gone the run
still passes, warns with the URL, and writes metrics.prom."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.fleet_runs import HOSTS, INVENTORY, fleet_env, results_per_cluster, run_on_fleet
from tests.support import prometheus as P
from tests.support import report_samples as sample
from tests.support.fleet import Fleet
from tests.support.s3 import free_port
from tests.support.twin import REPO, PlaybookRun, run_playbook

pytest.importorskip("prometheus_client")
if not (P.PROMETHEUS and P.PUSHGATEWAY and P.NODE_EXPORTER and P.PROMTOOL):
    pytest.skip("apt-get install prometheus prometheus-pushgateway prometheus-node-exporter (bindep.txt)",
                allow_module_level=True)

from ansible_collections.storageperf.k8s.plugins.module_utils.report import metric_families as MF  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.report import metrics_export as ME  # noqa: E402

DASHBOARD = REPO / "extensions" / "grafana" / "storageperf.json"
# every benchmark kind, a failed run among them, as the cluster it is pushed for (a label value, an identifier)
KINDS = {"sample-csi": lambda: sample.csi_lifecycle(volumes=20, failure=True), "sample-fio": sample.fio_jobs,
         "sample-fio-classes": sample.fio_classes, "sample-sysbench": sample.sysbench_classes,
         "sample-gluster": sample.gluster_handshake, "sample-attach": sample.attach_stress,
         "sample-sweep": sample.csi_sweep}

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


def textfile_check(tmp: Path, files: dict[str, str]) -> str:
    """Each text passes `promtool check metrics` with no error and no lint warning, and node-exporter's textfile
    collector reads them all from one directory (as <name>.prom) with node_textfile_scrape_error 0: what it serves."""
    for name, text in files.items():
        check = P.promtool_check(text)
        assert (check.returncode, check.stdout + check.stderr) == (0, ""), name
    textfiles = tmp / "textfile"
    textfiles.mkdir()
    for name, text in files.items():
        (textfiles / f"{name}.prom").write_text(text)
    with P.node_exporter(tmp, textfiles) as url:
        served = P.scrape(url)
    assert re.search(r"^node_textfile_scrape_error 0$", served, re.M), served[-2000:]
    for name in files:
        assert f'node_textfile_mtime_seconds{{file="{textfiles / name}.prom"}}' in served
    return served


def panel_queries(dash: dict) -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and template variable, with All chosen for every variable."""
    every = {"$cluster": ".*", "$benchmark": ".*", "$step": ".*"}
    out = [(f"panel {p['id']} {p['title']} {t['refId']}", t["expr"]) for p in dash["panels"] for t in p["targets"]]
    # label_values(<selector>, label) is Grafana's: the selector is the query
    out += [(f"variable {v['name']}", re.sub(r"^label_values\((.*), \w+\)$", r"\1", v["query"]["query"]))
            for v in dash["templating"]["list"] if v["type"] == "query"]
    for var, value in every.items():
        out = [(where, expr.replace(var, value)) for where, expr in out]
    return out


def test_metrics_prom_of_every_benchmark_kind_passes_promtool_and_node_exporter(tmp_path):
    files = {cluster: ME.text(MF.families(make(), cluster)) for cluster, make in KINDS.items()}
    served = textfile_check(tmp_path, files)
    # the collector serves the figures as written: the fio jobs' write IOPS, in their own family
    fio = MF.families(sample.fio_jobs(), "sample-fio")
    [(labels, value)] = [s for f in fio if f["name"] == "storageperf_measured_write_operations_per_second"
                         for s in f["samples"]][:1]
    line = "storageperf_measured_write_operations_per_second{%s}" % ",".join(
        f'{k}="{v}"' for k, v in sorted(labels.items()))
    assert float(re.search("^%s (\\S+)$" % re.escape(line), served, re.M).group(1)) == value


def test_a_fleet_run_reaches_prometheus_one_series_per_cluster_and_every_dashboard_query_has_series(fleet, tmp_path):
    reports = tmp_path / "reports"
    with P.pushgateway(tmp_path) as gateway, P.prometheus(tmp_path, gateway.split("//", 1)[1]) as (prom, proc):
        run = run_on_fleet(fleet, "bench_csi_lifecycle.yml", reports, {**SMALL, "metrics_pushgateway_url": gateway})
        assert run.rc == 0, run.stdout + run.stderr
        docs = {host: doc for host, [doc] in results_per_cluster(reports).items()}
        assert sorted(docs) == HOSTS

        # the run id is not a label of the figures but of the one info series, joined in
        promql = ('storageperf_step_duration_seconds{step="create_volume"} '
                  '* on (cluster, benchmark) group_left (run_id) storageperf_run_info')
        series = P.wait_for(proc, lambda: (lambda r: r if len(r) == 3 else None)(P.query(prom, promql)),
                            f"three series of {promql}")
        got = {s["metric"]["cluster"]: (s["metric"]["run_id"], float(s["value"][1])) for s in series}
        assert got == {h: (d["run_id"], pytest.approx(figure(d, "create_volume"))) for h, d in docs.items()}
        figures = P.query(prom, 'storageperf_step_duration_seconds{step="create_volume"}')
        for s in figures:  # the labels of docs/results.md and the grouping key, kept by honor_labels
            assert s["metric"]["job"] == "storageperf" and s["metric"]["benchmark"] == "csi_lifecycle"
            assert s["metric"]["variant"] == MF.identifier(docs[s["metric"]["cluster"]]["variants"][0]["name"])
            assert "run_id" not in s["metric"]

        # the kinds this run does not measure (fio, sysbench, gluster, two variants, a failed run), pushed the same way
        for cluster, make in KINDS.items():
            doc = make()
            assert ME.push(gateway, MF.families(doc, cluster), MF.grouping_key(doc, cluster), MF.JOB, timeout=10) == ""
        P.wait_for(proc, lambda: len(P.query(prom, "storageperf_run_ok")) == 3 + len(KINDS), "every push scraped")
        empty = [(where, expr) for where, expr in panel_queries(json.loads(DASHBOARD.read_text()))
                 if not P.query(prom, expr)]
        assert not empty, empty
        [failed] = P.query(prom, 'storageperf_run_ok == 0')
        assert failed["metric"]["cluster"] == "sample-csi"

    files = {host: (reports / host / doc["run_id"] / "metrics.prom").read_text() for host, doc in docs.items()}
    for host, text in files.items():
        assert f'cluster="{host}"' in text and "# EOF" not in text
    served = textfile_check(tmp_path, files)
    assert len(re.findall(r'^storageperf_run_info\{', served, re.M)) == 3
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
