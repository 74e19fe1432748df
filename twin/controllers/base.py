"""What every twin controller shares: the cluster, one store hook, a watch loop, events; and the shape of the
workload controllers (Reconciler), which reconcile inside the writes that concern them."""
from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any, overload
from collections.abc import AsyncIterator, Coroutine, Hashable

from ..apimachinery import errors
from ..store import now_iso
from .syncqueue import SyncQueue

if TYPE_CHECKING:
    from ..context import ClusterContext
    from ..registry.resources import ResourceType

log = logging.getLogger("twin")


def spec_changed(obj: dict, old: dict | None) -> bool:
    """A new object, a new generation (its spec) or a deletion mark: what a workload controller acts on at once.
    Its own status writes change none of them."""
    md, omd = obj["metadata"], (old or {}).get("metadata", {})
    return old is None or md.get("generation") != omd.get("generation") or \
        md.get("deletionTimestamp") != omd.get("deletionTimestamp")


class Kind:
    """A resource type of the store as a class attribute, looked up on first use: `rs_rt = Kind("apps", "v1",
    "replicasets")` in a class whose instances have `store`."""

    def __init__(self, group: str, version: str, plural: str) -> None:
        self.gvr = (group, version, plural)
        self.attr = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = name

    @overload
    def __get__(self, obj: None, owner: type) -> Kind: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> ResourceType: ...

    def __get__(self, obj: Any, owner: type | None = None) -> ResourceType | Kind:
        if obj is None:
            return self
        rt = obj.store.rt(*self.gvr)
        obj.__dict__[self.attr] = rt  # later reads find the instance attribute first
        return rt


class Controller:
    """A controller's own state goes in setup(). A controller that must follow writes as they happen (inside
    the write, before the API answers) overrides on_change; the base hangs it on store.on_change once setup()
    is done, so the hook never meets a half-built controller. The others watch() in run()."""

    name = "controller"
    # the kinds most controllers read
    pods_rt = Kind("", "v1", "pods")
    nodes_rt = Kind("", "v1", "nodes")
    pvc_rt = Kind("", "v1", "persistentvolumeclaims")
    pv_rt = Kind("", "v1", "persistentvolumes")
    sc_rt = Kind("storage.k8s.io", "v1", "storageclasses")
    csinode_rt = Kind("storage.k8s.io", "v1", "csinodes")
    va_rt = Kind("storage.k8s.io", "v1", "volumeattachments")
    drv_rt = Kind("storage.k8s.io", "v1", "csidrivers")

    def __init__(self, cluster: ClusterContext) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.setup()
        if type(self).on_change is not Controller.on_change:
            self.store.on_change.append(self.on_change)

    def setup(self) -> None:
        """Resource types, queues and registrations of this controller."""

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        """Called by the store inside every write (ADDED, MODIFIED, DELETED; old is None for ADDED) once a
        subclass overrides it. It must not block; writes it makes recurse into every hook."""

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
            self.store.create(self.store.rt("", "v1", "events"), ns, ev, raw=True)  # raw: no need to decode it back
        except Exception:  # an event is best effort, as in client-go's recorder
            log.exception("event not recorded")

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        return asyncio.sleep(seconds * self.cluster.time_scale)

    async def gate(self, who: str = "") -> None:
        """Hold while a `stall:<who>` fault rule (twin/faults.py) stalls this controller, or the component `who`
        it plays; return at once otherwise."""
        await self.cluster.faults.wait_unstalled(who or self.name, self.cluster.time_scale)


class Reconciler(Controller):
    """A workload controller (syncqueue.py): it owns one kind (`owns`); a new object, a spec change or a deletion
    mark of one (spec_changed) reconciles it before the write returns, and changes of other kinds
    (dependent_changed, pods by default) queue their owner for a coming loop turn."""

    owns: tuple[str, str, str] = ("", "", "")

    def __init__(self, cluster: ClusterContext) -> None:
        self.own_rt = cluster.store.rt(*self.owns)
        self.queue = SyncQueue(self.name, self.reconcile)
        super().__init__(cluster)

    def key(self, obj: dict) -> Hashable:
        return obj["metadata"]["namespace"], obj["metadata"]["name"]

    def resync(self, key: Hashable, now: bool) -> None:
        """Queue an owned object: now (inside the write) or on a coming loop turn."""
        if now:
            self.queue.now(key)
        else:
            self.queue.soon(key)

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key != self.own_rt.key:
            self.dependent_changed(rtype, etype, obj, old)
        elif etype == "DELETED":
            self.forget(obj)
        elif spec_changed(obj, old):
            self.resync(self.key(obj), now=True)

    def dependent_changed(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        """A change of an object of another kind (a pod, a ReplicaSet) that may concern an owned one."""

    def forget(self, obj: dict) -> None:
        """An owned object is gone: drop what was kept about it."""

    def reconcile(self, key: Any) -> None:
        raise NotImplementedError

    def create_pod(self, owner: dict, pod: dict) -> tuple[dict | None, str | None]:
        """Create one pod of `owner` from a generateName: (the pod, None) or (None, the error), with events."""
        ns = owner["metadata"]["namespace"]
        for _ in range(5):  # 409 AlreadyExists: the server ran out of generated names; ask again
            try:
                created = self.store.create(self.pods_rt, ns, dict(pod, metadata=dict(pod["metadata"], namespace=ns)))
            except errors.ApiError as e:
                if e.code != 409:
                    self.event(owner, "Warning", "FailedCreate", f"Error creating: {e}")
                    return None, str(e)
                continue
            self.event(owner, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
            return created, None
        return None, "no free pod name"

    async def run(self) -> None:
        for e in self.store.list_entries(self.own_rt):
            self.resync(self.key(e.obj), now=False)
        await asyncio.Event().wait()  # everything else arrives through the store hook
