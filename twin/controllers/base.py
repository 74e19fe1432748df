"""What every twin controller shares: the cluster, a watch loop, a work queue, events."""
from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any
from collections.abc import AsyncIterator, Coroutine

from ..store import now_iso

if TYPE_CHECKING:
    from ..context import ClusterContext

log = logging.getLogger("twin")


class Controller:
    name = "controller"

    def __init__(self, cluster: ClusterContext) -> None:
        self.cluster = cluster
        self.store = cluster.store

    async def run(self) -> None:
        raise NotImplementedError

    async def watch(self, group: str, version: str, plural: str, **kw: Any) -> AsyncIterator[tuple[str, dict]]:
        """Yield (type, object) from the store: current objects first, then changes, forever."""
        rt = self.store.rt(group, version, plural)
        w = self.store.watch(rt, **kw)
        try:
            while True:
                etype, raw = await w.queue.get()
                yield etype, json.loads(raw)
        finally:
            self.store.unwatch(w)

    def event(self, obj: dict, etype: str, reason: str, message: str, component: str | None = None) -> None:
        """Record a core/v1 Event about obj, as controllers do (kubectl describe shows them)."""
        md = obj["metadata"]
        ns = md.get("namespace") or "default"
        ts = now_iso()
        ev = {"metadata": {"name": f"{md['name']}.{uuid.uuid4().hex[:16]}", "namespace": ns},
              "involvedObject": {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"), "name": md["name"],
                                 "namespace": md.get("namespace"), "uid": md.get("uid"),
                                 "resourceVersion": md.get("resourceVersion")},
              "reason": reason, "message": message, "type": etype, "count": 1,
              "source": {"component": component or self.name}, "firstTimestamp": ts, "lastTimestamp": ts,
              "reportingComponent": component or self.name, "reportingInstance": ""}
        try:
            self.store.create(self.store.rt("", "v1", "events"), ns, ev)
        except Exception:  # an event is best effort, as in client-go's recorder
            log.exception("event not recorded")

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        return asyncio.sleep(seconds * self.cluster.time_scale)
