"""Deployment controller: one ReplicaSet per pod template, rolled by Recreate or RollingUpdate.

Follows pkg/controller/deployment: the new ReplicaSet is `<deployment>-<pod-template-hash>` with the
hash label on its selector and pods; Recreate scales the old ones to zero and waits until their pods
are gone; RollingUpdate moves by maxSurge / maxUnavailable (rolling.go reconcileNewReplicaSet and
reconcileOldReplicaSets). Status and the Available / Progressing conditions are what
`kubectl rollout status` and kubernetes.core's waiter read.
"""
from __future__ import annotations

import copy
import math

from ..apiserver import errors
from .base import Kind, Reconciler
from .podstatus import controller_of, controller_ref, is_terminal, omit_empty, owned_by, set_condition, template_hash

HASH_LABEL = "pod-template-hash"
REVISION_ANN = "deployment.kubernetes.io/revision"
DESIRED_ANN = "deployment.kubernetes.io/desired-replicas"
MAX_ANN = "deployment.kubernetes.io/max-replicas"


class DeploymentController(Reconciler):
    name = "deployment-controller"
    owns = ("apps", "v1", "deployments")
    rs_rt = Kind("apps", "v1", "replicasets")

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

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        d = self.store.get(self.own_rt, ns, name)
        rss = self._replica_sets(d)
        new_rs = self._find_new(d, rss)
        olds = [r for r in rss if new_rs is None or r["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        created = False
        if not d["metadata"].get("deletionTimestamp") and not d["spec"].get("paused"):
            if new_rs is None:
                new_rs = self._create_new(d, olds)
                created = new_rs is not None
            if new_rs is not None:
                if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
                    self._recreate(d, new_rs, olds)
                else:
                    self._rolling(d, new_rs, olds)
                self._cleanup(d, olds)
            rss = self._replica_sets(d)
            new_rs = self._find_new(d, rss)
            olds = [r for r in rss if new_rs is None or r["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        self._write_status(d, new_rs, olds, created)

    def _find_new(self, d: dict, rss: list[dict]) -> dict | None:
        want = _strip_hash(d["spec"]["template"])
        matches = [r for r in rss if _strip_hash(r["spec"].get("template") or {}) == want]
        return matches[0] if matches else None

    def _create_new(self, d: dict, olds: list[dict]) -> dict | None:
        md, spec = d["metadata"], d["spec"]
        h = template_hash(spec["template"], (d.get("status") or {}).get("collisionCount") or 0)
        tpl = copy.deepcopy(spec["template"])
        tpl.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = h
        revision = max([_revision(r) for r in olds] + [0]) + 1
        replicas = spec.get("replicas", 1)
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            start = 0
        else:
            start = self._new_rs_replicas(d, 0, olds)
        rs = {"metadata": {"name": f"{md['name']}-{h}", "namespace": md["namespace"],
                           "labels": dict(tpl["metadata"]["labels"]),
                           "annotations": {REVISION_ANN: str(revision), DESIRED_ANN: str(replicas),
                                           MAX_ANN: str(replicas + _surge(d))},
                           "ownerReferences": [controller_ref(d)]},
              "spec": {"replicas": start, "minReadySeconds": spec.get("minReadySeconds", 0),
                       "selector": selector, "template": tpl}}
        try:
            created = self.store.create(self.rs_rt, md["namespace"], rs)
        except errors.ApiError as e:
            self.event(d, "Warning", "FailedCreate", f"Failed to create new replica set {rs['metadata']['name']}: {e}")
            return None
        self.event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} from 0 to {start}")
        return created

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
        limit = d["spec"].get("revisionHistoryLimit", 10)
        idle = [r for r in olds if r["spec"].get("replicas", 0) == 0 and not (r.get("status") or {}).get("replicas")
                and not r["metadata"].get("deletionTimestamp")]
        idle.sort(key=_revision)
        for r in idle[:max(len(idle) - limit, 0)]:
            try:
                self.store.delete(self.rs_rt, r["metadata"]["namespace"], r["metadata"]["name"])
            except errors.ApiError:
                pass

    # status ---------------------------------------------------------------------------------
    def _write_status(self, d: dict, new_rs: dict | None, olds: list[dict], created: bool) -> None:
        md, spec = d["metadata"], d["spec"]
        if not self.store.exists(self.own_rt, md["namespace"], md["name"]):
            return
        replicas = spec.get("replicas", 1)
        all_rs = olds + ([new_rs] if new_rs else [])

        def st(r, k):
            return (r.get("status") or {}).get(k, 0)

        available = sum(st(r, "availableReplicas") for r in all_rs)
        status = {"observedGeneration": md.get("generation", 1),
                  "replicas": sum(st(r, "replicas") for r in all_rs),
                  "updatedReplicas": st(new_rs, "replicas") if new_rs else 0,
                  "readyReplicas": sum(st(r, "readyReplicas") for r in all_rs),
                  "availableReplicas": available,
                  "unavailableReplicas": max(sum(r["spec"].get("replicas", 0) for r in all_rs) - available, 0)}
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        old = fresh.get("status") or {}
        if old.get("collisionCount"):
            status["collisionCount"] = old["collisionCount"]
        conditions = copy.deepcopy(old.get("conditions") or [])
        if available >= replicas - _unavailable(d):
            set_condition(conditions, "Available", "True", "MinimumReplicasAvailable",
                          "Deployment has minimum availability.", with_update_time=True)
        else:
            set_condition(conditions, "Available", "False", "MinimumReplicasUnavailable",
                          "Deployment does not have minimum availability.", with_update_time=True)
        if new_rs is not None:
            rs_name = new_rs["metadata"]["name"]
            complete = (status["updatedReplicas"] == replicas and status["replicas"] == replicas
                        and available == replicas)
            if complete:
                set_condition(conditions, "Progressing", "True", "NewReplicaSetAvailable",
                              f'ReplicaSet "{rs_name}" has successfully progressed.', with_update_time=True)
            elif created:
                set_condition(conditions, "Progressing", "True", "NewReplicaSetCreated",
                              f'Created new replica set "{rs_name}"', with_update_time=True)
            else:
                set_condition(conditions, "Progressing", "True", "ReplicaSetUpdated",
                              f'ReplicaSet "{rs_name}" is progressing.', with_update_time=True)
        # the real controller appends Progressing before Available on a fresh deployment
        conditions.sort(key=lambda c: {"Available": 0, "Progressing": 1}.get(c["type"], 2))
        if conditions:
            status["conditions"] = conditions
        omit_empty(status, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                            "unavailableReplicas"))
        revision = new_rs["metadata"].get("annotations", {}).get(REVISION_ANN) if new_rs else None
        ann = fresh["metadata"].get("annotations") or {}
        if revision and ann.get(REVISION_ANN) != revision:
            fresh["metadata"].setdefault("annotations", {})[REVISION_ANN] = revision
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, _internal=True)
        elif status != old:
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")


def _strip_hash(template: dict) -> dict:
    t = copy.deepcopy(template)
    labels = (t.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return t


def _revision(rs: dict) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION_ANN, "0"))
    except ValueError:
        return 0


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
