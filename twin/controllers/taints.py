"""Taints and tolerations as k8s.io/api/core/v1 (toleration.go, taint.go) and component-helpers match them; shared
by the scheduler (TaintToleration), the DaemonSet controller (NodeShouldRunDaemonPod) and the taint eviction
controller (GetMatchingTolerations)."""
from __future__ import annotations

from collections.abc import Iterable

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
PID_PRESSURE = "node.kubernetes.io/pid-pressure"


def tolerates(toleration: dict, taint: dict) -> bool:
    """Toleration.ToleratesTaint: an empty effect matches every effect, an empty key (with Exists) every key."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def first_untolerated(taints: Iterable[dict], tolerations: list[dict] | None, effects: tuple[str, ...]) -> dict | None:
    """FindMatchingUntoleratedTaint: the first taint of one of `effects` that no toleration tolerates."""
    for taint in taints:
        if taint.get("effect") in effects and not any(tolerates(t, taint) for t in tolerations or []):
            return taint
    return None


def matching_tolerations(taints: list[dict], tolerations: list[dict] | None) -> tuple[bool, list[dict]]:
    """GetMatchingTolerations: (every taint tolerated, the first toleration found for each taint)."""
    used = []
    for taint in taints:
        t = next((t for t in tolerations or [] if tolerates(t, taint)), None)
        if t is None:
            return False, []
        used.append(t)
    return True, used


def min_toleration_seconds(used: list[dict]) -> float:
    """getMinTolerationTime: 0 without tolerations or with one of 0 s or less, the smallest tolerationSeconds,
    or -1 (forever) when none of them bounds the time."""
    if not used:
        return 0.0
    bounded = [t["tolerationSeconds"] for t in used if t.get("tolerationSeconds") is not None]
    if any(s <= 0 for s in bounded):
        return 0.0
    return float(min(bounded)) if bounded else -1.0


def no_execute(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == "NoExecute"]
