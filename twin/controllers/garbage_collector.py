"""Owner-reference garbage collection: background, foreground and orphan propagation."""
from __future__ import annotations

import asyncio

from .. import errors
from .base import Controller


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, cluster) -> None:
        super().__init__(cluster)
        self.removed: asyncio.Queue = asyncio.Queue()
        self.marked: dict[str, tuple] = {}
        self.store.on_removed.append(lambda rt, obj: self.removed.put_nowait(obj["metadata"]["uid"]))
        self.store.on_marked.append(self._on_marked)

    def _on_marked(self, rt, obj) -> None:
        md = obj["metadata"]
        self.marked[md["uid"]] = (rt, md.get("namespace"), md["name"])

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
                obj = self.store.get(rt, ns, name)
                others = [o["uid"] for o in obj["metadata"].get("ownerReferences", []) if o["uid"] != uid]
                if any(o in self.store.by_uid for o in others):
                    continue  # another owner is still alive
                try:
                    self.store.delete(rt, ns, name, propagation="Background")
                except errors.ApiError:
                    pass
            self.store.dependents.pop(uid, None)

    async def _marked_loop(self) -> None:
        """Owners marked with foregroundDeletion/orphan finalizers: act on their dependents."""
        while True:
            await asyncio.sleep(0.05)
            for uid, (rt, ns, name) in list(self.marked.items()):
                if not self.store.exists(rt, ns, name):
                    self.marked.pop(uid, None)
                    continue
                fins = self.store.get(rt, ns, name)["metadata"].get("finalizers") or []
                deps = self._live_dependents(uid)
                if "orphan" in fins:
                    for drt, dns, dname in deps:
                        d = self.store.get(drt, dns, dname)
                        d["metadata"]["ownerReferences"] = [o for o in d["metadata"].get("ownerReferences", [])
                                                            if o["uid"] != uid]
                        self.store.update(drt, dns, dname, d, _internal=True)
                    self.store.finalize(rt, ns, name, "orphan")
                elif "foregroundDeletion" in fins:
                    if not deps:
                        self.store.finalize(rt, ns, name, "foregroundDeletion")
                    for drt, dns, dname in deps:
                        if not self.store.get(drt, dns, dname)["metadata"].get("deletionTimestamp"):
                            try:
                                self.store.delete(drt, dns, dname, propagation="Foreground")
                            except errors.ApiError:
                                pass
                else:
                    self.marked.pop(uid, None)
