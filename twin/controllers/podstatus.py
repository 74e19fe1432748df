"""Shared shapes of the workload controllers: pod readiness, conditions, owner references, names.

Written as the real controllers write them, so that clients reading the objects (kubectl rollout
status, kubernetes.core's waiters, the pydantic models of the kubernetes client) see real shapes.
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterable

from ..store import now_iso

# k8s.io/apimachinery/pkg/util/rand: names without vowels or look-alike digits
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_rng = random.Random()


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: dict, collision_count: int = 0) -> str:
    """controller.ComputeHash: fnv32a of the template, rendered with SafeEncodeString."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in str(fnv32a(data)))


def random_suffix(n: int = 5) -> str:
    return "".join(_rng.choice(SAFE_ALPHABET) for _ in range(n))


# owners -----------------------------------------------------------------------------------
def controller_ref(owner: dict) -> dict:
    md = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": md["name"], "uid": md["uid"],
            "controller": True, "blockOwnerDeletion": True}


def plain_ref(owner: dict) -> dict:
    """A non-controller owner reference, as the StatefulSet controller puts on retained claims."""
    md = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": md["name"], "uid": md["uid"]}


def controller_of(obj: dict) -> dict | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def owned_by(obj: dict, kind: str) -> tuple[str, str] | None:
    """(namespace, owner name) when obj's controller is of that kind."""
    ref = controller_of(obj)
    if ref and ref.get("kind") == kind:
        return obj["metadata"].get("namespace", ""), ref["name"]
    return None


def controlled(store, owner: dict, rt) -> list[dict]:
    """Objects of rt whose controller reference carries owner's uid (the store's dependents index, no scan)."""
    uid = owner["metadata"]["uid"]
    out = []
    for key, ns, name in list(store.dependents.get(uid, ())):
        if key != rt.key:
            continue
        e = store.objects[key].get((ns, name))
        if e is not None and (controller_of(e.obj) or {}).get("uid") == uid:
            out.append(e.obj)
    return out


def owned_pods(store, owner: dict) -> list[dict]:
    """Pods whose controller is owner."""
    return controlled(store, owner, store.rt("", "v1", "pods"))


# pod state -------------------------------------------------------------------------------
def condition(obj: dict, ctype: str) -> dict | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def is_ready(pod: dict) -> bool:
    c = condition(pod, "Ready")
    return bool(c and c.get("status") == "True")


def is_running_and_ready(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def is_terminating(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: dict) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return not is_terminal(pod) and not is_terminating(pod)


def set_condition(conditions: list[dict], ctype: str, status: str, reason: str | None = None,
                  message: str | None = None, *, with_update_time: bool = False, probe_time: bool = False) -> bool:
    """Set one condition in place, as SetDeploymentCondition / the kubelet's status manager do:
    nothing changes when status, reason and message are the same; lastTransitionTime moves only
    when status changes. Returns whether anything changed."""
    ts = now_iso()
    for i, c in enumerate(conditions):
        if c["type"] != ctype:
            continue
        if c.get("status") == status and c.get("reason") == reason and c.get("message") == message:
            return False
        new = _new_condition(ctype, status, reason, message, ts, with_update_time, probe_time or "lastProbeTime" in c)
        if c.get("status") == status and c.get("lastTransitionTime"):
            new["lastTransitionTime"] = c["lastTransitionTime"]
        conditions[i] = new
        return True
    conditions.append(_new_condition(ctype, status, reason, message, ts, with_update_time, probe_time))
    return True


def _new_condition(ctype: str, status: str, reason: str | None, message: str | None, ts: str,
                   with_update_time: bool, probe_time: bool) -> dict:
    c: dict = {"type": ctype, "status": status}
    if probe_time:
        c["lastProbeTime"] = None
    if with_update_time:
        c["lastUpdateTime"] = ts
    c["lastTransitionTime"] = ts
    if reason is not None:
        c["reason"] = reason
    if message is not None:
        c["message"] = message
    return c


def omit_empty(status: dict, keys: Iterable[str]) -> dict:
    """Go's `omitempty` on int fields: the real API never sends those zeros (clients compare None to 0)."""
    for k in keys:
        if not status.get(k):
            status.pop(k, None)
    return status


def ordinal_of(name: str, parent: str) -> int | None:
    prefix = parent + "-"
    if not name.startswith(prefix):
        return None
    tail = name[len(prefix):]
    return int(tail) if tail.isdigit() else None
