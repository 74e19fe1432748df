"""The restart-handshake measurement ends by glusterd's RPC timeout, whatever the peers do.

A fake clock and fake gluster CLIs stand in for the pool: each command costs fake seconds, so a handshake
that never completes (seed 003's failure at ~2000 volumes) runs through its 600 s in microseconds.
"""
from __future__ import annotations

import pytest
import yaml

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import handshake as H
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.modules import gluster_handshake_bench

RESTARTED = "10.244.77.13"


def peer_status(*connected: bool) -> str:
    """`gluster peer status` text as glusterfs 10.3 prints it, one peer per flag."""
    blocks = [f"Hostname: 10.244.77.1{i + 2}\nUuid: 00000000-0000-0000-0000-00000000000{i}\n"
              f"State: Peer in Cluster ({'Connected' if ok else 'Disconnected'})\n" for i, ok in enumerate(connected)]
    return f"Number of Peers: {len(connected)}\n\n" + "\n".join(blocks)


class FakeClock:
    def __init__(self):
        self.t = 5000.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, "slept a negative time"
        self.t += seconds


class FakeCLI:
    """One peer's gluster CLI. `answers(args, t)` gives (rc, out, err) at fake time t; a call costs `cost`
    seconds, or its whole timeout when `hang` (a CLI stuck on a peer that does not answer)."""

    def __init__(self, clock: FakeClock, answers, cost: float = 1.5, hang: bool = False):
        self.clock, self.answers, self.cost, self.hang = clock, answers, cost, hang
        self.timeouts: list[float] = []

    def run(self, *args: str, timeout: float | None = None):
        assert timeout is not None, "every command must carry a timeout"
        self.timeouts.append(timeout)
        self.clock.t += timeout if self.hang else min(self.cost, timeout)
        if self.hang:
            return 124, "", f"timed out after {timeout} s"
        return self.answers(args, self.clock.t)


def never_befriends(args, _t):
    # The restarted peer stays Disconnected on the others; volume status never gets the cluster lock.
    if args[:2] == ("peer", "status"):
        return 0, peer_status(True, False), ""
    if args[:2] == ("volume", "list"):
        return 0, "spbench0001\n", ""
    return 1, "", "Locking failed on 10.244.77.13. Please check log file for details."


def measure(clock: FakeClock, observers: dict, restarted: FakeCLI, **kwargs):
    return H.measure_handshake(restarted, "restart-glusterd", observers, expected_peers=2,
                               status_volume="spbench0001", clock=clock, sleep=clock.sleep,
                               restart=lambda _cmd, _timeout: (0, "", ""), **kwargs)


def test_default_deadline_is_glusterds_rpc_timeout():
    assert H.GLUSTERD_RPC_TIMEOUT == 600
    options = yaml.safe_load(gluster_handshake_bench.DOCUMENTATION)["options"]
    assert options["timeout"]["default"] == H.GLUSTERD_RPC_TIMEOUT


def test_peer_that_never_completes_ends_at_the_rpc_timeout_with_the_reason():
    clock = FakeClock()
    t0 = clock.t
    observers = {name: FakeCLI(clock, never_befriends) for name in ("gluster1", "gluster2", "gluster3")}
    with pytest.raises(H.HandshakeTimeout) as err:
        measure(clock, observers, observers["gluster3"])
    waited = clock.t - t0
    # Ends at the deadline, at most one command's 1 s floor after it; not a poll interval more.
    assert H.GLUSTERD_RPC_TIMEOUT <= waited <= H.GLUSTERD_RPC_TIMEOUT + 1.0
    msg = str(err.value)
    assert "600 s RPC timeout" in msg and "seed 003" in msg
    assert "gluster1" in msg and f"{RESTARTED}: Peer in Cluster (Disconnected)" in msg
    assert "volume status answered=False" in msg
    partial = err.value.partial
    assert partial["rpc_timeout_exceeded"] is True
    assert partial["connected_seconds_by_peer"] == {"gluster1": None, "gluster2": None, "gluster3": None}
    assert partial["volume_list_seconds"] is not None


def test_a_cli_call_that_hangs_is_cut_at_the_deadline():
    clock = FakeClock()
    t0 = clock.t
    stuck = FakeCLI(clock, never_befriends, hang=True)
    with pytest.raises(H.HandshakeTimeout):
        measure(clock, {"gluster1": stuck, "gluster3": FakeCLI(clock, never_befriends)}, stuck)
    assert clock.t - t0 <= H.GLUSTERD_RPC_TIMEOUT + 1.0
    # The first call may take what is left of the deadline, never more.
    assert stuck.timeouts[0] <= H.GLUSTERD_RPC_TIMEOUT


def test_shorter_timeout_says_it_is_the_users_limit_not_the_rpc_timeout():
    clock = FakeClock()
    observers = {"gluster1": FakeCLI(clock, never_befriends)}
    with pytest.raises(H.HandshakeTimeout) as err:
        measure(clock, observers, observers["gluster1"], timeout=60)
    assert "timeout=60" in str(err.value) and "seed 003" not in str(err.value)
    assert err.value.partial["rpc_timeout_exceeded"] is False


def test_pool_whole_again_is_timed_on_the_fake_clock():
    clock = FakeClock()
    t0 = clock.t

    def befriends_after_45s(args, t):
        whole = t - t0 >= 45
        if args[:2] == ("peer", "status"):
            return 0, peer_status(True, whole), ""
        if args[:2] == ("volume", "status"):
            return (0, "Status of volume: spbench0001\n", "") if whole else (1, "", "Locking failed")
        return 0, "spbench0001\n", ""

    observers = {name: FakeCLI(clock, befriends_after_45s, cost=0.05) for name in ("gluster1", "gluster3")}
    result = measure(clock, observers, observers["gluster3"], poll_interval=0.2)
    # Each milestone is seen within one poll round (two peer status calls, a volume status and the sleep).
    assert 45 <= result["handshake_seconds"] <= 45 + 0.2 + 4 * 0.05
    assert result["volume_list_seconds"] < 1


def test_restart_command_that_never_returns_is_a_gluster_error():
    rc, _out, err = H.run_restart("exec sleep 30", timeout=0.5)
    assert rc == 124 and "0.5 s" in err
    clock = FakeClock()
    cli = FakeCLI(clock, never_befriends)
    with pytest.raises(H.GlusterError, match="restart command 'restart-glusterd' failed \\(rc=124\\)"):
        H.measure_handshake(cli, "restart-glusterd", {"gluster1": cli}, 2, None, clock=clock, sleep=clock.sleep,
                            restart=lambda _cmd, _t: (124, "", "did not return within 600 s"))


def test_timed_out_point_is_a_failed_step_with_the_reason_and_the_call_counts():
    from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import report

    reason = "handshake not finished 600 s after the restart, past glusterd's 600 s RPC timeout"
    points = [{"mode": "brick-multiplex off", "volumes": 500, "error": reason,
               "create": {"seconds": 521.1, "created_count": 499, "cli_calls": 999},
               "handshake": {"restart_seconds": 35.0, "polls": 3, "rpc_timeout_exceeded": True}},
              {"mode": "brick-multiplex off", "volumes": 50, "error": "",
               "create": {"seconds": 20.0, "created_count": 50, "cli_calls": 101},
               "handshake": {"handshake_seconds": 6.2, "polls": 30}}]
    doc = report.build_document(points, [{"name": "brick-multiplex off"}], status="failed", reason=reason,
                                reference=False)
    steps = {s["name"]: s for s in doc["variants"][0]["runs"][0]["steps"]}
    assert steps["handshake_500"]["status"] == "failed" and reason in steps["handshake_500"]["reason"]
    assert steps["handshake_500"]["metrics"]["create_cli_calls"] == 999
    assert steps["handshake_50"]["status"] == "ok" and steps["handshake_50"]["metrics"]["handshake_polls"] == 30


def test_summary_shows_no_create_time_where_every_volume_existed():
    from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import report

    points = [{"mode": "brick-multiplex on", "volumes": 2000, "create": {"seconds": 0.0, "created_count": 0},
               "handshake": {"handshake_seconds": 14.0}},
              {"mode": "brick-multiplex on", "volumes": 1000, "create": {"seconds": 54.6, "created_count": 999},
               "handshake": {"handshake_seconds": 9.3}}]
    doc = report.build_document(points, [{"name": "brick-multiplex on"}], reference=False)
    # the shared renderer's handshake table (report/parameter_table.py), from the document
    table = R.to_markdown(doc).split("### Against volumes")[1].split("###")[0]
    assert "| Variant | volumes | handshake | create (this step) |" in table, table
    assert "| brick-multiplex on | 2000 | 14s | — |\n" in table, table
    assert "| 55s |" in table and "µs" not in table, table
    assert {r["volumes"]: r["create_seconds"] for r in report.summary_rows(doc)} == {1000: 54.6, 2000: None}
