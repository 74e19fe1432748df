# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-object bookkeeping of one step: when each object started, when it reached its terminal
state, what went wrong. Pure: no I/O and no clock of its own; every time comes from the caller.

Times are the client's monotonic clock:
  start  the moment just before the object's request (create, delete, scale) was sent, so no
         watch event caused by the request can carry an earlier time and no latency is negative;
  end    the receive time of the watch event after which the object's terminal-state predicate
         held (conditions.py). An object whose terminal state already held when its request was
         sent ends at its start (latency 0).
Server timestamps are kept beside them for reference only (second precision, another clock).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View, World


class Item:
    """One timed object (a volume, a pod, a snapshot)."""

    __slots__ = ("name", "check", "subjects", "volumes", "start", "end", "error", "missing", "deps",
                 "warnings", "warning_count", "server")

    def __init__(self, name: str, check: Callable[[View], str | None], subjects: Iterable[tuple[str, str]] = (),
                 volumes: Iterable[str] = ()) -> None:
        self.name = name
        self.check = check
        # (kind name, key) of the objects whose Warning events explain this item's failure
        self.subjects = list(subjects)
        # PVC keys whose VolumeAttachments are timed with this item
        self.volumes = list(volumes)
        self.start: float | None = None
        self.end: float | None = None
        self.error: str | None = None
        self.missing: str | None = "not started"
        self.deps: frozenset[tuple[str, ...]] = frozenset()
        self.warnings: dict[str | None, tuple[str, str, int, float]] = {}
        self.warning_count = 0
        self.server: dict[str, Any] = {}

    @property
    def settled(self) -> bool:
        return self.end is not None or self.error is not None


class Tracker:
    """Items of one step over one World. Callers hold one lock around every method."""

    def __init__(self, world: World, items: Iterable[Item] = (), give_up_after_warnings: int | None = 0) -> None:
        self.world = world
        self.items: dict[str, Item] = {}
        self.give_up = int(give_up_after_warnings or 0)
        self._by_dep: dict[tuple[str, ...], set[Item]] = {}
        self._by_subject: dict[str, list[Item]] = {}
        self.first_start: float | None = None
        self.last_end: float | None = None
        self.events = 0
        # kept incrementally: the engine asks after every event, and 1000 items must not cost 1000 steps each time
        self.n_done = 0
        self.n_errors = 0
        self.n_started = 0
        self.add(items)

    def add(self, items: Iterable[Item]) -> None:
        """Declare the step's items (after the watches primed the world, before any request)."""
        for item in items:
            if item.name in self.items:
                raise ValueError("item %r is declared twice: item names in one step must be unique" % item.name)
            self.items[item.name] = item
            for kind_name, key in item.subjects:
                self._by_subject.setdefault(K.subject_key(kind_name, key), []).append(item)

    # the three inputs ----------------------------------------------------------------------
    def started(self, names: Iterable[str], t: float) -> None:
        """Requests for these items are about to be sent at time t."""
        if self.first_start is None or t < self.first_start:
            self.first_start = t
        for name in names:
            item = self.items[name]
            if item.start is None:
                item.start = t
                self.n_started += 1
                self._evaluate(item, t)

    def failed(self, names: Iterable[str], reason: object, t: float | None = None) -> None:
        """The request for these items failed: they are settled with an error."""
        for name in names:
            item = self.items[name]
            if not item.settled:
                self._fail(item, str(reason))
                if item.start is None and t is not None:
                    item.start = t
                    self.n_started += 1

    def observe(self, kind_name: str, etype: str, obj: dict[str, Any], t: float) -> None:
        """One watch event (or relist difference) received at time t."""
        self.events += 1
        touched = self.world.apply(kind_name, etype, obj, t)
        if kind_name == "Event":
            if etype != "DELETED":
                self._warning(obj, t)
            return
        self._reevaluate(touched, t)

    def relisted(self, kind_name: str, items: Iterable[dict[str, Any]], t: float) -> None:
        """A relist after a 410: differences become events."""
        self._reevaluate(self.world.replace(kind_name, items, t), t)

    # state ---------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        return {"total": len(self.items), "done": self.n_done, "errors": self.n_errors, "started": self.n_started}

    def all_settled(self) -> bool:
        return self.n_done + self.n_errors >= len(self.items)

    def unsettled(self) -> list[Item]:
        return [i for i in self.items.values() if not i.settled]

    # internals -----------------------------------------------------------------------------
    def _reevaluate(self, touched: Iterable[tuple[str, ...]], t: float) -> None:
        pending: set[Item] = set()
        for dep in touched:
            pending.update(self._by_dep.get(dep, ()))
        for item in pending:
            if not item.settled and item.start is not None:
                # an event received before the item's request went out (and applied late, after
                # the lock was free) shows a state that held before the request: it ends at start
                self._evaluate(item, max(t, item.start))

    def _evaluate(self, item: Item, t: float) -> None:
        view = self.world.view()
        missing = item.check(view)
        deps = frozenset(view.reads)
        if deps != item.deps:
            for d in item.deps - deps:
                s = self._by_dep.get(d)
                if s is not None:
                    s.discard(item)
                    if not s:
                        del self._by_dep[d]
            for d in deps - item.deps:
                self._by_dep.setdefault(d, set()).add(item)
            item.deps = deps
        item.missing = missing
        if missing is None:
            item.end = t
            self.n_done += 1
            if self.last_end is None or t > self.last_end:
                self.last_end = t
            self._drop_deps(item)

    def _drop_deps(self, item: Item) -> None:
        for d in item.deps:
            s = self._by_dep.get(d)
            if s is not None:
                s.discard(item)
                if not s:
                    del self._by_dep[d]
        item.deps = frozenset()

    def _warning(self, ev: dict[str, Any], t: float) -> None:
        if ev.get("type") != "Warning":
            return
        subject = K.EVENT.indexes["subject"](ev)
        for item in self._by_subject.get(subject, ()):  # type: ignore[arg-type]  # None (no involved object) finds none
            if item.settled or item.start is None or t < item.start:
                continue
            name = (ev.get("metadata") or {}).get("name")
            count = int(ev.get("count") or 1)
            prev = item.warnings.get(name)
            item.warning_count += count - (prev[2] if prev else 0)
            item.warnings[name] = (ev.get("reason") or "Warning", ev.get("message") or "", count, t)
            if self.give_up and item.warning_count >= self.give_up:
                self._fail(item, self.reason(item))

    def _fail(self, item: Item, reason: str | None) -> None:
        item.error = reason
        self.n_errors += 1
        self._drop_deps(item)

    @staticmethod
    def reason(item: Item) -> str | None:
        """The latest Warning event of the item's objects ("ProvisioningFailed: ..."), or None."""
        if not item.warnings:
            return None
        reason, message, count, _ = max(item.warnings.values(), key=lambda w: w[3])
        text = "%s: %s" % (reason, message) if message else reason
        if item.warning_count > 1:
            text += " (%d warning events)" % item.warning_count
        return text
