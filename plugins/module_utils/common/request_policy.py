# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one request policy: every call to a Kubernetes API server, a cloud API or ONTAP goes through it.

Per request: a throttled answer (429, or a vendor's Throttling code) waits for its Retry-After, a 5xx or a
connection reset backs off with jitter, up to `attempts` tries (client-go's default, 10). Per run, a retry
budget in the style of gRPC's retry throttling (gRFC A6) keeps a server that fails most requests from being
hammered: 100 tokens, a failed try takes one, an answered try gives one back, and retries stop while half or
fewer are left, so a storm of up to half the requests failing is ridden out and a worse one ends the run with
its error. A server that has answered nothing, only failed to connect or timed out, for `unreachable_after`
seconds, or for every try of one request, is unreachable: a state the run reports (ServerUnreachable), not
something to wait out.

The error a failure keeps says the request, its last status and the number of tries (GiveUp).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.common import waiter
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

DEFAULT_ATTEMPTS = 10
UNREACHABLE_AFTER = 20.0
RETRY_AFTER_CAP = 30.0
BUDGET_TOKENS = 100


class ServerUnreachable(StoragePerfError):
    """The server has not answered for unreachable_after seconds; since is the wall-clock time it last did."""


class GiveUp(StoragePerfError):
    """Retries ran out (attempts or the run's budget); the last answer or error is kept."""


class Verdict:
    """What one try came to: answered (the server sent a response), retry, the status (HTTP code or the vendor's
    error code) and how to say it, Retry-After."""

    __slots__ = ("answered", "retry", "status", "detail", "retry_after")

    def __init__(self, answered: bool, retry: bool = False, status: int | str | None = None, detail: str | int | None = None,
                 retry_after: float | None = None) -> None:
        self.answered, self.retry, self.status, self.retry_after = answered, retry, status, retry_after
        self.detail = detail if detail is not None else status


def parse_retry_after(value: Any) -> float | None:
    """Retry-After in seconds (RFC 9110 allows an HTTP date too, which no API server we speak to sends)."""
    try:
        seconds = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None


class Health:
    """Shared by every request of a run: the retry budget and whether the server still answers."""

    def __init__(self, unreachable_after: float = UNREACHABLE_AFTER, tokens: float = BUDGET_TOKENS,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        self.unreachable_after = float(unreachable_after)
        self.max_tokens = float(tokens)
        self.tokens = float(tokens)
        self.clock, self.wall = clock, wall
        self._lock = threading.Lock()
        self._last_answer = clock()
        self._last_answer_wall = wall()
        self._failing_since: float | None = None
        self._ever_answered = False
        self.retries = 0
        self.gave_up = 0

    def answered(self, ok: bool = True) -> None:
        with self._lock:
            self._last_answer, self._last_answer_wall = self.clock(), self.wall()
            self._failing_since = None
            self._ever_answered = True
            if ok:
                self.tokens = min(self.max_tokens, self.tokens + 1)

    def no_answer(self, started: float) -> None:
        """A try that got no response (refused, reset, timed out); started is when it was sent."""
        with self._lock:
            begun = max(started, self._last_answer)
            if self._failing_since is None or begun < self._failing_since:
                self._failing_since = begun

    def failed_try(self) -> None:
        with self._lock:
            self.tokens = max(0.0, self.tokens - 1)

    def may_retry(self) -> bool:
        with self._lock:
            if self.tokens > self.max_tokens / 2:
                self.retries += 1
                return True
            self.gave_up += 1
            return False

    def silent_for(self) -> float:
        """Seconds since the server stopped answering, or 0 while it answers."""
        with self._lock:
            return 0.0 if self._failing_since is None else self.clock() - self._failing_since

    def unreachable(self) -> bool:
        return self.silent_for() >= self.unreachable_after

    def last_answer_iso(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._last_answer_wall))

    def unreachable_error(self, system: str, server: str, what: str, last: object) -> ServerUnreachable:
        if self._ever_answered:
            msg = "%s at %s stopped answering: nothing but %s for %.0f s (last answer at %s) while sending %s" % (
                system, server, last, self.silent_for(), self.last_answer_iso(), what)
        else:
            msg = "cannot reach %s at %s: nothing but %s for %.0f s while sending %s" % (
                system, server, last, self.silent_for(), what)
        return ServerUnreachable(msg, hint="Check that the server is up and reachable from this host",
                                 server=server, since=self.last_answer_iso() if self._ever_answered else None)


class RequestPolicy:
    """send() one try at a time under the rules above. judge(result, exc) -> Verdict."""

    def __init__(self, health: Health, attempts: int = DEFAULT_ATTEMPTS, first: float = 0.2, cap: float = 5.0,
                 sleep: Callable[[float], None] = time.sleep, system: str = "the server") -> None:
        self.health = health
        self.system = system  # how messages name what was asked: "the Kubernetes API"
        self.attempts = max(1, int(attempts))
        self.first, self.cap, self.sleep = first, cap, sleep

    def call(self, send: Callable[[], Any], judge: Callable[[Any, BaseException | None], Verdict], server: str, what: str,
             on_retry: Callable[[Verdict, BaseException | None], None] | None = None) -> Any:
        """send() until it returns or raises something not to retry; on_retry(verdict, exc) before each wait."""
        delays = waiter.backoff(self.first, self.cap)
        last = None
        for attempt in range(1, self.attempts + 1):
            if attempt > 1 and self.health.unreachable():
                raise self.health.unreachable_error(self.system, server, what, last)
            started = self.health.clock()
            result, exc = None, None
            try:
                result = send()
            except Exception as e:  # judged below: the verdict says whether it is retried or raised
                exc = e
            verdict = judge(result, exc)
            if verdict.answered:
                self.health.answered(ok=not verdict.retry)
            else:
                self.health.no_answer(started)
            if not verdict.retry:
                if exc is not None:
                    raise exc
                return result
            self.health.failed_try()
            last = verdict.detail if verdict.detail is not None else "%s: %s" % (type(exc).__name__, exc)
            if not verdict.answered and (self.health.unreachable() or attempt == self.attempts):
                # silent for the threshold, or for every try this request had: either way nobody is answering
                raise self.health.unreachable_error(self.system, server, what, last)
            if attempt == self.attempts or not self.health.may_retry():
                budget = "" if attempt == self.attempts else " (the run's retry budget is spent: the server failed " \
                                                             "more than half of the recent tries)"
                raise GiveUp("%s at %s failed after %d tries, last: %s%s" % (what, server, attempt, last, budget),
                             status=verdict.status, tries=attempt, cause=exc, answered=verdict.answered)
            if on_retry is not None:
                on_retry(verdict, exc)
            delay = next(delays)
            if verdict.retry_after is not None:
                delay = min(max(delay, verdict.retry_after), RETRY_AFTER_CAP)
            self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover
