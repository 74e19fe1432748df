# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ansible-playbook that runs this module, and whether it still lives.

A module on the local connection runs as `/bin/sh -c '... python AnsiballZ_x.py'`, child of a worker that
ansible-playbook forked for the task. A SIGKILL of ansible-playbook (a lost AWX execution node, kill -9) signals
neither the worker nor the module: both run on, re-parented to PID 1, and a benchmark would measure to its end.
So the module finds its controller among its ancestors and watches it:

    me = controller()            # {"pid": 4711, "start": 1234567, "host": "awx-ee-1"}, or None
    alive(me)                    # False once that process is gone (or a zombie, or its pid taken by another)
    watchdog(me, on_gone)        # a daemon thread calling on_gone() once, within ~interval s of the death
    orphaned(forks())            # the on_gone of a module: its worker killed, the module interrupted

The worker must go too: orphaned, it does not end when its module does. It hands the module's result to the dead
controller's result queue, whose read end its sibling workers still hold open, so a result larger than the pipe
blocks it for good (tests/functional/test_rollout_interrupted.py found one 60 s after the kill).

The controller is the topmost of the consecutive ancestors whose command line is ansible-playbook (or ansible,
ansible-console): the workers are forks of it and share its command line, and ansible-runner (AWX) starts
ansible-playbook as a process of its own, which is the one to watch. A process is named by pid and start time
(field 22 of /proc/<pid>/stat, clock ticks since boot), so a pid reused by another process is not taken for life.

Linux only: where there is no /proc (macOS), or the module was not started by Ansible (run by hand, unit tests, an
async task, whose wrapper detaches from the worker), controller() is None and there is no watchdog.
"""
from __future__ import annotations

import os
import signal
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

# what argv[0] (or the script after the interpreter) is called for an Ansible controller process
CONTROLLERS = frozenset(("ansible-playbook", "ansible", "ansible-console"))
# a process tree deeper than this between a module and its controller is not Ansible's
MAX_DEPTH = 32
# how often the watchdog looks: the death is noticed within this, well inside the 10 s a module has to stop
INTERVAL = 1.0

Identity = Dict[str, Any]


def stat(pid: int, proc: str = "/proc") -> Optional[Tuple[str, int, int]]:
    """(state, ppid, start) of pid, or None when it is gone; the command name in parentheses may hold spaces."""
    try:
        with open("%s/%d/stat" % (proc, pid), "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the name: state (field 3), ppid (4) ... starttime (22)
    return fields[0].decode(), int(fields[1]), int(fields[19])


def _argv(pid: int, proc: str = "/proc") -> List[str]:
    try:
        with open("%s/%d/cmdline" % (proc, pid), "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def is_controller(argv: List[str]) -> bool:
    """Whether a command line is an Ansible controller's: `ansible-playbook ...` or `python .../ansible-playbook ...`."""
    names = [os.path.basename(a) for a in argv[:2]]
    if not names:
        return False
    if names[0] in CONTROLLERS:
        return True
    return names[0].startswith("python") and len(names) > 1 and names[1] in CONTROLLERS


def _chain(pid: Optional[int], proc: str) -> List[Identity]:
    """The consecutive ancestors of pid whose command line is a controller's, nearest first: the workers, then the
    controller itself at the top."""
    here = stat(os.getpid() if pid is None else pid, proc)
    if here is None:  # no /proc: not Linux
        return []
    found: List[Identity] = []
    parent = here[1]
    for _ in range(MAX_DEPTH):
        if parent < 1:  # above PID 1 (which may be ansible-playbook itself, in a container without an init)
            break
        read = stat(parent, proc)
        if read is None:
            break
        if is_controller(_argv(parent, proc)):
            found.append({"pid": parent, "start": read[2], "host": os.uname()[1]})
        elif found:
            break  # the first non-controller above the chain (a shell, ansible-runner): the chain's top is found
        parent = read[1]
    return found


def controller(pid: Optional[int] = None, proc: str = "/proc") -> Optional[Identity]:
    """The identity {pid, start, host} of the controller that runs process pid (default: this one), or None."""
    found = _chain(pid, proc)
    return found[-1] if found else None


def forks(pid: Optional[int] = None, proc: str = "/proc") -> List[Identity]:
    """The identities of the workers between process pid (default: this one) and its controller: the forks of
    ansible-playbook that run it."""
    return _chain(pid, proc)[:-1]


def alive(identity: Identity, proc: str = "/proc") -> bool:
    """Whether the process of identity still runs: same pid, same start time, not a zombie.

    Only this machine's processes can be read: an identity of another host raises ValueError (a lease held from
    another machine is judged by its expiry).
    """
    if identity.get("host") != os.uname()[1]:
        raise ValueError("controller %s runs on host %s, not on this one (%s): its life cannot be read here"
                         % (identity.get("pid"), identity.get("host"), os.uname()[1]))
    read = stat(int(identity["pid"]), proc)
    # Z: killed and not yet reaped by its parent; X: being removed
    return read is not None and read[2] == int(identity["start"]) and read[0] not in ("Z", "X")


def interrupt_main() -> None:
    """What Ctrl-C or an AWX cancel does to a module: SIGTERM, to the main thread so that a wait it sleeps in is cut
    short. A module with a handler (bench_measure records the repetition as interrupted) ends through it; one
    without ends at once."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)


def orphaned(workers: List[Identity], proc: str = "/proc") -> None:
    """What a module does once its controller is gone: SIGKILL its workers (each only while it is the process that
    was named, never a pid reused since), then interrupt_main(). The module's own clean-up needs no worker; what it
    prints at the end goes nowhere."""
    for worker in workers:
        if alive(worker, proc):
            try:
                os.kill(int(worker["pid"]), signal.SIGKILL)
            except ProcessLookupError:
                pass  # ended between the look and the kill
    interrupt_main()


def watchdog(identity: Identity, on_gone: Callable[[], None] = interrupt_main, interval: float = INTERVAL,
             proc: str = "/proc") -> threading.Event:
    """Call on_gone() once, from a daemon thread, when the controller of identity is gone. Set the returned Event to
    stop watching."""
    stop = threading.Event()

    def watch() -> None:
        # SIGINT/SIGTERM (Ctrl-C, an AWX cancel) are for the main thread, whose handler ends the module's work
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while not stop.wait(interval):
            if not alive(identity, proc):
                on_gone()
                return

    threading.Thread(target=watch, name="storageperf-controller-watchdog", daemon=True).start()
    return stop
