# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout's state: one record per cluster, and the rollout document assembled from them.

    record = new_record(rollout, "twin-1", 1, "promoted", "3.9x faster, above the required 2.8x", gate=verdict)
    write_record("reports/rollout-<id>", record)          # clusters/twin-1.json, atomic; the old one into history
    records = merge(read_records(rollout_dir), read_records_s3(s3, bucket, prefix))
    doc = assemble(records)                                # waves, halted, summary; validated

Records come from several places (each host writes its own slice; a bucket keeps another run's), so reading
returns a Records map that also carries its sources and the files it left out (problems: a file that is not JSON
or not a record is named, never merged). Records of two rollouts in one place are an error naming both ids.
"""
from __future__ import annotations

import copy
import datetime
import json
import os
import re
from typing import Any, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import dumps, write_text_atomic
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import schema as RS

CLUSTERS_DIR = "clusters"
PARTS = ("baseline", "after", "gate", "applied", "rollback", "updated", "history", "state", "identity", "resumed_from",
         "drift")
# what makes two records the same decision: all but when it was written and what came before
_NOT_CONTENT = ("updated", "history")


class RolloutError(StoragePerfError):
    """The rollout's state cannot be read or written as asked: two rollouts mixed, no records, a bad record."""


class Records(dict):
    """{cluster: record}, with `sources` (where they were read) and `problems` ([{source, error}] left out)."""

    def __init__(self, records: Mapping[str, dict[str, Any]] | None = None, sources: Iterable[str] = (),
                 problems: Iterable[dict[str, str]] = ()) -> None:
        super().__init__(records or {})
        self.sources = list(sources)
        self.problems = list(problems)

    def left_out(self) -> list[str]:
        """One sentence per record file that was skipped, for the module's warnings."""
        return ["%s was left out: %s" % (x["source"], x["error"]) for x in self.problems]


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def when(record: Mapping[str, Any]) -> datetime.datetime:
    """The record's `updated` as an aware datetime (any fraction of seconds; Z or an offset)."""
    text = record["updated"]
    stamp = datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    fraction = re.match(r"\.(\d+)", text[19:])
    rest = text[19 + (fraction.end() if fraction else 0):]
    if fraction:
        stamp += datetime.timedelta(microseconds=int((fraction.group(1) + "000000")[:6]))
    offset = re.match(r"([+-])(\d{2}):?(\d{2})$", rest)
    if offset:
        sign = 1 if offset.group(1) == "+" else -1
        stamp -= sign * datetime.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3)))
    return stamp


# --- one record --------------------------------------------------------------------------------------
def new_record(rollout: Mapping[str, Any] | None, cluster: str, wave: int, decision: str, reason: str, **parts: Any) -> dict[str, Any]:
    """A record as the schema has it; parts: baseline, after, gate, applied, rollback, updated (default now), history,
    state (default: the decision's own, pending: planned), identity, resumed_from, drift.

    Not checked here: write_record() and check_record() do.
    """
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise RolloutError("unknown record part(s) %s; a record takes %s" % (", ".join(unknown), ", ".join(PARTS)))
    rollout = dict(rollout or {})
    rollout.setdefault("parameters", {})
    rollout.setdefault("max_fail_percentage", 0)
    return {"schema_version": RS.SCHEMA_VERSION, "rollout": rollout, "cluster": cluster, "wave": wave,
            "decision": decision, "reason": reason, "updated": parts.get("updated") or now_iso(),
            "baseline": parts.get("baseline"), "after": parts.get("after"), "gate": parts.get("gate"),
            "applied": bool(parts.get("applied", False)), "rollback": parts.get("rollback"),
            "history": list(parts.get("history") or []),
            "state": parts.get("state") or ("planned" if decision == "pending" else decision),
            "identity": parts.get("identity"), "resumed_from": parts.get("resumed_from"), "drift": parts.get("drift")}


def record_problems(record: dict[str, Any]) -> list[str]:
    """Every problem of a record, 'field: message' (empty when it is valid): the schema, then what it cannot say."""
    try:
        RS.validate_record(record)
    except RS.RecordValidationError as e:
        return e.problems
    out = []
    if record["decision"] in ("promoted", "rolled_back") and record["gate"] is None:
        out.append("gate: a %s record names the gate's verdict that decided it; give gate (rollout_gate's result)"
                   % record["decision"])
    mfp = record["rollout"]["max_fail_percentage"]
    if mfp > 100:
        out.append("rollout.max_fail_percentage: %r is above 100; give a percentage from 0 to 100" % mfp)
    return out


def check_record(record: dict[str, Any]) -> dict[str, Any]:
    """Raise RecordValidationError naming every bad field; return the record."""
    found = record_problems(record)
    if found:
        raise RS.RecordValidationError(found)
    return record


def history_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    entry = {"decision": record["decision"], "reason": record["reason"], "updated": record["updated"]}
    if record.get("state"):
        entry["state"] = record["state"]
    return entry


def _content(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _NOT_CONTENT}


def _history(entries: Iterable[dict[str, Any]], current: Mapping[str, Any]) -> list[dict[str, Any]]:
    """entries without duplicates and without the current record itself, oldest first, the last HISTORY_MAX."""
    seen, out = {(current["updated"], current["decision"], current.get("state"))}, []
    for e in sorted(entries, key=when):
        key = (e["updated"], e["decision"], e.get("state"))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out[-RS.HISTORY_MAX:]


def supersede(new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """new, which replaces old: old's history and old itself (when it said something else) go into new's history."""
    if old is None:
        return copy.deepcopy(new)
    if _content(new) == _content(old):
        kept = copy.deepcopy(old)  # the same decision again: the first time it was written stays its time
        kept["history"] = _history(old["history"] + new["history"], old)
        return kept
    out = copy.deepcopy(new)
    out["history"] = _history(old["history"] + [history_entry(old)] + new["history"], new)
    return out


def record_path(rollout_dir: str, cluster: str) -> str:
    return os.path.abspath(os.path.join(rollout_dir, CLUSTERS_DIR, "%s.json" % cluster))


def _same_rollout(a: Mapping[str, Any], b: Mapping[str, Any], where_a: str, where_b: str) -> None:
    if a["rollout"]["id"] != b["rollout"]["id"]:
        raise RolloutError("records of two rollouts: %r (%s) and %r (%s); one rollout_dir (or bucket prefix) holds "
                           "the records of one rollout id" % (a["rollout"]["id"], where_a, b["rollout"]["id"], where_b),
                           hint="Use the rollout's own rollout_dir (<reports_dir>/rollout-<id>), or move the other "
                                "rollout's records away.")


def plan_write(rollout_dir: str, record: dict[str, Any]) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
    """(path, the record stored there now or None, the record write_record would store): nothing is written."""
    check_record(record)
    path = record_path(rollout_dir, record["cluster"])
    old = None
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
    except OSError:
        pass
    except ValueError:  # a broken file is replaced; read_records has already named it
        old = None
    if old is not None and record_problems(old):
        old = None
    if old is not None:
        _same_rollout(record, old, "the new record", path)
    return path, old, supersede(record, old)


def write_record(rollout_dir: str, record: dict[str, Any], check: bool = False) -> tuple[str, bool]:
    """Write <rollout_dir>/clusters/<cluster>.json atomically; -> (path, changed). check: write nothing, say if it would."""
    path, old, new = plan_write(rollout_dir, record)
    changed = new != old
    if changed and not check:
        write_text_atomic(path, dumps(new))
    return path, changed


# --- reading many --------------------------------------------------------------------------------------
def _take(out: Records, source: str, cluster: str, text: str | bytes) -> None:
    """Add the record in text to out, or a problem naming source."""
    try:
        record = json.loads(text)
    except ValueError as e:
        out.problems.append({"source": source, "error": "not valid JSON: %s" % e})
        return
    found = record_problems(record) if isinstance(record, dict) else ["(record): not a JSON object"]
    if not found and record["cluster"] != cluster:
        found = ["cluster: %r is not the cluster its file is named after (%s)" % (record["cluster"], cluster)]
    if found:
        out.problems.append({"source": source, "error": "not a rollout record: " + "; ".join(found[:5])})
        return
    for other in out.values():
        _same_rollout(other, record, other["cluster"] + "'s record", source)
    out[cluster] = record


def read_records(rollout_dir: str) -> Records:
    """Records of <rollout_dir>/clusters/*.json (none when the directory is missing); bad files in .problems."""
    rollout_dir = os.path.abspath(rollout_dir)
    out = Records(sources=[rollout_dir])
    directory = os.path.join(rollout_dir, CLUSTERS_DIR)
    if not os.path.isdir(directory):
        return out
    for name in sorted(os.listdir(directory)):
        if name.startswith(".") or not name.endswith(".json"):  # dotfiles: the atomic writer's temporary files
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            out.problems.append({"source": path, "error": "cannot be read: %s" % e})
            continue
        _take(out, path, name[:-len(".json")], text)
    return out


def read_records_s3(s3: Any, bucket: str, prefix: str | None = "", endpoint_url: str | None = None) -> Records:
    """Records that reports_upload put under s3://bucket/<prefix>/clusters/<cluster>.json (UploadError when the
    bucket cannot be listed; an object that cannot be read is a problem)."""
    # here, not at the top: boto3 loads only for a bucket
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_results

    top = "/".join(p for p in ((prefix or "").strip("/"), CLUSTERS_DIR) if p) + "/"
    out = Records(sources=["s3://%s/%s" % (bucket, top)])

    def wanted(key: str) -> bool:
        rest = key[len(top):]
        return key.startswith(top) and "/" not in rest and rest.endswith(".json") and not rest.startswith(".")

    for entry in s3_results.json_objects(s3, bucket, top, wanted, endpoint_url=endpoint_url, parse=False):
        if "error" in entry:
            out.problems.append({"source": entry["source"], "error": entry["error"]})
        else:
            _take(out, entry["source"], entry["key"][len(top):-len(".json")], entry["text"])
    return out


def merge(*record_maps: Mapping[str, dict[str, Any]]) -> Records:
    """One Records of several: per cluster the newest `updated` wins (a tie: the later map), the others go into its
    history when they said something else. Sources and problems are kept; two rollouts are an error."""
    out = Records()
    for records in record_maps:
        out.sources += [s for s in getattr(records, "sources", []) if s not in out.sources]
        out.problems += getattr(records, "problems", [])
        for cluster, record in sorted(records.items()):
            have = out.get(cluster)
            if have is None:
                for other in out.values():
                    _same_rollout(other, record, other["cluster"] + "'s record", cluster + "'s record")
                out[cluster] = copy.deepcopy(record)
            elif when(record) >= when(have):
                _same_rollout(have, record, "one source", "another")
                out[cluster] = supersede(record, have)
            else:
                out[cluster] = supersede(have, record)
    return out


def rollout_of(records: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The rollout all records belong to (the newest record's description of it)."""
    if not records:
        raise RolloutError("no rollout record to read the rollout from; give rollout, or records")
    newest = max(records.values(), key=when)
    for record in records.values():
        _same_rollout(newest, record, newest["cluster"] + "'s record", record["cluster"] + "'s record")
    return newest["rollout"]


# --- the assembled document ------------------------------------------------------------------------------
def held(record: Mapping[str, Any]) -> bool:
    """The cluster was rolled back on an inconclusive gate: it holds the rollout whatever max_fail_percentage (an
    inconclusive gate never passes; as Argo Rollouts' inconclusive analysis, it waits for more evidence)."""
    return record["decision"] == "rolled_back" and (record.get("gate") or {}).get("decision") == "inconclusive"


def wave_verdict(members: list[dict[str, Any]], max_fail_percentage: float, last: bool = False) -> tuple[int, str]:
    """(failed, verdict) of one wave's records: halted once failures pass the limit (more members can only add
    failures) or a gate was inconclusive, unless it is the last wave, which halts nothing (done); else pending while
    one is, skipped when all were, aborted when the rollout's abort rolled it back, else passed."""
    decisions = [r["decision"] for r in members]
    failed = sum(d in RS.FAILED_DECISIONS for d in decisions)
    over = bool(members) and (failed * 100.0 / len(members) > max_fail_percentage or any(held(r) for r in members))
    if over and not last:
        return failed, "halted"
    if not members or "pending" in decisions:
        return failed, "pending"
    if all(d == "skipped" for d in decisions):
        return failed, "skipped"
    if "aborted" in decisions and all(d in ("aborted", "skipped") for d in decisions):
        return failed, "aborted"
    return failed, "done" if over else "passed"


def halt_reason(wave: Mapping[str, Any]) -> str:
    n = len(wave["clusters"])
    if wave.get("held") and wave["failed"] * 100.0 / n <= wave["max_fail_percentage"]:
        return ("wave %d: the gate was inconclusive on %s (rolled back; an inconclusive gate never passes and holds "
                "the rollout whatever max_fail_percentage); later waves are skipped" % (
                    wave["wave"], ", ".join(wave["held"])))
    return ("wave %d: %d of %d cluster%s rolled back or failed (%s%%), above max_fail_percentage %s%%; later waves "
            "are skipped" % (wave["wave"], wave["failed"], n, "" if n == 1 else "s",
                             _pct(wave["failed"] * 100.0 / n), _pct(wave["max_fail_percentage"])))


def _pct(value: float) -> str:
    return ("%.1f" % value).rstrip("0").rstrip(".")


def assemble(records: Mapping[str, dict[str, Any]], rollout: Mapping[str, Any] | None = None, waves: int | None = None,
             max_fail_percentage: float | None = None, title: str | None = None,
             paused: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The rollout document of records (a Records or a plain {cluster: record}); validated.

    rollout: default the records' own; waves: the number of waves planned (waves without a record yet are
    pending); max_fail_percentage: default the rollout's.
    """
    rollout = copy.deepcopy(rollout or rollout_of(records))
    for record in records.values():
        _same_rollout(dict(rollout=rollout), record, "the rollout", record["cluster"] + "'s record")
    limit = rollout.get("max_fail_percentage", 0) if max_fail_percentage is None else max_fail_percentage
    if not 0 <= limit <= 100:
        raise RolloutError("max_fail_percentage %r is not a percentage; give a number from 0 to 100" % limit)
    numbers = sorted({r["wave"] for r in records.values()} | set(range(1, (waves or 0) + 1)))
    out_waves, halted = [], None
    for number in numbers:
        members = [records[c] for c in sorted(records) if records[c]["wave"] == number]
        failed, verdict = wave_verdict(members, limit, last=number == numbers[-1])
        wave = {"wave": number, "clusters": [r["cluster"] for r in members], "failed": failed, "verdict": verdict}
        out_waves.append(wave)
        if verdict == "halted" and halted is None:
            halted = {"wave": number, "reason": halt_reason(dict(
                wave, max_fail_percentage=limit, held=[r["cluster"] for r in members if held(r)]))}
    doc = {"schema_version": RS.SCHEMA_VERSION, "rollout": rollout,
           "generated": max((r["updated"] for r in records.values()), key=lambda u: when({"updated": u}),
                            default=now_iso()),
           "max_fail_percentage": limit, "waves": out_waves, "halted": halted,
           "clusters": {c: copy.deepcopy(records[c]) for c in sorted(records)},
           "summary": {d: sorted(c for c, r in records.items() if r["decision"] == d) for d in RS.DECISIONS},
           "sources": list(getattr(records, "sources", [])), "problems": list(getattr(records, "problems", []))}
    if title:
        doc["title"] = title
    if paused:
        doc["paused"] = {"after_wave": int(paused["after_wave"]), "left": list(paused.get("left") or [])}
    return RS.validate_rollout(doc)
