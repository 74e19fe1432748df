# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rollout_record and rollout_report modules do: every input checked first, then the records or reports
written (document.py, render.py). Each function takes the module's params and returns the module's result, or
raises a StoragePerfError naming the option to fix."""
from __future__ import annotations

import os
from typing import Any, Mapping, NoReturn

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import writing, written
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import render as RR
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import schema as RS

ROLLOUT_KEYS = ("id", "change", "state", "parameters", "max_fail_percentage")
RECORD_KEYS = ("cluster", "wave", "decision", "reason", "baseline", "after", "gate", "applied", "rollback", "state",
               "identity", "resumed_from", "drift")
FIX = "Fix the named fields; docs/rollout.schema.json describes a record."


def _fail(problems: list[str], what: str, hint: str = FIX) -> NoReturn:
    shown = "; ".join(problems[:8]) + (" (and %d more)" % (len(problems) - 8) if len(problems) > 8 else "")
    raise StoragePerfError("%s: %s" % (what, shown), hint=hint, problems=problems)


def _limit_problem(value: float | None, field: str) -> list[str]:
    if value is not None and not 0 <= value <= 100:
        return ["%s: %r is not a percentage; give a number from 0 to 100" % (field, value)]
    return []


def check_rollout(rollout: Mapping[str, Any]) -> dict[str, Any]:
    """The rollout option with its defaults (state present, parameters {}, max_fail_percentage 0), or a failure."""
    problems = ["rollout.%s: unknown key; rollout takes %s" % (k, ", ".join(ROLLOUT_KEYS))
                for k in sorted(set(rollout) - set(ROLLOUT_KEYS))]
    out = dict({"state": "present", "parameters": {}, "max_fail_percentage": 0}, **rollout)
    problems += RS.problems_of("rollout", out, "rollout")
    if not problems:
        problems += _limit_problem(out["max_fail_percentage"], "rollout.max_fail_percentage")
    if problems:
        _fail(problems, "bad rollout")
    return out


def check_records(rollout: Mapping[str, Any], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the entries describe (updated now), or a failure naming every bad field of every entry."""
    seen: dict[str, int]
    problems, records, seen = [], [], {}
    for i, entry in enumerate(entries):
        where = "records[%d]" % i
        problems += ["%s.%s: unknown key; a record takes %s" % (where, k, ", ".join(RECORD_KEYS))
                     for k in sorted(set(entry) - set(RECORD_KEYS))]
        missing = [k for k in ("cluster", "wave", "decision", "reason") if k not in entry]
        problems += ["%s.%s: required; give it" % (where, k) for k in missing]
        if missing:
            continue
        parts = {k: entry[k] for k in RECORD_KEYS[4:] if k in entry}
        record = D.new_record(rollout, entry["cluster"], entry["wave"], entry["decision"], entry["reason"], **parts)
        problems += ["%s.%s" % (where, p) for p in D.record_problems(record)]
        if isinstance(entry["cluster"], str) and entry["cluster"] in seen:
            problems.append("%s.cluster: %r is also records[%d]; give one record per cluster"
                            % (where, entry["cluster"], seen[entry["cluster"]]))
        seen.setdefault(str(entry["cluster"]), i)
        records.append(record)
    if problems:
        _fail(problems, "bad records")
    return records


def rollout_record(p: Mapping[str, Any], check_mode: bool = False, diff: bool = False) -> dict[str, Any]:
    """Write one record per entry into <rollout_dir>/clusters/ (or, with keep_existing, only where none is)."""
    rollout = check_rollout(p["rollout"])
    records = check_records(rollout, p["records"])
    rollout_dir = os.path.abspath(p["rollout_dir"])
    existing = D.read_records(rollout_dir)
    other = sorted({r["rollout"]["id"] for r in existing.values()} - {rollout["id"]})
    if other:
        raise StoragePerfError("rollout.id %r: the records in %s belong to rollout %r"
                               % (rollout["id"], rollout_dir, other[0]),
                               hint="Give that rollout's id, or the new rollout's own rollout_dir "
                                    "(<reports_dir>/rollout-<id>).")
    result: dict[str, Any] = {"changed": False, "records": {}, "paths": {}}
    before, after = {}, {}
    with writing("cannot write the rollout records into %s" % os.path.join(rollout_dir, D.CLUSTERS_DIR),
                 hint="Check that rollout_dir is writable."):
        for record in records:
            cluster = record["cluster"]
            if p["keep_existing"] and cluster in existing:
                result["records"][cluster] = existing[cluster]
                result["paths"][cluster] = D.record_path(rollout_dir, cluster)
                continue
            path, old, new = D.plan_write(rollout_dir, record)
            changed = D.write_record(rollout_dir, record, check=check_mode)[1]
            result["records"][cluster], result["paths"][cluster] = new, path
            if changed:
                result["changed"] = True
                before[cluster], after[cluster] = old, new
    if diff and result["changed"]:
        result["diff"] = {"before": before, "after": after}
    result["warnings"] = existing.left_out()
    return result


def rollout_report(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Assemble the records of rollout_dir (and of a bucket) into rollout.json, rollout.md and rollout.html."""
    rollout_dir = os.path.abspath(p["rollout_dir"]) if p["rollout_dir"] else None
    if not rollout_dir and not p["output_dir"]:
        raise StoragePerfError("output_dir is required when rollout_dir is not given (the reports go to rollout_dir "
                               "by default)")
    if rollout_dir and not os.path.isdir(rollout_dir) and not p["bucket"]:
        raise StoragePerfError("rollout_dir %s is not a directory: give the rollout's directory "
                               "(<reports_dir>/rollout-<id>, holding clusters/<cluster>.json), or a bucket" % rollout_dir)
    problems = _limit_problem(p["max_fail_percentage"], "max_fail_percentage")
    if problems:
        _fail(problems, "bad max_fail_percentage", hint="Leave it unset to judge by the records' own rollout.")
    maps = [D.read_records(rollout_dir)] if rollout_dir else []
    if p["bucket"]:
        maps.append(D.read_records_s3(_s3_client(p), p["bucket"], p["prefix"], endpoint_url=p["endpoint_url"]))
    records = D.merge(*maps)
    left_out = records.left_out()
    if not records:
        raise StoragePerfError("no rollout record in %s%s" % (" or ".join(records.sources), (
            "; left out: " + "; ".join(left_out)) if left_out else ""),
            hint="rollout_report reads <rollout_dir>/clusters/<cluster>.json (and <prefix>/clusters/ in the bucket), "
                 "written by rollout_record; check rollout_dir, bucket and prefix.")
    doc = D.assemble(records, max_fail_percentage=p["max_fail_percentage"], title=p["title"], paused=p.get("paused"))
    out_dir = os.path.abspath(p["output_dir"] or rollout_dir)  # type: ignore[arg-type]  # one of them, checked above
    with writing("cannot write the rollout report into %s" % out_dir, hint="Check that output_dir is writable."):
        result = written(RR.write_rollout(doc, out_dir, check_mode=check_mode))
    return dict(result, output_dir=out_dir, rollout=doc, summary=doc["summary"], halted=doc["halted"],
                headline=RR.headline(doc), warnings=left_out)


def _s3_client(p: Mapping[str, Any]) -> Any:
    # here, not at the top: boto3 loads only for a bucket
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload

    return s3_upload.client_from_params(p)
