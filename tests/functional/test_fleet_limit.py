"""--limit on a fleet of two twins (inventories/twin-fleet), as Ansible users expect it: a limit naming a cluster runs
there with every guard of playbooks/clusters.yml on, a limit naming no cluster fails naming the limit, and the
commands the advisor prints run verbatim from another directory, by the collection's name, and reach the cluster they
name."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.fleet import Fleet
from tests.support.fleet_runs import INVENTORY, fleet_env, run_on_fleet, server_of
from tests.support.twin import CALLBACKS, COLLECTIONS, REPO, PlaybookRun, run_playbook

GUARD = "Check that the inventory and the limit name the clusters"
REFUSE = "Refuse clusters nobody named"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("fleet-limit"), clusters=2, nodes=2) as f:
        yield f


def hosts_of(run: PlaybookRun) -> set[str]:
    """Every host that ran a task (a run_once task delegated to the controller counts for the host it ran for)."""
    return {r["host"] for r in run.results if r["status"] != "skipped"}


def test_a_limit_naming_one_cluster_runs_there_with_every_guard_on(fleet, tmp_path):
    run = run_playbook(REPO / "playbooks" / "cluster_info.yml", inventory=INVENTORY, env=fleet_env(fleet, tmp_path),
                       extra_vars={"qps": 75}, record_dir=tmp_path, limit="twin-2")
    assert run.rc == 0, run.stdout + run.stderr
    assert hosts_of(run) == {"twin-2"}
    assert run.task("Read the cluster's storage facts")["result"]["api_host"] == server_of(fleet, "twin-2")
    # the guards ran, once, for the cluster the limit left: the fleet guard passed and the unknown variable is named
    assert [r["host"] for r in run.results if r["task"] == GUARD] == ["twin-2"]
    assert run.task("Warn about extra vars")["result"]["unknown"] == {"qps": None}
    assert "extra var qps is not a variable of cluster_info.yml" in " ".join((run.stdout + run.stderr).split())


def test_a_limit_that_matches_no_host_fails_naming_it(fleet, tmp_path):
    """ansible-playbook refuses it itself, before the first play: nothing runs."""
    run = run_on_fleet(fleet, "cluster_info.yml", tmp_path, limit="nosuchcluster")
    assert run.rc != 0 and run.results == []
    assert "nosuchcluster" in run.stdout + run.stderr


def test_a_limit_that_leaves_no_cluster_of_the_group_fails_naming_it_and_the_group(fleet, tmp_path):
    other = tmp_path / "other.yml"  # a second source, as a shared AWX inventory holds hosts that are no cluster
    other.write_text("all:\n  children:\n    webservers:\n      hosts:\n        web-1:\n          ansible_connection: local\n")
    run = run_on_fleet(fleet, "cluster_info.yml", tmp_path, limit="webservers", inventory=[INVENTORY, other])
    assert run.rc != 0, run.stdout
    assert [r["task"] for r in run.results if r["status"] != "skipped"] == [GUARD, REFUSE]
    msg = run.task(REFUSE)["result"]["msg"]
    assert msg.startswith("The limit 'webservers' names no cluster of the group 'k8s_clusters' (twin-1, twin-2, "
                          "twin-3): it leaves only web-1."), msg


def printed_commands(fleet: Fleet, reports: Path) -> tuple[list[str], list[str]]:
    """The commands advise.yml prints for twin-1 (its summary lines): (apply commands, guarded rollout commands)."""
    run = run_on_fleet(fleet, "advise.yml", reports, limit="twin-1")
    assert run.rc == 0, run.stdout + run.stderr
    assert hosts_of(run) == {"twin-1"}
    lines = [line.strip() for line in run.task("Summary")["result"]["msg"]]
    apply = [line.split(": ", 1)[1] for line in lines if line.startswith("apply: ")]
    rollout = [line.split(": ", 1)[1] for line in lines if line.startswith("guarded rollout: ")]
    return apply, rollout


def run_verbatim(fleet: Fleet, commands: list[str], cwd: Path) -> list[PlaybookRun]:
    """Each printed command as a user runs it: from their own directory (no ansible.cfg of the repository), with the
    collection installed on ANSIBLE_COLLECTIONS_PATH; --check, since each would change the cluster. All at once: they
    wait on the twin more than they compute."""
    started = []
    for i, command in enumerate(commands):
        record = cwd / f"results-{i}-{time.monotonic_ns()}.jsonl"
        env = {k: v for k, v in fleet_env(fleet, cwd).items() if not k.startswith("ANSIBLE_")}
        env.update(ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS),
                   ANSIBLE_CALLBACKS_ENABLED="record_results", RECORD_RESULTS_FILE=str(record), ANSIBLE_NOCOLOR="1")
        proc = subprocess.Popen(shlex.split(command) + ["--check", "-e", "reports_dir=%s" % (cwd / "reports")],
                                cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append((proc, record))
    runs = []
    for proc, record in started:
        stdout, stderr = proc.communicate(timeout=600)
        results = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
        runs.append(PlaybookRun(proc.returncode, stdout, stderr, results))
    return runs


def assert_reaches_only(run: PlaybookRun, command: str, cluster: str) -> None:
    assert run.rc == 0, "%s\n%s\n%s" % (command, run.stdout[-3000:], run.stderr[-2000:])
    assert hosts_of(run) == {cluster}, command
    # past the guards: the playbook's own tasks ran on that cluster
    assert any(r["task"] not in (GUARD, REFUSE) and "Warn about extra vars" not in r["task"]
               and r["status"] == "ok" for r in run.results), command


@pytest.fixture(scope="module")
def commands(fleet, tmp_path_factory):
    return printed_commands(fleet, tmp_path_factory.mktemp("advice"))


def test_the_advisors_apply_commands_run_verbatim_from_elsewhere_and_reach_their_cluster(fleet, commands, tmp_path):
    apply, _ = commands
    assert apply, "the advisor printed no apply command for twin-1"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    apply = list(dict.fromkeys(apply))
    for command in apply:
        assert command.startswith("ansible-playbook -i ") and " storageperf.k8s." in command and " -l twin-1 " in command
        assert "playbooks/" not in command and os.path.isabs(shlex.split(command)[2]), command
    for command, run in zip(apply, run_verbatim(fleet, apply, elsewhere)):
        assert_reaches_only(run, command, "twin-1")


@pytest.mark.xfail(strict=True, reason="rollout.yml limit: lead's branch")
def test_the_advisors_rollout_commands_run_verbatim_from_elsewhere_and_reach_their_cluster(fleet, commands, tmp_path):
    _, rollout = commands
    assert rollout and all(" storageperf.k8s.rollout -l twin-1 -e change=" in c for c in rollout), rollout
    for command, run in zip(rollout, run_verbatim(fleet, rollout, tmp_path)):
        assert_reaches_only(run, command, "twin-1")


def test_a_benchmark_compare_history_and_cleanup_under_a_limit(fleet, tmp_path):
    """The benchmark and the cleanup run on the cluster the limit names, and the playbooks that run once on the
    controller (compare with a candidate, history) still run under that limit, once: a play on localhost alone would be
    skipped."""
    reports = tmp_path / "reports"
    bench = run_on_fleet(fleet, "bench_csi_lifecycle.yml", reports, {"volumes": 2, "steps": "create_volume,delete_volume"},
                         limit="twin-1")
    assert bench.rc == 0, bench.stdout[-3000:] + bench.stderr
    assert hosts_of(bench) == {"twin-1"}
    [result] = (reports / "twin-1").glob("*/result.json")
    assert not (reports / "twin-2").exists()

    compare = run_on_fleet(fleet, "compare.yml", reports, {
        "candidate": str(result), "baseline": str(result), "tolerances": {"create_volume.wall_s": {"max_increase_pct": 1}}},
        limit="twin-1")
    assert compare.rc == 0, compare.stdout[-3000:] + compare.stderr
    assert [(r["host"], r["result"]["verdict"]) for r in compare.results if "Compare the candidate with" in r["task"]
            and r["status"] == "ok"] == [("twin-1", "pass")]

    history = run_on_fleet(fleet, "history.yml", reports, limit="twin-1")
    assert history.rc == 0, history.stdout[-3000:] + history.stderr
    [shown] = [r for r in history.results if r["task"] == "Show the history"]
    assert shown["host"] == "twin-1" and "1 runs" in " ".join(shown["result"]["msg"][:2]), shown["result"]["msg"]

    cleanup = run_on_fleet(fleet, "cleanup.yml", reports, {"all_runs": True}, limit="twin-1", check=True)
    assert cleanup.rc == 0, cleanup.stdout[-3000:] + cleanup.stderr
    assert hosts_of(cleanup) == {"twin-1"} and any("Delete the run" in r["task"] for r in cleanup.results)
