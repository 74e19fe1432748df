"""bench/watch.py: resume after the server ends a watch, relist after 410 Gone, stop at once.

The API server is played by a scripted stand-in that answers list and watch like the real one.
"""
from __future__ import annotations

import threading
import time

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item, Tracker
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.watch import KindWatch
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import World


def pvc(name, phase, rv):
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}, "status": {"phase": phase}}


class ScriptedServer:
    """list() answers `lists` in turn; watch() plays `watches` in turn (each a list of events)."""

    def __init__(self, lists, watches):
        self.lists = list(lists)
        self.watches = list(watches)
        self.watch_calls = []
        self.done = threading.Event()
        self.stopped = threading.Event()

    def list(self, api_version, kind, namespace=None, label_selector=None, limit=None):
        return self.lists.pop(0)

    def watch(self, api_version, kind, namespace=None, label_selector=None, resource_version=None,
              timeout_seconds=None, on_open=None):
        self.watch_calls.append(resource_version)
        if on_open:
            on_open(object())
        if not self.watches:  # an idle watch until the test is done
            self.done.set()
            self.stopped.wait(5)
            return
        for etype, obj in self.watches.pop(0):
            yield etype, obj, time.monotonic()


def test_watch_resumes_from_the_last_version_and_relists_after_410():
    items = [Item(n, C.pvc_bound("ns/" + n)) for n in ("a", "b", "c")]
    server = ScriptedServer(
        lists=[([], "10"),                                    # prime: nothing yet
               ([pvc("a", "Bound", 14), pvc("c", "Bound", 16)], "16")],  # relist after 410: b is gone, c is new
        watches=[[("ADDED", pvc("a", "Pending", 11)), ("BOOKMARK", {"metadata": {"resourceVersion": "12"}})],
                 # the server ended the first watch; the second resumes from 12 and is told it is too old
                 [("ERROR", {"code": 410, "reason": "Expired", "message": "too old resource version"})],
                 [("ADDED", pvc("b", "Bound", 17))]])
    world = World([K.PVC], C.MARK_RULES)
    tracker = Tracker(world, items)
    cond = threading.Condition()
    w = KindWatch(server, K.PVC, cond, tracker, namespace="ns")
    w.prime()
    with cond:
        tracker.started(["a", "b", "c"], time.monotonic())
    w.start()
    assert w.wait_open(5)
    assert server.done.wait(5)
    server.stopped.set()
    w.stop()
    assert server.watch_calls[:3] == ["10", "12", "16"], "resumed from the bookmark, then from the relist"
    assert w.relists == 1 and w.opens >= 3 and not w.failures
    assert all(tracker.items[n].end is not None for n in ("a", "b", "c"))
