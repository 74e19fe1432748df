"""The one waiter: retry and poll on a clock the test moves, so no test waits for real."""
import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import waiter
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError, WaitTimeout


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_retry_retries_only_what_retry_on_accepts_and_raises_the_last_error():
    calls = []

    def flaky():
        calls.append(1)
        raise ValueError("conflict %d" % len(calls))

    clock = Clock()
    with pytest.raises(ValueError, match="conflict 3"):
        waiter.retry(flaky, retry_on=lambda e: "conflict" in str(e), attempts=3, sleep=clock.sleep)
    assert len(calls) == 3 and len(clock.sleeps) == 2
    with pytest.raises(KeyError):
        waiter.retry(lambda: {}["x"], retry_on=lambda e: isinstance(e, ValueError), attempts=5, sleep=clock.sleep)
    assert len(clock.sleeps) == 2  # a KeyError is not retried


def test_retry_returns_the_first_success_and_honours_a_longer_delay():
    answers = iter([RuntimeError("busy"), "done"])

    def call():
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return a

    clock = Clock()
    out = waiter.retry(call, retry_on=lambda e: True, attempts=4, sleep=clock.sleep, delay_of=lambda e, d: max(d, 7))
    assert out == "done" and clock.sleeps == [7]


def test_backoff_doubles_up_to_the_cap():
    delays = waiter.backoff(first=1, cap=5, jitter=False)
    assert [next(delays) for _ in range(5)] == [1, 2, 4, 5, 5]
    jittered = waiter.backoff(first=4, cap=4)
    assert all(2 <= next(jittered) <= 4 for _ in range(50))


def test_poll_names_the_predicate_and_keeps_the_last_value_on_timeout():
    clock = Clock()
    seen = iter(range(100))
    ready = waiter.Predicate("addon csi-plugin running", lambda v: v >= 1000)
    with pytest.raises(WaitTimeout) as info:
        waiter.poll(lambda: next(seen), ready, timeout=10, first=1, cap=2, sleep=clock.sleep, clock=clock)
    assert "addon csi-plugin running" in info.value.msg and "10 s" in info.value.msg
    assert isinstance(info.value, StoragePerfError) and info.value.last is not None
    assert clock.now == pytest.approx(10)


def test_poll_returns_as_soon_as_the_predicate_holds():
    clock = Clock()
    seen = iter([1, 2, 3, 4])
    assert waiter.poll(lambda: next(seen), lambda v: v == 3, timeout=60, sleep=clock.sleep, clock=clock) == 3
    assert len(clock.sleeps) == 2
