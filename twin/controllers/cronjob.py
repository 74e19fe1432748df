"""CronJob controller: a Job per schedule time, on the cluster's clock (vclock.ClusterClock).

Follows pkg/controller/cronjob (cronjob_controllerv2.go syncCronJob, utils.go): the Job of schedule time T is
`<cronjob>-<T in minutes since the epoch>`, so a time is never run twice, with the CronJob as its controller and
the `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation (T in spec.timeZone). Only the most recent missed
time runs (more than 100 missed: a TooManyMissedTimes warning), none older than startingDeadlineSeconds;
concurrencyPolicy Forbid skips a time while a Job is active, Replace deletes the active ones first; a suspended
CronJob starts nothing. status.active follows its Jobs, lastScheduleTime is T, lastSuccessfulTime the latest
completionTime; finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted, oldest first.
The schedule is robfig/cron's (twin/kinds/cron.py), in UTC unless spec.timeZone says otherwise.
"""
from __future__ import annotations

import asyncio
import copy
import math
import zoneinfo
from datetime import datetime, UTC
from typing import Any
from collections.abc import Hashable

from ..apimachinery import errors
from ..kinds import cron
from .base import Kind, Reconciler
from .podstatus import controller_of, controller_ref, owned_by
from .vclock import ClusterClock

SCHEDULED_ANN = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # nextScheduleDelta: wake up this many (cluster) seconds after the time is due
MANY_MISSED = 100
WALK_AT_MOST = 1000  # missed times counted one by one up to this many, estimated beyond


class CronJobController(Reconciler):
    name = "cronjob-controller"
    owns = ("batch", "v1", "cronjobs")
    jobs_rt = Kind("batch", "v1", "jobs")

    def setup(self) -> None:
        self.clock = ClusterClock(self.cluster.time_scale)
        self.created: dict[str, float] = {}  # cronjob uid -> cluster time it was seen created
        self.timers: dict[Hashable, asyncio.TimerHandle] = {}

    def on_change(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.own_rt.key and etype == "ADDED":
            self.created[obj["metadata"]["uid"]] = self.clock.now()
        super().on_change(rtype, etype, obj, old)

    def forget(self, obj: dict) -> None:
        self.created.pop(obj["metadata"]["uid"], None)
        timer = self.timers.pop(self.key(obj), None)
        if timer:
            timer.cancel()

    def dependent_changed(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.jobs_rt.key:
            owner = owned_by(obj, "CronJob")
            if owner:
                self.queue.soon(owner)

    # the sync -------------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        if not self.store.exists(self.own_rt, ns, name):
            return
        cj = self.store.get(self.own_rt, ns, name)
        status = copy.deepcopy(cj.get("status") or {})
        jobs = self._jobs(cj)
        self._follow_jobs(cj, status, jobs)
        wait = None
        if not cj["metadata"].get("deletionTimestamp"):
            wait = self._schedule(cj, status)
        for k in ("active", "lastScheduleTime", "lastSuccessfulTime"):
            if not status.get(k):
                status.pop(k, None)
        if status != (cj.get("status") or {}):
            cj["status"] = status
            self.store.update(self.own_rt, ns, name, cj, subresource="status")
        self._cleanup(cj, self._jobs(cj))
        if wait is not None:
            self._wake(key, wait)

    def _jobs(self, cj: dict) -> list[dict]:
        uid = cj["metadata"]["uid"]
        return [copy.deepcopy(e.obj) for e in self.store.list_entries(self.jobs_rt, cj["metadata"]["namespace"])
                if (controller_of(e.obj) or {}).get("uid") == uid]

    def _follow_jobs(self, cj: dict, status: dict, jobs: list[dict]) -> None:
        """The first half of syncCronJob: status.active and lastSuccessfulTime from the Jobs."""
        active = status.setdefault("active", [])
        uids = {j["metadata"]["uid"] for j in jobs}
        for j in jobs:
            found = any(a.get("uid") == j["metadata"]["uid"] for a in active)
            finished = _finished(j)
            if not found and not finished:
                self.event(cj, "Warning", "UnexpectedJob",
                           f"Saw a job that the controller did not create or forgot: {j['metadata']['name']}")
            elif found and finished:
                status["active"] = active = [a for a in active if a.get("uid") != j["metadata"]["uid"]]
                self.event(cj, "Normal", "SawCompletedJob",
                           f"Saw completed job: {j['metadata']['name']}, condition: {finished}")
            if finished == "Complete":
                done = (j.get("status") or {}).get("completionTime")
                if done and (not status.get("lastSuccessfulTime") or done > status["lastSuccessfulTime"]):
                    status["lastSuccessfulTime"] = done
        for a in list(active):
            if a.get("uid") not in uids:
                self.event(cj, "Normal", "MissingJob", f"Active job went missing: {a.get('name')}")
                status["active"] = active = [x for x in active if x.get("uid") != a.get("uid")]

    def _schedule(self, cj: dict, status: dict) -> float | None:
        """The second half: start the Job of the most recent unmet time, if it may start. Returns the cluster
        seconds until the next time is due (None: no wake-up)."""
        spec = cj["spec"]
        if spec.get("suspend"):
            return None
        try:
            sched = cron.parse(_formatted(spec))
        except ValueError as e:
            self.event(cj, "Warning", "UnparseableSchedule", f"unparseable schedule: {spec.get('schedule')!r} : {e}")
            return None
        now = self.clock.now()
        earliest, due, many = self._most_recent(cj, status, now, sched, spec.get("startingDeadlineSeconds"))
        if due is None:
            return self._until_next(cj, status, now, sched)
        if many:
            self.event(cj, "Warning", "TooManyMissedTimes", "too many missed start times. Set or decrease "
                       ".spec.startingDeadlineSeconds or check clock skew")
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and due + deadline < now:
            self.event(cj, "Warning", "MissSchedule",
                       f"Missed scheduled time to start a job: {_rfc1123z(due)}")
            return self._until_next(cj, status, now, sched)
        name = f"{cj['metadata']['name']}-{int(due // 60)}"
        if any(a.get("name") == name for a in status.get("active") or []) or \
                status.get("lastScheduleTime") == _iso(due):
            return self._until_next(cj, status, now, sched)
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            self.event(cj, "Normal", "JobAlreadyActive",
                       "Not starting job because prior execution is running and concurrency policy is Forbid")
            return self._until_next(cj, status, now, sched)
        if policy == "Replace":
            for a in list(status.get("active") or []):
                self._delete_job(cj, a["name"])
                status["active"] = [x for x in status["active"] if x.get("uid") != a.get("uid")]
        job = self._create_job(cj, name, due)
        if job is None:
            return None
        jmd = job["metadata"]
        status.setdefault("active", []).append(
            {"kind": "Job", "namespace": jmd["namespace"], "name": jmd["name"], "uid": jmd["uid"],
             "apiVersion": "batch/v1", "resourceVersion": jmd["resourceVersion"]})
        status["lastScheduleTime"] = _iso(due)
        return self._until_next(cj, status, now, sched)

    def _most_recent(self, cj: dict, status: dict, now: float, sched: cron.Schedule,
                     deadline: int | None) -> tuple[float, float | None, bool]:
        """mostRecentScheduleTime: (the earliest time considered, the most recent due time or None, whether more
        than 100 were missed). Nothing before the last schedule time (or the creation), nor before
        startingDeadlineSeconds ago."""
        earliest = self._created_at(cj)
        if status.get("lastScheduleTime"):
            earliest = _parse(status["lastScheduleTime"])
        if deadline is not None:
            earliest = max(earliest, now - deadline)
        recent, missed = most_recent(sched, earliest, now)
        return earliest, recent, missed > MANY_MISSED

    def _until_next(self, cj: dict, status: dict, now: float, sched: cron.Schedule) -> float | None:
        """nextScheduleTimeDuration."""
        earliest, recent, _ = self._most_recent(cj, status, now, sched, None)
        nxt = _next(sched, recent if recent is not None else earliest)
        return None if nxt is None else nxt + NEXT_SCHEDULE_DELTA - now

    def _created_at(self, cj: dict) -> float:
        seen = self.created.get(cj["metadata"]["uid"])
        if seen is not None:
            return seen
        return self.clock.to_cluster(_parse(cj["metadata"]["creationTimestamp"]))

    # jobs -----------------------------------------------------------------------------------
    def _create_job(self, cj: dict, name: str, due: float) -> dict | None:
        """getJobFromTemplate2, then create it; a Job of that name that exists already is taken when it is ours."""
        md, jt = cj["metadata"], cj["spec"].get("jobTemplate") or {}
        tz = cj["spec"].get("timeZone")
        when = datetime.fromtimestamp(due, UTC)
        if tz:
            when = when.astimezone(zoneinfo.ZoneInfo(tz))
        annotations = dict((jt.get("metadata") or {}).get("annotations") or {})
        annotations[SCHEDULED_ANN] = _rfc3339(when)
        meta: dict[str, Any] = {"name": name, "namespace": md["namespace"], "annotations": annotations,
                                "ownerReferences": [controller_ref(cj)]}
        labels = (jt.get("metadata") or {}).get("labels")
        if labels:
            meta["labels"] = dict(labels)
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": copy.deepcopy(jt.get("spec") or {})}
        try:
            created = self.store.create(self.jobs_rt, md["namespace"], job)
        except errors.ApiError as e:
            if e.code != 409:
                self.event(cj, "Warning", "FailedCreate", f"Error creating job: {e}")
                return None
            existing = self.store.get(self.jobs_rt, md["namespace"], name)
            return existing if (controller_of(existing) or {}).get("uid") == md["uid"] else None
        self.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        return created

    def _delete_job(self, cj: dict, name: str) -> None:
        try:
            self.store.delete(self.jobs_rt, cj["metadata"]["namespace"], name, propagation="Background")
        except errors.ApiError:
            return
        self.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {name}")

    def _cleanup(self, cj: dict, jobs: list[dict]) -> None:
        """cleanupFinishedJobs: keep the newest successfulJobsHistoryLimit / failedJobsHistoryLimit finished Jobs."""
        spec = cj["spec"]
        for verdict, field in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(field)
            if limit is None:
                continue
            done = [j for j in jobs if _finished(j) == verdict and not j["metadata"].get("deletionTimestamp")]
            done.sort(key=_by_start_time)
            for j in done[:max(len(done) - limit, 0)]:
                self._delete_job(cj, j["metadata"]["name"])

    def _wake(self, key: Hashable, cluster_seconds: float) -> None:
        old = self.timers.pop(key, None)
        if old:
            old.cancel()
        self.timers[key] = asyncio.get_running_loop().call_later(
            self.clock.wall_delay(cluster_seconds), self.queue.soon, key)


# times --------------------------------------------------------------------------------------
def most_recent(sched: cron.Schedule, earliest: float, now: float) -> tuple[float | None, int]:
    """The most recent schedule time after `earliest` and not after `now` (None: none), and how many there are."""
    t1 = _next(sched, earliest)
    if t1 is None or now < t1:
        return None, 0
    t2 = _next(sched, t1)
    if t2 is None or now < t2:
        return t1, 1
    between = max(round(t2 - t1), 1)
    missed = int((now - t1) // between) + 1
    recent = t1 + (missed - 1) * between
    if missed <= WALK_AT_MOST or recent > now:
        # upstream's estimate assumes equal intervals; walking the times is exact for irregular schedules too
        recent = t1
        t: float | None = t2
        while t is not None and t <= now:
            recent, t = t, _next(sched, t)
    return recent, missed


def _formatted(spec: dict) -> str:
    """formatSchedule: the time zone as robfig's CRON_TZ prefix."""
    tz = spec.get("timeZone")
    return f"CRON_TZ={tz} {spec['schedule']}" if tz else spec["schedule"]


def _next(sched: cron.Schedule, after: float) -> float | None:
    t = sched.next(datetime.fromtimestamp(after, UTC))
    return None if t is None else t.timestamp()


def _parse(ts: str) -> float:
    return datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()


def _iso(t: float) -> str:
    return datetime.fromtimestamp(math.floor(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rfc3339(t: datetime) -> str:
    """Go's time.RFC3339: Z for UTC, else the offset."""
    s = t.replace(microsecond=0).isoformat()
    return s[:-6] + "Z" if s.endswith("+00:00") else s


def _rfc1123z(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def _finished(job: dict) -> str:
    """IsJobFinished: "Complete" or "Failed" when that condition is True, else ""."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return ""


def _by_start_time(job: dict) -> tuple[Any, ...]:
    """byJobStartTime: by status.startTime, Jobs not started last, then by name."""
    start = (job.get("status") or {}).get("startTime")
    return (start is None, start or "", job["metadata"]["name"])
