"""kill -9 of ansible-playbook mid-benchmark (a lost AWX execution node): the run's processes stop, issue 42.

SIGKILL reaches ansible-playbook alone: its workers (each in a session of its own) and the bench_measure module under
them are not signalled and run on, re-parented. The module's watchdog (plugins/module_utils/common/controller.py)
sees its controller gone and interrupts it as Ctrl-C would: the repetition is written as interrupted, the objects
keep their run-id label for playbooks/cleanup.yml, and no process of the run is left.
"""
from __future__ import annotations

import json
import os
import signal
import time

from tests.functional.test_cleanup_live_run import CLEANUP, RUN_LABEL, run_objects, start_benchmark, wait_for_lease
from tests.support.processes import Processes, descendants

BOUND = 10.0  # issue 42: a module whose ansible-playbook is gone stops within 10 s


def test_killing_ansible_playbook_stops_the_benchmark_and_leaves_it_for_cleanup(twin, tmp_path):
    # hold the run in its first step: with the provisioner stalled the PVCs stay Pending, so the repetition cannot
    # end before the kill, however fast the machine
    twin.twin_cmd("fault", "--name", "stall:csi-provisioner", "--rule", "{}")
    proc = start_benchmark(twin, tmp_path / "reports")
    run = Processes({})
    try:
        # measuring: the repetition's Lease is taken right after its namespace, seen on a watch
        run_id = wait_for_lease(twin)["metadata"]["labels"][RUN_LABEL]
        run = Processes(descendants(proc.pid))
        assert any("bench_measure" in line for line in run.lines.values()), run.lines
        os.kill(proc.pid, signal.SIGKILL)  # ansible-playbook only, as a lost execution node
        killed = time.monotonic()
        left = run.wait(killed + BOUND)
        print("the run's %d processes ended %.1f s after the kill" % (len(run.lines), time.monotonic() - killed))
        assert left == {}, "still running %s s after ansible-playbook died: %s" % (BOUND, left)
    finally:
        run.kill()  # what is left when the test failed: never a run measuring on into the next test
        proc.kill()
        proc.wait()
        twin.twin_cmd("fault", "--clear", "--name", "stall:csi-provisioner")

    doc = json.loads((tmp_path / "reports" / "localhost" / run_id / "result.json").read_text())
    [rep] = doc["variants"][0]["runs"]
    assert rep["status"] == "interrupted" and "KeyboardInterrupt" in rep["reason"], rep
    assert doc["status"] == "interrupted", "a killed run's document never claims to be complete"
    objects = run_objects(twin, run_id)
    assert objects["namespaces"] and objects["pvcs"], "the interrupted run's objects, labelled with its run id"
    assert objects["leases"] == [], "the module released its Lease: a cleanup of every run need not wait for expiry"

    cleanup = twin.playbook(CLEANUP, extra_vars={"run_id": run_id})
    assert cleanup.rc == 0, cleanup.stdout[-3000:]
    assert cleanup.task("Delete the run's objects")["result"]["found"]["Namespace"] == objects["namespaces"]
    assert run_objects(twin, run_id) == {"namespaces": [], "pvcs": [], "leases": []}
