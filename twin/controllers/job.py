"""Job controller: run pods until `completions` of them succeed, or give up after backoffLimit failures.

Follows pkg/controller/job: pods carry the job-name / controller-uid labels and the
`batch.kubernetes.io/job-tracking` finalizer, which the controller drops once it has counted the
finished pod in status.succeeded / status.failed (so a pod deleted early is still counted). Failed
pods are replaced after an exponential backoff (10 s doubling, 6 min cap, on the twin's clock).
The end is written as the real controller writes it since 1.31: SuccessCriteriaMet then Complete,
or FailureTarget then Failed once no pod is left running. Pods' exit codes come from the kubelet.
"""
from __future__ import annotations

import asyncio
import copy
import time

from ..apimachinery import errors
from ..store import now_iso
from .base import Reconciler
from .podstatus import controller_ref, is_ready, is_terminal, is_terminating, owned_by, owned_pods
from datetime import UTC

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
BACKOFF_BASE_SECONDS = 10.0
BACKOFF_MAX_SECONDS = 360.0


class JobController(Reconciler):
    name = "job-controller"
    owns = ("batch", "v1", "jobs")

    def setup(self) -> None:
        self.last_failure: dict[str, float] = {}  # job uid -> monotonic time of the last counted failure
        self.deadlines: set[str] = set()  # job uids whose activeDeadlineSeconds check is scheduled

    def key(self, obj: dict) -> tuple[str, str, str]:
        # the queue also holds ("pod", ns, name): tracked pods whose finalizer may need releasing
        return "job", obj["metadata"]["namespace"], obj["metadata"]["name"]

    def forget(self, obj: dict) -> None:
        self.last_failure.pop(obj["metadata"]["uid"], None)
        self.deadlines.discard(obj["metadata"]["uid"])

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.pods_rt.key and etype != "DELETED":
            owner = owned_by(obj, "Job")
            if owner:
                self.queue.soon(("job", *owner))
                if TRACKING_FINALIZER in (obj["metadata"].get("finalizers") or []):
                    self.queue.soon(("pod", obj["metadata"]["namespace"], obj["metadata"]["name"]))

    def reconcile(self, key: tuple[str, str, str]) -> None:
        kind, ns, name = key
        if kind == "pod":
            self._release_orphan(ns, name)
        elif self.store.exists(self.own_rt, ns, name):
            self._sync(self.store.get(self.own_rt, ns, name))

    def _release_orphan(self, ns: str, name: str) -> None:
        """A tracked pod whose Job is gone keeps no finalizer (else it could never be deleted)."""
        if not self.store.exists(self.pods_rt, ns, name):
            return
        pod = self.store.get(self.pods_rt, ns, name)
        ref = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("kind") == "Job"), None)
        if ref and ref.get("uid") not in self.store.by_uid:
            self.store.finalize(self.pods_rt, ns, name, TRACKING_FINALIZER)

    # the sync -------------------------------------------------------------------------------
    def _sync(self, job: dict) -> None:
        md, spec = job["metadata"], job["spec"]
        status = copy.deepcopy(job.get("status") or {})
        conditions = status.setdefault("conditions", [])
        pods = owned_pods(self.store, job)
        # finished: terminal, or deleted before any kubelet ran it (no node: nobody will make it terminal)
        finished_pods = [p for p in pods if TRACKING_FINALIZER in (p["metadata"].get("finalizers") or [])
                         and (is_terminal(p) or (is_terminating(p) and not p["spec"].get("nodeName")))]
        new_ok = [p for p in finished_pods if p["status"].get("phase") == "Succeeded"]
        new_failed = [p for p in finished_pods if p["status"].get("phase") != "Succeeded"]
        status["succeeded"] = status.get("succeeded", 0) + len(new_ok)
        status["failed"] = status.get("failed", 0) + len(new_failed)
        if new_failed:
            self.last_failure[md["uid"]] = time.monotonic()
        if spec.get("completionMode") == "Indexed":
            done = _parse_indexes(status.get("completedIndexes", ""))
            done |= {int(p["metadata"]["annotations"][INDEX_KEY]) for p in new_ok
                     if (p["metadata"].get("annotations") or {}).get(INDEX_KEY, "").isdigit()}
            status["completedIndexes"] = _format_indexes(done)
        active = [p for p in pods if not is_terminal(p) and not is_terminating(p)]
        terminating = [p for p in pods if not is_terminal(p) and is_terminating(p) and p["spec"].get("nodeName")]
        suspended = bool(spec.get("suspend"))

        ended = _true(conditions, "Complete") or _true(conditions, "Failed")
        if not ended:
            if not suspended and not status.get("startTime"):
                status["startTime"] = now_iso()
            verdict = self._verdict(job, status, active)
            if verdict:
                ctype, reason, message = verdict
                target = "SuccessCriteriaMet" if ctype == "Complete" else "FailureTarget"
                _set(conditions, target, reason, message)
            if _true(conditions, "SuccessCriteriaMet") or _true(conditions, "FailureTarget"):
                for p in active:
                    self._delete_pod(job, p)
                active = []
                if not terminating:
                    final = "Complete" if _true(conditions, "SuccessCriteriaMet") else "Failed"
                    src = _get(conditions, "SuccessCriteriaMet" if final == "Complete" else "FailureTarget")
                    _set(conditions, final, src.get("reason"), src.get("message"))
                    if final == "Complete":
                        status["completionTime"] = now_iso()
                    self.event(job, "Normal" if final == "Complete" else "Warning",
                               "Completed" if final == "Complete" else src.get("reason", "Failed"),
                               "Job completed" if final == "Complete" else src.get("message", "Job failed"))
                    self._schedule_ttl(job)
            elif suspended:
                for p in active:
                    self._delete_pod(job, p)
                active = []
                _set(conditions, "Suspended", "JobSuspended", "Job suspended")
            else:
                if _true(conditions, "Suspended"):
                    _set(conditions, "Suspended", "JobResumed", "Job resumed", status="False")
                active += self._create_pods(job, status, active)

        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_ready(p))
        status["terminating"] = len(terminating)
        status["uncountedTerminatedPods"] = {}
        if not conditions:
            del status["conditions"]
        for k in ("active", "succeeded", "failed"):  # omitempty ints; ready/terminating are pointers
            if not status.get(k):
                status.pop(k, None)
        if status != (job.get("status") or {}):
            fresh = self.store.get(self.own_rt, md["namespace"], md["name"])
            fresh["status"] = status
            self.store.update(self.own_rt, md["namespace"], md["name"], fresh, subresource="status")
        # counted: the finished pods' finalizers can go now
        for p in finished_pods:
            self.store.finalize(self.pods_rt, p["metadata"]["namespace"], p["metadata"]["name"], TRACKING_FINALIZER)

    def _verdict(self, job: dict, status: dict, active: list[dict]) -> tuple[str, str, str] | None:
        spec = job["spec"]
        if status.get("failed", 0) > spec.get("backoffLimit", 6):
            return "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        deadline = spec.get("activeDeadlineSeconds")
        if deadline and status.get("startTime") and _age(status["startTime"]) > deadline:
            return "Failed", "DeadlineExceeded", "Job was active longer than specified deadline"
        if deadline and status.get("startTime") and job["metadata"]["uid"] not in self.deadlines:
            self.deadlines.add(job["metadata"]["uid"])
            self.queue.later(deadline - _age(status["startTime"]) + 0.5, ("job", job["metadata"]["namespace"],
                                                                          job["metadata"]["name"]))
        completions = spec.get("completions")
        if completions is None:
            if status.get("succeeded", 0) > 0 and not active:
                return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
        elif status.get("succeeded", 0) >= completions:
            return "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
        return None

    def _create_pods(self, job: dict, status: dict, active: list[dict]) -> list[dict]:
        spec = job["spec"]
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        if completions is None:
            want = parallelism if not status.get("succeeded") else 0
        else:
            want = min(parallelism, completions - status.get("succeeded", 0))
        missing = want - len(active)
        if missing <= 0:
            return []
        # backoff after failures: 10 s, 20 s, 40 s ... capped at 6 min, on the twin's clock
        failed = status.get("failed", 0)
        last = self.last_failure.get(job["metadata"]["uid"])
        if failed and last is not None:
            delay = min(BACKOFF_BASE_SECONDS * 2 ** (failed - 1), BACKOFF_MAX_SECONDS) * self.cluster.time_scale
            wait = last + delay - time.monotonic()
            if wait > 0:
                self.queue.later(wait, ("job", job["metadata"]["namespace"], job["metadata"]["name"]))
                return []
        indexes: list[int | None] = [None] * missing
        if spec.get("completionMode") == "Indexed":
            taken = _parse_indexes(status.get("completedIndexes", ""))
            taken |= {int((p["metadata"].get("annotations") or {}).get(INDEX_KEY, "-1")) for p in active}
            indexes = list[int | None](i for i in range(completions or 0) if i not in taken)[:missing]
        out = []
        for index in indexes:
            pod = self._create_pod(job, index)
            if pod is not None:
                out.append(pod)
        return out

    def _create_pod(self, job: dict, index: int | None) -> dict | None:
        md = job["metadata"]
        tpl = copy.deepcopy(job["spec"].get("template") or {})
        tmd = tpl.get("metadata") or {}
        labels = dict(tmd.get("labels") or {})
        labels.update({"batch.kubernetes.io/controller-uid": md["uid"], "batch.kubernetes.io/job-name": md["name"],
                       "controller-uid": md["uid"], "job-name": md["name"]})
        annotations = dict(tmd.get("annotations") or {})
        spec = tpl.get("spec") or {}
        prefix = f"{md['name']}-"
        if index is not None:
            prefix = f"{md['name']}-{index}-"
            labels[INDEX_KEY] = str(index)
            annotations[INDEX_KEY] = str(index)
            for c in spec.get("containers") or []:
                c.setdefault("env", []).append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1", "fieldPath": f"metadata.annotations['{INDEX_KEY}']"}}})
        pod = {"metadata": {"generateName": prefix, "labels": labels, "ownerReferences": [controller_ref(job)],
                            "finalizers": [TRACKING_FINALIZER]},
               "spec": spec}
        if annotations:
            pod["metadata"]["annotations"] = annotations
        return self.create_pod(job, pod)[0]

    def _delete_pod(self, job: dict, pod: dict) -> None:
        try:
            self.store.delete(self.pods_rt, pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
        except errors.ApiError:
            pass

    def _schedule_ttl(self, job: dict) -> None:
        """The TTL-after-finished controller's part: delete the finished Job (and its pods) after the TTL."""
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        md = job["metadata"]

        def expire() -> None:
            if self.store.exists(self.own_rt, md["namespace"], md["name"]) and \
                    self.store.get(self.own_rt, md["namespace"], md["name"])["metadata"]["uid"] == md["uid"]:
                try:
                    self.store.delete(self.own_rt, md["namespace"], md["name"], propagation="Background")
                except errors.ApiError:
                    pass

        asyncio.get_running_loop().call_later(ttl, expire)


# conditions and index sets -------------------------------------------------------------------
def _get(conditions: list[dict], ctype: str) -> dict:
    return next((c for c in conditions if c["type"] == ctype), {})


def _true(conditions: list[dict], ctype: str) -> bool:
    return _get(conditions, ctype).get("status") == "True"


def _set(conditions: list[dict], ctype: str, reason: str | None, message: str | None, status: str = "True") -> None:
    """Job conditions carry lastProbeTime and lastTransitionTime, both the time of the change."""
    ts = now_iso()
    c = _get(conditions, ctype)
    if c and c.get("status") == status and c.get("reason") == reason:
        return
    new = {"type": ctype, "status": status, "lastProbeTime": ts, "lastTransitionTime": ts}
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    if c:
        conditions[conditions.index(c)] = new
    else:
        conditions.append(new)


def _age(ts: str) -> float:
    from datetime import datetime

    return (datetime.now(UTC) - datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)).total_seconds()


def _parse_indexes(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, (text or "").split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _format_indexes(indexes: set[int]) -> str:
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(parts)
