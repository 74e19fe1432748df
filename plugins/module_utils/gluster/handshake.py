# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time the peer handshake after a glusterd restart, with one monotonic clock.

t0 is taken just before the restart command runs. Then every observer (one gluster CLI per peer) is polled
with `peer status` until it lists the expected number of peers, all Connected; the restarted peer is
polled with `volume list` and `volume status <volume>` until they answer. Each milestone is the first
monotonic time at which it was seen, so the figures carry at most one poll interval of error.

The wait is bounded by glusterd's own RPC timeout: past it, the friend handshake's RPC has expired (seed 003's
failure, where every CLI command then hung), so waiting longer measures nothing and could wait forever.
"""
from __future__ import annotations

import shlex
import subprocess
import time
from typing import Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import Predicate, poll
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    GlusterCLI,
    GlusterError,
    error_text,
    parse_peer_status,
    parse_volume_info,
    parse_volume_list,
)

# glusterd's management RPC frame timeout (rpc-clnt's frame-timeout, 600 s): the "hard timeout of an rpc
# request which is 10 minutes" that seed 003's handshake at ~2000 volumes ran into.
GLUSTERD_RPC_TIMEOUT = 600


class HandshakeTimeout(GlusterError):
    """The pool was not whole by the deadline; `partial` holds the milestones that were reached."""

    def __init__(self, msg: str, partial: dict) -> None:
        super().__init__(msg)
        self.partial = partial


class _PastDeadline(Exception):
    """Internal: the deadline passed between two commands of a poll round."""


def _since(t0: float, t: float | None) -> float | None:
    return None if t is None else round(t - t0, 3)


def run_restart(restart_cmd: str, timeout: float) -> tuple[int, str, str]:
    # A string runs through the shell, as `systemctl restart glusterd` or a wrapper path would be typed.
    try:
        proc = subprocess.run(restart_cmd, shell=True, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 124, "", f"did not return within {timeout} s"
    return proc.returncode, proc.stdout, proc.stderr


def all_connected(peers: list[dict], expected: int) -> bool:
    return len(peers) >= expected and all(p["connected"] for p in peers)


def timeout_message(elapsed: float, timeout: float, waiting: list[str], last_state: dict,
                    list_answered: bool, status_answered: bool) -> str:
    if timeout >= GLUSTERD_RPC_TIMEOUT:
        why = (f"past glusterd's {GLUSTERD_RPC_TIMEOUT} s RPC timeout, so the friend handshake's RPC has expired: "
               "this is seed 003's failure, after which CLI commands hang. Fewer volumes per pool, or "
               "cluster.brick-multiplex on with glusterd.vol_count_per_thread (GlusterFS 7+), shorten the handshake")
    else:
        why = (f"the limit set by timeout={timeout} (glusterd's own RPC timeout is {GLUSTERD_RPC_TIMEOUT} s; "
               "raise timeout up to it to measure longer handshakes)")
    return (f"handshake not finished {elapsed:.0f} s after the restart, {why}. Still waiting: peers not all "
            f"Connected on {waiting or 'none'} (last seen {last_state}); volume list answered={list_answered}; "
            f"volume status answered={status_answered}")


def measure_handshake(restarted: GlusterCLI, restart_cmd: str, observers: dict[str, GlusterCLI],
                      expected_peers: int, status_volume: str | None, timeout: float = GLUSTERD_RPC_TIMEOUT,
                      poll_interval: float = 0.2, clock: Callable[[], float] = time.monotonic,
                      sleep: Callable[[float], None] = time.sleep,
                      restart: Callable[[str, float], tuple[int, str, str]] = run_restart) -> dict:
    """Restart, then poll until the pool is whole again, at most `timeout` seconds after the restart began.

    Raises GlusterError when the restart fails and HandshakeTimeout at the deadline; no single command may
    outlive the deadline by more than a second, so a peer that never answers cannot hold the run.
    """
    t0 = clock()
    deadline = t0 + timeout
    rc, out, err = restart(restart_cmd, timeout)
    t_restart = clock()
    if rc != 0:
        raise GlusterError(f"restart command {restart_cmd!r} failed (rc={rc}): {error_text(out, err)}")

    connected_at: dict[str, float | None] = dict.fromkeys(observers)
    last_state: dict[str, list] = {}
    t_list = t_status = None
    polls = 0

    def left() -> float:
        # What remains of the deadline, at least 1 s for a command started just before it; none after it.
        remaining = deadline - clock()
        if remaining <= 0:
            raise _PastDeadline
        return max(1.0, remaining)

    def poll_round() -> None:
        nonlocal t_list, t_status, polls
        polls += 1
        try:
            for name, cli in observers.items():
                if connected_at[name] is not None:
                    continue
                rc, out, _err = cli.run("peer", "status", timeout=left())
                peers = parse_peer_status(out) if rc == 0 else []
                last_state[name] = [f"{p['hostname']}: {p['state']}" for p in peers] or [f"rc={rc}"]
                if rc == 0 and all_connected(peers, expected_peers):
                    connected_at[name] = clock()
            if t_list is None:
                rc, _out, _err = restarted.run("volume", "list", timeout=left())
                if rc == 0 or "No volumes present" in f"{_out}{_err}":
                    t_list = clock()
            # `volume status` takes the volume lock on every peer: it answers only once the pool is befriended.
            if t_status is None and all(connected_at.values()):
                if status_volume:
                    rc, _out, _err = restarted.run("volume", "status", status_volume, timeout=left())
                    if rc == 0:
                        t_status = clock()
                else:
                    t_status = clock()
        except _PastDeadline:
            pass

    whole = Predicate("pool whole again", lambda _: t_list is not None and t_status is not None
                      and all(connected_at.values()))
    try:
        poll(poll_round, whole, max(0.0, deadline - clock()), first=poll_interval, cap=poll_interval,
             sleep=sleep, clock=clock)
    except WaitTimeout:
        now = clock()
        waiting = [n for n, t in connected_at.items() if t is None]
        partial = {"restart_seconds": _since(t0, t_restart), "volume_list_seconds": _since(t0, t_list),
                   "connected_seconds_by_peer": {n: _since(t0, t) for n, t in connected_at.items()},
                   "waited_seconds": _since(t0, now), "timeout": timeout,
                   "rpc_timeout_seconds": GLUSTERD_RPC_TIMEOUT,
                   "rpc_timeout_exceeded": now - t0 >= GLUSTERD_RPC_TIMEOUT, "polls": polls}
        raise HandshakeTimeout(timeout_message(now - t0, timeout, waiting, last_state, t_list is not None,
                                               t_status is not None), partial) from None

    if t_list is None or t_status is None:  # the poll above ends only once both have their time
        raise AssertionError("handshake poll ended before volume list and volume status answered")
    t_connected = max(t for t in connected_at.values() if t is not None)
    return {
        "restart_seconds": _since(t0, t_restart),
        "peers_connected_seconds": _since(t0, t_connected),
        "volume_list_seconds": _since(t0, t_list),
        "volume_status_seconds": _since(t0, t_status),
        "handshake_seconds": _since(t0, max(t_connected, t_list, t_status)),
        "connected_seconds_by_peer": {n: _since(t0, t) for n, t in connected_at.items()},
        "polls": polls,
    }


def time_volume_info(cli: GlusterCLI, timeout: float) -> dict:
    """One `volume info all` on the restarted peer: the cost of walking every volume's in-memory data."""
    t0 = time.monotonic()
    out = cli.check("volume", "info", "all", timeout=timeout)
    seconds = time.monotonic() - t0
    return {"volume_info_seconds": round(seconds, 3), "volume_info_count": len(parse_volume_info(out))}


def count_volumes(cli: GlusterCLI) -> int:
    rc, out, err = cli.run("volume", "list")
    if rc != 0 and "No volumes present" not in f"{out}{err}":
        raise GlusterError(f"`gluster volume list` failed (rc={rc}): {error_text(out, err)}")
    return len(parse_volume_list(out, err))


def observer_clis(observers: list[dict]) -> dict[str, GlusterCLI]:
    clis = {}
    for obs in observers:
        clis[obs["name"]] = GlusterCLI(shlex.split(obs["cli"]))
    return clis
