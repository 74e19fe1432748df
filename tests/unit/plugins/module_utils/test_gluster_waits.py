"""The gluster waits and retries go through common/waiter: lock conflicts retried, peers and the restart
handshake polled on a fake clock, so each bound is checked without waiting for it."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import cli as G
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.handshake import HandshakeTimeout, measure_handshake
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.peers import probe_peers
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.volumes import reconcile_volumes

LOCKED = (1, "", "volume set: failed: Another transaction is in progress. Please try again after some time.")


def peer_status(*connected: bool) -> str:
    blocks = [f"Hostname: 10.244.77.1{i + 2}\nUuid: 0000000{i}\nState: Peer in Cluster "
              f"({'Connected' if ok else 'Disconnected'})\n" for i, ok in enumerate(connected)]
    return f"Number of Peers: {len(connected)}\n\n" + "\n".join(blocks)


class FakeClock:
    def __init__(self):
        self.t = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


@pytest.fixture
def answers(monkeypatch):
    """Replace the gluster command: answers[i] is what the i-th call returns (the last one repeats)."""
    calls: list[tuple] = []
    script: list = []

    def run(self, *args, timeout=None):
        calls.append(args)
        answer = script[min(len(calls), len(script)) - 1]
        return answer(args) if callable(answer) else answer

    monkeypatch.setattr(G.GlusterCLI, "run", run)
    return script, calls


def test_check_retries_a_lock_conflict_and_not_another_failure(answers):
    script, calls = answers
    script[:] = [LOCKED, (0, "volume set: success\n", "")]
    assert G.GlusterCLI("gluster").check("volume", "set", "all", "cluster.brick-multiplex", "on", retries=1) \
        == "volume set: success\n"
    assert len(calls) == 2
    script[:] = [(1, "", "volume set: failed: option unknown")]
    calls.clear()
    with pytest.raises(G.GlusterError, match=r"rc=1\): volume set: failed: option unknown"):
        G.GlusterCLI("gluster").check("volume", "set", "all", "x", "1", retries=8)
    assert len(calls) == 1
    script[:] = [LOCKED]
    calls.clear()
    with pytest.raises(G.GlusterError, match="Another transaction"):
        G.GlusterCLI("gluster").check("volume", "set", "all", "x", "1", retries=1)
    assert len(calls) == 2


def peers_params(**over):
    return {"peers": ["10.244.77.11", "10.244.77.12", "10.244.77.13"], "gluster_cli": "gluster",
            "self_address": "10.244.77.11", "wait": True, "wait_timeout": 600, **over}


def test_probe_waits_every_half_second_until_the_peers_are_connected(answers):
    script, calls = answers

    def status_after_probe(args):
        if args[:2] == ("peer", "probe"):
            return 0, "peer probe: success\n", ""
        probes = sum(1 for c in calls if c[:2] == ("peer", "probe"))
        waits = sum(1 for c in calls if c[:2] == ("peer", "status")) - 1
        return 0, peer_status(*[probes == 2 and waits >= 3] * probes), ""

    script[:] = [status_after_probe]
    clock = FakeClock()
    result = probe_peers(peers_params(), sleep=clock.sleep, clock=clock)
    assert result["probed"] == ["10.244.77.12", "10.244.77.13"] and result["changed"] is True
    assert all(p["connected"] for p in result["peers"]) and len(result["peers"]) == 2
    assert clock.slept == [0.5, 0.5]


def test_probe_wait_timeout_names_the_peers_and_keeps_what_was_probed(answers):
    script, _calls = answers

    def probed_then_one_disconnected(args):
        return (0, "peer probe: success\n", "") if args[1] == "probe" else (0, peer_status(True, False), "")

    script[:] = [(0, peer_status(), ""), probed_then_one_disconnected]
    clock = FakeClock()
    with pytest.raises(G.GlusterError) as err:
        probe_peers(peers_params(wait_timeout=30), sleep=clock.sleep, clock=clock)
    assert "peers not all Connected after 30 s" in str(err.value)
    assert "('10.244.77.13', 'Peer in Cluster (Disconnected)')" in str(err.value)
    assert err.value.result["probed"] == ["10.244.77.12", "10.244.77.13"]
    assert 30 <= clock.t - 1000.0 <= 30.5


def test_probe_without_wait_reads_the_pool_once(answers):
    script, calls = answers
    script[:] = [(0, peer_status(True, True), "")]
    result = probe_peers(peers_params(peers=["10.244.77.12", "10.244.77.13"], wait=False))
    assert result["changed"] is False and calls == [("peer", "status")]


class FakeCLI:
    def __init__(self, clock: FakeClock, answer, cost: float = 0.05):
        self.clock, self.answer, self.cost = clock, answer, cost

    def run(self, *args, timeout=None):
        self.clock.t += self.cost
        return self.answer(args, self.clock.t)


def test_handshake_milestones_on_the_fake_clock():
    clock = FakeClock()
    t0 = clock.t

    def whole_after_45s(args, t):
        whole = t - t0 >= 45
        if args[:2] == ("peer", "status"):
            return 0, peer_status(True, whole), ""
        if args[:2] == ("volume", "status"):
            return (0, "Status of volume: v1\n", "") if whole else (1, "", "Locking failed")
        return 0, "v1\n", ""

    observers = {name: FakeCLI(clock, whole_after_45s) for name in ("gluster1", "gluster3")}
    result = measure_handshake(observers["gluster3"], "true", observers, 2, "v1", 600, 0.2,
                               clock=clock, sleep=clock.sleep)
    assert 45 <= result["handshake_seconds"] <= 45 + 0.2 + 4 * 0.05
    assert result["volume_list_seconds"] < 1 and result["polls"] >= 45 / 0.4
    assert set(clock.slept) == {0.2}


def test_handshake_timeout_says_how_far_the_pool_got():
    clock = FakeClock()
    t0 = clock.t
    never = FakeCLI(clock, lambda args, _t: (0, peer_status(True, False), "") if args[0] == "peer" else
                    (0, "v1\n", ""))
    with pytest.raises(HandshakeTimeout) as err:
        measure_handshake(never, "true", {"gluster1": never}, 2, "v1", 60, 0.2, clock=clock, sleep=clock.sleep)
    msg = str(err.value)
    assert "handshake not finished 60 s after the restart" in msg and "['gluster1']" in msg
    assert err.value.partial["rpc_timeout_exceeded"] is False and err.value.partial["timeout"] == 60
    assert "volume list answered=True; volume status answered=False" in msg
    assert 60 <= clock.t - t0 <= 60 + 0.2 + 2 * 0.05


def test_reconcile_volumes_refuses_bad_input_before_any_command(answers):
    _script, calls = answers
    p = {"names": None, "prefix": "bench", "count": 5, "start_index": 1, "replica": 2,
         "peers": ["a", "b", "c"], "bricks_root": "/b", "bricks_roots": None, "state": "present", "start": True,
         "force": True, "options": {}, "parallel": 4, "gluster_cli": "gluster", "timeout": 600}
    with pytest.raises(G.GlusterError, match="peers has 3 addresses, not a multiple of replica=2") as err:
        reconcile_volumes(p)
    assert err.value.details["errors"] and calls == []
