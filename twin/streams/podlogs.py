"""Container logs as the kubelet keeps them: timestamped lines per container, followed while it runs.

The API server's log subresource reads them (tailLines, sinceSeconds, sinceTime, timestamps, limitBytes,
follow, previous); `follow` streams new lines until the container ends, as `kubectl logs -f` expects. Each
restart starts a new log; the one before stays readable as the previous instance's.
"""
from __future__ import annotations

import asyncio
import collections
from datetime import datetime, UTC

MAX_BYTES = 1 << 20


def _stamp(t: datetime) -> str:
    """RFC3339Nano with nanoseconds, as the kubelet's `--timestamps` lines carry."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}000Z"


class ContainerLog:
    """The log of one instance of a container; `previous` is the instance before it, which the kubelet keeps
    (one dead container per container) for `kubectl logs --previous`."""

    def __init__(self, container_id: str = "", previous: ContainerLog | None = None) -> None:
        self.lines: collections.deque[tuple[datetime, str]] = collections.deque()
        self.first = 0          # sequence number of lines[0]
        self.size = 0
        self.ended = False
        self.ran = False        # started once: a new start is a new instance (a restart)
        self.container_id = container_id
        self.previous = previous
        if previous is not None:
            previous.previous = None  # older instances are gone, as their containers are
        self._waiters: list[asyncio.Future] = []

    def add(self, text: str) -> None:
        for line in text.rstrip("\n").split("\n"):
            self.lines.append((datetime.now(UTC), line))
            self.size += len(line) + 1
        while self.size > MAX_BYTES and self.lines:
            self.size -= len(self.lines.popleft()[1]) + 1
            self.first += 1
        self._wake()

    def start(self) -> None:
        self.ended = False
        self.ran = True

    def end(self) -> None:
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        for f in self._waiters:
            if not f.done():
                f.set_result(None)
        self._waiters.clear()

    async def changed(self, timeout: float) -> None:
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            pass

    @property
    def next_seq(self) -> int:
        return self.first + len(self.lines)

    def select(self, since: datetime | None = None, tail: int | None = None,
               start_seq: int | None = None) -> list[tuple[datetime, str]]:
        lines = list(self.lines)
        if start_seq is not None:
            lines = lines[max(start_seq - self.first, 0):]
        if since is not None:
            lines = [ln for ln in lines if ln[0] >= since]
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []
        return lines

    @staticmethod
    def render(lines: list[tuple[datetime, str]], timestamps: bool) -> str:
        if timestamps:
            return "".join(f"{_stamp(t)} {s}\n" for t, s in lines)
        return "".join(f"{s}\n" for _, s in lines)

    def text(self) -> str:
        return self.render(list(self.lines), False)
