# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout's plan: its id, its waves, and for every cluster its record from earlier runs (docs/rollout.md).

The plan reads no cluster: it hands each cluster's record to the cluster's own turn, which reads the cluster and
decides where to go on (rollout/resume.py: a record is believed only as far as the cluster agrees with it). Its
lines say what the record alone suggests. With pause_after_wave the waves after it are left for a later run; with
rollout_action abort every wave is visited to roll back what the rollout changed.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import changes as CH
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import resume as R
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import waves as W

ACTIONS = ("run", "abort")


def tentative(record: Mapping[str, Any] | None, retry_rolled_back: object) -> str:
    """What the plan expects to do with a cluster from its record alone; the cluster's own turn reads the cluster
    first and decides (rollout/resume.py)."""
    if not record:
        return "measure, apply, measure, gate (not rolled out yet)"
    state, when = R.state_of(record), record.get("updated", "?")
    if state == "promoted":
        return "leave as is if the change still reads on (promoted on %s)" % when
    if state == "rolled_back" and not retry_rolled_back:
        return "leave as is if the change still reads off (rolled back on %s)" % when
    if state in ("planned", "baseline_measured", "skipped", "failed", "rolled_back"):
        return "measure, apply, measure, gate (%s on %s)" % (state.replace("_", " "), when)
    return "go on from %s (an earlier run stopped there on %s), never skipped" % (state.replace("_", " "), when)


def identity(params: Mapping[str, Any]) -> tuple[dict[str, Any], str, str]:
    """(the change's parameters, the rollout id, the rollout's directory): what names the rollout, before any record."""
    change_params = CH.parameters(params["change"], params.get("change_parameters"))
    rollout_id = params.get("rollout_id") or CH.rollout_id(params["change"], change_params)
    return change_params, rollout_id, os.path.join(params["reports_dir"], "rollout-%s" % rollout_id)


def plan(params: Mapping[str, Any], records: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The plan of one run. params: the rollout_plan module's options; records: {cluster: record} found so far."""
    change = params["change"]
    row = CH.get(change)
    change_params, rollout_id, rollout_dir = identity(params)
    clusters = list(params["clusters"])
    canary = list(params["canary"] or [])
    waves = W.plan(clusters, params["waves"], canary)
    first = int(params["first_wave"])
    action = params["rollout_action"]
    if action not in ACTIONS:
        raise StoragePerfError("rollout_action is %r: give run (roll the change out) or abort (roll back every "
                               "cluster this rollout changed)" % action)
    pause = params["pause_after_wave"]
    last = first + len(waves) - 1
    if pause is not None and not first <= int(pause) <= last:
        raise StoragePerfError("pause_after_wave is %s: this run's waves are %d to %d; name one of them, or leave "
                               "pause_after_wave out to run every wave" % (pause, first, last))
    # abort goes through every wave; a pause keeps the waves after it for a later run
    reached = len(waves) if action == "abort" or pause is None else int(pause) - first + 1
    # a rollout turns a change on; turning it off everywhere is the change's own playbook with state=absent
    rollout = {"id": rollout_id, "change": change, "state": "present", "parameters": change_params,
               "max_fail_percentage": float(params["max_fail_percentage"])}
    per_cluster: dict[str, dict[str, Any]]
    per_cluster, lines = {}, []
    for i, members in enumerate(waves):
        wave = first + i
        later = i >= reached
        lines.append("wave %d: %s%s" % (wave, ", ".join(members), " (after the pause: left for a later run)"
                                        if later else ""))
        for name in members:
            record = records.get(name)
            what = ("roll back what this rollout changed, and read it back" if action == "abort"
                    else tentative(record, params.get("retry_rolled_back")))
            per_cluster[name] = {"wave": wave, "reason": what, "record": record}
            if not later:
                lines.append("  %s: %s" % (name, what))
    order = [c for m in waves[:reached] for c in m]
    left = [c for m in waves[reached:] for c in m]
    paused_after = first + reached - 1
    paused = {"after_wave": paused_after, "left": left} if left else None
    head = "rollout %s: %s; probe: %s" % (rollout_id, row["what"], CH.probe_text(change))
    if action == "abort":
        head = "abort of rollout %s: every cluster it changed is rolled back, wave by wave, and read back" % rollout_id
    return {"rollout": rollout, "rollout_dir": rollout_dir, "probe": dict(CH.probe(change), text=CH.probe_text(change)),
            "tuning": row["tuning"], "what": row["what"], "action": action, "paused": paused,
            # what each cluster's turn weighs its record with (rollout/resume.py)
            "resume": {"retry_rolled_back": bool(params.get("retry_rolled_back")),
                       "baseline_max_age": int(params["baseline_max_age"])},
            "waves": [{"wave": first + i, "clusters": m} for i, m in enumerate(waves)],
            "serial": [len(m) for m in waves[:reached]],
            # what the records say before the waves reach the clusters (written with keep_existing)
            "pending": [{"cluster": c, "wave": v["wave"], "decision": "pending",
                         "reason": "wave %d: not reached yet" % v["wave"]}
                        for c, v in per_cluster.items() if action == "run"],
            "order": order, "clusters": per_cluster,
            "lines": [head] + lines + (["paused after wave %d: %s left for a later run of the same rollout"
                                        % (paused_after, ", ".join(left))] if left else [])}


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
