"""taint-eviction-controller: pods on a node with NoExecute taints they do not tolerate are deleted.

Follows pkg/controller/tainteviction (taint_eviction.go processPodOnNode): for a pod bound to a node with NoExecute
taints, every taint needs a toleration (GetMatchingTolerations, the first one that tolerates each taint). A pod
missing one is deleted at once; otherwise the smallest tolerationSeconds of those tolerations (getMinTolerationTime)
sets a timer in cluster time (--time-scale), started when the pod first met the taints and kept when a later change
would fire it later; tolerations without tolerationSeconds keep the pod forever. Removing the taints, or tolerating
them forever, cancels the timer (event TaintManagerEviction "Cancelling deletion of Pod ns/name").

The deletion is what the controller sends: the DisruptionTarget condition (DeletionByTaintManager) on the pod's
status, then a DELETE without options, graceful as any DELETE (the kubelet runs the termination), after the event
TaintManagerEviction "Marking for deletion Pod ns/name". Pods already being deleted are left to finish.
"""
from __future__ import annotations

import asyncio

from ..apimachinery import errors
from .base import Controller
from .podstatus import is_terminal, set_condition
from .taints import matching_tolerations, min_toleration_seconds, no_execute
from . import vclock

COMPONENT = "taint-eviction-controller"


class TaintEvictionController(Controller):
    name = COMPONENT

    def setup(self) -> None:
        # (ns, pod) -> (virtual start, the timer); start is vclock time, so a later change keeps the first deadline
        self.timers: dict[tuple[str, str], tuple[float, asyncio.Handle]] = {}
        self.pods_on: dict[str, set[tuple[str, str]]] = {}  # node -> pods bound to it
        self.node_of: dict[tuple[str, str], str] = {}

    def on_change(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.nodes_rt.key:
            if etype == "DELETED":
                return  # pod GC's business
            taints = no_execute(obj)
            if old is not None and taints == no_execute(old):
                return
            for key in list(self.pods_on.get(obj["metadata"]["name"], ())):
                self._process(key, taints)
        elif rtype.key == self.pods_rt.key:
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            node = obj["spec"].get("nodeName")
            if etype == "DELETED" or not node:
                self._unbind(key)
                self._cancel(key, event=False)
                return
            if self.node_of.get(key) != node:
                self._unbind(key)
                self.node_of[key] = node
                self.pods_on.setdefault(node, set()).add(key)
            elif old is not None and old["spec"].get("tolerations") == obj["spec"].get("tolerations"):
                return  # neither the node nor the tolerations changed
            ne = self.store.objects[self.nodes_rt.key].get(("", node))
            if ne is not None:
                self._process(key, no_execute(ne.obj))

    def _unbind(self, key: tuple[str, str]) -> None:
        node = self.node_of.pop(key, None)
        if node is not None:
            pods = self.pods_on.get(node)
            if pods is not None:
                pods.discard(key)
                if not pods:
                    del self.pods_on[node]

    def _process(self, key: tuple[str, str], taints: list[dict]) -> None:
        """processPodOnNode."""
        if not taints:
            self._cancel(key, event=True)
            return
        e = self.store.objects[self.pods_rt.key].get(key)
        if e is None:
            return
        pod = e.obj
        if pod["metadata"].get("deletionTimestamp") or is_terminal(pod):
            return
        all_tolerated, used = matching_tolerations(taints, pod["spec"].get("tolerations"))
        loop = asyncio.get_running_loop()
        now = vclock.now()
        if not all_tolerated:
            self._cancel(key, event=True)
            self._schedule(key, now, loop.call_soon(self._evict, key))
            return
        seconds = min_toleration_seconds(used)
        if seconds < 0:
            self._cancel(key, event=True)
            return
        if key in self.timers:
            return  # the first deadline stands (upstream keeps the scheduled work)
        delay = seconds * self.cluster.time_scale
        self._schedule(key, now, loop.call_later(delay, self._evict, key))

    def _schedule(self, key: tuple[str, str], start: float, handle: asyncio.Handle) -> None:
        self.timers[key] = (start, handle)

    def _cancel(self, key: tuple[str, str], event: bool) -> None:
        timer = self.timers.pop(key, None)
        if timer is None:
            return
        timer[1].cancel()
        e = self.store.objects[self.pods_rt.key].get(key) if event else None
        if e is not None:
            self.event(e.obj, "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {key[0]}/{key[1]}",
                       component=COMPONENT)

    def _evict(self, key: tuple[str, str]) -> None:
        """deletePodHandler: the event, the DisruptionTarget condition, the DELETE."""
        self.timers.pop(key, None)
        e = self.store.objects[self.pods_rt.key].get(key)
        if e is None or e.obj["metadata"].get("deletionTimestamp"):
            return
        ns, name = key
        pod = self.store.get(self.pods_rt, ns, name)
        self.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {ns}/{name}", component=COMPONENT)
        try:
            conds = pod.setdefault("status", {}).setdefault("conditions", [])
            if set_condition(conds, "DisruptionTarget", "True", "DeletionByTaintManager",
                             "Taint manager: deleting due to NoExecute taint"):
                self.store.update(self.pods_rt, ns, name, pod, subresource="status")
            self.store.delete(self.pods_rt, ns, name)
        except errors.ApiError:
            pass  # gone meanwhile

    async def run(self) -> None:
        for e in self.store.list_entries(self.pods_rt):
            self.on_change(self.pods_rt, "ADDED", e.obj, None)
        await asyncio.Event().wait()  # everything else arrives through the store hook
