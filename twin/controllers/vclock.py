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
        """Occupy the lane for `wall_seconds` after whatever is booked before; return the scheduled end."""
        _, end = self.reserve(wall_seconds, arrival)
        await sleep_until(end)
        return end
