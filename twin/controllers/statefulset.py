"""StatefulSet controller: ordinal pods, their claims, revisions, scale and rolling update.

Follows pkg/controller/statefulset (stateful_set_control.go updateStatefulSet): claims are made
before their pod; OrderedReady ("monotonic") creates one pod at a time and waits for it to be
Running and Ready, and scales down from the highest ordinal, one pod at a time, waiting for each to
go; Parallel does both for all pods at once. A spec change (apply, scale) is reconciled inside the
write that made it (store.on_change), so the pods exist, Pending, when the API answers.
"""
from __future__ import annotations

import copy

from ..apimachinery import errors
from .base import Kind, Reconciler
from .podstatus import (controlled, controller_of, controller_ref, is_running_and_ready, is_terminal, is_terminating,
                        omit_empty, ordinal_of, owned_by, owned_pods, plain_ref, template_hash)

REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
HASH_LABEL = "controller.kubernetes.io/hash"


class StatefulSetController(Reconciler):
    name = "statefulset-controller"
    owns = ("apps", "v1", "statefulsets")
    cr_rt = Kind("apps", "v1", "controllerrevisions")

    def setup(self) -> None:
        # sets whose pods may need creating or deleting; the others (a pod became Ready in a Parallel
        # set) only get their status recomputed, which keeps a 1000-pod set cheap to follow
        self.needs_sync: set[tuple[str, str]] = set()
        # per set (uid), per pod (uid): (running and ready, terminating, revision), kept from the pod events,
        # so that the status of a large set is counted without walking its pods' objects
        self.tally: dict[str, dict[str, tuple[bool, bool, str | None]]] = {}

    def resync(self, key, now: bool) -> None:
        self.needs_sync.add(key)
        super().resync(key, now)

    def forget(self, obj: dict) -> None:
        self.tally.pop(obj["metadata"]["uid"], None)

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.pods_rt.key:
            owner = owned_by(obj, "StatefulSet")
            if owner:
                self._count(etype, obj, owner)
                if self._pod_change_needs_sync(etype, obj, old, owner):
                    self.needs_sync.add(owner)
                self.queue.soon(owner)

    def _count(self, etype: str, pod: dict, owner: tuple[str, str]) -> None:
        md = pod["metadata"]
        ref = controller_of(pod)
        if ref is None or ordinal_of(md["name"], owner[1]) is None:
            return
        sts_uid = ref["uid"]
        if etype == "DELETED":
            pods = self.tally.get(sts_uid)
            if pods is not None:
                pods.pop(md["uid"], None)
                if not pods and sts_uid not in self.store.by_uid:
                    del self.tally[sts_uid]  # the set's last pod after the set itself
        else:
            self.tally.setdefault(sts_uid, {})[md["uid"]] = (
                is_running_and_ready(pod), bool(md.get("deletionTimestamp")), md.get("labels", {}).get(REVISION_LABEL))

    def _pod_change_needs_sync(self, etype: str, pod: dict, old: dict | None, owner: tuple[str, str]) -> bool:
        if etype != "MODIFIED" or old is None:
            return True
        if pod["metadata"].get("deletionTimestamp") != old["metadata"].get("deletionTimestamp"):
            return True
        if is_terminal(pod):
            return True
        e = self.store.objects[self.own_rt.key].get(owner)
        if e is None:
            return False
        st = e.obj.get("status") or {}
        ordered = e.obj["spec"].get("podManagementPolicy", "OrderedReady") != "Parallel"
        rolling = st.get("currentRevision") != st.get("updateRevision")
        return (ordered or rolling) and is_running_and_ready(pod) != is_running_and_ready(old)

    # reconcile ------------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        sts = self.store.get(self.own_rt, ns, name)
        st = sts.get("status") or {}
        if key not in self.needs_sync and st.get("currentRevision") and st.get("updateRevision"):
            self._write_status(sts, st["currentRevision"], st["updateRevision"])
            return
        self.needs_sync.discard(key)
        current_rev, update_rev, revs = self._revisions(sts)
        if not sts["metadata"].get("deletionTimestamp"):  # a set being deleted only gets its status
            self._sync_pods(sts, current_rev, update_rev)
        self._write_status(sts, current_rev["metadata"]["name"], update_rev["metadata"]["name"])
        if len(revs) > sts["spec"].get("revisionHistoryLimit", 10) + 2:
            self._trim_history(sts)

    def _sync_pods(self, sts: dict, current_rev: dict, update_rev: dict) -> None:
        spec = sts["spec"]
        name = sts["metadata"]["name"]
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        start = (spec.get("ordinals") or {}).get("start", 0)
        replicas = spec.get("replicas", 1)
        pods = {}
        tally = self.tally[sts["metadata"]["uid"]] = {}  # recounted here, in case an event was missed
        for p in owned_pods(self.store, sts):
            pmd = p["metadata"]
            o = ordinal_of(pmd["name"], name)
            if o is not None:
                pods[o] = p
                tally[pmd["uid"]] = (is_running_and_ready(p), bool(pmd.get("deletionTimestamp")),
                                     pmd.get("labels", {}).get(REVISION_LABEL))
        in_range = range(start, start + replicas)
        condemned = sorted((o for o in pods if o not in in_range), reverse=True)
        partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0) or 0
        first_unhealthy = None
        if monotonic and condemned:
            first_unhealthy = next((o for o in sorted(pods)
                                    if not is_running_and_ready(pods[o]) or is_terminating(pods[o])), None)
        has_claims = bool(spec.get("volumeClaimTemplates"))

        # pods in range: create what is missing, replace what finished, wait in OrderedReady
        for o in in_range:
            pod = pods.get(o)
            if pod is None:
                rev = current_rev if o < start + partition else update_rev
                self._create_claims(sts, o)
                self._create_pod(sts, rev, o)
                if monotonic:
                    return
                continue
            if is_terminal(pod):
                if not is_terminating(pod):
                    self._delete_pod(sts, pod)
                if monotonic:
                    return  # recreated on a later pass, once it is gone
                continue
            if has_claims and pod["status"].get("phase") == "Pending":
                self._create_claims(sts, o)
            if is_terminating(pod) and monotonic:
                return
            if not is_running_and_ready(pod) and monotonic:
                return
            if has_claims:
                self._fix_claim_owners(sts, pod, scaled_down=False)

        # condemned pods: their claims follow whenScaled first, then they go, highest ordinal first
        for o in condemned if has_claims else ():
            self._fix_claim_owners(sts, pods[o], scaled_down=True)
        for o in condemned:
            pod = pods[o]
            if is_terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and not is_running_and_ready(pod) and o != first_unhealthy:
                return
            self._delete_pod(sts, pod)
            if monotonic:
                return

        # rolling update: replace the highest ordinal not at the update revision, one at a time
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        for o in sorted((o for o in pods if o in in_range and o >= start + partition), reverse=True):
            pod = pods[o]
            if pod["metadata"]["labels"].get(REVISION_LABEL) != update_rev["metadata"]["name"] and not is_terminating(pod):
                self._delete_pod(sts, pod)
                return
            if not is_running_and_ready(pod) or is_terminating(pod):
                return

    # revisions ------------------------------------------------------------------------------
    def _owned_revisions(self, sts: dict) -> list[dict]:
        return sorted(controlled(self.store, sts, self.cr_rt), key=lambda r: r.get("revision", 0))

    def _revisions(self, sts: dict) -> tuple[dict, dict, list[dict]]:
        """(current, update, all) ControllerRevisions; the update revision is created for a new template."""
        md, spec = sts["metadata"], sts["spec"]
        revs = self._owned_revisions(sts)
        template = spec["template"]
        h = template_hash(template, (sts.get("status") or {}).get("collisionCount") or 0)
        rev_name = f"{md['name']}-{h}"
        top = revs[-1]["revision"] if revs else 0
        update = next((r for r in revs if r["metadata"]["name"] == rev_name), None)
        if update is None:
            body = {"metadata": {"name": rev_name, "namespace": md["namespace"],
                                 "labels": dict((template.get("metadata") or {}).get("labels") or {}, **{HASH_LABEL: h}),
                                 "ownerReferences": [controller_ref(sts)]},
                    "data": {"spec": {"template": dict(copy.deepcopy(template), **{"$patch": "replace"})}},
                    "revision": top + 1}
            try:
                update = self.store.create(self.cr_rt, md["namespace"], body)
            except errors.ApiError:
                update = self.store.get(self.cr_rt, md["namespace"], rev_name)
        elif update["revision"] != top:
            # a rollback to an earlier template makes that revision the newest again
            update = copy.deepcopy(update)
            update["revision"] = top + 1
            update = self.store.update(self.cr_rt, md["namespace"], rev_name, update)
        cur_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revs if r["metadata"]["name"] == cur_name), None) or update
        return current, update, revs

    def _trim_history(self, sts: dict) -> None:
        limit = sts["spec"].get("revisionHistoryLimit", 10)
        md = sts["metadata"]
        if not self.store.exists(self.own_rt, md["namespace"], md["name"]):
            return
        status = self.store.get(self.own_rt, md["namespace"], md["name"]).get("status") or {}
        live = {status.get("currentRevision"), status.get("updateRevision")}
        live |= {p["metadata"]["labels"].get(REVISION_LABEL) for p in owned_pods(self.store, sts)}
        history = [r for r in self._owned_revisions(sts) if r["metadata"]["name"] not in live]
        for r in history[:max(len(history) - limit, 0)]:
            try:
                self.store.delete(self.cr_rt, r["metadata"]["namespace"], r["metadata"]["name"])
            except errors.ApiError:
                pass

    @staticmethod
    def _template_of(rev: dict) -> dict:
        tpl = copy.deepcopy(rev["data"]["spec"]["template"])
        tpl.pop("$patch", None)
        return tpl

    # claims ---------------------------------------------------------------------------------
    @staticmethod
    def claim_name(template: dict, sts_name: str, ordinal: int) -> str:
        return f"{template['metadata']['name']}-{sts_name}-{ordinal}"

    def _create_claims(self, sts: dict, ordinal: int) -> None:
        md, spec = sts["metadata"], sts["spec"]
        selector = (spec.get("selector") or {}).get("matchLabels") or {}
        for tpl in spec.get("volumeClaimTemplates") or []:
            cname = self.claim_name(tpl, md["name"], ordinal)
            if (md["namespace"], cname) in self.store.objects[self.pvc_rt.key]:
                continue
            tmd = tpl.get("metadata") or {}
            claim = {"metadata": {"name": cname, "namespace": md["namespace"],
                                  "labels": dict(tmd.get("labels") or {}, **selector),
                                  "ownerReferences": self._claim_refs([], sts, None, scaled_down=False)},
                     "spec": copy.deepcopy(tpl.get("spec") or {})}
            if tmd.get("annotations"):
                claim["metadata"]["annotations"] = dict(tmd["annotations"])
            if not claim["metadata"]["ownerReferences"]:
                del claim["metadata"]["ownerReferences"]
            try:
                self.store.create(self.pvc_rt, md["namespace"], claim)
                self.event(sts, "Normal", "SuccessfulCreate",
                           f"create Claim {cname} Pod {md['name']}-{ordinal} in StatefulSet {md['name']} success")
            except errors.ApiError as e:
                self.event(sts, "Warning", "FailedCreate",
                           f"create Claim {cname} for Pod {md['name']}-{ordinal} in StatefulSet {md['name']} failed error: {e}")

    @staticmethod
    def _claim_refs(refs: list[dict], sts: dict, pod: dict | None, scaled_down: bool) -> list[dict]:
        """updateClaimOwnerRefForSetAndPod: owner references that carry the retention policy."""
        policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        when_scaled, when_deleted = policy.get("whenScaled", "Retain"), policy.get("whenDeleted", "Retain")
        mine = {sts["metadata"]["uid"]} | ({pod["metadata"]["uid"]} if pod else set())
        out = [r for r in refs if r.get("uid") not in mine]
        if when_deleted == "Delete" and not (when_scaled == "Delete" and scaled_down):
            out.append(plain_ref(sts))
        if when_scaled == "Delete" and scaled_down and pod is not None:
            out.append(plain_ref(pod))
        return out

    def _fix_claim_owners(self, sts: dict, pod: dict, scaled_down: bool) -> None:
        ns = sts["metadata"]["namespace"]
        o = ordinal_of(pod["metadata"]["name"], sts["metadata"]["name"])
        if o is None:
            return
        for tpl in sts["spec"].get("volumeClaimTemplates") or []:
            cname = self.claim_name(tpl, sts["metadata"]["name"], o)
            e = self.store.objects[self.pvc_rt.key].get((ns, cname))
            if e is None:
                continue
            refs = e.obj["metadata"].get("ownerReferences") or []
            want = self._claim_refs(refs, sts, pod, scaled_down)
            if _ref_uids(want) == _ref_uids(refs):
                continue
            claim = self.store.get(self.pvc_rt, ns, cname)
            if want:
                claim["metadata"]["ownerReferences"] = want
            else:
                claim["metadata"].pop("ownerReferences", None)
            try:
                self.store.update(self.pvc_rt, ns, cname, claim)
            except errors.ApiError:
                pass

    # pods -----------------------------------------------------------------------------------
    def _create_pod(self, sts: dict, rev: dict, ordinal: int) -> None:
        md, spec = sts["metadata"], sts["spec"]
        template = self._template_of(rev)
        pname = f"{md['name']}-{ordinal}"
        tmd = template.get("metadata") or {}
        labels = dict(tmd.get("labels") or {})
        labels.update({REVISION_LABEL: rev["metadata"]["name"], POD_NAME_LABEL: pname, POD_INDEX_LABEL: str(ordinal)})
        pspec = copy.deepcopy(template.get("spec") or {})
        pspec["hostname"] = pname
        if spec.get("serviceName"):
            pspec["subdomain"] = spec["serviceName"]
        claims = spec.get("volumeClaimTemplates") or []
        claim_names = {t["metadata"]["name"] for t in claims}
        volumes = [v for v in pspec.get("volumes") or [] if v.get("name") not in claim_names]
        for t in claims:
            volumes.append({"name": t["metadata"]["name"],
                            "persistentVolumeClaim": {"claimName": self.claim_name(t, md["name"], ordinal)}})
        if volumes:
            pspec["volumes"] = volumes
        pod = {"metadata": {"name": pname, "namespace": md["namespace"], "labels": labels,
                            "ownerReferences": [controller_ref(sts)]},
               "spec": pspec}
        if tmd.get("annotations"):
            pod["metadata"]["annotations"] = dict(tmd["annotations"])
        try:
            self.store.create(self.pods_rt, md["namespace"], pod)
            self.event(sts, "Normal", "SuccessfulCreate", f"create Pod {pname} in StatefulSet {md['name']} successful")
        except errors.ApiError as e:
            self.event(sts, "Warning", "FailedCreate", f"create Pod {pname} in StatefulSet {md['name']} failed error: {e}")

    def _delete_pod(self, sts: dict, pod: dict) -> None:
        pmd = pod["metadata"]
        try:
            self.store.delete(self.pods_rt, pmd["namespace"], pmd["name"])
            self.event(sts, "Normal", "SuccessfulDelete",
                       f"delete Pod {pmd['name']} in StatefulSet {sts['metadata']['name']} successful")
        except errors.ApiError:
            pass

    # status ---------------------------------------------------------------------------------
    def _write_status(self, sts: dict, cur_name: str, upd_name: str) -> None:
        """computeReplicaStatus + completeRollingUpdate, with Go's omitempty on the counters."""
        md, spec = sts["metadata"], sts["spec"]
        if not self.store.exists(self.own_rt, md["namespace"], md["name"]):
            return
        replicas = ready = current = updated = 0
        for is_ready, terminating, rev in self.tally.get(md["uid"], {}).values():
            replicas += 1
            ready += is_ready
            if not terminating:
                current += rev == cur_name
                updated += rev == upd_name
        if (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate" \
                and updated == replicas and ready == replicas:
            cur_name, current = upd_name, updated
        fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
        old = fresh.get("status") or {}
        status = {"observedGeneration": md.get("generation", 1), "replicas": replicas, "readyReplicas": ready,
                  "currentReplicas": current, "updatedReplicas": updated, "currentRevision": cur_name,
                  "updateRevision": upd_name, "collisionCount": old.get("collisionCount", 0), "availableReplicas": ready}
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        omit_empty(status, ("readyReplicas", "currentReplicas", "updatedReplicas"))
        if status != old:
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")


def _ref_uids(refs: list[dict]) -> list[str]:
    return sorted(r.get("uid", "") for r in refs)
