"""common/controller.py on real process trees: the module finds its ansible-playbook and stops when it is killed.

The tree is Ansible's: a process whose command line is `python .../ansible-playbook` forks a worker (same command
line), whose `/bin/sh -c` runs the module. kill -9 of the top leaves the worker and the module orphaned, as a lost
AWX execution node does; the module's watchdog must end it within the 10 s issue 42 allows.
"""
from __future__ import annotations

import json
import os
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as C

# the collections/ root that holds ansible_collections/, for the module processes of the tree
COLLECTIONS_ROOT = str(Path(C.__file__).resolve().parents[6])
BOUND = 10.0  # issue 42: a module whose ansible-playbook is gone stops within 10 s

PLAYBOOK = """\
import os, subprocess, sys, threading
# the worker: a fork, so its command line is the playbook's; it runs the module through /bin/sh as Ansible does
worker = os.fork()
if worker == 0:
    rc = subprocess.run(["/bin/sh", "-c", "%s %s && true" % (sys.executable, " ".join(sys.argv[1:]))]).returncode
    if "stuck" in sys.argv:
        # Ansible's worker of a killed controller: blocked handing the result to a queue nobody reads
        threading.Event().wait()
    os._exit(rc)
os.waitpid(worker, 0)
"""

MODULE = """\
import json, signal, sys, threading
from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as C

def interrupted(signum, frame):
    # what bench_measure does with SIGTERM: record the repetition as interrupted, then leave
    print("interrupted", flush=True)
    sys.exit(3)

if "handler" in sys.argv:
    signal.signal(signal.SIGTERM, interrupted)
me = C.controller()
workers = C.forks()
print(json.dumps({"controller": me, "workers": workers}), flush=True)
if me is None:
    sys.exit(0)
C.watchdog(me, lambda: C.orphaned(workers))  # as the module base does
threading.Event().wait()  # the module's work: a wait with no end, which only the watchdog cuts short
"""


def tree(tmp_path: Path, top_name: str, *module_args: str) -> subprocess.Popen:
    """Start `python <tmp>/<top_name> module.py`: the top, its forked worker, /bin/sh, the module (`module.py handler`:
    one with a SIGTERM handler)."""
    top = tmp_path / top_name
    top.write_text(PLAYBOOK)
    module = tmp_path / "module.py"
    module.write_text(MODULE)
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_ROOT)
    # a process group of its own, so that a failed test ends the whole tree (killpg), not the top alone
    return subprocess.Popen([sys.executable, str(top), str(module), *module_args], stdout=subprocess.PIPE, env=env,
                            text=True, start_new_session=True)


def end(top: subprocess.Popen) -> None:
    """End whatever is left of the tree (only after a failure, or the top alone), then reap the top."""
    try:
        os.killpg(top.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the whole group has ended
    top.wait()


def ended(identity: dict, deadline: float) -> bool:
    """Whether the process of identity has ended by the deadline."""
    try:
        fd = os.pidfd_open(identity["pid"])
    except ProcessLookupError:
        return True
    try:
        # the pid may have been taken by another process between the look and the open
        return not C.alive(identity) or bool(select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0])
    finally:
        os.close(fd)


def read_to_end(stream, deadline: float) -> str:
    """Everything the tree still writes, until every process holding the pipe has ended (EOF), or the deadline."""
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    out = []
    while True:
        left = deadline - time.monotonic()
        assert left > 0 and sel.select(left), "the tree was still running %s s after its controller died" % BOUND
        line = stream.readline()
        if not line:
            return "".join(out)
        out.append(line)


@pytest.mark.parametrize("handler, stuck", [(True, False), (False, False), (True, True)],
                         ids=["with a SIGTERM handler", "without", "whose worker would stay"])
def test_a_module_and_its_worker_stop_within_the_bound_once_its_ansible_playbook_is_killed(tmp_path, handler, stuck):
    top = tree(tmp_path, "ansible-playbook", *(["handler"] if handler else []), *(["stuck"] if stuck else []))
    try:
        found = json.loads(top.stdout.readline())
        me, workers = found["controller"], found["workers"]
        # the topmost of the chain: the playbook itself, not its worker (a fork with the same command line)
        assert me["pid"] == top.pid and me["host"] == os.uname()[1]
        assert me["start"] == C.stat(top.pid)[2] and C.alive(me)
        [worker] = workers
        assert worker["pid"] != top.pid and C.stat(worker["pid"])[1] == top.pid and C.alive(worker)
        os.kill(top.pid, signal.SIGKILL)
        killed = time.monotonic()
        # not reaped yet: the dead controller is a zombie, which must not count as alive
        rest = read_to_end(top.stdout, killed + BOUND)  # EOF: the worker has let go of the pipe too
        assert not C.alive(me)
        # a process closes its files a moment before it has ended: its end is waited for (a pidfd turns readable)
        assert ended(worker, killed + BOUND), "the worker was still running %s s after its controller died" % BOUND
    finally:
        end(top)
    # bench_measure's handler records the repetition as interrupted; a module without one just ends
    assert rest == ("interrupted\n" if handler else "")


def test_a_process_not_run_by_ansible_has_no_controller(tmp_path):
    top = tree(tmp_path, "make")
    try:
        assert json.loads(top.stdout.readline()) == {"controller": None, "workers": []}
        assert read_to_end(top.stdout, time.monotonic() + BOUND) == ""  # no watchdog: the module just ends
    finally:
        end(top)


def test_pid_reuse_is_not_taken_for_life():
    me = {"pid": os.getpid(), "start": C.stat(os.getpid())[2], "host": os.uname()[1]}
    assert C.alive(me)
    assert not C.alive(dict(me, start=me["start"] + 1)), "another process under the same pid"


def test_a_controller_of_another_host_is_refused_by_name():
    with pytest.raises(ValueError, match="runs on host elsewhere-1, not on this one"):
        C.alive({"pid": os.getpid(), "start": 1, "host": "elsewhere-1"})


def test_without_proc_there_is_no_controller_and_no_watchdog(tmp_path):
    # macOS: no /proc
    assert C.controller(proc=str(tmp_path)) is None


@pytest.mark.parametrize("argv, expected", [
    (["/venv/bin/python3.11", "/venv/bin/ansible-playbook", "-i", "inv", "site.yml"], True),
    (["/usr/bin/ansible-playbook", "site.yml"], True),
    (["python3", "/usr/local/bin/ansible", "localhost", "-m", "ping"], True),
    (["/usr/bin/ansible-runner", "run", "/runner"], False),  # AWX's runner: its ansible-playbook is the controller
    (["/bin/sh", "-c", "ansible-playbook site.yml"], False),
    (["python3", "-m", "pytest"], False),
    ([], False),
])
def test_what_counts_as_a_controller_command_line(argv, expected):
    assert C.is_controller(argv) is expected


def test_the_watchdog_calls_on_gone_from_its_thread_once_the_process_is_gone():
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    me = {"pid": ended.pid, "start": C.stat(ended.pid)[2], "host": os.uname()[1]}
    ended.wait()
    gone = threading.Event()
    C.watchdog(me, gone.set, interval=0.05)
    assert gone.wait(BOUND)
