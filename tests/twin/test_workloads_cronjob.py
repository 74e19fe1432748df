"""The CronJob controller (pkg/controller/cronjob) on the twin's cluster clock: at time scale 0.01 a one-minute
schedule comes due every 0.6 s. Jobs are `<cronjob>-<schedule time in minutes since the epoch>` with the CronJob as
controller and the scheduled-timestamp annotation; concurrencyPolicy, suspend, timeZone, the history limits and
status.active / lastScheduleTime / lastSuccessfulTime as the API reference describes them; `kubectl create job
--from=cronjob/x`. Waits follow watches; the schedule's arithmetic (robfig/cron's Next, startingDeadlineSeconds)
is checked without a cluster."""
from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.support.waits import watch_until
from twin.controllers.cronjob import most_recent
from twin.kinds import cron

SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def _cronjob(name: str, script: str, **spec) -> dict:
    pod = {"restartPolicy": "Never",
           "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", script]}]}
    job = {"metadata": {"labels": {"cj": name}}, "spec": {"backoffLimit": 0, "template": {"spec": pod}}}
    body = {"schedule": "* * * * *", "jobTemplate": job}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


def _minute(job) -> int:
    return int(job.metadata.name.rpartition("-")[2])


class Seen:
    """Every Job of one CronJob that a watch has shown, by name (the controller deletes old ones)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def __call__(self, jobs: list, at_least: int) -> bool:
        self.names |= {j.metadata.name for j in jobs}
        return len(self.names) >= at_least


def _batch(api):
    from kubernetes import client

    return client.BatchV1Api(api)


def test_each_schedule_time_makes_one_named_job_and_history_is_limited(api, ns):
    batch = _batch(api)
    made = batch.create_namespaced_cron_job(ns, _cronjob("tick", "exit 0"))
    seen = Seen()
    watch_until(batch.list_namespaced_job, lambda jobs: seen(jobs, 5), "five jobs of tick", ns,
                label_selector="cj=tick")
    batch.patch_namespaced_cron_job("tick", ns, {"spec": {"suspend": True}})
    # suspended: the active jobs finish and the successful ones beyond successfulJobsHistoryLimit (3) go
    cjs = watch_until(batch.list_namespaced_cron_job, lambda cs: cs and not cs[0].status.active,
                      "tick without active jobs", ns, field_selector="metadata.name=tick")
    jobs = watch_until(batch.list_namespaced_job, lambda js: len(js) == 3 and all(
        any(c.type == "Complete" and c.status == "True" for c in j.status.conditions or []) for j in js),
        "three complete jobs of tick", ns, label_selector="cj=tick")

    seen(jobs, 0)  # and those made between the watch's end and the suspension
    minutes = sorted(int(n.rpartition("-")[2]) for n in seen.names)
    assert len(set(minutes)) == len(minutes) and minutes == list(range(minutes[0], minutes[0] + len(minutes)))
    kept = sorted(jobs, key=_minute)
    assert [_minute(j) for j in kept] == minutes[-3:]  # the newest three remain
    for j in kept:
        assert re.fullmatch(r"tick-\d+", j.metadata.name)
        when = datetime.fromtimestamp(_minute(j) * 60, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert j.metadata.annotations[SCHEDULED] == when
        (ref,) = j.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller) == ("CronJob", "tick", made.metadata.uid, True)
        assert j.metadata.labels["cj"] == "tick"
    st = cjs[0].status
    assert st.last_schedule_time == datetime.fromtimestamp(minutes[-1] * 60, UTC)
    assert st.last_successful_time is not None
    reasons = {e.reason for e in _core(api).list_namespaced_event(
        ns, field_selector="involvedObject.kind=CronJob").items}
    assert {"SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"} <= reasons


def _core(api):
    from kubernetes import client

    return client.CoreV1Api(api)


def test_failed_jobs_history_limit_keeps_one(api, ns):
    batch = _batch(api)
    batch.create_namespaced_cron_job(ns, _cronjob("bad", "exit 3"))
    seen = Seen()
    watch_until(batch.list_namespaced_job, lambda jobs: seen(jobs, 3), "three jobs of bad", ns,
                label_selector="cj=bad")
    batch.patch_namespaced_cron_job("bad", ns, {"spec": {"suspend": True}})
    jobs = watch_until(batch.list_namespaced_job, lambda js: len(js) == 1 and any(
        c.type == "Failed" and c.status == "True" for c in js[0].status.conditions or []),
        "one failed job of bad", ns, label_selector="cj=bad")
    seen(jobs, 0)
    assert _minute(jobs[0]) == max(int(n.rpartition("-")[2]) for n in seen.names)
    assert _batch(api).read_namespaced_cron_job("bad", ns).status.last_successful_time is None


def test_forbid_skips_times_while_a_job_runs(twin, api, ns):
    batch = _batch(api)
    batch.create_namespaced_cron_job(ns, _cronjob("one", "sleep 3600", concurrencyPolicy="Forbid"))
    watch_until(_core(api).list_namespaced_event, lambda evs: any(e.reason == "JobAlreadyActive" for e in evs),
                "a skipped time", ns, field_selector="involvedObject.name=one")
    jobs = batch.list_namespaced_job(ns, label_selector="cj=one").items
    assert len(jobs) == 1
    (active,) = batch.read_namespaced_cron_job("one", ns).status.active
    assert (active.kind, active.name, active.uid) == ("Job", jobs[0].metadata.name, jobs[0].metadata.uid)


def test_replace_deletes_the_running_job_for_the_next(api, ns):
    batch = _batch(api)
    batch.create_namespaced_cron_job(ns, _cronjob("swap", "sleep 3600", concurrencyPolicy="Replace"))
    seen = Seen()
    watch_until(batch.list_namespaced_job, lambda jobs: seen(jobs, 3), "three jobs of swap", ns,
                label_selector="cj=swap")
    batch.patch_namespaced_cron_job("swap", ns, {"spec": {"suspend": True}})  # nothing starts from here on
    cj = batch.read_namespaced_cron_job("swap", ns)
    (active,) = cj.status.active  # never more than one at a time
    live = [j for j in batch.list_namespaced_job(ns, label_selector="cj=swap").items
            if not j.metadata.deletion_timestamp]
    assert [j.metadata.name for j in live] == [active.name]
    seen(live, 0)
    assert int(active.name.rpartition("-")[2]) == max(int(n.rpartition("-")[2]) for n in seen.names)
    deleted = [e for e in _core(api).list_namespaced_event(ns, field_selector="involvedObject.name=swap").items
               if e.reason == "SuccessfulDelete"]
    assert len(deleted) >= 2


def test_suspend_starts_nothing_and_time_zone_dates_the_job(twin, api, ns):
    batch = _batch(api)
    batch.create_namespaced_cron_job(ns, _cronjob("held", "exit 0", suspend=True))
    batch.create_namespaced_cron_job(ns, _cronjob("tokyo", "exit 0", timeZone="Asia/Tokyo"))
    seen = Seen()
    jobs = watch_until(batch.list_namespaced_job, lambda js: seen(js, 2), "two jobs of tokyo", ns,
                       label_selector="cj=tokyo")
    # two schedule times have passed for both: the suspended one started nothing
    assert batch.list_namespaced_job(ns, label_selector="cj=held").items == []
    held = batch.read_namespaced_cron_job("held", ns)
    assert held.status.active is None and held.status.last_schedule_time is None
    job = jobs[0]
    stamp = job.metadata.annotations[SCHEDULED]
    assert stamp.endswith("+09:00")
    assert datetime.fromisoformat(stamp).timestamp() == _minute(job) * 60
    row = twin.kubectl("get", "cronjob", "tokyo", "-n", ns, "--no-headers").stdout.split()
    assert row[:4] == ["tokyo", "*", "*", "*"] and "Asia/Tokyo" in row

    batch.patch_namespaced_cron_job("held", ns, {"spec": {"suspend": False}})
    watch_until(batch.list_namespaced_job, lambda js: len(js) >= 1, "a job of held once resumed", ns,
                label_selector="cj=held")


def test_kubectl_create_job_from_a_cronjob(twin, api, ns):
    _batch(api).create_namespaced_cron_job(ns, _cronjob("tpl", "exit 0", suspend=True))
    out = twin.kubectl("create", "job", "now", "--from=cronjob/tpl", "-n", ns).stdout
    assert "job.batch/now created" in out
    twin.kubectl("wait", "-n", ns, "job/now", "--for=condition=Complete", "--timeout=120s")
    job = twin.kubectl_json("get", "job", "now", "-n", ns)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    (ref,) = job["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("CronJob", "tpl", True)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "-c", "exit 0"]


# the schedule's arithmetic --------------------------------------------------------------------
def _t(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


@pytest.mark.parametrize("schedule,after,expected", [
    ("*/15 * * * *", "2026-12-06T08:14:30+00:00", "2026-12-06T08:15:00+00:00"),
    ("0 3 * * sun", "2026-12-06T08:00:00+00:00", "2026-12-13T03:00:00+00:00"),
    # day of month and day of week both restricted: either matches (robfig ORs them)
    ("15 10 1,15 * 1", "2026-12-06T08:00:00+00:00", "2026-12-07T10:15:00+00:00"),
    ("@monthly", "2026-12-06T08:00:00+00:00", "2027-01-01T00:00:00+00:00"),
    # 02:30 does not exist in Berlin on 2027-03-28 (summer time starts): the next one is a day later
    ("CRON_TZ=Europe/Berlin 30 2 * * *", "2027-03-27T12:00:00+00:00", "2027-03-29T00:30:00+00:00"),
])
def test_next_is_robfig_cron(schedule, after, expected):
    nxt = cron.parse(schedule).next(datetime.fromisoformat(after))
    assert nxt is not None and nxt.astimezone(UTC) == datetime.fromisoformat(expected)


def test_february_30_never_comes():
    assert cron.parse("0 0 30 2 *").next(datetime(2026, 1, 1, tzinfo=UTC)) is None


def test_only_the_most_recent_missed_time_counts():
    every_minute = cron.parse("* * * * *")
    recent, missed = most_recent(every_minute, _t("2026-12-06T08:00:30+00:00"), _t("2026-12-06T08:10:05+00:00"))
    assert (recent, missed) == (_t("2026-12-06T08:10:00+00:00"), 10)
    # startingDeadlineSeconds moves `earliest` to now - deadline: 08:10:00 is started within 10 s, not after 4 s
    now = _t("2026-12-06T08:10:05+00:00")
    assert most_recent(every_minute, now - 10, now) == (_t("2026-12-06T08:10:00+00:00"), 1)
    assert most_recent(every_minute, now - 4, now) == (None, 0)
