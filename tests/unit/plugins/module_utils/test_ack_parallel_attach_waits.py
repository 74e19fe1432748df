"""ParallelAttach's waits on ACK states (common/waiter.poll): the pacing and the errors a timeout becomes.

A fake clock (the sum of the sleeps) moves only when the code sleeps, so the test knows every delay without waiting.
"""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import parallel_attach as PA
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunError

CLUSTER_ID = "c" + "0" * 32


def fake_time():
    """(the sleeps so far, a clock that is their sum, a sleep that records one)."""
    sleeps = []
    return sleeps, lambda: sum(sleeps), sleeps.append


class FakeAck:
    """Addon and node pool states as a list the probes walk through (the last one repeats)."""

    def __init__(self, states):
        self.states = list(states)
        self.reads = 0

    def _next(self):
        self.reads += 1
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def addon(self, name):
        return {"state": self._next(), "feature_gate": "", "config": {}}

    def node_pool_state(self, nodepool_id):
        return self._next()


def runner(states, wait_timeout=600):
    sleeps, clock, sleep = fake_time()
    pa = PA.ParallelAttach(client=None, params={"cluster_id": CLUSTER_ID, "state": "present", "parallel": True, "wait_timeout": wait_timeout},
                           sleep=sleep, clock=clock)
    pa.ack = FakeAck(states)
    return pa, sleeps


def test_settle_polls_with_a_delay_growing_one_and_a_half_times():
    pa, sleeps = runner(["updating"] * 4 + ["active"])
    assert pa.settle("csi-plugin")["state"] == "active"
    assert sleeps == [0.25, 0.375, 0.5625, 0.84375]


def test_settle_times_out_naming_the_state_and_wait_timeout():
    pa, sleeps = runner(["updating"], wait_timeout=5)
    with pytest.raises(PA.AttachError) as caught:
        pa.settle("csi-plugin")
    assert "addon csi-plugin is still updating after 5s" in caught.value.msg and "wait_timeout" in caught.value.msg
    assert sum(sleeps) == pytest.approx(5) and max(sleeps) <= 10.0


def test_a_node_pool_that_stays_busy_is_an_aliyun_timeout():
    pa, _sleeps = runner(["scaling"], wait_timeout=3)
    with pytest.raises(AliyunError) as caught:
        pa.wait_for_pool("np1")
    assert caught.value.code == "Timeout" and "node pool np1 to become active" in caught.value.msg
