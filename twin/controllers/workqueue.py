"""client-go's workqueue for the twin's storage controllers: each key is handled by one worker at a time,
adds while queued collapse into one, adds while processing re-run the key afterwards, failures come back
after an exponential backoff (ItemExponentialFailureRateLimiter), and a WorkerPool bounds how many keys run
at once (the controller's --worker-threads)."""
from __future__ import annotations

import asyncio
import logging
from typing import Any
from collections.abc import Awaitable, Callable

from .tokenbucket import WorkerPool

log = logging.getLogger("twin")


class Retry(Exception):
    """Raised by a handler: process the key again after `after` cluster seconds (None: the backoff)."""

    def __init__(self, after: float | None = None) -> None:
        super().__init__("retry")
        self.after = after


class WorkQueue:
    def __init__(self, name: str, handler: Callable[[Any], Awaitable[None]], pool: WorkerPool, time_scale: float,
                 retry_start: float = 1.0, retry_max: float = 300.0,
                 gate: Callable[[], Awaitable[None]] | None = None) -> None:
        self.name = name
        self.handler = handler
        self.pool = pool
        self.scale = time_scale if time_scale > 0 else 1.0
        self.retry_start, self.retry_max = retry_start, retry_max
        self.gate = gate  # awaited before each key (fault injection: a stalled controller)
        self.queue: asyncio.Queue = asyncio.Queue()
        self.queued: set = set()
        self.processing: set = set()
        self.dirty: set = set()
        self.failures: dict[Any, int] = {}
        self.timers: dict[Any, asyncio.TimerHandle] = {}
        self.task: asyncio.Task | None = None

    def add(self, key: Any) -> None:
        if key in self.processing:
            self.dirty.add(key)
            return
        if key in self.queued:
            return
        self.queued.add(key)
        self.queue.put_nowait(key)

    def add_after(self, key: Any, seconds: float) -> None:
        """Add `key` after `seconds` of cluster time (replacing an earlier timer for it)."""
        old = self.timers.pop(key, None)
        if old:
            old.cancel()
        if seconds <= 0:
            self.add(key)
            return
        self.timers[key] = asyncio.get_running_loop().call_later(seconds * self.scale, self._fire, key)

    def _fire(self, key: Any) -> None:
        self.timers.pop(key, None)
        self.add(key)

    def forget(self, key: Any) -> None:
        self.failures.pop(key, None)

    def start(self) -> asyncio.Task:
        if self.task is None:
            self.task = asyncio.ensure_future(self._dispatch())
        return self.task

    async def _dispatch(self) -> None:
        while True:
            key = await self.queue.get()
            if self.gate is not None:
                await self.gate()
            await self.pool.__aenter__()
            self.queued.discard(key)
            self.processing.add(key)
            asyncio.ensure_future(self._process(key))

    async def _process(self, key: Any) -> None:
        try:
            await self.handler(key)
            self.failures.pop(key, None)
        except Retry as r:
            n = self.failures.get(key, 0) + 1
            self.failures[key] = n
            delay = r.after if r.after is not None else min(self.retry_max, self.retry_start * 2 ** (n - 1))
            self.add_after(key, delay)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: handling %s failed", self.name, key)
            n = self.failures.get(key, 0) + 1
            self.failures[key] = n
            self.add_after(key, min(self.retry_max, self.retry_start * 2 ** (n - 1)))
        finally:
            self.processing.discard(key)
            await self.pool.__aexit__(None, None, None)
            if key in self.dirty:
                self.dirty.discard(key)
                self.add(key)
