# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a cluster's turn starts, from its record and what the cluster reads now (docs/rollout.md, "Interrupted runs").

A record says what the rollout intended or did; the cluster, read again, says what is true (a controller's
level-triggered resume). So a record is believed only for the cluster it names (API server and kube-system uid),
and only as far as the cluster agrees with it:

    start(record, reading, ...) -> {"start": ..., "reason": ..., "resumed_from": state or None, "drift": text or None}

start is one of
- run: measure the baseline (or reuse a recent one), apply, measure after, judge;
- apply: the baseline of the record stands; apply, measure after, judge;
- after: the change was being applied or was applied, undecided: apply again (idempotent), measure after, judge;
- gate: both probes are measured, undecided: judge again (the same documents give the same verdict);
- rollback: a rollback was under way: finish it and read the cluster back;
- restore: the change reads on while a record of this rollout shows it changed the cluster and no decision of the
  rollout keeps it on (drift, an unfinished rollback, a failure): roll it back, read it back, then run;
- leave: the record's decision stands and the cluster agrees (promoted and on, rolled back and off);
- skip: the change is on and no record of this rollout shows a change: there is nothing to measure;
- not_applicable: the advisor says the change does not apply here.
A cluster whose change may be on because of this rollout is never skipped.
"""
from __future__ import annotations

import datetime
import os
from typing import Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.schema import CHANGED_STEPS

RUN, APPLY, AFTER, GATE, ROLLBACK, RESTORE, LEAVE, SKIP, NOT_APPLICABLE, ABORT = (
    "run", "apply", "after", "gate", "rollback", "restore", "leave", "skip", "not_applicable", "abort")


def state_of(record: Mapping[str, Any]) -> str:
    """The record's write-ahead state; records written before states were kept say it through their decision."""
    if record.get("state"):
        return str(record["state"])
    decision = record.get("decision")
    if decision == "pending":
        return "applying" if record.get("applied") else "baseline_measured" if record.get("baseline") else "planned"
    return str(decision)


def shows_change(record: Mapping[str, Any] | None) -> bool:
    """Whether the record, or one it superseded, says this rollout changed the cluster."""
    if not record:
        return False
    if record.get("applied") or state_of(record) in CHANGED_STEPS + ("rolled_back", "aborted"):
        return True
    return any(e.get("state") in CHANGED_STEPS for e in record.get("history") or [])


def same_cluster(record: Mapping[str, Any], identity: Mapping[str, Any] | None) -> bool:
    """Whether the record is about the cluster read now: a record without an identity (planned before any cluster
    was read) is, one naming another kube-system uid or API server is not."""
    mine = record.get("identity")
    if not mine or not identity:
        return True
    return mine.get("uid") == identity.get("uid") and mine.get("server") == identity.get("server")


def _file_ok(probe: Mapping[str, Any] | None) -> bool:
    return bool(probe and probe.get("result") and os.path.exists(str(probe["result"])))


def usable_baseline(record: Mapping[str, Any] | None, max_age: float, now: datetime.datetime) -> dict[str, Any] | None:
    """The record's baseline when it is recent enough to stand for the cluster before the change, else None."""
    base = (record or {}).get("baseline") or {}
    if not _file_ok(base):
        return None
    try:
        finished = datetime.datetime.strptime(str(base.get("finished"))[:19], "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    if (now - finished).total_seconds() > max_age:
        return None
    return dict(base, reused=True)


def _out(start: str, reason: str, record: Mapping[str, Any] | None = None, drift: str | None = None,
         baseline: Mapping[str, Any] | None = None, after: Mapping[str, Any] | None = None,
         gate: Mapping[str, Any] | None = None) -> dict[str, Any]:
    resumed = state_of(record) if record and start in (APPLY, AFTER, GATE, ROLLBACK, RESTORE) else None
    return {"start": start, "reason": reason, "resumed_from": resumed, "drift": drift,
            "baseline": dict(baseline) if baseline else None, "after": dict(after) if after else None,
            "gate": dict(gate) if gate else None}


def start(record: Mapping[str, Any] | None, on: bool, identity: Mapping[str, Any] | None = None,
          applies: bool = True, retry_rolled_back: bool = False, baseline_max_age: float = 86400,
          now: datetime.datetime | None = None) -> dict[str, Any]:
    """Where this run takes the cluster up (module docstring). on: the change reads on now; applies: the advisor
    does not call it not applicable; identity: {server, uid} read now."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    drift = None
    if record and not same_cluster(record, identity):
        drift = ("the records name another cluster under this name (kube-system uid %s at %s, now %s at %s): they "
                 "are not this cluster's" % (record["identity"].get("uid"), record["identity"].get("server"),
                                             (identity or {}).get("uid"), (identity or {}).get("server")))
        record = None
    if not applies:
        return _out(NOT_APPLICABLE, "does not apply here", drift=drift)
    state = state_of(record) if record else None
    when = (record or {}).get("updated", "?")
    base = usable_baseline(record, baseline_max_age, now)
    changed = shows_change(record)

    def fresh(reason: str, drifted: str | None = None) -> dict[str, Any]:
        text = "; ".join(t for t in (drift, drifted) if t) or None
        if on:
            if changed:
                return _out(RESTORE, reason + "; the change reads on: it is rolled back and read back first, then "
                            "measured, applied and judged", record, text)
            return _out(SKIP, "already on before the rollout: nothing to change or to measure", record, text)
        if base:
            return _out(RUN, reason + "; the baseline of %s is reused" % base.get("finished"), record, text,
                        baseline=base)
        return _out(RUN, reason, record, text)

    if state in (None, "planned", "skipped"):
        return fresh("not rolled out yet" if state in (None, "planned") else "skipped on %s" % when)
    if state == "baseline_measured":
        if on:  # the intent to apply is recorded before the change: on here was not this rollout's doing
            return _out(SKIP, "turned on outside the rollout after its baseline of %s: nothing to change" % when,
                        record, drift)
        if base:
            return _out(APPLY, "an earlier run measured the baseline on %s and stopped before the change" % when,
                        record, drift, baseline=base)
        return fresh("an earlier run's baseline is gone or too old")
    if state in ("applying", "applied"):
        if base:
            return _out(AFTER, "an earlier run stopped %s the change on %s, before a decision: it is applied again, "
                        "measured and judged" % ("while applying" if state == "applying" else "after", when),
                        record, drift, baseline=base)
        return _out(RESTORE, "an earlier run stopped %s the change on %s and its baseline is gone or too old: the "
                    "change is rolled back and read back, then measured, applied and judged" % (
                        "while applying" if state == "applying" else "after", when), record, drift)
    if state == "after_measured":
        after = (record or {}).get("after")
        if on and base and _file_ok(after):
            return _out(GATE, "an earlier run measured both probes on %s and stopped before its decision: judged "
                        "again from them" % when, record, drift, baseline=base, after=after)
        if on and base:
            return _out(AFTER, "an earlier run's after-probe of %s is gone: measured again and judged" % when,
                        record, drift, baseline=base)
        if not on:
            return fresh("the change reads off after an earlier run applied it on %s" % when,
                         "applied on %s, but the cluster reads the change off" % when)
        return _out(RESTORE, "an earlier run stopped before its decision on %s and its baseline is gone" % when,
                    record, drift)
    if state == "rolling_back":
        return _out(ROLLBACK, "an earlier run was rolling the change back on %s: the rollback is finished and read "
                    "back" % when, record, drift, gate=(record or {}).get("gate"))
    if state == "promoted":
        if on:
            return _out(LEAVE, "promoted on %s: not measured or changed again" % when, record, drift)
        return fresh("promoted on %s, but the change reads off now: rolled out again" % when,
                     "promoted on %s, but the cluster reads the change off" % when)
    if state in ("rolled_back", "aborted"):
        word = "rolled back" if state == "rolled_back" else "aborted"
        if on:
            return fresh("%s on %s, but the change reads on now" % (word, when),
                         "%s on %s, but the cluster reads the change on" % (word, when))
        if state == "rolled_back" and retry_rolled_back:
            return fresh("rolled back on %s; retried as asked" % when)
        hint = "; -e retry_rolled_back=true tries it again" if state == "rolled_back" else ""
        return _out(LEAVE, "%s on %s (%s)%s" % (word, when, (record or {}).get("reason", ""), hint), record, drift)
    # failed: the record says whether the change was applied and rolled back; the cluster says whether it is on
    return fresh("failed on %s (%s); tried again" % (when, (record or {}).get("reason", "")))


def abort(record: Mapping[str, Any] | None, on: bool, identity: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What `rollout_action: abort` does with the cluster: roll back (start "abort") every cluster the rollout
    changed, whatever its decision, and read it back; leave the others."""
    if record and not same_cluster(record, identity):
        return _out(LEAVE, "the records name another cluster under this name: nothing of this rollout to abort",
                    drift="records of kube-system uid %s, the cluster is %s" % (
                        record["identity"].get("uid"), (identity or {}).get("uid")))
    if not shows_change(record):
        aside = " (the change reads on: not this rollout's doing)" if on else ""
        return _out(LEAVE, "not changed by this rollout" + aside, record)
    when = (record or {}).get("updated", "?")
    if state_of(record or {}) in ("aborted", "rolled_back") and not on:
        return _out(LEAVE, "%s on %s already" % (state_of(record or {}).replace("_", " "), when), record)
    return _out(ABORT, "%s on %s: rolled back and read back (abort)" % (state_of(record or {}).replace("_", " "), when),
                record)
