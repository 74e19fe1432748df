"""playbooks/rollout.yml killed with SIGKILL at each state of its write-ahead log, as a lost AWX execution node does,
and run again: nothing of the killed run keeps working, and the reruns end every cluster decided, with the Trident
state read back matching each decision and no cluster skipped with the change on (docs/rollout.md, "Interrupted
runs"). Then the rollout's abort rolls back what it changed. Also: a second run of a rollout that is running is
refused (the lease).

The kills are exact: a test-only callback (tests/support/callback_plugins/freeze_at.py) stops ansible-playbook with
SIGSTOP as a named task starts, the test sees it stopped and kills it. The kill during the after-probe does not
freeze: it waits for the probe's namespace on the cluster and kills the controller while bench_measure measures.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.functional.test_rollout import concurrency, decisions, reasons, rollout_doc
from tests.support.fleet import Fleet
from tests.support.fleet_runs import INVENTORY, fleet_env
from tests.support.processes import Processes, descendants, with_argument
from tests.support.twin import CALLBACKS, COLLECTIONS, REPO, VENV_BIN

HOSTS = ["twin-1", "twin-2", "twin-3"]
# a short lease: a rerun after a kill waits this long (at most) for the killed run's lease to expire
EXTRA = {"change": "trident_concurrency", "waves": [1, "100%"], "lease_ttl": 8}


def _command(reports: Path, extra: dict) -> list[str]:
    return [str(VENV_BIN / "ansible-playbook"), str(REPO / "playbooks" / "rollout.yml"), "-i", str(INVENTORY),
            "-e", json.dumps({"reports_dir": str(reports), **EXTRA, **extra})]


def _env(fleet: Fleet, reports: Path, freeze: str = "") -> dict[str, str]:
    env = fleet_env(fleet, reports)
    env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS), ANSIBLE_CALLBACKS_ENABLED="freeze_at",
               FREEZE_AT_TASK=freeze, ANSIBLE_NOCOLOR="1")
    return env


def _wait(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _state(pid: int) -> str:
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except OSError:
        return "gone"


def _record_state(reports: Path, host: str) -> str | None:
    found = list(reports.glob("rollout-*/clusters/%s.json" % host))
    return json.loads(found[0].read_text())["state"] if found else None


def kill_at(fleet: Fleet, reports: Path, freeze: str = "", when=None) -> None:
    """Run the rollout until it stops at task `freeze` (or until when() holds), kill -9 its ansible-playbook, and
    check that every process of that run is gone within 60 s: its workers and modules, and the lease's renewer."""
    proc = subprocess.Popen(_command(reports, {}), cwd=REPO, env=_env(fleet, reports, freeze), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    run = Processes({})
    try:
        if freeze:
            _wait(lambda: _state(proc.pid) in ("T", "Z", "gone"), 600, "the run never reached %r" % freeze)
            assert _state(proc.pid) == "T", proc.communicate()[0][-4000:]
        else:
            _wait(when, 600, "the run never reached the kill point")
        run = Processes({**descendants(proc.pid), **with_argument(str(reports))})
        assert any("-c" in line and str(reports) in line for line in run.lines.values()), run.lines  # the renewer
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = run.wait(time.monotonic() + 60)
        assert left == {}, "processes of the killed run still run 60 s after the kill: %s" % left
    finally:
        run.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _probe_namespace_of(fleet: Fleet, host: str, phase: str):
    """A condition: the cluster holds the namespace of a probe of this phase (its run id says before or after)."""
    def found():
        names = fleet.member(host).kubectl_json("get", "namespaces", "-l", "storageperf.k8s/run-id", "-o", "json")
        return [n for n in names["items"]
                if "-%s-" % phase in n["metadata"]["labels"]["storageperf.k8s/run-id"]] or None
    return found


def rerun(fleet: Fleet, reports: Path, extra: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(reports, extra or {}), cwd=REPO, env=_env(fleet, reports), text=True,
                          capture_output=True, timeout=900)


@pytest.fixture
def fleet(tmp_path_factory):
    # the time scale of test_rollout.py: the modelled time outweighs the harness's own cost (its fixture says why)
    with Fleet(tmp_path_factory.mktemp("rollout-kill"), clusters=3, nodes=2, time_scale=0.03) as f:
        yield f


@pytest.mark.long
def test_killed_at_every_recorded_state_the_reruns_decide_every_cluster(fleet, tmp_path):
    fleet.twin_cmd("settings", "--cluster", "twin-3", "--set", json.dumps({"ontap_serial": True}))
    reports = tmp_path / "reports"
    # 1. after twin-1's baseline: the record says baseline_measured, nothing changed yet
    kill_at(fleet, reports, "Note that the change is being applied")
    assert _record_state(reports, "twin-1") == "baseline_measured"
    assert concurrency(fleet, "twin-1") == (False, "false")
    # 2. during the apply: the change is on, its record says applying
    kill_at(fleet, reports, "Verify what the operator and the controller report")
    assert _record_state(reports, "twin-1") == "applying"
    assert concurrency(fleet, "twin-1") == (True, "true")
    # 3. after the apply, before the after-probe
    kill_at(fleet, reports, "Measure the cluster after the change")
    assert _record_state(reports, "twin-1") == "applied"
    # 4. during the after-probe: killed while bench_measure measures on the cluster
    kill_at(fleet, reports, when=_probe_namespace_of(fleet, "twin-1", "after"))
    assert _record_state(reports, "twin-1") == "applied"
    # 5. after the gate, before the decision is recorded
    kill_at(fleet, reports, "Keep the verdict")
    assert _record_state(reports, "twin-1") == "after_measured"

    done = rerun(fleet, reports)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    doc = rollout_doc(reports)
    assert decisions(doc) == {"twin-1": "promoted", "twin-2": "promoted", "twin-3": "rolled_back"}, reasons(doc)
    assert doc["clusters"]["twin-1"]["resumed_from"] == "after_measured"
    # what each record says is what the cluster reads
    assert [concurrency(fleet, h) for h in HOSTS] == [(True, "true"), (True, "true"), (False, "false")]
    assert doc["clusters"]["twin-3"]["rollback"]["verified"] is True
    # the states twin-1 went through, each written before its step, are in its history
    seen = [h.get("state") for h in doc["clusters"]["twin-1"]["history"]]
    for state in ("baseline_measured", "applying", "applied", "after_measured"):
        assert state in seen, seen
    # the lease: taken over after each kill, and given up by the last run
    assert not list(reports.glob("rollout-*/lease.json"))

    # abort: every cluster the rollout changed is rolled back, read back and recorded aborted; twin-3, rolled
    # back by its gate, is left as it is
    abort = rerun(fleet, reports, {"rollout_action": "abort"})
    assert abort.returncode == 0, abort.stdout[-6000:]
    aborted = rollout_doc(reports)
    assert decisions(aborted) == {"twin-1": "aborted", "twin-2": "aborted", "twin-3": "rolled_back"}, reasons(aborted)
    assert all(aborted["clusters"][h]["rollback"]["verified"] for h in ("twin-1", "twin-2"))
    assert [concurrency(fleet, h) for h in HOSTS] == [(False, "false")] * 3
    assert [w["verdict"] for w in aborted["waves"]] == ["aborted", "done"]


def test_a_second_run_of_a_running_rollout_is_refused(fleet, tmp_path):
    reports = tmp_path / "reports"
    proc = subprocess.Popen(_command(reports, {}), cwd=REPO, env=_env(fleet, reports, "Measure the cluster before"),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(lambda: _state(proc.pid) in ("T", "Z", "gone"), 300, "the first run never reached its baseline")
        assert _state(proc.pid) == "T", proc.communicate()[0][-4000:]
        second = rerun(fleet, reports)
        assert second.returncode != 0
        assert "held by run" in second.stdout and "another run of this rollout is under way" in second.stdout
        assert "pid %d" % proc.pid in second.stdout
    finally:
        proc.kill()
        proc.wait()
