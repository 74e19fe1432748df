"""Owner-reference garbage collection: background, foreground and orphan propagation.

Like kube-controller-manager's garbage collector:
- background: once an owner is gone, dependents none of whose other owners still exist are deleted
  (a dependent created with references only to owners that do not exist is collected too; one that
  still has a live owner loses the dangling references instead);
- foreground: an owner deleted with propagationPolicy=Foreground carries the foregroundDeletion
  finalizer; its dependents are deleted (in foreground too) and the finalizer is removed once
  they are all gone;
- orphan: the orphan finalizer makes the collector remove the owner's references from its
  dependents, then the finalizer.
"""
from __future__ import annotations

import asyncio

from ..apimachinery import errors
from .base import Controller

# how long a new dependent's owners get to show up before the reference counts as dangling
DANGLING_GRACE = 0.2


class GarbageCollector(Controller):
    name = "garbage-collector"

    def setup(self) -> None:
        self.removed: asyncio.Queue = asyncio.Queue()
        self.marked: dict[str, tuple] = {}
        self.wake = asyncio.Event()
        self.suspects: dict[str, tuple] = {}  # uid -> (rtype, ns, name) of dependents to check for dangling owners
        self.store.on_removed.append(lambda rt, obj: self.removed.put_nowait(obj["metadata"]["uid"]))
        self.store.on_marked.append(self._on_marked)

    def _on_marked(self, rt, obj) -> None:
        md = obj["metadata"]
        self.marked[md["uid"]] = (rt, md.get("namespace"), md["name"])
        self.wake.set()

    def on_change(self, rt, etype: str, obj: dict, old: dict | None) -> None:
        if etype == "DELETED":
            return
        refs = obj["metadata"].get("ownerReferences")
        if not refs:
            return
        if old is not None and (old.get("metadata") or {}).get("ownerReferences") == refs:
            return
        if any(r.get("uid") not in self.store.by_uid for r in refs if isinstance(r, dict)):
            md = obj["metadata"]
            self.suspects[md["uid"]] = (rt, md.get("namespace"), md["name"])
            asyncio.get_running_loop().call_later(DANGLING_GRACE, self.wake.set)

    def _owner_exists(self, ref: dict, dep_ns: str | None) -> bool | None:
        """True/False; None when the owner's kind is unknown (then it is left alone, as the real GC does)."""
        rt = self.store.registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        if rt is None:
            return None
        ns = dep_ns if rt.namespaced else None
        e = self.store.objects[rt.key].get((ns or "", ref.get("name", "")))
        return e is not None and e.obj["metadata"].get("uid") == ref.get("uid")

    def _live_dependents(self, uid: str):
        out = []
        for key, ns, name in list(self.store.dependents.get(uid, ())):
            rt = self.store.registry.by_key(key)
            if rt is not None and self.store.exists(rt, ns or None, name):
                out.append((rt, ns or None, name))
        return out

    async def run(self) -> None:
        asyncio.ensure_future(self._marked_loop())
        while True:
            uid = await self.removed.get()
            for rt, ns, name in self._live_dependents(uid):
                self._collect(rt, ns, name)
            self.store.dependents.pop(uid, None)

    def _collect(self, rt, ns: str | None, name: str) -> None:
        """Delete a dependent whose owners are all gone; drop the dangling references of one that has a live owner."""
        if not self.store.exists(rt, ns, name):
            return
        obj = self.store.get(rt, ns, name)
        md = obj["metadata"]
        refs = [r for r in md.get("ownerReferences") or [] if isinstance(r, dict)]
        if not refs or md.get("deletionTimestamp"):
            return
        live = [r for r in refs if self._owner_exists(r, md.get("namespace")) is not False]
        try:
            if not live:
                self.store.delete(rt, ns, name, propagation="Background")
            elif len(live) < len(refs):
                md["ownerReferences"] = live
                self.store.update(rt, ns, name, obj, _internal=True)
        except errors.ApiError:
            pass

    async def _marked_loop(self) -> None:
        """Owners marked with foregroundDeletion/orphan finalizers act on their dependents; new
        dependents whose owners never showed up are collected."""
        while True:
            try:
                await asyncio.wait_for(self.wake.wait(), 0.2 if self.marked else 5.0)
            except TimeoutError:
                pass
            self.wake.clear()
            if self.suspects:
                await asyncio.sleep(DANGLING_GRACE)
                suspects, self.suspects = self.suspects, {}
                for rt, ns, name in suspects.values():
                    self._collect(rt, ns, name)
            for uid, (rt, ns, name) in list(self.marked.items()):
                if not self.store.exists(rt, ns, name):
                    self.marked.pop(uid, None)
                    continue
                fins = self.store.get(rt, ns, name)["metadata"].get("finalizers") or []
                deps = self._live_dependents(uid)
                try:
                    if "orphan" in fins:
                        for drt, dns, dname in deps:
                            d = self.store.get(drt, dns, dname)
                            d["metadata"]["ownerReferences"] = [o for o in d["metadata"].get("ownerReferences", [])
                                                                if o.get("uid") != uid]
                            self.store.update(drt, dns, dname, d, _internal=True)
                        self.store.finalize(rt, ns, name, "orphan")
                    elif "foregroundDeletion" in fins:
                        blocking = []
                        for drt, dns, dname in deps:
                            d = self.store.get(drt, dns, dname)
                            if not d["metadata"].get("deletionTimestamp"):
                                self.store.delete(drt, dns, dname, propagation="Foreground")
                            if self.store.exists(drt, dns, dname):
                                blocking.append(dname)
                        if not blocking:
                            self.store.finalize(rt, ns, name, "foregroundDeletion")
                    else:
                        self.marked.pop(uid, None)
                except errors.ApiError:
                    pass
