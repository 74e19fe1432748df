# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one waiter: deadlines, capped exponential backoff, retries and polls with named predicates.

Waits that can watch do so (k8s/watch_wait.py wait_for reads watch events); this module holds what
every wait shares: the deadline, the backoff between attempts, and the one WaitTimeout error.
A predicate is a named callable so that a timeout says what was awaited ("Deployment rolled out"),
never only "condition not met".
"""
from __future__ import annotations

import random
import time
from typing import Any, Callable, Iterator, TypeVar

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import WaitTimeout

# The one default for every module's wait_timeout (doc fragment storageperf.k8s.wait).
DEFAULT_WAIT_TIMEOUT = 600

T = TypeVar("T")


class Predicate:
    """A test on what a probe returned, with the name a timeout message uses."""

    def __init__(self, name: str, test: Callable[[Any], object]) -> None:
        self.name = name
        self.test = test

    def __call__(self, value: Any) -> object:
        return self.test(value)

    def __repr__(self) -> str:
        return "Predicate(%r)" % self.name


class Deadline:
    """A point in monotonic time; clock is injectable so tests move time themselves."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.timeout = timeout
        self.at = clock() + timeout

    def remaining(self) -> float:
        return self.at - self.clock()

    def passed(self) -> bool:
        return self.remaining() <= 0


def backoff(first: float = 0.2, cap: float = 5.0, factor: float = 2.0, jitter: bool = True) -> Iterator[float]:
    """Endless delays: first, first*factor, ... capped; with jitter each is drawn from [d/2, d] (AWS's 'equal jitter')."""
    delay = first
    while True:
        yield delay * (0.5 + random.random() / 2) if jitter else delay
        delay = min(delay * factor, cap)


def retry(call: Callable[[], T], retry_on: Callable[[Exception], object], attempts: int, first: float = 0.2, cap: float = 5.0,
          sleep: Callable[[float], None] = time.sleep, on_retry: Callable[[Exception, int], None] | None = None,
          delay_of: Callable[[Exception, float], float] | None = None) -> T:
    """call() until it returns, retrying when retry_on(exc) is true; at most "attempts" calls in all.

    delay_of(exc, planned) may lengthen a delay (Retry-After); on_retry(exc, attempt) counts retries.
    The last exception is raised unchanged, so callers keep their own error types.
    """
    delays = backoff(first, cap)
    for attempt in range(1, max(1, attempts) + 1):
        try:
            return call()
        except Exception as exc:  # re-raised below unless retry_on accepts it
            if attempt >= attempts or not retry_on(exc):
                raise
            planned = next(delays)
            if delay_of is not None:
                planned = delay_of(exc, planned)
            if on_retry is not None:
                on_retry(exc, attempt)
            sleep(planned)
    raise AssertionError("unreachable")  # pragma: no cover


def poll(probe: Callable[[], T], predicate: Callable[[T], object], timeout: float, what: str | None = None, first: float = 0.5,
         cap: float = 5.0, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
         factor: float = 2.0) -> T:
    """probe() until predicate(value) holds; returns that value or raises WaitTimeout with the last value.

    For states no watch shows (a cloud API, a CLI): the delay grows from first to cap by factor.
    """
    deadline = Deadline(timeout, clock)
    delays = backoff(first, cap, factor=factor, jitter=False)
    while True:
        value = probe()
        if predicate(value):
            return value
        left = deadline.remaining()
        if left <= 0:
            name = what or getattr(predicate, "name", "the awaited state")
            raise WaitTimeout("%s not reached within %s s" % (name, timeout), last=value)
        sleep(min(next(delays), left))
