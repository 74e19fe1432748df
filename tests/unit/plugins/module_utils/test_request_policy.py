"""The one request policy: Retry-After, backoff, the per-run retry budget and unreachable as a state."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import request_policy as rp


class Clock:
    def __init__(self):
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def policy(clock, attempts=10, **health):
    return rp.RequestPolicy(rp.Health(clock=clock, **health), attempts=attempts, sleep=clock.sleep)


def judge(result, exc):
    if exc is not None:
        return rp.Verdict(answered=False, retry=isinstance(exc, ConnectionError))
    status, retry_after = result
    return rp.Verdict(answered=True, retry=status in (429, 500), status=status, retry_after=retry_after)


def answers(*items):
    it = iter(items)

    def send():
        item = next(it)
        if isinstance(item, Exception):
            raise item
        return item
    return send


def test_a_429_waits_for_its_retry_after_and_a_500_backs_off_with_jitter():
    clock = Clock()
    out = policy(clock).call(answers((429, 3.0), (500, None), (200, None)), judge, "https://api", "GET /api/v1/nodes")
    assert out == (200, None)
    assert clock.sleeps[0] == 3.0
    assert 0.2 <= clock.sleeps[1] <= 0.4  # the second backoff step, 0.4 s with equal jitter


def test_retry_after_is_capped():
    clock = Clock()
    policy(clock).call(answers((429, 3600.0), (200, None)), judge, "https://api", "GET /x")
    assert clock.sleeps == [rp.RETRY_AFTER_CAP]


def test_giving_up_names_the_request_its_last_status_and_the_tries():
    clock = Clock()
    with pytest.raises(rp.GiveUp) as e:
        policy(clock, attempts=3).call(answers((500, None), (500, None), (429, 1.0)), judge, "https://api", "POST /p")
    assert e.value.msg == "POST /p at https://api failed after 3 tries, last: 429"
    assert e.value.details["status"] == 429 and e.value.details["tries"] == 3


def test_errors_that_are_not_retried_pass_through_unchanged():
    clock = Clock()
    with pytest.raises(KeyError):
        policy(clock).call(answers(KeyError("x")), judge, "https://api", "GET /x")
    assert policy(clock).call(answers((404, None)), judge, "https://api", "GET /x") == (404, None)
    assert clock.sleeps == []


def test_a_storm_of_under_half_failures_is_ridden_out_by_the_budget():
    clock = Clock()
    p = policy(clock)
    # 40 % of all tries fail, for 1000 requests: the budget never runs dry
    for i in range(1000):
        send = answers((429, 0.0), (200, None)) if i % 3 == 0 else answers((200, None))
        p.call(send, judge, "https://api", "GET /x")
    assert p.health.gave_up == 0 and p.health.retries == 334


def test_a_server_failing_most_tries_spends_the_budget_and_the_run_stops():
    clock = Clock()
    p = policy(clock)
    gave_up = 0
    for _ in range(30):
        try:
            p.call(answers(*[(500, None)] * 10), judge, "https://api", "GET /x")
        except rp.GiveUp as e:
            gave_up += 1
            last = e
    # 50 failed tries bring the 100 tokens to half (5 requests of 10 tries, 45 of them retries): retries stop,
    # and every later request fails at its first try
    assert p.health.retries == 45 and gave_up == 30
    assert "retry budget is spent" in last.msg and last.details["tries"] == 1


def test_a_server_that_stops_answering_is_unreachable_after_the_threshold_not_after_all_tries():
    clock = Clock()
    p = policy(clock, attempts=100, unreachable_after=20)
    p.call(answers((200, None)), judge, "https://api", "GET /ok")
    clock.now += 5  # the last answer was at 1000, the server died right after
    with pytest.raises(rp.ServerUnreachable) as e:
        p.call(answers(*[ConnectionRefusedError("refused")] * 100), judge, "https://api", "GET /x")
    # noticed once 20 s had passed since the first try that got no answer, within one backoff step
    assert 20 <= clock.now - 1005 <= 25
    assert e.value.msg.startswith("the server at https://api stopped answering: nothing but ConnectionRefusedError: "
                                  "refused for 2")
    assert e.value.details["since"] == p.health.last_answer_iso()


def test_a_server_that_never_answered_cannot_be_reached():
    clock = Clock()
    p = rp.RequestPolicy(rp.Health(clock=clock), attempts=100, sleep=clock.sleep, system="the Kubernetes API")
    with pytest.raises(rp.ServerUnreachable) as e:
        p.call(answers(*[ConnectionRefusedError("refused")] * 100), judge, "https://api", "GET /version")
    assert e.value.msg.startswith("cannot reach the Kubernetes API at https://api: nothing but")
    assert e.value.msg.endswith("while sending GET /version") and e.value.details["since"] is None


def test_an_answer_resets_the_silence_and_a_new_request_fails_fast_once_unreachable():
    clock = Clock()
    p = policy(clock, unreachable_after=20)
    p.call(answers(ConnectionResetError("reset"), (200, None)), judge, "https://api", "GET /x")
    assert p.health.silent_for() == 0
    clock.now += 100  # a quiet spell is not silence: only tries that got no answer count
    with pytest.raises(rp.ServerUnreachable):
        rp.RequestPolicy(p.health, attempts=100, sleep=clock.sleep).call(
            answers(*[ConnectionRefusedError()] * 100), judge, "https://api", "GET /a")
    assert 20 <= p.health.silent_for() <= 25
    tries = []

    def counted():
        tries.append(1)
        raise ConnectionRefusedError()
    with pytest.raises(rp.ServerUnreachable):
        p.call(counted, judge, "https://api", "GET /b")
    assert len(tries) == 1


def test_retry_after_values():
    assert rp.parse_retry_after("1") == 1.0 and rp.parse_retry_after(" 2.5 ") == 2.5
    assert rp.parse_retry_after(None) is None and rp.parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert rp.parse_retry_after("-1") is None
