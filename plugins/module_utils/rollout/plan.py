# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout's plan: its id, its waves, and for every cluster what this run does there (docs/rollout.md).

What a run does with a cluster follows its record from earlier runs of the same rollout:
- promoted: nothing; it is neither measured nor changed again;
- rolled_back: nothing, unless retry_rolled_back (the change did not pay off there; trying again is a decision);
- failed, pending, skipped or no record: the whole sequence, reusing a baseline younger than baseline_max_age
  (a run interrupted after its baseline, or a retried cluster that was rolled back to the state it was measured in).
"""
from __future__ import annotations

import datetime
import os
from typing import Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import changes as CH
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import waves as W

RUN, SKIP = "run", "skip"


def _parse_time(text: object) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(str(text)[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        return None


def reusable_baseline(record: Mapping[str, Any] | None, max_age: float, now: datetime.datetime) -> dict[str, Any] | None:
    """The record's baseline when it is recent enough to stand for the cluster before the change, else None."""
    base = (record or {}).get("baseline") or {}
    finished = _parse_time(base.get("finished") or "")
    if not base.get("result") or finished is None or not os.path.exists(base["result"]):
        return None
    if (now - finished).total_seconds() > max_age:
        return None
    return dict(base, reused=True)


def cluster_action(record: Mapping[str, Any] | None, retry_rolled_back: object, max_age: float,
                   now: datetime.datetime) -> tuple[str, str, dict[str, Any] | None]:
    """(action, reason, baseline to reuse) for one cluster from its earlier record."""
    if not record:
        return RUN, "not rolled out yet", None
    decision, when = record.get("decision"), record.get("updated", "?")
    if decision == "promoted":
        return SKIP, "promoted on %s: not measured or changed again" % when, None
    if decision == "rolled_back" and not retry_rolled_back:
        return SKIP, ("rolled back on %s (%s); -e retry_rolled_back=true tries it again"
                      % (when, record.get("reason", "the gate failed"))), None
    baseline = reusable_baseline(record, max_age, now)
    why = {"rolled_back": "rolled back on %s; retried as asked" % when,
           "failed": "failed on %s (%s); tried again" % (when, record.get("reason", "")),
           }.get(decision, "%s on %s; continued" % (decision, when))  # type: ignore[arg-type]  # a record has a decision
    return RUN, why, baseline


def identity(params: Mapping[str, Any]) -> tuple[dict[str, Any], str, str]:
    """(the change's parameters, the rollout id, the rollout's directory): what names the rollout, before any record."""
    change_params = CH.parameters(params["change"], params.get("change_parameters"))
    rollout_id = params.get("rollout_id") or CH.rollout_id(params["change"], change_params)
    return change_params, rollout_id, os.path.join(params["reports_dir"], "rollout-%s" % rollout_id)


def plan(params: Mapping[str, Any], records: Mapping[str, dict[str, Any]], now: datetime.datetime | None = None) -> dict[str, Any]:
    """The plan of one run. params: the rollout_plan module's options; records: {cluster: record} found so far."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    change = params["change"]
    row = CH.get(change)
    change_params, rollout_id, rollout_dir = identity(params)
    clusters = list(params["clusters"])
    canary = list(params["canary"] or [])
    waves = W.plan(clusters, params["waves"], canary)  # empty or null: W.DEFAULT_WAVES
    first = int(params["first_wave"])
    # a rollout turns a change on; turning it off everywhere is the change's own playbook with state=absent
    rollout = {"id": rollout_id, "change": change, "state": "present", "parameters": change_params,
               "max_fail_percentage": float(params["max_fail_percentage"])}
    per_cluster: dict[str, dict[str, Any]]
    per_cluster, lines = {}, []
    for i, members in enumerate(waves):
        wave = first + i
        lines.append("wave %d: %s" % (wave, ", ".join(members)))
        for name in members:
            record = records.get(name)
            action, reason, baseline = cluster_action(record, params.get("retry_rolled_back"),
                                                      int(params["baseline_max_age"]), now)
            per_cluster[name] = {"wave": wave, "action": action, "reason": reason, "baseline": baseline,
                                 "prior": ({k: record.get(k) for k in ("decision", "reason", "updated", "wave")}
                                           if record else None)}
            lines.append("  %s: %s (%s)" % (name, "measure, apply, measure, gate" if action == RUN else "leave as is",
                                            reason))
    return {"rollout": rollout, "rollout_dir": rollout_dir, "probe": dict(row["probe"], text=CH.probe_text(change)),
            "tuning": row["tuning"], "what": row["what"],
            "waves": [{"wave": first + i, "clusters": m} for i, m in enumerate(waves)],
            "serial": [len(m) for m in waves],
            # what the records say before the waves reach the clusters (written with keep_existing)
            "pending": [{"cluster": c, "wave": v["wave"], "decision": "pending",
                         "reason": "wave %d: not reached yet" % v["wave"]}
                        for c, v in per_cluster.items() if v["action"] == RUN], "order": [c for m in waves for c in m], "clusters": per_cluster,
            "lines": ["rollout %s: %s; probe: %s" % (rollout_id, row["what"], CH.probe_text(change))] + lines}


def plan_with_records(params: Mapping[str, Any]) -> dict[str, Any]:
    """plan() over the records of the rollout's directory and, with params["bucket"], of the bucket's copy of it
    (where the rollout's other AWX jobs and slices left theirs); `warnings` names the record files left out."""
    _, rollout_id, rollout_dir = identity(params)
    maps = [D.read_records(rollout_dir)]
    if params.get("bucket"):
        # here, not at the top: boto3 loads only for a bucket
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload

        prefix = "/".join(p for p in ((params["prefix"] or "").strip("/"), "rollout-%s" % rollout_id) if p)
        maps.append(D.read_records_s3(s3_upload.client_from_params(params), params["bucket"], prefix,
                                      endpoint_url=params.get("endpoint_url")))
    records = D.merge(*maps)
    return dict(plan(params, records), warnings=records.left_out())
