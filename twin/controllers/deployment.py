"""Deployment controller: one ReplicaSet per pod template, rolled by Recreate or RollingUpdate.

Follows pkg/controller/deployment: the new ReplicaSet is the one whose template equals the Deployment's but for the
pod-template-hash label (deployment_revisions.py), else a new `<deployment>-<pod-template-hash>` with the hash label
on its selector and pods; a rollback (`kubectl rollout undo`, kubernetes.core's k8s_rollback) thus scales the old
ReplicaSet up again under the next revision. Recreate scales the old ones to zero and waits until their pods are
gone; RollingUpdate moves by maxSurge / maxUnavailable (rolling.go reconcileNewReplicaSet and
reconcileOldReplicaSets); a change of replicas alone, and any change while paused, scales the sets proportionally
(sync.go scale). Old sets beyond revisionHistoryLimit go once the rollout is complete. Status and the Available /
Progressing conditions (progress.go, with progressDeadlineSeconds in cluster time) are what `kubectl rollout status`
and kubernetes.core's waiter read.
"""
from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence

from ..apimachinery import errors
from .base import Kind, Reconciler
from .deployment_revisions import (DESIRED_ANN, HASH_LABEL, MAX_ANN, REVISION_ANN, by_revision, compute_hash,
                                   equal_ignore_hash, get_condition, new_condition, remove_condition, revision,
                                   set_condition, set_new_rs_annotations)
from .podstatus import controller_of, controller_ref, is_terminal, omit_empty, owned_by

NO_DEADLINE = 2 ** 31 - 1  # progressDeadlineSeconds of math.MaxInt32: never time out


class DeploymentController(Reconciler):
    name = "deployment-controller"
    owns = ("apps", "v1", "deployments")
    rs_rt = Kind("apps", "v1", "replicasets")

    def setup(self) -> None:
        # deployment uid -> monotonic time of the Progressing condition's lastUpdateTime (the API's timestamp has
        # whole seconds of wall time, too coarse at a small time scale)
        self.progress_at: dict[str, float] = {}

    def forget(self, obj: dict) -> None:
        self.progress_at.pop(obj["metadata"]["uid"], None)

    def on_change(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        super().on_change(rtype, etype, obj, old)
        # the controller syncs on every update: new annotations (kubernetes.io/change-cause) go to the new set
        if rtype.key == self.own_rt.key and etype == "MODIFIED" and old is not None and \
                (obj["metadata"].get("annotations") or {}) != (old["metadata"].get("annotations") or {}):
            self.queue.soon(self.key(obj))

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.rs_rt.key:
            owner = owned_by(obj, "Deployment")
            if owner:
                self.queue.soon(owner)
        elif rtype.key == self.pods_rt.key and etype == "DELETED":
            # Recreate waits for the old pods to be gone, which their ReplicaSet's status does not show
            rs_key = owned_by(obj, "ReplicaSet")
            if rs_key:
                e = self.store.objects[self.rs_rt.key].get(rs_key)
                owner = owned_by(e.obj, "Deployment") if e else None
                if owner:
                    self.queue.soon(owner)

    # reconcile ------------------------------------------------------------------------------
    def _replica_sets(self, d: dict) -> list[dict]:
        uid = d["metadata"]["uid"]
        out = []
        for e in self.store.list_entries(self.rs_rt, d["metadata"]["namespace"]):
            if (controller_of(e.obj) or {}).get("uid") == uid:
                out.append(copy.deepcopy(e.obj))
        return sorted(out, key=lambda r: (r["metadata"].get("creationTimestamp", ""), r["metadata"]["name"]))

    def _split(self, d: dict) -> tuple[dict | None, list[dict]]:
        """(the new ReplicaSet, the old ones): FindNewReplicaSet takes the oldest of equal templates."""
        rss = self._replica_sets(d)
        new_rs = next((r for r in rss if equal_ignore_hash(r["spec"].get("template") or {}, d["spec"]["template"])),
                      None)
        return new_rs, [r for r in rss if r is not new_rs]

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        d = self.store.get(self.own_rt, ns, name)
        new_rs, olds = self._split(d)
        if d["metadata"].get("deletionTimestamp"):
            self._write_status(d, new_rs, olds, None)
            return
        paused = bool(d["spec"].get("paused"))
        new_rs = self._sync_new(d, new_rs, olds, create=not paused)
        if new_rs is None and not paused:
            return  # the creation failed or collided: the status write requeued the Deployment
        # what the new set counted before this sync scaled it: a real cluster writes that status before its
        # ReplicaSet controller has caught up, the twin's catches up inside the write (see _progress)
        counted = (new_rs.get("status") or {}).get("replicas", 0) if new_rs else 0
        if paused or new_rs is None or self._scaling_event(d, new_rs, olds):
            self._scale_proportionally(d, new_rs, olds)
        elif (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            self._recreate(d, new_rs, olds)
        else:
            self._rolling(d, new_rs, olds)
        new_rs, olds = self._split(d)
        status = self._write_status(d, new_rs, olds, counted)
        if paused or _complete(d, status):
            self._cleanup(d, olds)

    def _sync_new(self, d: dict, new_rs: dict | None, olds: list[dict], create: bool) -> dict | None:
        """getNewReplicaSet: bring the new ReplicaSet's revision (max of the old ones + 1) and annotations up to date,
        or create it."""
        new_revision = max([revision(r) for r in olds] + [0]) + 1
        if new_rs is None:
            return self._create_new(d, olds, new_revision) if create else None
        md = new_rs["metadata"]
        rs = self.store.get(self.rs_rt, md["namespace"], md["name"])
        changed = set_new_rs_annotations(d, rs, new_revision, True, {})
        if changed or rs["spec"].get("minReadySeconds", 0) != d["spec"].get("minReadySeconds", 0):
            rs["spec"]["minReadySeconds"] = d["spec"].get("minReadySeconds", 0)
            rs = self.store.update(self.rs_rt, md["namespace"], md["name"], rs)
        if _has_deadline(d) and get_condition(d.get("status") or {}, "Progressing") is None:
            self._set_progressing(d, "True", "FoundNewReplicaSet", f'Found new replica set "{md["name"]}"')
        return rs

    def _create_new(self, d: dict, olds: list[dict], new_revision: int) -> dict | None:
        md, spec = d["metadata"], d["spec"]
        collisions = (d.get("status") or {}).get("collisionCount")
        h = compute_hash(spec["template"], collisions)
        tpl = copy.deepcopy(spec["template"])
        tpl.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        replicas = spec.get("replicas", 1)
        rs = {"metadata": {"name": f"{md['name']}-{h}", "namespace": md["namespace"],
                           "labels": dict(tpl["metadata"]["labels"]), "ownerReferences": [controller_ref(d)]},
              "spec": {"replicas": 0, "minReadySeconds": spec.get("minReadySeconds", 0),
                       "selector": selector, "template": tpl}}
        set_new_rs_annotations(d, rs, new_revision, False,
                               {DESIRED_ANN: str(replicas), MAX_ANN: str(replicas + _surge(d))})
        if (spec.get("strategy") or {}).get("type") != "Recreate":
            rs["spec"]["replicas"] = self._new_rs_replicas(d, 0, olds)
        try:
            created = self.store.create(self.rs_rt, md["namespace"], rs)
        except errors.ApiError as e:
            if e.code == 409 and self._collided(d, rs["metadata"]["name"]):
                return None
            self.event(d, "Warning", "FailedCreate", f"Failed to create new replica set {rs['metadata']['name']}: {e}")
            return None
        start = rs["spec"]["replicas"]
        self.event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} from 0 to {start}")
        if _has_deadline(d):
            self._set_progressing(d, "True", "NewReplicaSetCreated", f'Created new replica set "{rs["metadata"]["name"]}"')
        return created

    def _collided(self, d: dict, rs_name: str) -> bool:
        """A ReplicaSet of that name exists with another template: count a collision (the next hash differs) and
        try again; True when it was counted."""
        md = d["metadata"]
        other = self.store.get(self.rs_rt, md["namespace"], rs_name)
        if (controller_of(other) or {}).get("uid") == md["uid"] and \
                equal_ignore_hash(other["spec"].get("template") or {}, d["spec"]["template"]):
            return False
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        st = fresh.setdefault("status", {})
        st["collisionCount"] = (st.get("collisionCount") or 0) + 1
        self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")
        self.queue.soon((md["namespace"], md["name"]))
        return True

    def _set_progressing(self, d: dict, status: str, reason: str, message: str) -> None:
        """Write a Progressing condition at once, as getNewReplicaSet does when it finds or creates the set."""
        md = d["metadata"]
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        st = fresh.setdefault("status", {})
        set_condition(st, new_condition("Progressing", status, reason, message))
        self.progress_at[md["uid"]] = time.monotonic()
        d["status"] = self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")["status"]

    # scaling -------------------------------------------------------------------------------
    def _scaling_event(self, d: dict, new_rs: dict | None, olds: list[dict]) -> bool:
        """isScalingEvent: an active ReplicaSet was sized for another replica count than the Deployment's."""
        want = str(d["spec"].get("replicas", 1))
        for r in _active([new_rs, *olds]):
            desired = (r["metadata"].get("annotations") or {}).get(DESIRED_ANN)
            if desired is not None and desired != want:
                return True
        return False

    def _scale_proportionally(self, d: dict, new_rs: dict | None, olds: list[dict]) -> None:
        """sync.go scale: one active set (or none: the newest) takes every replica; a saturated new set leaves the
        old ones none; otherwise a rolling Deployment's replicas are spread over its active sets in proportion."""
        replicas = d["spec"].get("replicas", 1)
        active = _active([new_rs, *olds])
        if len(active) <= 1:
            target = active[0] if active else (new_rs or (max(olds, key=_created) if olds else None))
            if target is not None:
                self._scale(d, target, replicas)
            return
        if new_rs is not None and _saturated(d, new_rs):
            for r in _active(olds):
                self._scale(d, r, 0)
            return
        if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            return
        allowed = replicas + _surge(d) if replicas > 0 else 0
        to_add = allowed - sum(r["spec"].get("replicas", 0) for r in active)
        # larger first; among equals the newer first when growing, the older first when shrinking
        active.sort(key=lambda r: (-r["spec"].get("replicas", 0), _neg(_created(r)) if to_add > 0 else _created(r)))
        sizes, added = {}, 0
        for r in active:
            n = r["spec"].get("replicas", 0)
            part = self._proportion(d, r, to_add, added) if to_add else 0
            sizes[r["metadata"]["name"]] = n + part
            added += part
        for i, r in enumerate(active):
            size = sizes[r["metadata"]["name"]]
            if i == 0 and to_add:
                size = max(size + to_add - added, 0)  # leftovers to the largest set
            self._scale(d, r, size)

    def _proportion(self, d: dict, rs: dict, to_add: int, added: int) -> int:
        """GetReplicaSetProportion over getReplicaSetFraction."""
        n = rs["spec"].get("replicas", 0)
        if n == 0 or to_add == added:
            return 0
        replicas = d["spec"].get("replicas", 1)
        if replicas == 0:
            fraction = -n
        else:
            before = (rs["metadata"].get("annotations") or {}).get(MAX_ANN, "")
            base = int(before) if before.isdigit() and int(before) else (d.get("status") or {}).get("replicas", 0)
            if not base:
                return 0
            fraction = math.floor(n * (replicas + _surge(d)) / base + 0.5) - n
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    # strategies ----------------------------------------------------------------------------
    def _scale(self, d: dict, rs: dict, replicas: int) -> None:
        md = rs["metadata"]
        cur = self.store.get(self.rs_rt, md["namespace"], md["name"])
        before = cur["spec"].get("replicas", 1)
        ann = cur["metadata"].setdefault("annotations", {})
        want_ann = {DESIRED_ANN: str(d["spec"].get("replicas", 1)), MAX_ANN: str(d["spec"].get("replicas", 1) + _surge(d))}
        if before == replicas and all(ann.get(k) == v for k, v in want_ann.items()):
            return
        cur["spec"]["replicas"] = replicas
        ann.update(want_ann)
        self.store.update(self.rs_rt, md["namespace"], md["name"], cur)
        rs["spec"]["replicas"] = replicas
        if before != replicas:
            direction = "up" if replicas > before else "down"
            self.event(d, "Normal", "ScalingReplicaSet",
                       f"Scaled {direction} replica set {md['name']} from {before} to {replicas}")

    def _recreate(self, d: dict, new_rs: dict, olds: list[dict]) -> None:
        for r in olds:
            if r["spec"].get("replicas", 0):
                self._scale(d, r, 0)
        if self._old_pods_running(new_rs, olds):
            return
        self._scale(d, new_rs, d["spec"].get("replicas", 1))

    def _old_pods_running(self, new_rs: dict, olds: list[dict]) -> bool:
        for r in olds:
            for key, ns, name in list(self.store.dependents.get(r["metadata"]["uid"], ())):
                e = self.store.objects[key].get((ns, name)) if key == self.pods_rt.key else None
                if e is not None and not is_terminal(e.obj):
                    return True
        return False

    def _new_rs_replicas(self, d: dict, new_current: int, olds: list[dict]) -> int:
        """NewRSNewReplicas for RollingUpdate: grow the new set within replicas + maxSurge."""
        replicas = d["spec"].get("replicas", 1)
        total = new_current + sum(r["spec"].get("replicas", 0) for r in olds)
        max_total = replicas + _surge(d)
        if total >= max_total:
            return new_current
        return new_current + min(max_total - total, max(replicas - new_current, 0))

    def _rolling(self, d: dict, new_rs: dict, olds: list[dict]) -> None:
        replicas = d["spec"].get("replicas", 1)
        cur_new = new_rs["spec"].get("replicas", 0)
        if cur_new > replicas:
            self._scale(d, new_rs, replicas)
        elif cur_new < replicas:
            self._scale(d, new_rs, self._new_rs_replicas(d, cur_new, olds))
        # reconcileOldReplicaSets
        old_count = sum(r["spec"].get("replicas", 0) for r in olds)
        if old_count == 0:
            return
        all_count = old_count + new_rs["spec"].get("replicas", 0)
        min_available = replicas - _unavailable(d)
        new_unavailable = new_rs["spec"].get("replicas", 0) - (new_rs.get("status") or {}).get("availableReplicas", 0)
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        # first drop old replicas that are not available anyway
        cleaned = 0
        for r in olds:
            if cleaned >= max_scaled_down:
                break
            unhealthy = r["spec"].get("replicas", 0) - (r.get("status") or {}).get("availableReplicas", 0)
            if r["spec"].get("replicas", 0) == 0 or unhealthy <= 0:
                continue
            down = min(max_scaled_down - cleaned, unhealthy)
            self._scale(d, r, r["spec"]["replicas"] - down)
            cleaned += down
        # then scale the old sets down while keeping minAvailable pods available
        available = sum((r.get("status") or {}).get("availableReplicas", 0) for r in olds + [new_rs])
        budget = available - min_available
        for r in olds:
            if budget <= 0:
                break
            n = r["spec"].get("replicas", 0)
            if n == 0:
                continue
            down = min(n, budget)
            self._scale(d, r, n - down)
            budget -= down

    def _cleanup(self, d: dict, olds: list[dict]) -> None:
        """cleanupDeployment: delete the oldest revisions beyond revisionHistoryLimit, only those scaled to zero."""
        alive = [r for r in olds if not r["metadata"].get("deletionTimestamp")]
        excess = len(alive) - d["spec"].get("revisionHistoryLimit", 10)
        for r in by_revision(alive)[:max(excess, 0)]:
            st = r.get("status") or {}
            if st.get("replicas") or r["spec"].get("replicas", 0) or \
                    r["metadata"].get("generation", 1) > st.get("observedGeneration", 0):
                continue
            try:
                self.store.delete(self.rs_rt, r["metadata"]["namespace"], r["metadata"]["name"])
            except errors.ApiError:
                pass

    # status ---------------------------------------------------------------------------------
    def _write_status(self, d: dict, new_rs: dict | None, olds: list[dict], counted: int | None) -> dict:
        """syncRolloutStatus: the counts (calculateStatus), Available, and Progressing as progress.go sets it."""
        md, spec = d["metadata"], d["spec"]
        if not self.store.exists(self.own_rt, md["namespace"], md["name"]):
            return {}
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        old = fresh.get("status") or {}
        status = _counts(fresh, new_rs, olds)
        replicas = spec.get("replicas", 1)
        if status.get("availableReplicas", 0) >= replicas - _unavailable(fresh):
            set_condition(status, new_condition("Available", "True", "MinimumReplicasAvailable",
                                                "Deployment has minimum availability."))
        else:
            set_condition(status, new_condition("Available", "False", "MinimumReplicasUnavailable",
                                                "Deployment does not have minimum availability."))
        if _has_deadline(fresh):
            seen = dict(old)
            if counted is not None and old.get("observedGeneration") != fresh["metadata"].get("generation"):
                seen["updatedReplicas"] = min(old.get("updatedReplicas", 0), counted)
            self._progress(fresh, seen, status, new_rs)
        else:
            remove_condition(status, "Progressing")
        if not status["conditions"]:
            del status["conditions"]
        omit_empty(status, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                            "unavailableReplicas"))
        rev = (new_rs["metadata"].get("annotations") or {}).get(REVISION_ANN) if new_rs else None
        ann = fresh["metadata"].get("annotations") or {}
        if rev and ann.get(REVISION_ANN) != rev:  # SetDeploymentRevision
            fresh["metadata"].setdefault("annotations", {})[REVISION_ANN] = rev
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, _internal=True)
        elif status != old:
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")
        return status

    def _progress(self, d: dict, old: dict, status: dict, new_rs: dict | None) -> None:
        """checkPausedConditions, then DeploymentComplete / DeploymentProgressing / DeploymentTimedOut. `old` is the
        last status written, its updatedReplicas as the new set counted them before this sync after a template
        change (the status a real controller writes in between)."""
        uid, name = d["metadata"]["uid"], d["metadata"]["name"]
        cur = get_condition(old, "Progressing")
        paused = bool(d["spec"].get("paused"))
        if cur is None or cur.get("reason") != "ProgressDeadlineExceeded":
            if paused:
                if (cur or {}).get("reason") != "DeploymentPaused":
                    set_condition(status, new_condition("Progressing", "Unknown", "DeploymentPaused",
                                                        "Deployment is paused"))
                return
            if (cur or {}).get("reason") == "DeploymentPaused":
                set_condition(status, new_condition("Progressing", "Unknown", "DeploymentResumed",
                                                    "Deployment is resumed"))
                cur = get_condition(status, "Progressing")
                self.progress_at[uid] = time.monotonic()
        if paused:
            return
        what = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs else f'Deployment "{name}"'
        done = status.get("replicas", 0) == status.get("updatedReplicas", 0) and cur is not None and \
            cur.get("reason") == "NewReplicaSetAvailable"
        if done:
            return
        if _complete(d, status):
            set_condition(status, new_condition("Progressing", "True", "NewReplicaSetAvailable",
                                                f"{what} has successfully progressed."))
        elif _progressed(old, status):
            cond = new_condition("Progressing", "True", "ReplicaSetUpdated", f"{what} is progressing.")
            if cur is not None and cur.get("status") == "True":
                cond["lastTransitionTime"] = cur.get("lastTransitionTime", cond["lastTransitionTime"])
            remove_condition(status, "Progressing")
            status["conditions"].append(cond)
            self.progress_at[uid] = time.monotonic()
        elif cur is not None and cur.get("reason") not in ("NewReplicaSetAvailable", "ProgressDeadlineExceeded"):
            since = self.progress_at.setdefault(uid, time.monotonic())
            left = since + d["spec"]["progressDeadlineSeconds"] * self.cluster.time_scale - time.monotonic()
            if left < 0:
                set_condition(status, new_condition("Progressing", "False", "ProgressDeadlineExceeded",
                                                    f"{what} has timed out progressing."))
                self.event(d, "Warning", "ProgressDeadlineExceeded", f"{what} has timed out progressing.")
            else:  # requeueStuckDeployment
                self.queue.later(left + 0.001, (d["metadata"]["namespace"], name))


def _counts(d: dict, new_rs: dict | None, olds: list[dict]) -> dict:
    """calculateStatus's numbers; the conditions are carried over, to be set by the caller."""
    all_rs = olds + ([new_rs] if new_rs else [])

    def st(r, k):
        return (r.get("status") or {}).get(k, 0)

    available = sum(st(r, "availableReplicas") for r in all_rs)
    old = d.get("status") or {}
    status = {"observedGeneration": d["metadata"].get("generation", 1),
              "replicas": sum(st(r, "replicas") for r in all_rs),
              "updatedReplicas": st(new_rs, "replicas") if new_rs else 0,
              "readyReplicas": sum(st(r, "readyReplicas") for r in all_rs),
              "availableReplicas": available,
              "unavailableReplicas": max(sum(r["spec"].get("replicas", 0) for r in all_rs) - available, 0),
              "conditions": copy.deepcopy(old.get("conditions") or [])}
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    return status


def _complete(d: dict, status: dict) -> bool:
    """DeploymentComplete."""
    replicas = d["spec"].get("replicas", 1)
    return status.get("updatedReplicas", 0) == replicas and status.get("replicas", 0) == replicas and \
        status.get("availableReplicas", 0) == replicas and \
        status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)


def _progressed(old: dict, new: dict) -> bool:
    """DeploymentProgressing: more updated, ready or available replicas, or fewer old ones, than the last status."""
    def g(s, k):
        return s.get(k, 0) or 0

    return g(new, "updatedReplicas") > g(old, "updatedReplicas") or \
        g(new, "replicas") - g(new, "updatedReplicas") < g(old, "replicas") - g(old, "updatedReplicas") or \
        g(new, "readyReplicas") > g(old, "readyReplicas") or g(new, "availableReplicas") > g(old, "availableReplicas")


def _has_deadline(d: dict) -> bool:
    pds = d["spec"].get("progressDeadlineSeconds")
    return pds is not None and pds != NO_DEADLINE


def _active(rss: Sequence[dict | None]) -> list[dict]:
    return [r for r in rss if r is not None and r["spec"].get("replicas", 0) > 0]


def _saturated(d: dict, rs: dict) -> bool:
    replicas = d["spec"].get("replicas", 1)
    desired = (rs["metadata"].get("annotations") or {}).get(DESIRED_ANN)
    return rs["spec"].get("replicas", 0) == replicas and desired == str(replicas) and \
        (rs.get("status") or {}).get("availableReplicas", 0) == replicas


def _created(rs: dict) -> tuple[str, str]:
    return rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]


def _neg(key: tuple[str, str]) -> tuple:
    return tuple(tuple(-ord(c) for c in part) for part in key)


def _resolve(value, replicas: int, round_up: bool) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and value.endswith("%"):
        frac = int(value[:-1]) * replicas / 100
        return math.ceil(frac) if round_up else math.floor(frac)
    return int(value)


def _rolling_params(d: dict) -> tuple[int, int]:
    """ResolveFenceposts: maxSurge rounds up, maxUnavailable down; both zero means one unavailable."""
    strat = d["spec"].get("strategy") or {}
    replicas = d["spec"].get("replicas", 1)
    if strat.get("type") == "Recreate" or replicas == 0:
        return 0, 0  # MaxUnavailable is 0 unless rolling: Available then needs every replica
    ru = strat.get("rollingUpdate") or {}
    surge = _resolve(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _resolve(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


def _surge(d: dict) -> int:
    return _rolling_params(d)[0]


def _unavailable(d: dict) -> int:
    return _rolling_params(d)[1]
