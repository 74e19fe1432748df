# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The latest state of every watched object, fed by watch events, read by terminal-state predicates.

Predicates read the world through a View that records what they read; the tracker keeps that
set as the item's dependencies and re-evaluates an item only when one of them changes. This keeps
the cost per watch event independent of the batch size (1000 volumes cost as much per event as 10).

Marks: the client receive time at which an object first met a condition in this step
(a VolumeAttachment's status.attached, a pod's Ready condition), so sub-intervals such as
"volume attached" are timed on the same clock as everything else.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.kinds import Kind


def _rv(obj: Mapping[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("resourceVersion")


class World:
    def __init__(self, kinds: Iterable[Kind],
                 mark_rules: Mapping[str, Mapping[str, Callable[[dict[str, Any]], bool]]] | None = None) -> None:
        """kinds: Kind objects; mark_rules: {kind name: {mark name: predicate(obj) -> bool}}."""
        self.kinds = {k.name: k for k in kinds}
        self.objects: dict[str, dict[str, dict[str, Any]]] = {k.name: {} for k in kinds}
        self.tombstones: dict[str, dict[str, dict[str, Any]]] = {k.name: {} for k in kinds}
        self.index: dict[tuple[str, str, str], set[str]] = {}
        # every key an index value ever had in this step (deleted objects too): timing records
        self.ever: dict[tuple[str, str, str], set[str]] = {}
        self.marks: dict[tuple[str, str], dict[str, float]] = {}
        self.mark_rules = mark_rules or {}

    # writes (watch threads, under the engine's lock) ---------------------------------------
    def apply(self, kind_name: str, etype: str, obj: dict[str, Any], t: float) -> set[tuple[str, ...]]:
        """Apply one watch event; return the dependency keys it touched."""
        kind = self.kinds[kind_name]
        key = kind.key(obj)
        objs = self.objects[kind_name]
        old = objs.get(key)
        touched: set[tuple[str, ...]] = {("obj", kind_name, key)}
        if etype == "DELETED":
            objs.pop(key, None)
            self.tombstones[kind_name][key] = obj
            self._mark(kind_name, key, "gone", t)
            new = None
        else:
            objs[key] = obj
            self.tombstones[kind_name].pop(key, None)
            self._mark(kind_name, key, "seen", t)
            for mark, pred in self.mark_rules.get(kind_name, {}).items():
                try:
                    if pred(obj):
                        self._mark(kind_name, key, mark, t)
                except (KeyError, TypeError, AttributeError):
                    pass
            new = obj
        for idx, fn in kind.indexes.items():
            before = fn(old) if old is not None else None
            after = fn(new) if new is not None else None
            if before == after:
                if before is not None:
                    touched.add(("idx", kind_name, idx, before))
                continue
            if before is not None:
                self.index.get((kind_name, idx, before), set()).discard(key)
                touched.add(("idx", kind_name, idx, before))
            if after is not None:
                self.index.setdefault((kind_name, idx, after), set()).add(key)
                self.ever.setdefault((kind_name, idx, after), set()).add(key)
                touched.add(("idx", kind_name, idx, after))
        return touched

    def replace(self, kind_name: str, items: Iterable[dict[str, Any]], t: float) -> set[tuple[str, ...]]:
        """A relist: objects missing from items were deleted meanwhile; changed ones modified."""
        kind = self.kinds[kind_name]
        touched: set[tuple[str, ...]] = set()
        fresh = {kind.key(o): o for o in items}
        for key in list(self.objects[kind_name]):
            if key not in fresh:
                touched |= self.apply(kind_name, "DELETED", self.objects[kind_name][key], t)
        for key, obj in fresh.items():
            old = self.objects[kind_name].get(key)
            if old is None or _rv(old) != _rv(obj):
                touched |= self.apply(kind_name, "MODIFIED" if old else "ADDED", obj, t)
        return touched

    def _mark(self, kind_name: str, key: str, mark: str, t: float) -> None:
        self.marks.setdefault((kind_name, key), {}).setdefault(mark, t)

    # reads ----------------------------------------------------------------------------------
    def view(self) -> View:
        return View(self)


class View:
    """Read access that remembers every key read (the reader's dependencies)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.reads: set[tuple[str, ...]] = set()

    def get(self, kind_name: str, key: str) -> dict[str, Any] | None:
        self.reads.add(("obj", kind_name, key))
        return self.world.objects[kind_name].get(key)

    def last(self, kind_name: str, key: str) -> dict[str, Any] | None:
        """The object, or its last state before deletion (server timestamps, descriptions)."""
        obj = self.get(kind_name, key)
        return obj if obj is not None else self.world.tombstones[kind_name].get(key)

    def lookup(self, kind_name: str, index: str, value: str) -> list[dict[str, Any]]:
        """Objects whose index value is `value` (e.g. VolumeAttachments of one PV)."""
        self.reads.add(("idx", kind_name, index, value))
        keys = self.world.index.get((kind_name, index, value)) or ()
        objs = self.world.objects[kind_name]
        return [objs[k] for k in sorted(keys) if k in objs]

    def ever(self, kind_name: str, index: str, value: str) -> list[str]:
        """Keys that ever had this index value in the step, deleted ones included (not a dependency)."""
        return sorted(self.world.ever.get((kind_name, index, value)) or ())

    def mark(self, kind_name: str, key: str, mark: str) -> float | None:
        return self.world.marks.get((kind_name, key), {}).get(mark)
