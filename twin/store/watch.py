"""Watch fan-out: the bounded per-resource event log, the watchers, and what a watch replays.

Every change is appended to its resource type's log; watches replay from it, and a watch from a
resourceVersion older than the log reaches gets 410 Expired. The log keeps selector views of the
objects, not whole objects, so that filtering a watcher costs little and the log stays small.
"""
from __future__ import annotations

import asyncio
import collections
import os
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..apimachinery import errors
from ..registry.resources import Registry, ResourceType
from ..registry.selectors import _PER_KIND
from .objects import ObjectMap, dumps, parse_selectors

# Events kept per resource type for watches to replay from; a watch from an older resourceVersion
# gets 410 Expired. TWIN_EVENT_LOG_SIZE (read at start) makes compaction easy to reach in tests.
EVENT_LOG_SIZE = int(os.environ.get("TWIN_EVENT_LOG_SIZE", "50000"))


@dataclass
class Event:
    """One change in a resource type's event log. obj/old are selector views of the object after and
    before the change (metadata name, namespace, labels and the kind's selectable fields), not whole
    objects: the log keeps the JSON bytes for replay and stays small."""
    rv: int
    type: str
    obj: dict | None
    raw: bytes
    old: dict | None


def _view(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    md = obj.get("metadata") or {}
    out: dict = {"metadata": {"name": md.get("name"), "namespace": md.get("namespace"), "labels": md.get("labels")}}
    for path in _SELECTABLE.get(obj.get("kind", ""), ()):
        cur: Any = obj
        for part in path:
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is not None:
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = cur
    return out


_SELECTABLE = {kind: tuple(tuple(p.split(".")) for p in paths if not p.startswith("metadata."))
               for kind, paths in _PER_KIND.items()}
# a watch stream whose client stops reading is closed after this many undelivered events
# (the real server closes watches of unresponsive consumers too; clients re-watch)
WATCH_BACKLOG = 100_000


@dataclass(eq=False)
class Watcher:
    rtype: ResourceType
    namespace: str | None
    label_pred: Callable[[dict], bool]
    field_pred: Callable[[dict], bool]
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue())
    backlog: int | None = None     # set for HTTP watches: past it the watcher overflows
    overflowed: bool = False
    unfiltered: bool = False       # no namespace, label or field selector: every event matches

    def matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        md = obj["metadata"]
        if self.namespace and md.get("namespace") != self.namespace:
            return False
        return self.label_pred(md.get("labels") or {}) and self.field_pred(obj)

    def _put(self, item: tuple[str, bytes]) -> None:
        if self.backlog is not None and self.queue.qsize() >= self.backlog:
            self.overflowed = True
            return
        self.queue.put_nowait(item)

    def offer(self, ev: Event) -> None:
        if self.overflowed:
            return
        if self.unfiltered:
            self._put((ev.type, ev.raw))
            return
        now = self.matches(ev.obj)
        if ev.type == "MODIFIED":
            before = self.matches(ev.old)
            if now and not before:
                self._put(("ADDED", ev.raw))
            elif before and not now:
                self._put(("DELETED", ev.raw))
            elif now:
                self._put(("MODIFIED", ev.raw))
        elif now:
            self._put((ev.type, ev.raw))


class WatchLog(ObjectMap):
    """The object map plus its event log and watchers: every write emits through `_emit`."""

    def __init__(self, registry: Registry | None = None):
        super().__init__(registry)
        self.events: dict[tuple[str, str], collections.deque[Event]] = collections.defaultdict(
            lambda: collections.deque(maxlen=EVENT_LOG_SIZE))
        self.compacted: dict[tuple[str, str], int] = collections.defaultdict(int)
        self.watchers: dict[tuple[str, str], set[Watcher]] = collections.defaultdict(set)
        # synchronous observers of every write: (rtype, event type, stored object (read-only), old object).
        # They run after the watchers got the event and before the writer returns, so a controller can act
        # before the API response goes out (StatefulSet pods must exist when `kubectl scale` returns).
        self.on_change: list[Callable[[ResourceType, str, dict, dict | None], None]] = []

    def _emit(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None, raw: bytes | None = None) -> None:
        if raw is None or (rtype.crd and obj.get("apiVersion") != rtype.api_version):
            raw = dumps(self._as_version(rtype, obj))
        ev = Event(int(obj["metadata"]["resourceVersion"]), etype, _view(obj), raw, _view(old))
        log = self.events[rtype.key]
        if len(log) == log.maxlen:
            self.compacted[rtype.key] = log[0].rv
        log.append(ev)
        for w in list(self.watchers[rtype.key]):
            w.offer(ev)
        for cb in list(self.on_change):
            cb(rtype, etype, obj, old)

    def watch(self, rtype: ResourceType, ns: str | None = None, resource_version: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              send_initial_events: bool = False) -> Watcher:
        """Register a watcher. With no resourceVersion (or "0") it first gets synthetic ADDED events
        of the current objects; from a resourceVersion it replays the log after it, or gets an ERROR
        410 Expired event when the log no longer reaches back that far. send_initial_events adds the
        watch-list BOOKMARK (annotation k8s.io/initial-events-end) after the synthetic events."""
        lp, fp = parse_selectors(rtype, label_selector, field_selector)
        w = Watcher(rtype, ns, lp, fp, unfiltered=not (ns or label_selector or field_selector))
        if not resource_version or resource_version == "0" or send_initial_events:
            for e in self.list_entries(rtype, ns, label_selector, field_selector):
                w.queue.put_nowait(("ADDED", self._raw_for(rtype, e)))
            if send_initial_events:
                bm = {"kind": rtype.kind, "apiVersion": rtype.api_version,
                      "metadata": {"resourceVersion": str(self.rv),
                                   "annotations": {"k8s.io/initial-events-end": "true"}}}
                w.queue.put_nowait(("BOOKMARK", dumps(bm)))
        else:
            try:
                since = int(resource_version)
            except ValueError as ex:
                raise errors.bad_request(f"invalid resourceVersion {resource_version!r}") from ex
            if since < self.compacted[rtype.key]:
                w.queue.put_nowait(("ERROR", dumps(errors.gone(
                    f"too old resource version: {since} ({self.compacted[rtype.key]})").status())))
                return w
            log = self.events[rtype.key]
            if log and log[-1].rv > since:
                # the log is in rv order: skip what is older than `since`
                start = len(log)
                while start > 0 and log[start - 1].rv > since:
                    start -= 1
                for i in range(start, len(log)):
                    w.offer(log[i])
        self.watchers[rtype.key].add(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        self.watchers[w.rtype.key].discard(w)
