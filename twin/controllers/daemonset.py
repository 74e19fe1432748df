"""DaemonSet controller: one pod per eligible node, revisions, rolling update, status.

Follows pkg/controller/daemon (daemon_controller.go, update.go, util/daemonset_util.go):
- a node is eligible (NodeShouldRunDaemonPod) when the template's nodeName, nodeSelector and required node affinity
  match it and the pod, with the DaemonSet's automatic tolerations, tolerates its NoSchedule and NoExecute taints; a
  node whose only untolerated taints are NoSchedule keeps the pods it has (shouldContinueRunning) but gets no new one;
- pods are created from generateName `<ds>-` with the template's labels plus controller-revision-hash (the
  revision's hash) and pod-template-generation (the server's deprecated.daemonset.template.generation), the
  automatic tolerations (not-ready and unreachable NoExecute forever; disk-, memory-, pid-pressure and unschedulable
  NoSchedule; network-unavailable NoSchedule for hostNetwork pods), and the required node affinity replaced by
  `matchFields metadata.name In [node]`: the default scheduler binds them, cordoned nodes included;
- failed pods are deleted (FailedDaemonPod, per-node backoff 1 s doubling to 15 min of cluster time), extra pods on a
  node go (the oldest stays), pods on nodes that no longer match go;
- each template is a ControllerRevision `<ds>-<hash>` whose data is `{"spec": {"template": ..., "$patch": "replace"}}`
  (what `kubectl rollout undo ds` patches back); going back to an old template renumbers its revision; history
  beyond revisionHistoryLimit is trimmed, never a revision a live pod still carries;
- RollingUpdate deletes old pods (unavailable ones first) while at most maxUnavailable (default 1, rounded up from
  a percentage) are unavailable, or with maxSurge starts the new pod beside the old one and deletes the old one once
  the new one is available; OnDelete replaces a pod only once someone deletes it;
- status counts per node (updateDaemonSetStatus): desired, current, misscheduled, ready, available (Ready for
  minReadySeconds of cluster time), updated, unavailable, observedGeneration.
A DaemonSet being deleted is left alone (the garbage collector takes its pods and revisions).
"""
from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from datetime import datetime

from ..apimachinery import errors
from ..store.writes import TEMPLATE_GENERATION
from .base import Kind, Reconciler
from .podstatus import (controlled, condition, controller_ref, is_ready, is_terminal, omit_empty, owned_by,
                        owned_pods, template_hash)
from .scheduler import _matches_node_selector
from .taints import (DISK_PRESSURE, MEMORY_PRESSURE, NETWORK_UNAVAILABLE, NOT_READY, PID_PRESSURE, UNREACHABLE,
                     UNSCHEDULABLE, first_untolerated)

HASH_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
BURST_REPLICAS = 250  # burstReplicas: at most this many creations or deletions per sync
BACKOFF_START, BACKOFF_MAX = 1.0, 900.0  # failedPodsBackoff, cluster seconds


class DaemonSetController(Reconciler):
    name = "daemonset-controller"
    owns = ("apps", "v1", "daemonsets")
    cr_rt = Kind("apps", "v1", "controllerrevisions")

    def setup(self) -> None:
        # (DaemonSet uid, node) -> (monotonic end of the backoff, its length in cluster seconds)
        self.backoff: dict[tuple[str, str], tuple[float, float]] = {}
        self.writes = 0  # pods created or deleted in the current pass

    def forget(self, obj: dict) -> None:
        uid = obj["metadata"]["uid"]
        for k in [k for k in self.backoff if k[0] == uid]:
            del self.backoff[k]

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.pods_rt.key:
            owner = owned_by(obj, "DaemonSet")
            if owner:
                self.queue.soon(owner)
        elif rtype.key == self.nodes_rt.key and (etype != "MODIFIED" or _node_view(obj) != _node_view(old)):
            for key in list(self.store.objects[self.own_rt.key]):
                self.queue.soon(key)

    # reconcile ------------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        ds = self.store.get(self.own_rt, ns, name)
        if ds["metadata"].get("deletionTimestamp"):
            return
        cur, revs = self._revisions(ds)
        h = cur["metadata"]["labels"][HASH_LABEL]
        tolerations = with_daemon_tolerations(ds["spec"]["template"].get("spec") or {}).get("tolerations") or []
        fits = {e.obj["metadata"]["name"]: self._should_run(ds, e.obj, tolerations)
                for e in self.store.list_entries(self.nodes_rt)}
        self.writes = 0
        by_node = self._pods_by_node(ds)
        more = self._manage(ds, fits, by_node, h)
        strategy = ds["spec"].get("updateStrategy") or {}
        # as upstream's expectations: the update runs on a pass whose manage step changed nothing
        if not self.writes and strategy.get("type", "RollingUpdate") == "RollingUpdate":
            more |= self._rolling_update(ds, fits, by_node, h)
        if self.writes:
            by_node = self._pods_by_node(ds)
        self._write_status(ds, fits, by_node, h)
        self._trim_history(ds, revs, cur, by_node)
        if more:
            self.queue.soon(key)

    def _pods_by_node(self, ds: dict) -> dict[str, list[dict]]:
        """getNodesToDaemonPods: the set's pods by the node they run on or are meant for; a pod that has ended and
        is being deleted no longer counts."""
        out: dict[str, list[dict]] = {}
        for p in owned_pods(self.store, ds):
            if is_terminal(p) and p["metadata"].get("deletionTimestamp"):
                continue
            node = target_node(p)
            if node:
                out.setdefault(node, []).append(p)
        for pods in out.values():
            pods.sort(key=_age_rank)
        return out

    @staticmethod
    def _should_run(ds: dict, node: dict, tolerations: list[dict]) -> tuple[bool, bool]:
        """NodeShouldRunDaemonPod: (should run a new pod there, should keep the pods it has); `tolerations` are the
        template's with the daemon ones added."""
        spec = ds["spec"]["template"].get("spec") or {}
        name = node["metadata"]["name"]
        if spec.get("nodeName") and spec["nodeName"] != name:
            return False, False
        if not _matches_node_selector(spec, name, node["metadata"].get("labels") or {}):
            return False, False
        taints = (node.get("spec") or {}).get("taints") or []
        if first_untolerated(taints, tolerations, ("NoSchedule", "NoExecute")) is None:
            return True, True
        return False, first_untolerated(taints, tolerations, ("NoExecute",)) is None

    def _manage(self, ds: dict, fits: dict[str, tuple[bool, bool]], by_node: dict[str, list[dict]], h: str) -> bool:
        """podsShouldBeOnNode for every node, then syncNodes; True when work was left for the next pass."""
        create, delete = [], []
        surge = _max_surge(ds, 1) > 0  # AllowsSurge
        min_ready = ds["spec"].get("minReadySeconds", 0) or 0
        for name, (should_run, should_continue) in fits.items():
            pods = by_node.get(name, [])
            if should_run and not pods:
                create.append(name)
            elif should_continue:
                running = []
                for p in pods:
                    phase = (p.get("status") or {}).get("phase")
                    if p["metadata"].get("deletionTimestamp"):
                        continue
                    if phase == "Failed":
                        if self._in_backoff(ds, name):
                            continue
                        self.event(ds, "Warning", "FailedDaemonPod", f"Found failed daemon pod "
                                   f"{p['metadata']['namespace']}/{p['metadata']['name']} on node {name}, will try to kill it")
                        delete.append(p)
                    elif phase == "Succeeded":
                        delete.append(p)
                    else:
                        running.append(p)
                delete += _extra_pods(running, h, lambda p: self._available(p, min_ready)) if surge else running[1:]
            elif pods:
                delete += [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        return self._sync_nodes(ds, delete, create, h)

    def _in_backoff(self, ds: dict, node: str) -> bool:
        """failedPodsBackoff: a node whose daemon pod failed waits 1 s, then twice as long after each failure."""
        md = ds["metadata"]
        now = time.monotonic()
        until, delay = self.backoff.get((md["uid"], node), (0.0, 0.0))
        if now < until:
            self.queue.later(until - now, (md["namespace"], md["name"]))
            return True
        delay = min(delay * 2, BACKOFF_MAX) if delay else BACKOFF_START
        self.backoff[(md["uid"], node)] = (now + delay * self.cluster.time_scale, delay)
        return False

    def _rolling_update(self, ds: dict, fits: dict[str, tuple[bool, bool]], by_node: dict[str, list[dict]],
                        h: str) -> bool:
        """update.go rollingUpdate: which old pods go (and, with maxSurge, which nodes get their new pod first)."""
        desired = sum(1 for run, _ in fits.values() if run)
        max_surge, max_unavailable = _max_surge(ds, desired), _max_unavailable(ds, desired)
        min_ready = ds["spec"].get("minReadySeconds", 0) or 0
        delete: list[dict] = []
        if max_surge == 0:
            unavailable = 0
            replace: list[dict] = []
            candidates: list[dict] = []
            for pods in by_node.values():
                new, old, ok = _updated_pods_on_node(pods, h)
                if not ok or (new is None) == (old is None):
                    unavailable += 1
                elif new is not None:
                    unavailable += not self._available(new, min_ready)
                elif old is None:
                    continue
                elif not self._available(old, min_ready):
                    replace.append(old)
                elif unavailable < max_unavailable:
                    candidates.append(old)
            room = min(max(max_unavailable - unavailable, 0), len(candidates))
            return self._sync_nodes(ds, replace + candidates[:room], [], h)
        surged, allowed, candidate_nodes = 0, [], []
        for name, pods in by_node.items():
            new, old, ok = _updated_pods_on_node(pods, h)
            if not ok or old is None:
                continue
            if not self._available(old, min_ready):
                if new is None:
                    allowed.append(name)
            elif new is not None:
                surged += 1
                if self._available(new, min_ready):
                    delete.append(old)
            elif surged < max_surge:
                candidate_nodes.append(name)
        room = min(max(max_surge - surged, 0), len(candidate_nodes))
        return self._sync_nodes(ds, delete, allowed + candidate_nodes[:room], h)

    def _available(self, pod: dict, min_ready: int) -> bool:
        """IsPodAvailable: Ready for minReadySeconds (cluster time); asks for another pass when that ends."""
        if not is_ready(pod):
            return False
        if not min_ready:
            return True
        since = _epoch((condition(pod, "Ready") or {}).get("lastTransitionTime"))
        left = since + min_ready * self.cluster.time_scale - time.time()
        if left > 0:
            owner = owned_by(pod, "DaemonSet")
            if owner:
                self.queue.later(left, owner)
            return False
        return True

    def _sync_nodes(self, ds: dict, delete: list[dict], create: list[str], h: str) -> bool:
        """syncNodes: at most burstReplicas creations and deletions; True when some were left for the next pass."""
        left = len(create) > BURST_REPLICAS or len(delete) > BURST_REPLICAS
        template = None
        for node in create[:BURST_REPLICAS]:
            if template is None:
                template = self._pod_template(ds, h)
            pod = copy.deepcopy(template)
            pod["spec"]["affinity"] = _node_name_affinity(pod["spec"].get("affinity"), node)
            created, err = self.create_pod(ds, pod)
            if err:
                return left
            self.writes += 1
        for pod in delete[:BURST_REPLICAS]:
            pmd = pod["metadata"]
            try:
                self.store.delete(self.pods_rt, pmd["namespace"], pmd["name"])
            except errors.ApiError:
                continue
            self.writes += 1
            self.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {pmd['name']}")
        return left

    def _pod_template(self, ds: dict, h: str) -> dict:
        """CreatePodTemplate + GetPodFromTemplate: the pod every node gets, before its node affinity."""
        tpl = copy.deepcopy(ds["spec"]["template"])
        tmd = tpl.get("metadata") or {}
        gen = (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)
        labels = dict(tmd.get("labels") or {})
        if gen is not None:
            labels[GENERATION_LABEL] = gen
        labels[HASH_LABEL] = h
        md = {"generateName": f"{ds['metadata']['name']}-", "labels": labels,
              "ownerReferences": [controller_ref(ds)]}
        for k in ("annotations", "finalizers"):
            if tmd.get(k):
                md[k] = copy.deepcopy(tmd[k])
        return {"metadata": md, "spec": with_daemon_tolerations(tpl.get("spec") or {})}

    # revisions ------------------------------------------------------------------------------
    def _owned_revisions(self, ds: dict) -> list[dict]:
        return sorted(controlled(self.store, ds, self.cr_rt), key=lambda r: r.get("revision", 0))

    def _revisions(self, ds: dict) -> tuple[dict, list[dict]]:
        """constructHistory: the revision of the current template (made, or renumbered as the newest), and all."""
        md, template = ds["metadata"], ds["spec"]["template"]
        revs = self._owned_revisions(ds)
        cur = next((r for r in revs if _template_of(r) == template), None)
        others = [r for r in revs if r is not cur]
        top = max((r.get("revision", 0) for r in others), default=0)
        if cur is None:
            collisions = (ds.get("status") or {}).get("collisionCount") or 0
            h = template_hash(template, collisions)
            labels = dict((template.get("metadata") or {}).get("labels") or {}, **{HASH_LABEL: h})
            body: dict = {
                "metadata": {"name": f"{md['name']}-{h}", "namespace": md["namespace"], "labels": labels,
                             "ownerReferences": [controller_ref(ds)]},
                "data": {"spec": {"template": dict(copy.deepcopy(template), **{"$patch": "replace"})}},
                "revision": top + 1}
            if md.get("annotations"):
                body["metadata"]["annotations"] = dict(md["annotations"])
            try:
                cur = self.store.create(self.cr_rt, md["namespace"], body)
            except errors.ApiError:  # a revision of another template holds the name: a hash collision
                self._bump_collisions(ds, collisions)
                raise
            revs.append(cur)
        elif cur.get("revision", 0) <= top:
            cur = copy.deepcopy(cur)
            cur["revision"] = top + 1
            cur = self.store.update(self.cr_rt, md["namespace"], cur["metadata"]["name"], cur)
        return cur, revs

    def _bump_collisions(self, ds: dict, collisions: int) -> None:
        md = ds["metadata"]
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        fresh.setdefault("status", {})["collisionCount"] = collisions + 1
        self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")
        self.queue.soon((md["namespace"], md["name"]))

    def _trim_history(self, ds: dict, revs: list[dict], cur: dict, by_node: dict[str, list[dict]]) -> None:
        """cleanupHistory: keep revisionHistoryLimit old revisions, and every one a live pod carries."""
        limit = ds["spec"].get("revisionHistoryLimit", 10)
        live = {p["metadata"].get("labels", {}).get(HASH_LABEL) for pods in by_node.values() for p in pods}
        old = [r for r in revs if r["metadata"]["name"] != cur["metadata"]["name"]
               and r["metadata"].get("labels", {}).get(HASH_LABEL) not in live]
        for r in old[:max(len(old) - limit, 0)]:
            try:
                self.store.delete(self.cr_rt, r["metadata"]["namespace"], r["metadata"]["name"])
            except errors.ApiError:
                pass

    # status ---------------------------------------------------------------------------------
    def _write_status(self, ds: dict, fits: dict[str, tuple[bool, bool]], by_node: dict[str, list[dict]],
                      h: str) -> None:
        md = ds["metadata"]
        gen = (md.get("annotations") or {}).get(TEMPLATE_GENERATION)
        min_ready = ds["spec"].get("minReadySeconds", 0) or 0
        desired = current = misscheduled = ready = available = updated = 0
        for name, (should_run, _) in fits.items():
            pods = by_node.get(name)
            if not should_run:
                misscheduled += bool(pods)
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0]  # the oldest
            if is_ready(pod):
                ready += 1
                available += self._available(pod, min_ready)
            labels = pod["metadata"].get("labels") or {}
            updated += labels.get(HASH_LABEL) == h or (gen is not None and labels.get(GENERATION_LABEL) == gen)
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        old = fresh.get("status") or {}
        status = {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
                  "desiredNumberScheduled": desired, "numberReady": ready,
                  "observedGeneration": md.get("generation", 1), "updatedNumberScheduled": updated,
                  "numberAvailable": available, "numberUnavailable": desired - available,
                  "collisionCount": old.get("collisionCount", 0)}
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        omit_empty(status, ("updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount"))
        if status != old:
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")


# helpers -------------------------------------------------------------------------------------
DAEMON_TOLERATIONS = (
    {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute"},
    {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"},
    {"key": DISK_PRESSURE, "operator": "Exists", "effect": "NoSchedule"},
    {"key": MEMORY_PRESSURE, "operator": "Exists", "effect": "NoSchedule"},
    {"key": PID_PRESSURE, "operator": "Exists", "effect": "NoSchedule"},
    {"key": UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"},
)


def with_daemon_tolerations(spec: dict) -> dict:
    """AddOrUpdateDaemonPodTolerations on a copy: a toleration of the same key, operator, value and effect is
    replaced (so the daemon's has no tolerationSeconds), the others are appended in upstream's order."""
    out = copy.deepcopy(spec)
    tolerations = list(out.get("tolerations") or [])
    extra = DAEMON_TOLERATIONS + (({"key": NETWORK_UNAVAILABLE, "operator": "Exists", "effect": "NoSchedule"},)
                                  if out.get("hostNetwork") else ())
    for t in extra:
        same = [i for i, x in enumerate(tolerations) if _same_toleration(x, t)]
        if same:
            tolerations[same[0]] = dict(t)
        else:
            tolerations.append(dict(t))
    out["tolerations"] = tolerations
    return out


def _same_toleration(a: dict, b: dict) -> bool:
    """Toleration.MatchToleration: same key, operator, value and effect."""
    return all((a.get(k) or "") == (b.get(k) or "") for k in ("key", "value", "effect")) and \
        (a.get("operator") or "Equal") == (b.get("operator") or "Equal")


def _node_name_affinity(affinity: dict | None, node: str) -> dict:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node terms become `metadata.name In [node]`."""
    out = copy.deepcopy(affinity or {})
    na = out.setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    return out


def target_node(pod: dict) -> str | None:
    """GetTargetNodeName: spec.nodeName, or the node the pod's matchFields affinity names."""
    spec = pod["spec"]
    if spec.get("nodeName"):
        return spec["nodeName"]
    terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return f["values"][0]
    return None


def _updated_pods_on_node(pods: list[dict], h: str) -> tuple[dict | None, dict | None, bool]:
    """findUpdatedPodsOnNode: (the new pod, the old pod, false when there are several of either)."""
    new = old = None
    for p in pods:
        if p["metadata"].get("deletionTimestamp"):
            continue
        if (p["metadata"].get("labels") or {}).get(HASH_LABEL) == h:
            if new is not None:
                return None, None, False
            new = p
        else:
            if old is not None:
                return None, None, False
            old = p
    return new, old, True


def _extra_pods(running: list[dict], h: str, available: Callable[[dict], bool]) -> list[dict]:
    """With maxSurge, a node keeps its oldest new pod and its oldest old pod while the new one is not yet
    available and the old one is ready; everything else on the node goes."""
    newest = oldest = None
    out = []
    for p in running:
        if (p["metadata"].get("labels") or {}).get(HASH_LABEL) == h:
            if newest is None:
                newest = p
                continue
        elif oldest is None:
            oldest = p
            continue
        out.append(p)
    if newest is not None and oldest is not None and (not is_ready(oldest) or available(newest)):
        out.append(oldest)
    return out


def _rolling(ds: dict) -> dict:
    return ((ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {})


def _scaled(value, total: int) -> int:
    """GetScaledValueFromIntOrPercent rounding up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)


def _max_surge(ds: dict, desired: int) -> int:
    if (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    return _scaled(_rolling(ds).get("maxSurge", 0), desired)


def _max_unavailable(ds: dict, desired: int) -> int:
    """unavailableCount: maxUnavailable scaled; 1 when both it and maxSurge come to 0."""
    surge, unavailable = _max_surge(ds, desired), _scaled(_rolling(ds).get("maxUnavailable", 1), desired)
    return 1 if surge == 0 and unavailable == 0 else unavailable


def _node_view(node: dict | None) -> tuple:
    """What of a node decides where daemon pods run; other node writes (heartbeats, volumes) change nothing."""
    if node is None:
        return ()
    ready = next((c.get("status") for c in (node.get("status") or {}).get("conditions") or []
                  if c.get("type") == "Ready"), None)
    spec = node.get("spec") or {}
    return node["metadata"].get("labels"), spec.get("taints"), spec.get("unschedulable"), ready


def _age_rank(pod: dict) -> tuple:
    """podByCreationTimestampAndPhase: bound pods first, then the oldest, then by name."""
    return not pod["spec"].get("nodeName"), pod["metadata"].get("creationTimestamp", ""), pod["metadata"]["name"]


def _template_of(rev: dict) -> dict:
    tpl = copy.deepcopy(((rev.get("data") or {}).get("spec") or {}).get("template") or {})
    tpl.pop("$patch", None)
    return tpl


def _epoch(ts: str | None) -> float:
    if not ts:
        return time.time()
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
