"""What a Deployment's ReplicaSets remember: the pod-template hash, the revision annotations and the conditions.

Follows pkg/controller/deployment/util (deployment_util.go): a ReplicaSet belongs to the current template when
EqualIgnoreHash says so (the templates are equal once the pod-template-hash label is dropped), so `kubectl rollout
undo`, which patches the old ReplicaSet's template back into the Deployment, finds that ReplicaSet again instead of
making a new one; it then gets the next revision and keeps the revisions it had in `revision-history`
(SetNewReplicaSetAnnotations). The Deployment's own annotations (`kubernetes.io/change-cause` among them) are copied to
its new ReplicaSet, which is what `kubectl rollout history` prints.
"""
from __future__ import annotations

import copy
import json
import struct

from ..store import now_iso
from .podstatus import SAFE_ALPHABET, fnv32a

HASH_LABEL = "pod-template-hash"
REVISION_ANN = "deployment.kubernetes.io/revision"
HISTORY_ANN = "deployment.kubernetes.io/revision-history"
DESIRED_ANN = "deployment.kubernetes.io/desired-replicas"
MAX_ANN = "deployment.kubernetes.io/max-replicas"
# copyDeploymentAnnotationsToReplicaSet leaves these out (skipCopyAnnotation)
_NOT_COPIED = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION_ANN, HISTORY_ANN, DESIRED_ANN,
                         MAX_ANN})
# the deployment controller's maxRevHistoryLengthInChars: revision-history keeps at most this many characters
REV_HISTORY_LIMIT_CHARS = 2000


def comparable_template(template: dict) -> dict:
    """The template as the controller's Go structs see it: no hash label, and `creationTimestamp: null` (which
    kubectl sends back on an undo) the same as no creationTimestamp."""
    t = copy.deepcopy(template)
    md = t.get("metadata") or {}
    if md.get("creationTimestamp", "") is None:
        del md["creationTimestamp"]
    labels = md.get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return t


def equal_ignore_hash(a: dict, b: dict) -> bool:
    return comparable_template(a) == comparable_template(b)


def compute_hash(template: dict, collision_count: int | None) -> str:
    """controller.ComputeHash: fnv32a of the template, then (once a collision was counted) the count as 8 bytes
    little-endian, the decimal sum rendered with rand.SafeEncodeString. The template is hashed as sorted JSON where
    upstream hashes its Go struct with spew, so the twin's hashes have upstream's shape, not its exact values."""
    data = json.dumps(comparable_template(template), sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += struct.pack("<Q", collision_count & 0xFFFFFFFF)
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in str(fnv32a(data)))


def revision(rs: dict) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION_ANN, "0"))
    except ValueError:
        return 0


def by_revision(rss: list[dict]) -> list[dict]:
    """ReplicaSetsByRevision: oldest revision first, then the older ReplicaSet."""
    return sorted(rss, key=lambda r: (revision(r), r["metadata"].get("creationTimestamp", ""), r["metadata"]["name"]))


def set_new_rs_annotations(d: dict, rs: dict, new_revision: int, exists: bool, replicas_annotations: dict) -> bool:
    """SetNewReplicaSetAnnotations on rs (in place): the Deployment's annotations, the revision when it is behind
    new_revision (a rollback to rs: its former revision goes to revision-history), and on a new ReplicaSet the
    desired/max replicas. Returns whether anything changed."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in (d["metadata"].get("annotations") or {}).items():
        if k not in _NOT_COPIED and ann.get(k) != v:
            ann[k] = v
            changed = True
    old = ann.get(REVISION_ANN)
    old_int = int(old) if old and old.isdigit() else 0
    if old_int < new_revision:
        ann[REVISION_ANN] = str(new_revision)
        changed = True
        if old is not None:
            ann[HISTORY_ANN] = _append_history(ann.get(HISTORY_ANN, ""), old)
            if not ann[HISTORY_ANN]:
                del ann[HISTORY_ANN]
    if not exists:
        for k, v in replicas_annotations.items():
            if ann.get(k) != v:
                ann[k] = v
                changed = True
    return changed


def _append_history(history: str, old: str) -> str:
    if not history:
        return old
    olds = history.split(",")
    total, start = len(history) + len(old) + 1, 0
    while total > REV_HISTORY_LIMIT_CHARS and start < len(olds):
        total -= len(olds[start]) + 1
        start += 1
    return ",".join(olds[start:] + [old]) if total <= REV_HISTORY_LIMIT_CHARS else history


# conditions -----------------------------------------------------------------------------------
def get_condition(status: dict, ctype: str) -> dict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == ctype), None)


def new_condition(ctype: str, status: str, reason: str, message: str) -> dict:
    ts = now_iso()
    return {"type": ctype, "status": status, "lastUpdateTime": ts, "lastTransitionTime": ts, "reason": reason,
            "message": message}


def set_condition(status: dict, cond: dict) -> None:
    """SetDeploymentCondition: the same status and reason change nothing; a new one goes to the end of the list,
    keeping lastTransitionTime while the status stays."""
    cur = get_condition(status, cond["type"])
    if cur and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return
    if cur and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime", cond["lastTransitionTime"])
    remove_condition(status, cond["type"])
    status.setdefault("conditions", []).append(cond)


def remove_condition(status: dict, ctype: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != ctype]
