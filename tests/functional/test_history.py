"""playbooks/history.yml over real runs of the CSI lifecycle benchmark on one twin (issue 43's "done when"): six
unchanged runs, the last three while another process keeps one CPU busy, flag nothing; the same cluster made truly
slower (its ONTAP answers one call at a time) is flagged at the next run, and only once.

The runs go through the bench modules' own code (bench/runner.py: plan, measure, finalize; what bench_plan,
bench_measure and bench_finish run) in this process: seven runs through the playbook would take four minutes here,
this way about one.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle as CL
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import finish, runner
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client
from ansible_collections.storageperf.k8s.plugins.module_utils.trident.switch import switch_concurrency
from tests.support.twin import REPO

HISTORY = REPO / "playbooks" / "history.yml"
# issue 43: 20 volumes at time scale 0.05, where a step's operations take 0.2 s to 1.5 s of wall time
TIME_SCALE = 0.05
OPTIONS = dict({k: v.get("default") for k, v in CL.OPTIONS.items()}, volumes=20, storage_class="ontap-nas")
ENGINE = {"engine": {"concurrency": 16, "timeout": 600, "give_up_after_warnings": 0, "keep_objects": True},
          "variants": ["as configured"], "repeat": 1, "metrics": None}
# one CPU kept busy, bounded by itself too (a run takes about 8 s, 20 at most under load) should the test die first
BUSY = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end:\n    pass\n"


def lifecycle(client: Client, reports: Path) -> dict:
    out = runner.preflight(client, "csi_lifecycle", OPTIONS, str(reports), cluster_name="localhost", run=ENGINE)
    rf, stored = runner.load_plan(str(reports), out["run_id"])
    runner.measure(client, rf, stored, "as configured", settings={})
    doc = finish.finalize(str(reports), out["run_id"])["document"]
    assert doc["status"] == "ok", json.dumps(doc["variants"][0]["runs"][0]["steps"])[:2000]
    return doc


def test_unchanged_runs_under_load_flag_nothing_and_a_slower_ontap_is_flagged_once(twin_factory, tmp_path):
    twin = twin_factory(nodes=2, time_scale=TIME_SCALE)
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    client = Client({"kubeconfig": str(twin.kubeconfig)}, pool_maxsize=24)
    switch_concurrency(client, {"state": "present", "namespace": None, "allow_tech_preview": True,
                                "k8s_api_qps": None, "wait": True, "wait_timeout": 120})
    reports = tmp_path / "reports"
    cluster_reports = reports / "localhost"
    runs = [lifecycle(client, cluster_reports) for _ in range(3)]
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        runs += [lifecycle(client, cluster_reports) for _ in range(3)]
    finally:
        busy.kill()
        busy.wait()

    history = {"reports_dir": str(reports), "fail_on_regression": True}
    aa = twin.playbook(HISTORY, extra_vars=history)
    assert aa.rc == 0, aa.stdout[-3000:]
    out = aa.task("Read every result document")["result"]
    assert out["summary"]["runs"] == 6 and out["summary"]["series"] == 1
    assert out["regressions"] == [] and out["known_regressions"] == [] and out["summary"]["flagged_steps"] == 0
    (series,) = json.loads(Path(out["paths"]["json"]).read_text())["series"]
    assert series["config"] == {"storage_class": "ontap-nas"} and series["size"] == 20
    evidence = series["runs"][-1]["steps"][0]["evidence"]
    assert evidence["kind"] == "operations" and evidence["n"] == 20

    twin.twin_cmd("settings", "--set", json.dumps({"ontap_serial": True}))
    slow = lifecycle(client, cluster_reports)
    flagged = twin.playbook(HISTORY, extra_vars=history)
    assert flagged.rc != 0  # fail_on_regression: what an AWX job template alerts on
    out = flagged.task("Read every result document")["result"]
    assert out["regressions"], flagged.stdout[-3000:]
    assert {r["run_id"] for r in out["regressions"]} == {slow["run_id"]}
    assert all(r["change_pct"] >= 100 and r["pvalue"] <= 0.001 and r["field"] == "latency" for r in out["regressions"])
    assert {r["step"] for r in out["regressions"]} & {"create_volume", "clone_from_snapshot"}
    steps = sorted(r["step"] for r in out["regressions"])
    assert all(s in flagged.task("Fail when a series has a new regression")["result"]["msg"] for s in steps)

    # the next history knows them: nothing new to alert on, each "known since" the run that was flagged
    again = twin.playbook(HISTORY, extra_vars=history)
    assert again.rc == 0, again.stdout[-3000:]
    out = again.task("Read every result document")["result"]
    assert out["regressions"] == [] and sorted(r["step"] for r in out["known_regressions"]) == steps
    assert {r["known_since"] for r in out["known_regressions"]} == {slow["run_id"]}
    assert "known since run %s" % slow["run_id"] in Path(out["paths"]["markdown"]).read_text()
