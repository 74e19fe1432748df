"""ReplicaSet controller: keep spec.replicas active pods, report their readiness.

Follows pkg/controller/replicaset: pods are `<rs>-<5 safe characters>` with a controller reference;
scale-down deletes the least useful pods first (unscheduled, then Pending, not Ready, newest), and
status counts active pods (not finished, not being deleted). Spec changes are reconciled inside the
write that made them, so a Deployment's pods exist as soon as its ReplicaSet does. The ReplicationController
controller (replicationcontroller.py) is this one on another kind, as upstream's ReplicationManager is.
"""
from __future__ import annotations

import copy

from ..apimachinery import errors
from .base import Reconciler
from .podstatus import controller_ref, is_active, is_ready, omit_empty, owned_by, owned_pods, set_condition

# burstReplicas of the real controller: at most this many creations or deletions per sync
BURST_REPLICAS = 500
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(Reconciler):
    name = "replicaset-controller"
    owns = ("apps", "v1", "replicasets")
    owner_kind = "ReplicaSet"  # the kind of the pods' controller reference

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.pods_rt.key:
            owner = owned_by(obj, self.owner_kind)
            if owner:
                self.queue.soon(owner)

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        rs = self.store.get(self.own_rt, ns, name)
        error = None
        if not rs["metadata"].get("deletionTimestamp"):
            error = self._manage(rs)
        self._write_status(rs, error)

    def _manage(self, rs: dict) -> str | None:
        active = [p for p in owned_pods(self.store, rs) if is_active(p)]
        diff = len(active) - rs["spec"].get("replicas", 1)
        if diff < 0:
            for _ in range(min(-diff, BURST_REPLICAS)):
                err = self._create_pod(rs)
                if err:
                    return err
        elif diff > 0:
            for pod in sorted(active, key=_deletion_rank)[:min(diff, BURST_REPLICAS)]:
                pmd = pod["metadata"]
                try:
                    self.store.delete(self.pods_rt, pmd["namespace"], pmd["name"])
                    self.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pmd['name']}")
                except errors.ApiError:
                    pass
        return None

    def _create_pod(self, rs: dict) -> str | None:
        md = rs["metadata"]
        tpl = copy.deepcopy(rs["spec"].get("template") or {})
        tmd = tpl.get("metadata") or {}
        pod = {"metadata": {"generateName": f"{md['name']}-", "labels": dict(tmd.get("labels") or {}),
                            "ownerReferences": [controller_ref(rs)]},
               "spec": tpl.get("spec") or {}}
        if tmd.get("annotations"):
            pod["metadata"]["annotations"] = dict(tmd["annotations"])
        return self.create_pod(rs, pod)[1]

    def _write_status(self, rs: dict, error: str | None) -> None:
        md = rs["metadata"]
        labels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        active = [p for p in owned_pods(self.store, rs) if is_active(p)]
        ready = sum(1 for p in active if is_ready(p))
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        old = fresh.get("status") or {}
        conditions = copy.deepcopy(old.get("conditions") or [])
        if error:
            set_condition(conditions, "ReplicaFailure", "True", "FailedCreate", error)
        else:
            conditions = [c for c in conditions if c["type"] != "ReplicaFailure"]
        status = {"replicas": len(active),
                  "fullyLabeledReplicas": sum(1 for p in active
                                              if all(p["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())),
                  "readyReplicas": ready, "availableReplicas": ready, "observedGeneration": md.get("generation", 1)}
        if conditions:
            status["conditions"] = conditions
        omit_empty(status, ("fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"))
        if status != old:
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")


def _deletion_rank(pod: dict) -> tuple:
    """controller.ActivePods ordering: the pods to delete first sort first."""
    st = pod.get("status") or {}
    return (bool(pod["spec"].get("nodeName")), _PHASE_RANK.get(st.get("phase", "Pending"), 0), is_ready(pod),
            -sum(c.get("restartCount", 0) for c in st.get("containerStatuses") or []),
            _neg_time(pod["metadata"].get("creationTimestamp", "")))


def _neg_time(ts: str) -> tuple:
    # newer first: invert the ISO timestamp's characters so a later time sorts earlier
    return tuple(-ord(c) for c in ts)
