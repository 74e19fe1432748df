"""The processes of a run, found and held so that a test can kill its controller and wait for the rest to end.

ansible-core 2.19 starts each worker in a session of its own, so a run's processes are found through their parents
(descendants) before the controller is killed, and held by pidfds: neither a wait nor a kill can reach another
process under a reused pid.
"""
from __future__ import annotations

import os
import select
import signal
import time
from pathlib import Path

from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as C


def descendants(pid: int) -> dict[int, str]:
    """{pid: command line} of every process under pid (the workers and modules of an ansible-playbook)."""
    children: dict[int, list[int]] = {}
    for proc_dir in Path("/proc").glob("[0-9]*"):
        read = C.stat(int(proc_dir.name))
        if read is not None:  # else ended meanwhile
            children.setdefault(read[1], []).append(int(proc_dir.name))
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            found[child] = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        todo += children.get(child, [])
    return found


class Processes:
    """Processes held by pidfds, so that neither a wait nor a kill can reach another process under a reused pid."""

    def __init__(self, pids: dict[int, str]) -> None:
        self.lines = pids
        self.fds: dict[int, int] = {}
        for pid in pids:
            try:
                self.fds[os.pidfd_open(pid)] = pid
            except ProcessLookupError:
                continue  # ended meanwhile

    def wait(self, deadline: float) -> dict[int, str]:
        """Wait for every exit (a pidfd turns readable when its process ends, reaped or not); those still running."""
        while self.fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(self.fds), [], [], max(0.0, deadline - time.monotonic()))
            for fd in ready:
                os.close(fd)
                del self.fds[fd]
        return {pid: self.lines[pid] for pid in sorted(self.fds.values())}

    def kill(self) -> None:
        for fd in self.fds:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            os.close(fd)
        self.fds = {}


def with_argument(text: str) -> dict[int, str]:
    """{pid: command line} of the processes whose command line holds text (a run's own paths: a process that
    outlived its parent, such as a rollout's lease renewer, is no one's descendant any more)."""
    found: dict[int, str] = {}
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            line = (proc_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in line and int(proc_dir.name) != os.getpid():
            found[int(proc_dir.name)] = line
    return found
