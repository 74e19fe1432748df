"""Virtual-time helpers for serialized resources (a lock held for a calibrated time).

On a loaded machine and at a small --time-scale, every hand-over of a lock costs a few wall milliseconds of
wake-up latency, and in a chain of 56 serial attaches (or 100 Trident operations under the global lock) those
milliseconds add up to tens of cluster seconds that no real cluster has. A Lane keeps the time of a serialized
resource on paper instead: an operation starts at max(its arrival, the previous operation's *scheduled* end)
and sleeps until its own scheduled end, so wake-up latency does not accumulate along the chain. Pair a Lane
with an asyncio.Lock where mutual exclusion itself must be observable (in-flight counters).
"""
from __future__ import annotations

import asyncio
import time


def now() -> float:
    return time.monotonic()


async def sleep_until(deadline: float) -> None:
    delay = deadline - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


def handed_over(arrival: float, vend: float) -> float:
    """The virtual start of an operation that waited from `arrival` for a resource released by one scheduled to end
    at `vend`: that end, not the later moment the loop woke the waiter (and never in the future)."""
    return max(arrival, min(vend, now()))


class Slots:
    """At most `n` operations at once, handed over in virtual time: a waiter that gets a slot from a finishing
    operation starts where that operation was scheduled to end, not when the event loop got round to waking it,
    so the hand-over latency does not pile up along a queue of waiters (as NodeSlots in alibaba_csi.py)."""

    def __init__(self, n: int) -> None:
        self.sem = asyncio.Semaphore(n)
        self.vend = 0.0  # scheduled end of the operation that last released a slot

    async def acquire(self) -> float:
        """Wait for a slot; return the operation's virtual start."""
        arrival = now()
        queued = self.sem.locked()
        await self.sem.acquire()
        return handed_over(arrival, self.vend) if queued else arrival

    def release(self, vend: float) -> None:
        self.vend = vend
        self.sem.release()


class Lane:
    """One-at-a-time resource in virtual (scheduled) wall time."""

    def __init__(self) -> None:
        self.free_at = 0.0

    def reserve(self, wall_seconds: float, arrival: float | None = None) -> tuple[float, float]:
        """Book the next interval of `wall_seconds`; return (start, end) in monotonic wall time."""
        start = max(arrival if arrival is not None else time.monotonic(), self.free_at)
        end = start + max(0.0, wall_seconds)
        self.free_at = end
        return start, end

    async def run(self, wall_seconds: float, arrival: float | None = None) -> float:
        """Occupy the lane for `wall_seconds` from `arrival` (default: now), after whatever is booked before; return
        the scheduled end. The booking is made when the operation arrives, not when it is called: the lane is a lock
        taken after the operation's own work, so it serves operations in the order they reach it, and one slow
        operation called early does not hold back those that reach the lane before it (asyncio fires overdue timers
        in deadline order, so operations woken in the same turn still book in arrival order)."""
        if arrival is not None:
            await sleep_until(arrival)
        _, end = self.reserve(wall_seconds, arrival)
        await sleep_until(end)
        return end


class ClusterClock:
    """The cluster's wall clock for controllers whose work is dated, not only timed (the CronJob controller): it
    reads the real time when made and then runs 1/time_scale times as fast as the real one, so at --time-scale 0.01 a
    one-minute schedule comes due every 0.6 s. Timestamps the API server writes (creationTimestamp, a Job's
    completionTime) stay in real time; to_cluster() reads such a timestamp on this clock."""

    def __init__(self, time_scale: float) -> None:
        self.scale = time_scale if time_scale > 0 else 1.0
        self.wall0 = time.time()
        self.mono0 = time.monotonic()

    def now(self) -> float:
        """Cluster time, in seconds since the epoch."""
        return self.wall0 + (time.monotonic() - self.mono0) / self.scale

    def to_cluster(self, wall: float) -> float:
        return self.wall0 + (wall - self.wall0) / self.scale

    def wall_delay(self, cluster_seconds: float) -> float:
        """Real seconds until cluster_seconds of this clock have passed."""
        return max(cluster_seconds, 0.0) * self.scale
