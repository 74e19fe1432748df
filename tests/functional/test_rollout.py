"""playbooks/rollout.yml on a fleet of three twin clusters: waves, the gate, rollback, halting and resume.

The twin makes a change fail its gate the way real clusters do: `ontap_serial` gives one cluster an ONTAP that
answers one call at a time, so Trident's concurrent core cannot speed anything up there; an attach fault that only
bites while parallel attach is on breaks the change on one ACK cluster.
"""
from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest

from tests.support.fleet_runs import INVENTORY, fleet_env
from tests.support.fleet import Fleet
from tests.support.s3 import moto_s3
from tests.support.twin import REPO, PlaybookRun, run_playbook

HOSTS = ["twin-1", "twin-2", "twin-3"]
TRIDENT = {"change": "trident_concurrency", "waves": [1, "100%"]}


def concurrency(fleet: Fleet, host: str) -> tuple[bool, str]:
    """The TridentOrchestrator's wish and trident-main's flag, read from the cluster."""
    torc = fleet.member(host).kubectl_json("get", "tridentorchestrator", "trident", "-o", "json")
    dep = fleet.member(host).kubectl_json("get", "deployment", "trident-controller", "-n", "trident", "-o", "json")
    args = [a for c in dep["spec"]["template"]["spec"]["containers"] for a in c.get("args", [])]
    flag = [a.split("=", 1)[1] for a in args if a.startswith("--enable_concurrency=")]
    return bool(torc["spec"].get("enableConcurrency")), (flag or ["?"])[0]


def rollout_doc(reports: Path) -> dict:
    [d] = reports.glob("rollout-*")
    return json.loads((d / "rollout.json").read_text())


def probe_runs(reports: Path, host: str) -> list[str]:
    return sorted(p.parent.name for p in (reports / host).glob("*/result.json")) if (reports / host).is_dir() else []


def rollout(fleet: Fleet, reports: Path, extra: dict, check: bool = False, limit: str | None = None,
            env: dict | None = None) -> PlaybookRun:
    return run_playbook(REPO / "playbooks" / "rollout.yml", inventory=INVENTORY, env={**fleet_env(fleet, reports), **(env or {})},
                        extra_vars={"reports_dir": str(reports), **extra}, record_dir=fleet.dir, check=check,
                        limit=limit)


def decisions(doc: dict) -> dict[str, str]:
    return {name: r["decision"] for name, r in doc["clusters"].items()}


def reasons(doc: dict) -> str:
    """Each cluster's reason, whole (a dict as the assertion message would be cut short), with its gate's numbers."""
    return "\n".join("%s: %s | gate %s" % (name, r["reason"], json.dumps(r.get("gate"), default=str)[:3000])
                     for name, r in doc["clusters"].items())


@pytest.fixture
def fleet(tmp_path_factory):
    # time scale 0.03, not the suite's usual 0.01: a probe of 20 volumes then takes operations of 0.1 s to 1.5 s of
    # wall time, so the cluster's modelled time outweighs what every operation also costs on this shared machine (API
    # round trips, watch events, the harness); at 0.01 that overhead made up half of a concurrent operation and on a
    # loaded machine hid half of the gain the gate weighs
    with Fleet(tmp_path_factory.mktemp("rollout"), clusters=3, nodes=2, time_scale=0.03) as f:
        yield f


def test_check_mode_prints_the_plan_and_changes_nothing(fleet, tmp_path):
    run = rollout(fleet, tmp_path, TRIDENT, check=True)
    assert run.rc == 0, run.stdout + run.stderr
    plan = run.task("Show the plan")["result"]["msg"]
    assert "wave 1: twin-1" in plan and "wave 2: twin-2, twin-3" in plan
    shown = {r["host"]: r["result"]["msg"] for r in run.results if "Show what this run does" in r["task"]}
    assert sorted(shown) == HOSTS
    for lines in shown.values():
        text = "\n".join(lines)
        assert "expected gain" in text and "the gate asks for speedup >=" in text and "preflight: passed" in text
        assert "csi_lifecycle, 20 volumes x 3 repetitions before, 1 warm-up + 3 after" in text and "judged on create_volume, publish" in text
    assert [concurrency(fleet, h) for h in HOSTS] == [(False, "false")] * 3
    assert list(tmp_path.glob("rollout-*/clusters/*.json")) == []
    assert all(probe_runs(tmp_path, h) == [] for h in HOSTS)

    # parameters of the wrong type fail the check run, named by the applying role's own spec, before any plan
    bad = rollout(fleet, tmp_path, dict(TRIDENT, change_parameters={"k8s_api_qps": "lots", "allow_tech_preview": "maybe"}),
                  check=True)
    assert bad.rc != 0
    msg = bad.task("Put the clusters in waves")["result"]["msg"]
    assert "change_parameters.k8s_api_qps is of type str" in msg and "change_parameters.allow_tech_preview" in msg
    assert list(tmp_path.glob("rollout-*")) == []


@pytest.mark.long
def test_trident_rollout_promotes_where_it_pays_and_rolls_back_where_it_cannot(fleet, tmp_path, tmp_path_factory):
    fleet.twin_cmd("settings", "--cluster", "twin-3", "--set", json.dumps({"ontap_serial": True}))
    run = rollout(fleet, tmp_path, TRIDENT)
    assert run.rc == 0, run.stdout[-6000:] + run.stderr
    doc = rollout_doc(tmp_path)
    assert decisions(doc) == {"twin-1": "promoted", "twin-2": "promoted", "twin-3": "rolled_back"}, reasons(doc)
    assert [doc["clusters"][h]["wave"] for h in HOSTS] == [1, 2, 2]
    for h in ("twin-1", "twin-2"):
        gate = doc["clusters"][h]["gate"]
        assert gate["decision"] == "passed" and gate["gain"]["ci_low"] > gate["gain"]["required_speedup"], gate["gain"]
        # the after-probe's warm-up repetition is not weighed: 3 repetitions a side
        assert gate["warmup"] == 1 and gate["gain"]["repetitions"] == {"baseline": 3, "candidate": 3}, gate["gain"]
    back = doc["clusters"]["twin-3"]
    # twin-3's ONTAP answers one call at a time: the data show the change brings less than required
    assert back["gate"]["decision"] == "failed" and back["gate"]["gain"]["ci_high"] < back["gate"]["gain"]["required_speedup"]
    assert "gate failed" in back["reason"] and back["rollback"]["verified"] is True
    assert [concurrency(fleet, h) for h in HOSTS] == [(True, "true"), (True, "true"), (False, "false")]
    assert (tmp_path / Path(next(tmp_path.glob("rollout-*")).name) / "rollout.html").is_file()
    measured = {h: probe_runs(tmp_path, h) for h in HOSTS}
    assert all(len(runs) == 2 for runs in measured.values()), measured

    again = rollout(fleet, tmp_path, TRIDENT)
    assert again.rc == 0, again.stdout[-6000:] + again.stderr
    assert decisions(rollout_doc(tmp_path)) == decisions(doc)
    # nothing measured or changed again: no new probe run, no changed task on a cluster
    assert {h: probe_runs(tmp_path, h) for h in HOSTS} == measured
    # (the run's lease, taken and given up on the controller, is the one thing a rerun changes)
    changed = [(r["task"], r["action"]) for r in again.results if r["host"] in HOSTS and r["status"] == "ok"
               and r["result"].get("changed") and r["action"] != "storageperf.k8s.rollout_lease"]
    assert changed == []
    assert [concurrency(fleet, h) for h in HOSTS] == [(True, "true"), (True, "true"), (False, "false")]

    # drift: a new cluster answers under the old name (a new kube-system uid, a new API server) and the records stay;
    # it is rolled out again (one cluster named by --limit), and its old record is reported as drift, not believed
    with Fleet(tmp_path_factory.mktemp("rollout-fresh"), clusters=3, nodes=2, time_scale=0.03) as fresh:
        drift = rollout(fresh, tmp_path, TRIDENT, limit="twin-1")
        assert drift.rc == 0, drift.stdout[-6000:]
        doc = rollout_doc(tmp_path)
        assert decisions(doc) == {"twin-1": "promoted", "twin-2": "promoted", "twin-3": "rolled_back"}, reasons(doc)
        record = doc["clusters"]["twin-1"]
        assert "another cluster under this name" in record["drift"], record["drift"]
        assert record["identity"]["server"] == fresh.member("twin-1").server
        assert concurrency(fresh, "twin-1") == (True, "true")
        # measured again: a second pair of probes, and the old decision is in the record's history, not its own
        assert len(probe_runs(tmp_path, "twin-1")) == 4
        assert [h["decision"] for h in record["history"]].count("promoted") == 1


@pytest.mark.long
def test_a_canary_that_fails_its_gate_halts_the_rollout(fleet, tmp_path):
    fleet.twin_cmd("settings", "--cluster", "twin-1", "--set", json.dumps({"ontap_serial": True}))
    reports = tmp_path / "reports"
    with moto_s3("AKIDROLLOUT", "rollout-secret", "rollouts") as (url, s3):  # the records, the pages and the probes kept
        aws = {"AWS_ACCESS_KEY_ID": "AKIDROLLOUT", "AWS_SECRET_ACCESS_KEY": "rollout-secret",
               "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
               "AWS_EC2_METADATA_DISABLED": "true"}
        run = rollout(fleet, reports, dict(TRIDENT, upload_bucket="rollouts", upload_endpoint_url=url,
                                           upload_region="us-east-1", upload_addressing_style="path"), env=aws)
        assert run.rc == 2, run.stdout[-4000:]
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="rollouts").get("Contents", [])}
        [page_key] = [k for k in keys if k.endswith("/rollout.html")]
        page_text = s3.get_object(Bucket="rollouts", Key=page_key)["Body"].read().decode("utf-8")
    assert run.task("Fail the run when a wave halted")["result"]["msg"].startswith("wave 1 halted the rollout")
    doc = rollout_doc(reports)
    assert decisions(doc) == {"twin-1": "rolled_back", "twin-2": "skipped", "twin-3": "skipped"}
    assert "wave 1 halted the rollout" in doc["clusters"]["twin-2"]["reason"]
    assert "wave 1 halted the rollout" in run.stdout
    # the other clusters were not touched: not measured, not changed
    assert probe_runs(reports, "twin-2") == probe_runs(reports, "twin-3") == []
    assert [concurrency(fleet, h) for h in HOSTS] == [(False, "false")] * 3
    # rollout.html links the canary's two probes to their report.html, by paths from its own directory, which hold
    # in the bucket too: the rollout's directory and the probes' runs are kept there as they lie in reports_dir
    [page] = reports.glob("rollout-*/rollout.html")
    links = re.findall(r'<a href="([^"]*)"', page.read_text())
    assert sorted(links) == ["../twin-1/%s/report.html" % r for r in probe_runs(reports, "twin-1")], links
    assert len(links) == 2 and all((page.parent / link).is_file() for link in links)
    assert sorted(re.findall(r'<a href="([^"]*)"', page_text)) == sorted(links)
    assert all(posixpath.normpath(posixpath.join(posixpath.dirname(page_key), link)) in keys for link in links), \
        sorted(keys)


@pytest.mark.long
def test_an_inconclusive_canary_holds_the_rollout_and_its_rerun_holds_it_again(fleet, tmp_path):
    # twin-1's ONTAP answers one call at a time, so the change brings nothing there (a true ratio of 1.0), and the
    # gate asks for hardly more than no loss: the required speedup lies inside any honest interval around 1.0, the
    # more so at confidence 0.999, so the data can neither pass nor fail it. max_fail_percentage 100 would let a
    # failed canary go on; an inconclusive one holds the rollout all the same, on this run and on its rerun.
    fleet.twin_cmd("settings", "--cluster", "twin-1", "--set", json.dumps({"ontap_serial": True}))
    extra = dict(TRIDENT, min_gain_fraction=0.001, confidence=0.999, max_fail_percentage=100)
    run = rollout(fleet, tmp_path, extra)
    assert run.rc == 2, run.stdout[-6000:] + run.stderr
    doc = rollout_doc(tmp_path)
    assert decisions(doc) == {"twin-1": "rolled_back", "twin-2": "skipped", "twin-3": "skipped"}, reasons(doc)
    canary = doc["clusters"]["twin-1"]
    gain = canary["gate"]["gain"]
    assert canary["gate"]["decision"] == "inconclusive", reasons(doc)
    assert gain["ci_low"] < gain["required_speedup"] < gain["ci_high"], gain
    assert canary["rollback"]["verified"] is True
    halt = run.task("Fail the run when a wave halted")["result"]["msg"]
    assert halt.startswith("wave 1 halted the rollout: the gate was inconclusive on twin-1"), halt
    assert "wave 1 halted the rollout" in doc["clusters"]["twin-2"]["reason"]
    assert [concurrency(fleet, h) for h in HOSTS] == [(False, "false")] * 3
    measured = {h: probe_runs(tmp_path, h) for h in HOSTS}
    assert len(measured["twin-1"]) == 2 and measured["twin-2"] == measured["twin-3"] == [], measured

    # the rerun takes twin-1 from its record (rolled back, inconclusive) and holds the later waves again
    again = rollout(fleet, tmp_path, extra)
    assert again.rc == 2, again.stdout[-6000:] + again.stderr
    assert again.task("Fail the run when a wave halted")["result"]["msg"] == halt
    assert decisions(rollout_doc(tmp_path)) == decisions(doc)
    assert {h: probe_runs(tmp_path, h) for h in HOSTS} == measured
    assert [concurrency(fleet, h) for h in HOSTS] == [(False, "false")] * 3


@pytest.mark.long
def test_parallel_attach_rollout_rolls_back_the_cluster_it_breaks(fleet, tmp_path):
    # half the attaches fail on twin-3 once its disks attach in parallel (retried, as the attacher does): the change
    # breaks that cluster; no count, since each probe's own setup attaches disks before its timed steps
    fault = {"fraction": 0.5, "while": "parallel_attach"}
    fleet.twin_cmd("fault", "--cluster", "twin-3", "--name", "attach", "--rule", json.dumps(fault))
    run = rollout(fleet, tmp_path, {"change": "parallel_attach", "waves": [1, "100%"]})
    assert run.rc == 0, run.stdout[-6000:] + run.stderr
    doc = rollout_doc(tmp_path)
    assert decisions(doc) == {"twin-1": "promoted", "twin-2": "promoted", "twin-3": "rolled_back"}, reasons(doc)
    back = doc["clusters"]["twin-3"]
    assert back["gate"]["passed"] is False and back["rollback"]["verified"] is True
    assert "FailedAttachVolume" in back["gate"]["new_warnings"], back["gate"]
    assert "mode off" in back["rollback"]["detail"]
