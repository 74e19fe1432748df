"""A work queue whose reconciles run in the event-loop turn of the write that asked for them.

Workload controllers hang this on `store.on_change`: a spec change reconciles at once (`now`), so the
pods a StatefulSet or ReplicaSet owes exist before the API response that changed it is sent, as
clients such as `kubectl wait` expect; changes of owned objects (pods becoming Ready) reconcile on the
next loop turn (`soon`), which coalesces bursts. Keys are deduplicated like client-go's workqueue.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from collections.abc import Callable, Hashable

log = logging.getLogger("twin")

# A reconcile that keeps re-queuing itself (each write it makes triggers it again) is cut off here
# rather than spinning the loop; the next change of the object picks it up again.
MAX_PASSES_PER_KEY = 50
# `soon` waits COST_RATIO times what the key's last reconcile took (at most MAX_DELAY seconds) before
# running it again: a StatefulSet of 1000 pods, whose reconcile walks all of them, is then reconciled a
# few times per burst of pod changes instead of once per pod, while a small one reacts at once.
COST_RATIO = 3.0
MIN_DELAY, MAX_DELAY = 0.001, 0.05


class SyncQueue:
    def __init__(self, name: str, reconcile: Callable[[Any], None]) -> None:
        self.name = name
        self.reconcile = reconcile
        self.dirty: dict[Hashable, None] = {}  # insertion-ordered set
        self.delayed: set[Hashable] = set()
        self.cost: dict[Hashable, float] = {}  # seconds the key's last reconcile took
        self.running = False
        self.scheduled = False

    def now(self, key: Hashable) -> None:
        """Reconcile key before returning (or, when called from inside a reconcile, right after it)."""
        self.dirty[key] = None
        if not self.running:
            self._drain()

    def soon(self, key: Hashable) -> None:
        """Reconcile key on a coming loop turn, once however often it was asked meanwhile."""
        if key in self.dirty or key in self.delayed:
            return
        delay = self.cost.get(key, 0.0) * COST_RATIO
        if delay >= MIN_DELAY:
            self.delayed.add(key)
            asyncio.get_running_loop().call_later(min(delay, MAX_DELAY), self._release, key)
            return
        self.dirty[key] = None
        if not self.running and not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self._drain)

    def _release(self, key: Hashable) -> None:
        self.delayed.discard(key)
        self.dirty[key] = None
        if not self.running:
            self._drain()

    def later(self, delay: float, key: Hashable) -> None:
        """Reconcile key after delay seconds of real time (backoffs, TTLs)."""
        asyncio.get_running_loop().call_later(max(delay, 0.0), self.soon, key)

    def _drain(self) -> None:
        self.scheduled = False
        self.running = True
        passes: dict[Hashable, int] = {}
        try:
            while self.dirty:
                key = next(iter(self.dirty))
                del self.dirty[key]
                passes[key] = passes.get(key, 0) + 1
                if passes[key] > MAX_PASSES_PER_KEY:
                    log.warning("%s: %s re-queued itself %d times; leaving it", self.name, key, MAX_PASSES_PER_KEY)
                    continue
                start = time.perf_counter()
                try:
                    self.reconcile(key)
                except Exception:  # one object's failure must not break the writer whose hook ran us
                    log.exception("%s: reconcile of %s failed", self.name, key)
                if len(self.cost) > 10_000:
                    self.cost.clear()
                self.cost[key] = time.perf_counter() - start
        finally:
            self.running = False
