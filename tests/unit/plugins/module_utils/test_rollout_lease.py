"""rollout/lease.py: one run at a time per rollout; a killed run's lease expires and is taken over, recorded."""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as C
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import lease as L

T0 = datetime.datetime(2026, 12, 7, 12, 0, 0, tzinfo=datetime.UTC)


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += datetime.timedelta(seconds=seconds)


def me():
    """This test process as a controller identity (alive while the test runs)."""
    stat = C.stat(os.getpid())
    return {"pid": os.getpid(), "start": stat[2], "host": os.uname()[1]}


def dead():
    """A controller that has ended: a process started and reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    ident = {"pid": proc.pid, "start": C.stat(proc.pid)[2] if C.stat(proc.pid) else 0, "host": os.uname()[1]}
    proc.wait()
    return ident


def test_a_second_run_is_refused_naming_the_holder_and_the_expiry(tmp_path):
    clock = Clock()
    first = L.acquire(str(tmp_path), "run-a", me(), 60, now=clock)
    assert first["takeover"] is None and first["lease"]["owner"] == "run-a"
    clock.sleep(10)
    with pytest.raises(L.LeaseHeld) as e:
        L.acquire(str(tmp_path), "run-b", me(), 60, now=clock, sleep=clock.sleep)
    assert "run run-a" in e.value.msg and "pid %d" % os.getpid() in e.value.msg
    assert "2026-12-07T12:01:00" in e.value.hint
    # the holder renews its own lease
    again = L.acquire(str(tmp_path), "run-a", me(), 60, now=clock)
    assert again["lease"]["expires"].startswith("2026-12-07T12:01:10")
    assert again["lease"]["acquired"] == first["lease"]["acquired"]


def test_an_expired_lease_is_taken_over_and_the_takeover_recorded(tmp_path):
    clock = Clock()
    L.acquire(str(tmp_path), "run-a", {"pid": 1, "start": 1, "host": "elsewhere"}, 30, now=clock)
    clock.sleep(31)
    got = L.acquire(str(tmp_path), "run-b", me(), 30, now=clock)
    assert got["takeover"]["from"]["owner"] == "run-a" and got["takeover"]["holder_alive"] is None
    stored = json.loads((tmp_path / "lease.json").read_text())
    assert stored["owner"] == "run-b" and stored["takeovers"] == [got["takeover"]]


def test_the_lease_of_a_dead_run_on_this_host_is_waited_out_then_taken(tmp_path):
    clock = Clock()
    L.acquire(str(tmp_path), "run-a", dead(), 20, now=clock)
    got = L.acquire(str(tmp_path), "run-b", me(), 20, now=clock, sleep=clock.sleep)
    assert got["takeover"]["holder_alive"] is False and 20 <= got["waited_s"] <= 23
    # without waiting, the same lease is refused
    L.release(str(tmp_path), "run-b")
    L.acquire(str(tmp_path), "run-c", dead(), 20, now=clock)
    with pytest.raises(L.LeaseHeld):
        L.acquire(str(tmp_path), "run-d", me(), 20, now=clock, sleep=clock.sleep, wait=False)


def test_release_gives_up_only_ones_own_lease(tmp_path):
    L.acquire(str(tmp_path), "run-a", me(), 60)
    assert L.release(str(tmp_path), "run-b") is False and L.read(str(tmp_path))["owner"] == "run-a"
    assert L.release(str(tmp_path), "run-a") is True and L.read(str(tmp_path)) is None


def test_the_renewer_renews_while_its_controller_lives_and_ends_with_it(tmp_path):
    # a stand-in controller: a process that lives until its stdin closes
    holder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        ctl = {"pid": holder.pid, "start": C.stat(holder.pid)[2], "host": os.uname()[1]}
        first = L.acquire(str(tmp_path), "run-a", ctl, 5)["lease"]
        renewer = L.start_renewer(str(tmp_path), "run-a", ctl, 5)
        # renewed every max(1, ttl/4) s: wait for the file to change (the renewer's own event), bounded
        deadline = datetime.datetime.now() + datetime.timedelta(seconds=20)
        while L.read(str(tmp_path))["renewed"] == first["renewed"]:
            assert datetime.datetime.now() < deadline, "the lease was not renewed"
            _wait_a_little(0.2)
        assert L.read(str(tmp_path))["expires"] > first["expires"]
    finally:
        holder.stdin.close()
        holder.wait()
    # its controller gone, the renewer ends by itself within a few seconds
    assert _wait_gone(renewer, 15), "the renewer outlived its controller"


def _wait_a_little(seconds):
    import select

    select.select([], [], [], seconds)


def _wait_gone(pid, seconds):
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=seconds)
    while datetime.datetime.now() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done == pid:
            return True
        _wait_a_little(0.2)
    return False
