"""The twin's virtual-time lanes and slots (twin/controllers/vclock.py). Every assertion is on the scheduled times
the helpers return, which follow from the arrivals given, not on how long anything took."""
from __future__ import annotations

import asyncio
import time

from twin.controllers import vclock

S = 0.05  # each operation's time in the lane


async def _lane_op(lane: vclock.Lane, arrival: float, ends: dict[str, float], name: str) -> None:
    ends[name] = await lane.run(S, arrival)


def test_the_lane_serves_operations_in_the_order_they_reach_it():
    """A slow operation called first must not hold the lane for one called after it that reaches the lane before
    it (the lane is a lock taken after each operation's own work)."""
    async def main() -> dict[str, float]:
        lane, ends = vclock.Lane(), {}
        t = vclock.now()
        slow = asyncio.create_task(_lane_op(lane, t + 0.3, ends, "slow"))
        await asyncio.sleep(0)  # the slow one is called first
        quick = asyncio.create_task(_lane_op(lane, t + 0.1, ends, "quick"))
        await asyncio.gather(slow, quick)
        return {"t": t, **ends}

    r = asyncio.run(main())
    assert r["quick"] == r["t"] + 0.1 + S  # booked on arrival, not behind the slow one
    assert r["slow"] == r["t"] + 0.3 + S  # the lane was free again when it arrived


def test_operations_woken_in_the_same_turn_book_in_arrival_order():
    """When the event loop is late, every overdue operation wakes in the same turn; they still book in the order of
    their arrivals, and each is scheduled from its arrival, not from when the loop woke it."""
    async def main() -> dict[str, float]:
        lane, ends = vclock.Lane(), {}
        t = vclock.now()
        tasks = [asyncio.create_task(_lane_op(lane, t + 0.03, ends, "second")),
                 asyncio.create_task(_lane_op(lane, t + 0.02, ends, "first"))]
        await asyncio.sleep(0)  # both are asleep until their arrivals
        time.sleep(0.1)  # the loop is busy past both arrivals
        await asyncio.gather(*tasks)
        return {"t": t, **ends}

    r = asyncio.run(main())
    assert r["first"] == r["t"] + 0.02 + S
    assert r["second"] == r["first"] + S


def test_a_slot_handed_over_starts_where_the_last_holder_was_scheduled_to_end():
    async def main() -> tuple[float, float]:
        slots = vclock.Slots(1)
        first = await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0)  # queued behind the first
        scheduled_end = first + 0.01
        time.sleep(0.05)  # the holder wakes late from its scheduled end
        slots.release(scheduled_end)
        return scheduled_end, await waiter

    scheduled_end, start = asyncio.run(main())
    assert start == scheduled_end  # not the later wall time of the release


def test_a_free_slot_starts_at_once_whatever_the_last_release():
    async def main() -> tuple[float, float]:
        slots = vclock.Slots(2)
        held = await slots.acquire()
        slots.release(held + 100)  # a release scheduled far ahead does not delay a caller that finds a slot free
        before = vclock.now()
        return before, await slots.acquire()

    before, start = asyncio.run(main())
    assert before <= start <= vclock.now()
