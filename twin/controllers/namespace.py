"""Namespace lifecycle: a terminating namespace deletes its contents, then itself."""
from __future__ import annotations

import asyncio
import functools

from ..apimachinery import errors
from .base import Controller


def _forget(names: set[str], name: str, _task: asyncio.Future) -> None:
    names.discard(name)


class NamespaceController(Controller):
    name = "namespace-controller"

    async def run(self) -> None:
        draining: set[str] = set()
        async for etype, ns in self.watch("", "v1", "namespaces"):
            name = ns["metadata"]["name"]
            if etype != "DELETED" and ns["metadata"].get("deletionTimestamp") and name not in draining:
                draining.add(name)
                task = asyncio.ensure_future(self._drain(name))
                task.add_done_callback(functools.partial(_forget, draining, name))  # bound now: name is rebound per event

    def _namespaced_types(self):
        seen = set()
        for rt in self.store.registry.all():
            if rt.namespaced and rt.key not in seen:
                seen.add(rt.key)
                yield rt

    async def _drain(self, name: str) -> None:
        ns_rt = self.store.rt("", "v1", "namespaces")
        while self.store.exists(ns_rt, None, name):
            left = 0
            for rt in self._namespaced_types():
                for e in self.store.list_entries(rt, name):
                    left += 1
                    if not e.obj["metadata"].get("deletionTimestamp"):
                        try:
                            self.store.delete(rt, name, e.obj["metadata"]["name"], propagation="Background")
                        except errors.ApiError:
                            pass
            if left == 0:
                obj = self.store.get(ns_rt, None, name)
                obj["spec"]["finalizers"] = []
                self.store.update(ns_rt, None, name, obj, _internal=True)
                self.store.delete(ns_rt, None, name)
                return
            await asyncio.sleep(0.05)
