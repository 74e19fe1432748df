# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build, finalize, write and load result documents (format: docs/results.md).

Typical use by a benchmark::

    doc = new_result("csi_lifecycle", parameters={"volumes": 100}, cluster={...})
    off = add_variant(doc, "concurrency off", settings={"enableConcurrency": False})
    run = add_run(off)
    add_step(run, "create_volume", label="Create Volume", count=100, wall_s=417.0, unit="vol",
             objects=[{"name": "pvc-0", "start": 0.1, "end": 12.3}, ...])
    finalize(doc)                      # status, finished, per-variant summaries
    path = write_atomic(doc, "reports")  # reports/<run_id>/result.json

A run that breaks half way calls finalize(doc, status="failed", reason=str(exc)) and
write_atomic() all the same: partial results are results.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
from typing import Any, Iterable
import uuid

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats, sweep
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import (
    BROKEN_STEP_STATUSES, SCHEMA_VERSION, STEP_STATUSES, RUN_STATUSES, validate,
)

RESULT_FILE = "result.json"
# worst first: a step summarised over repetitions takes the worst status any repetition had
# step statuses that make a run failed
BROKEN_STEP = BROKEN_STEP_STATUSES
_STATUS_ORDER = BROKEN_STEP_STATUSES + ("skipped", "ok")


def now_iso() -> str:
    """UTC now as ISO 8601 with microseconds and a Z: 2025-01-02T03:04:05.123456Z."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_id(benchmark: str, when: datetime.datetime | None = None) -> str:
    """<benchmark>-<UTC yyyymmddThhmmssZ>-<6 hex>: sortable by time, unique across hosts."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    return "%s-%s-%s" % (re.sub(r"[^a-z0-9_]", "_", benchmark.lower()),
                         when.strftime("%Y%m%dT%H%M%SZ"), uuid.uuid4().hex[:6])


def new_result(benchmark: str, run_id: str | None = None, parameters: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None,
               components: dict[str, Any] | None = None, title: str | None = None, started: str | None = None) -> dict[str, Any]:
    """A fresh document with status 'interrupted' until finalize() says otherwise.

    Starting as 'interrupted' means a document written mid-run (or left behind by a killed
    process) never claims to be complete.
    """
    doc = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id or new_run_id(benchmark),
        "benchmark": benchmark,
        "status": "interrupted",
        "started": started or now_iso(),
        "finished": None,
        "cluster": dict(cluster or {}),
        "components": {k: str(v) for k, v in (components or {}).items()},
        "parameters": dict(parameters or {}),
        "variants": [],
    }
    if title:
        doc["title"] = title
    return doc


def add_variant(doc: dict[str, Any], name: str, settings: dict[str, Any] | None = None,
                sweep_point: dict[str, Any] | None = None) -> dict[str, Any]:
    """Append a variant (e.g. 'concurrency off', a StorageClass name); returns it.

    sweep_point {variant, parameter, value} marks it as one size of a scaling sweep (report/sweep.py).
    """
    if any(v["name"] == name for v in doc["variants"]):
        raise ValueError("variant %r already exists in run %s; variant names must be unique"
                         % (name, doc["run_id"]))
    variant = {"name": name, "settings": dict(settings or {}), "runs": []}
    if sweep_point:
        variant["sweep"] = dict(sweep_point)
    doc["variants"].append(variant)
    return variant


def is_measured(variant: dict[str, Any]) -> bool:
    """False for a variant of reference figures copied from a source (settings.measured false: the gluster
    benchmark's seed rows); metrics and the history, which follow measurements, leave it out."""
    return (variant.get("settings") or {}).get("measured", True) is not False


def measured_only(doc: dict[str, Any]) -> dict[str, Any]:
    """The document without its reference variants: what readers across clusters compare (fleet_report)."""
    if all(is_measured(v) for v in doc.get("variants", [])):
        return doc
    return dict(doc, variants=[v for v in doc["variants"] if is_measured(v)])


def get_variant(doc: dict[str, Any], name: str) -> dict[str, Any]:
    for v in doc["variants"]:
        if v["name"] == name:
            return v
    raise KeyError("no variant %r in run %s (variants: %s)"
                   % (name, doc.get("run_id"), ", ".join(v["name"] for v in doc["variants"])))


def add_run(variant: dict[str, Any], started: str | None = None) -> dict[str, Any]:
    """Append a repetition (numbered from 1) to a variant; returns it."""
    run = {"repetition": len(variant["runs"]) + 1, "status": "interrupted",
           "started": started or now_iso(), "finished": None, "steps": []}
    variant["runs"].append(run)
    return run


def add_step(run: dict[str, Any], name: str, status: str = "ok", count: int | None = None, wall_s: float | None = None,
             unit: str | None = None, rate: float | None = None, latency: dict[str, Any] | None = None,
             objects: list[dict[str, Any]] | None = None, errors: list[dict[str, Any]] | None = None,
             unfinished: list[str] | None = None, api_requests: int | None = None,
             metrics: dict[str, Any] | None = None, reason: str | None = None, label: str | None = None,
             parameter: dict[str, Any] | None = None, started: str | None = None) -> dict[str, Any]:
    """Append a step to a run and return it.

    rate defaults to count / wall_s; latency defaults to the summary of the objects'
    latencies (object latency defaults to end - start). `parameter` is {name, value[, series]}
    for metric-vs-parameter charts, e.g. {"name": "volumes", "value": 500}.
    """
    if status not in STEP_STATUSES:
        raise ValueError("step %r: status must be one of %s, got %r" % (name, ", ".join(STEP_STATUSES), status))
    step: dict[str, Any] = {"name": name, "status": status}
    if label:
        step["label"] = label
    if reason:
        step["reason"] = str(reason)
    if started:
        step["started"] = started
    if count is not None:
        step["count"] = int(count)
    if wall_s is not None:
        step["wall_s"] = float(wall_s)
    if unit:
        step["unit"] = unit
    if objects is not None:
        step["objects"] = [_object_timing(o) for o in objects]
        if latency is None:
            latency = stats.summary(o.get("latency") for o in step["objects"])
    if rate is None and count and wall_s:
        rate = count / float(wall_s)
    if rate is not None:
        step["rate"] = float(rate)
    if latency is not None:
        step["latency"] = dict(latency)
    step["errors"] = [{"object": str(e.get("object", "")), "reason": str(e.get("reason", ""))}
                      if isinstance(e, dict) else {"object": "", "reason": str(e)} for e in (errors or [])]
    step["unfinished"] = [str(u) for u in (unfinished or [])]
    if api_requests is not None:
        step["api_requests"] = int(api_requests)
    if metrics:
        step["metrics"] = dict(metrics)
    if parameter is not None:
        step["parameter"] = dict(parameter)
    run["steps"].append(step)
    return step


def _object_timing(obj: dict[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    if out.get("latency") is None and out.get("start") is not None and out.get("end") is not None:
        out["latency"] = out["end"] - out["start"]
    return out


def finish_run(run: dict[str, Any], status: str | None = None, finished: str | None = None) -> dict[str, Any]:
    """Close one repetition: status from its steps unless given."""
    if status is None:
        status = "failed" if any(s["status"] in BROKEN_STEP for s in run["steps"]) else "ok"
    if status not in RUN_STATUSES:
        raise ValueError("run status must be one of %s, got %r" % (", ".join(RUN_STATUSES), status))
    run["status"] = status
    run["finished"] = finished or now_iso()
    return run


def finalize(doc: dict[str, Any], status: str | None = None, finished: str | None = None,
             reason: str | None = None) -> dict[str, Any]:
    """Close the document: finished time, status, and every variant's summary.

    status defaults to 'failed' when any step failed or timed out, else 'ok'. Open runs
    (status 'interrupted', no finished time) are closed with the document's status.
    Safe to call more than once (summaries are recomputed).
    """
    finished = finished or now_iso()
    broken = any(s["status"] in BROKEN_STEP
                 for v in doc["variants"] for r in v["runs"] for s in r["steps"])
    if status is None:
        status = "failed" if broken else "ok"
    if status not in RUN_STATUSES:
        raise ValueError("status must be one of %s, got %r" % (", ".join(RUN_STATUSES), status))
    for v in doc["variants"]:
        for r in v["runs"]:
            if r.get("finished") is None:
                finish_run(r, status=None if status == "ok" else status, finished=finished)
        v["summary"] = summarize_variant(v)
    sweep_block = sweep.sweep_summary(doc, summarize_variant)
    if sweep_block:
        doc["sweep"] = sweep_block
    doc["status"] = status
    doc["finished"] = finished
    if reason:
        doc["reason"] = str(reason)
    return doc


def step_names(doc: dict[str, Any]) -> list[str]:
    """Step names in first-seen order across all variants and runs (table row order)."""
    seen = []
    for v in doc.get("variants", []):
        for r in v.get("runs", []):
            for s in r.get("steps", []):
                if s["name"] not in seen:
                    seen.append(s["name"])
    return seen


def summarize_variant(variant: dict[str, Any]) -> dict[str, Any]:
    """{"steps": [step summary ...], "sum_wall_s": sum of median step times}.

    Figures are taken from repetitions whose step status is ok; a step that failed in
    every repetition still gets a summary (runs, ok_runs, status, errors) without numbers.
    """
    by_name: dict[str, list[dict[str, Any]]]
    order, by_name = [], {}
    for run in variant.get("runs", []):
        for s in run.get("steps", []):
            if s["name"] not in by_name:
                order.append(s["name"])
                by_name[s["name"]] = []
            by_name[s["name"]].append(s)
    summaries = []
    for name in order:
        steps = by_name[name]
        ok = [s for s in steps if s["status"] == "ok"]
        first = steps[0]
        summ = {
            "name": name,
            "runs": len(steps),
            "ok_runs": len(ok),
            "status": min((s["status"] for s in steps), key=_STATUS_ORDER.index),
            "wall_s": stats.spread(s.get("wall_s") for s in ok),
            "rate": stats.spread(s.get("rate") for s in ok),
            "errors": sum(len(s.get("errors") or []) for s in steps),
            "unfinished": sum(len(s.get("unfinished") or []) for s in steps),
        }
        for key in ("label", "unit", "count", "parameter"):
            if first.get(key) is not None:
                summ[key] = first[key]
        reasons = [s["reason"] for s in steps if s.get("reason")]
        if reasons:
            summ["reason"] = reasons[0]
        lat_keys = _keys(s.get("latency") for s in ok)
        summ["latency"] = _spreads(lat_keys, ((s.get("latency") or {}) for s in ok))
        met_keys = _keys(s.get("metrics") for s in ok)
        summ["metrics"] = _spreads(met_keys, ((s.get("metrics") or {}) for s in ok))
        summaries.append(summ)
    medians = [s["wall_s"]["median"] for s in summaries if s["wall_s"]]
    return {"steps": summaries, "sum_wall_s": sum(medians) if medians else None}


def _keys(dicts: Iterable[dict[str, Any] | None]) -> list[str]:
    keys = []
    for d in dicts:
        for k in (d or {}):
            if k not in keys:
                keys.append(k)
    return keys


def _spreads(keys: Iterable[str], dicts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    dicts = list(dicts)
    out = {}
    for k in keys:
        sp = stats.spread(d.get(k) for d in dicts)
        if sp is not None:
            out[k] = sp
    return out


def step_summary(variant: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The summary of step `name` in a finalized variant, or None."""
    summary = variant.get("summary") or summarize_variant(variant)
    for s in summary["steps"]:
        if s["name"] == name:
            return s
    return None


# --- reading summaries, stored or not ------------------------------------------------------
def summaries(doc: dict[str, Any]) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """[(variant name, {step name: step summary})] using stored summaries or computing them."""
    out = []
    for v in doc.get("variants", []):
        summ = v.get("summary") or summarize_variant(v)
        out.append((v["name"], {s["name"]: s for s in summ["steps"]}))
    return out


def ensure_summaries(doc: dict[str, Any]) -> dict[str, Any]:
    """Documents written mid-run have no summaries yet: add them to a copy, status untouched."""
    if all("summary" in v for v in doc.get("variants", [])):
        return doc
    copy = dict(doc)
    copy["variants"] = [dict(v, summary=summarize_variant(v)) for v in doc.get("variants", [])]
    return copy


def sweep_block(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The document's sweep block: stored by finalize(), computed for a document written mid-run, or None."""
    block = doc.get("sweep") or None
    if block is None and sweep.is_sweep(doc):
        block = sweep.sweep_summary(doc, summarize_variant)
    return block


# --- files ------------------------------------------------------------------------------
def dumps(doc: Any) -> str:
    """Canonical JSON text of a document (stable key order, so rewrites are byte-identical)."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_text_atomic(path: str, text: str) -> bool:
    """Write text to path through a temp file in the same directory and os.replace.

    Readers never see a half-written file; returns True when the content changed.
    """
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory)
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return False
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; reports are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def result_path(reports_dir: str, run_id: str) -> str:
    return os.path.join(reports_dir, run_id, RESULT_FILE)


def write_atomic(doc: dict[str, Any], reports_dir: str, check: bool = True) -> str:
    """Write <reports_dir>/<run_id>/result.json atomically and return its path.

    Validates first (check=False skips it, e.g. when writing an emergency partial result
    that must land on disk even if something in it is malformed).
    """
    if check:
        validate(doc)
    path = result_path(reports_dir, doc["run_id"])
    write_text_atomic(path, dumps(doc))
    return path


def load(path_or_dir: str, check: bool = True) -> dict[str, Any]:
    """Read a result document from a result.json path or a run directory holding one."""
    path = path_or_dir
    if os.path.isdir(path):
        path = os.path.join(path, RESULT_FILE)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise ValueError("cannot read result document %s: %s" % (path, e))
    except ValueError as e:
        raise ValueError("result document %s is not valid JSON: %s" % (path, e))
    if check:
        validate(doc)
    return doc
