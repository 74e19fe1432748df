"""What every Alibaba Cloud request passes before it reaches a service: authentication, flow control, call
accounting, injected faults and latency. One Gateway serves the ACK (ROA) and ECS (RPC) apps.

Flow control is a token bucket per (product, action), as POP limits each API per user; a request beyond it is
answered `Throttling.User` "Request was denied due to user flow control." (HTTP 400 by default, the gateway's
historic status; `status` 429 is configurable because newer gateways send that), with `x-acs-retry-after`: the
milliseconds until the bucket has a token again, the header the official Tea SDKs read (alibabacloud_tea_openapi
Utils.get_throttling_time_left; ThrottlingException.retry_after). No `Retry-After` header: POP does not send one.

Everything is set through the twin's admin door (`POST /_twin/alibaba`), never by the clients under test.
"""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .errors import CsError, PopError
from .signatures import Credentials, rpc_params, verify_roa, verify_rpc_request

TRUSTED_HEADER = "X-Twin-Fleet-Token"  # set by twin/fleet/front.py on calls it already authenticated and counted
MAX_PAGE_SIZE = 100  # PageSize / pageSize of the paged ECS and ACK lists


def page_params(query: Mapping[str, str], roa: bool = False) -> tuple[int, int]:
    """(page size, page number) of a paged list call, refused in the service's own words when malformed:
    ECS (RPC) `PageSize`/`PageNumber`, ACK (ROA) `pageSize`/`pageNumber`."""
    size_key, number_key = ("pageSize", "pageNumber") if roa else ("PageSize", "PageNumber")
    try:
        size, number = int(query.get(size_key, "10")), int(query.get(number_key, "1"))
    except ValueError:
        if roa:
            raise CsError(400, "ErrorInvalidParameter", "pageSize and pageNumber must be integers") from None
        raise PopError(400, "InvalidParameter", "PageSize and PageNumber must be integers.") from None
    if not 1 <= size <= MAX_PAGE_SIZE or number < 1:
        if roa:
            raise CsError(400, "ErrorInvalidParameter", f"pageSize must be 1-{MAX_PAGE_SIZE} and pageNumber >= 1")
        raise PopError(400, "InvalidParameter.PageSize", f"PageSize must be 1-{MAX_PAGE_SIZE}.")
    return size, number


# Calls that change something. Tests assert "no write call" by these counts.
WRITE_ACTIONS = frozenset({
    "cs:ModifyClusterAddon", "cs:ModifyClusterNodePool",
    "ecs:TagResources", "ecs:UntagResources",
})


@dataclass
class Bucket:
    rate: float  # tokens per second
    burst: float
    tokens: float
    stamp: float

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class FaultRule:
    """Fail calls of one action: the first `after` calls pass, then `times` calls fail (None: until cleared)."""
    action: str
    after: int = 0
    times: int | None = None
    status: int = 500
    code: str = "InternalError"
    message: str = "The request processing has failed due to some unknown error."
    seen: int = 0
    failed: int = 0

    def hit(self) -> PopError | None:
        self.seen += 1
        if self.seen <= self.after or (self.times is not None and self.failed >= self.times):
            return None
        self.failed += 1
        return PopError(self.status, self.code, self.message)


@dataclass
class Gateway:
    credentials: Credentials = field(default_factory=Credentials)
    calls: Counter = field(default_factory=Counter)  # every authenticated call, by "product:Action"
    ok: Counter = field(default_factory=Counter)
    throttled: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)  # failed authentication, by error code
    throttle: dict[str, Any] | None = None  # {"rate": per second, "burst": n, "status": 400, "actions": [..]}
    buckets: dict[str, Bucket] = field(default_factory=dict)
    latency: float = 0.0  # seconds added to every call (real seconds; the benchmark's fixed per-call latency)
    faults: list[FaultRule] = field(default_factory=list)
    journal: list[str] = field(default_factory=list)  # successful write calls in order ("cs:ModifyClusterAddon csi-plugin")
    in_flight: Counter = field(default_factory=Counter)
    max_in_flight: Counter = field(default_factory=Counter)  # most calls of one action in flight at once

    # admission ------------------------------------------------------------------------------
    async def admit_rpc(self, request: web.Request, product: str, trusted_token: str = "") -> tuple[str, dict[str, str]]:
        """Let one RPC call (ECS) in: its signature, timestamp and nonce (signatures.py), then admit(); return
        ("product:Action", its parameters) or raise the PopError to answer instead."""
        params, body = await rpc_params(request)
        self._authenticate(request, trusted_token, lambda: verify_rpc_request(request, params, body, self.credentials))
        name = f"{product}:{params.get('Action', '')}"
        await self.admit(name)
        return name, params

    async def admit_roa(self, request: web.Request, name: str, trusted_token: str = "") -> bytes:
        """admit_rpc for a ROA call (ACK), whose action is its route: return the request body."""
        body = await request.read()
        self._authenticate(request, trusted_token, lambda: verify_roa(request, body, self.credentials))
        await self.admit(name)
        return body

    def _authenticate(self, request: web.Request, trusted_token: str, verify: Callable[[], Any]) -> None:
        # a fleet front's relayed call carries its token instead: it was checked and counted at the front
        if trusted_token and request.headers.get(TRUSTED_HEADER) == trusted_token:
            return
        try:
            verify()
        except PopError as e:
            self.rejected[e.code] += 1
            raise

    def _throttled(self, action: str) -> PopError | None:
        t = self.throttle
        if not t or (t.get("actions") and action not in t["actions"]):
            return None
        now = time.monotonic()
        b = self.buckets.get(action)
        if b is None:
            b = self.buckets[action] = Bucket(float(t["rate"]), float(t.get("burst", 1)), float(t.get("burst", 1)), now)
        if b.take(now):
            return None
        wait_ms = max(1, int((1 - b.tokens) / b.rate * 1000)) if b.rate > 0 else 1000
        return PopError(int(t.get("status", 400)), "Throttling.User", "Request was denied due to user flow control.",
                        headers={"x-acs-retry-after": str(wait_ms)})

    def _fault(self, action: str) -> PopError | None:
        for rule in self.faults:
            if rule.action == action:
                err = rule.hit()
                if err:
                    return err
        return None

    async def admit(self, action: str) -> None:
        """Account for one authenticated call; raise the PopError it should get instead of being served."""
        self.calls[action] += 1
        err = self._throttled(action) or self._fault(action)
        if err is not None:
            (self.throttled if err.code.startswith("Throttling") else self.failed)[action] += 1
            raise err
        if self.latency:
            self.in_flight[action] += 1
            self.max_in_flight[action] = max(self.max_in_flight[action], self.in_flight[action])
            try:
                await asyncio.sleep(self.latency)
            finally:
                self.in_flight[action] -= 1

    def served(self, action: str, error: bool = False, detail: str = "") -> None:
        (self.failed if error else self.ok)[action] += 1
        if not error and action in WRITE_ACTIONS:
            self.journal.append(f"{action} {detail}".strip())

    # admin door -----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "ok": dict(self.ok), "throttled": dict(self.throttled),
                "failed": dict(self.failed), "rejected": dict(self.rejected),
                "writes": sum(n for a, n in self.calls.items() if a in WRITE_ACTIONS),
                "journal": list(self.journal), "max_in_flight": dict(self.max_in_flight),
                "throttle": self.throttle, "latency": self.latency,
                "faults": [vars(f) for f in self.faults]}

    def configure(self, body: dict[str, Any]) -> None:
        if body.get("reset_calls"):
            for c in (self.calls, self.ok, self.throttled, self.failed, self.rejected, self.max_in_flight):
                c.clear()
            self.journal.clear()
        if "throttle" in body:
            self.throttle = body["throttle"] or None
            self.buckets.clear()
        if "latency" in body:
            self.latency = float(body["latency"] or 0)
        if "fault" in body:
            f = body["fault"]
            if f is None:
                self.faults.clear()
            else:
                self.faults.append(FaultRule(**{k: v for k, v in f.items() if k in FaultRule.__dataclass_fields__}))
        if body.get("clear_faults"):
            self.faults.clear()
