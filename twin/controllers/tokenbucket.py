"""Client-side API throttling and worker pools of the storage controllers, read from their Deployments.

TokenBucket is client-go's flowcontrol token bucket (golang.org/x/time/rate underneath): it starts FULL with
`burst` tokens, refills at `qps` tokens per second, and every request reserves one token in arrival order and
waits until its reservation matures. Time is cluster time: the bucket refills at qps / time_scale per
wall-clock second, so a throttled controller is as slow relative to the rest of the twin as on a real cluster.

Throttle bundles what one controller process has: a bucket per clientset (the snapshot-controller builds
two clientsets from one rest.Config, each with its own bucket: cmd/snapshot-controller/main.go) and a resizable
worker pool (--worker-threads). follow_deployment() re-reads a container's args whenever its Deployment
changes, so `kubectl edit deployment` (or the collection's module) changes the speed at once; a changed
qps/burst starts a new full bucket, as the restarted pod would.
"""
from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

if TYPE_CHECKING:
    from ..context import ClusterContext
    from .base import Controller


def parse_args(args: list[str] | None) -> dict[str, str]:
    """["--kube-api-qps=75", "--v", "5", "--leader-election"] -> {"kube-api-qps": "75", "v": "5", ...}."""
    out: dict[str, str] = {}
    items = list(args or [])
    i = 0
    while i < len(items):
        a = str(items[i])
        if a.startswith("-"):
            key = a.lstrip("-")
            if "=" in key:
                k, v = key.split("=", 1)
                out[k] = v
            elif i + 1 < len(items) and not str(items[i + 1]).startswith("-"):
                out[key] = str(items[i + 1])
                i += 1
            else:
                out[key] = "true"
        i += 1
    return out


class TokenBucket:
    def __init__(self, qps: float, burst: int, time_scale: float) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.scale = time_scale if time_scale > 0 else 1.0
        self.tokens = float(self.burst)
        self.last = self._now()

    def _now(self) -> float:
        return time.monotonic() / self.scale  # cluster seconds

    def reserve(self) -> float:
        """Take one token now; return how many cluster seconds the caller must wait for it."""
        now = self._now()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1.0
        if self.tokens >= 0 or self.qps <= 0:
            return 0.0
        return -self.tokens / self.qps

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay * self.scale)


class WorkerPool:
    """A semaphore whose size can change while tasks wait (--worker-threads of a restarted pod)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, int(size))
        self.busy = 0
        self.max_busy = 0
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> WorkerPool:
        async with self._cond:
            await self._cond.wait_for(lambda: self.busy < self.size)
            self.busy += 1
            self.max_busy = max(self.max_busy, self.busy)
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.busy -= 1
            self._cond.notify_all()

    async def resize(self, size: int) -> None:
        async with self._cond:
            self.size = max(1, int(size))
            self._cond.notify_all()


class Throttle:
    """One controller process's client side: token buckets per clientset, a worker pool, call counters."""

    def __init__(self, name: str, qps: float, burst: int, workers: int, time_scale: float,
                 clients: tuple[str, ...] = ("kube",), keep: int = 100_000) -> None:
        self.name = name
        self.clients = clients
        self.scale = time_scale if time_scale > 0 else 1.0
        self.qps, self.burst = float(qps), int(burst)
        self.buckets = {c: TokenBucket(qps, burst, time_scale) for c in clients}
        self.pool = WorkerPool(workers)
        self.calls: collections.Counter[str] = collections.Counter()
        # (cluster time the call went out, client, verb) for tests and the benchmark's pacing figures
        self.log: collections.deque[tuple[float, str, str]] = collections.deque(maxlen=keep)
        self.generation = 0

    async def call(self, client: str = "kube", verb: str = "") -> None:
        """Wait for the token of one API request made through `client`."""
        await self.buckets[client].wait()
        self.calls[client] += 1
        self.log.append((time.monotonic() / self.scale, client, verb))

    async def configure(self, qps: float, burst: int, workers: int) -> None:
        if (float(qps), int(burst)) != (self.qps, self.burst):
            self.qps, self.burst = float(qps), int(burst)
            self.buckets = {c: TokenBucket(qps, burst, self.scale) for c in self.clients}
            self.generation += 1
        if int(workers) != self.pool.size:
            await self.pool.resize(workers)
            self.generation += 1

    def doc(self, log: bool = False, since: float | None = None) -> dict[str, Any]:
        out = {"qps": self.qps, "burst": self.burst, "workers": self.pool.size, "max_busy": self.pool.max_busy,
               "calls": dict(self.calls)}
        if log:
            out["log"] = [[round(t, 4), c, v] for t, c, v in self.log if since is None or t >= since]
        return out


def container_args(deployment: dict, container: str) -> list[str] | None:
    for c in deployment.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        if c.get("name") == container:
            return list(c.get("args") or []) + list(c.get("command") or [])[1:]
    return None


async def follow_deployment(ctl: Controller, throttle: Throttle, namespace: str, name: str, container: str,
                            defaults: dict[str, float], on_args: Callable[[dict[str, str]], Any] | None = None) -> None:
    """Keep `throttle` set from the container's --kube-api-qps / --kube-api-burst / --worker-threads.

    defaults: {"qps", "burst", "workers"} used for flags the container does not set (the binary's defaults)."""
    async for etype, dep in ctl.watch("apps", "v1", "deployments", ns=namespace,
                                      field_selector=f"metadata.name={name}"):
        if etype == "DELETED":
            continue
        args = container_args(dep, container)
        if args is None:
            continue
        flags = parse_args(args)
        await throttle.configure(float(flags.get("kube-api-qps", defaults["qps"])),
                                 int(float(flags.get("kube-api-burst", defaults["burst"]))),
                                 int(float(flags.get("worker-threads", defaults["workers"]))))
        if on_args:
            on_args(flags)


def throttles(cluster: ClusterContext) -> dict[str, Throttle]:
    """The registry of every Throttle in the twin (shown by POST /_twin/storage)."""
    return cluster.throttles
