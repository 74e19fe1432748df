"""Waiting on cluster state from watch events, as a controller would: no polling, no sleeps.

watch_until() lists once, then follows a watch from the list's resourceVersion and re-evaluates the caller's
condition on the objects as they are after every event. Its bound is for a cluster that never gets there, never
a measurement: on a slow machine the wait simply takes longer.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable


def _meta(obj: Any) -> tuple[str, str]:
    md = obj["metadata"] if isinstance(obj, dict) else obj.metadata
    if isinstance(md, dict):
        return md.get("namespace") or "", md["name"]
    return md.namespace or "", md.name


def _rv(listed: Any) -> str:
    return listed["metadata"]["resourceVersion"] if isinstance(listed, dict) else listed.metadata.resource_version


def _items(listed: Any) -> list[Any]:
    return listed["items"] if isinstance(listed, dict) else listed.items


def watch_until(list_fn: Callable[..., Any], done: Callable[[list[Any]], Any], what: str, *args: Any,
                bound: int = 300, **kwargs: Any) -> list[Any]:
    """Call list_fn(*args, **kwargs) (a kubernetes client list method), then watch it until done(objects) is
    truthy; return the objects. Fails naming `what` if the watch ends (after `bound` seconds) before that."""
    from kubernetes import watch

    listed = list_fn(*args, **kwargs)
    objects = {_meta(o): o for o in _items(listed)}
    if done(list(objects.values())):
        return list(objects.values())
    w = watch.Watch()
    for ev in w.stream(list_fn, *args, resource_version=_rv(listed), timeout_seconds=bound, **kwargs):
        if ev["type"] == "DELETED":
            objects.pop(_meta(ev["object"]), None)
        elif ev["type"] in ("ADDED", "MODIFIED"):
            objects[_meta(ev["object"])] = ev["object"]
        else:
            continue
        if done(list(objects.values())):
            w.stop()
            return list(objects.values())
    raise AssertionError(f"{what}: not reached within {bound} s; last state: {sorted(objects)}")
