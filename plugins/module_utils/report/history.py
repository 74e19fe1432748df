# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark history: every result document of a reports directory in time order, and its regressions.

    entries = find_results("reports")                   # [{"cluster", "source"}]: <reports_dir>/<cluster>/<run_id>/result.json
    history = build_history(entries, state=previous)    # series, regressions (history_render.py writes them)

A series is one cluster's runs of one configuration: benchmark, variant, size (the variant's sweep value, else the
document's `volumes` or `replicas` parameter) and the settings the run measured (the variant's settings, the
document's storage class, and a rollout probe's phase, -before- or -after- in its run id), oldest first.

Each step of a series is judged as a whole, not run against run: each ok run gives one figure per step, the mean
log latency of the step's operations over its repetitions (variants[].runs[].steps[].objects[].latency; the
repetitions' wall times where a document kept no per-object timings), and changepoint.py finds where the series'
level changes (E-Divisive means with Student's t-test, Apache Otava's algorithm) at max_pvalue. A change point is a
regression when the level after it is at least min_effect_pct above the level before it, twice that when the
new level rests on the newest run alone (one run under machine load moves a step as much as a real fault does).
A regression is reported once: `state` (what history-state.json kept) remembers it, and later histories list it
under known_regressions, "known since run <id>". docs/history.md gives the false-alarm rate and the detection
rate this has, measured by benchmarks/history_calibration.py.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any, Hashable

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import changepoint as CP
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import RESULT_FILE, ensure_summaries, is_measured
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import SCHEMA_VERSION
from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import seed_figure, time_scale
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import humanize, operation_cell

HISTORY_SCHEMA_VERSION = 2
STATE_SCHEMA_VERSION = 1
# Otava's default significance (its CLI's --max-pvalue)
DEFAULT_MAX_PVALUE = 0.001
# On the twin at time scale 0.05, one CPU kept busy moved a step's mean operation latency by up to +39 % over three
# runs and +70 % in one (docs/history.md, "Calibration"); a real fault (an ONTAP answering one call at a time) moved
# the same steps by +60 % to +380 %. 50 % sits between the two; quieter clusters can ask for less.
DEFAULT_MIN_EFFECT_PCT = 50.0
# a new level that rests on the newest run alone must be this many times min_effect_pct
SINGLE_RUN_FACTOR = 2.0
MAX_EFFECT_PCT = 1000.0
# a change point found again after more runs may move by a run or two: within this many runs it is the same one
SAME_CHANGE_RUNS = 2
# the document parameter that says how big a run was, when its variant is not a sweep point
SIZE_PARAMETERS = ("volumes", "replicas")
# variant settings that say where a run ran, not what it measured
NOT_CONFIGURATION = ("node",)
ROLLOUT_PHASES = ("before", "after")
NOT_A_BASELINE = "not evidence: only runs whose status is ok are"
METHOD = "change points: E-Divisive means with Student's t-test (Apache Otava's algorithm)"


# --- input ------------------------------------------------------------------------------
def find_results(reports_dir: str) -> list[dict[str, Any]]:
    """[{"cluster", "source"}] of <reports_dir>/<cluster>/<run_id>/result.json, sorted by path.

    Two directory levels and no deeper: the reports directory also holds fleet reports (fleet.json) and the
    history itself, neither of which is a run. A document directly in <reports_dir>/<run_id>/ (written
    without a cluster directory) takes its cluster from the document (cluster.server).
    """
    out = []
    for top in _subdirs(reports_dir):
        if os.path.isfile(os.path.join(top, RESULT_FILE)):
            out.append({"cluster": None, "source": os.path.join(top, RESULT_FILE)})
            continue
        for run_dir in _subdirs(top):
            path = os.path.join(run_dir, RESULT_FILE)
            if os.path.isfile(path):
                out.append({"cluster": os.path.basename(top), "source": path})
    return out


def _subdirs(path: str) -> list[str]:
    try:
        return sorted(e.path for e in os.scandir(path) if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []


def read_entry(entry: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(document, None) or (None, why it cannot be used): a bad file is a problem row, never an exception."""
    doc = entry.get("document")
    if doc is None and entry.get("error"):
        return None, entry["error"]
    if doc is None:
        try:
            with open(entry["source"], "rb") as f:
                doc = json.loads(f.read().decode("utf-8"))
        except OSError as e:
            return None, "cannot read: %s" % (e.strerror or e)
        except ValueError as e:
            return None, "not valid JSON: %s" % e
    return (doc, None) if not _problem(doc) else (None, _problem(doc))


def _problem(doc: object) -> str | None:
    """What history needs of a document, checked without the full schema (about 4 ms a document with it:
    documents were validated when written, and hundreds are read here)."""
    if not isinstance(doc, dict):
        return "not a result document (a JSON object)"
    if doc.get("schema_version") != SCHEMA_VERSION:
        return "schema_version %r: this reader knows %d" % (doc.get("schema_version"), SCHEMA_VERSION)
    for key, kind in (("run_id", str), ("benchmark", str), ("variants", list)):
        if not isinstance(doc.get(key), kind):
            return "%s is missing or not a %s" % (key, "list" if kind is list else "string")
    for i, v in enumerate(doc["variants"]):
        if not isinstance(v, dict) or not isinstance(v.get("name"), str) or not isinstance(v.get("runs", []), list):
            return "variants[%d] needs a name and a list of runs" % i
    return None


class HistoryError(StoragePerfError):
    """A bad history setting or state, named with its fix."""


def check_settings(max_pvalue: object, min_effect_pct: object) -> tuple[float, float]:
    if isinstance(max_pvalue, bool) or not isinstance(max_pvalue, (int, float)) or not 0 < max_pvalue <= 0.5:
        raise HistoryError("max_pvalue must be a probability above 0 and at most 0.5 (default %g, Otava's), got %r"
                           % (DEFAULT_MAX_PVALUE, max_pvalue))
    if (isinstance(min_effect_pct, bool) or not isinstance(min_effect_pct, (int, float))
            or not 0 <= min_effect_pct <= MAX_EFFECT_PCT):
        raise HistoryError("min_effect_pct must be a percentage from 0 to %g (default %g), got %r"
                           % (MAX_EFFECT_PCT, DEFAULT_MIN_EFFECT_PCT, min_effect_pct))
    return float(max_pvalue), float(min_effect_pct)


def check_state(state: object) -> list[dict[str, Any]]:
    """The regressions an earlier history reported (history-state.json's `reported`); a state of another shape is
    refused, naming the file's field, rather than silently forgotten (which would raise every regression again)."""
    if state is None:
        return []
    reported = state.get("reported") if isinstance(state, dict) else None
    if (not isinstance(reported, list)
            or not all(isinstance(r, dict) and {"series", "step", "run_id", "known_since"} <= set(r) for r in reported)):
        raise HistoryError("the history state's reported must be a list of {series, step, run_id, known_since}: "
                           "remove the state file (history-state.json) to start it again, which reports every "
                           "regression once more")
    return reported


# --- building ---------------------------------------------------------------------------
def build_history(entries: list[dict[str, Any]], max_pvalue: object = DEFAULT_MAX_PVALUE,
                  min_effect_pct: object = DEFAULT_MIN_EFFECT_PCT, state: object = None,
                  source: dict[str, Any] | None = None) -> dict[str, Any]:
    """The history document of these entries ({"cluster", "source", "document"?, "error"?} each); `state` is what
    an earlier history kept (history["state"]), whose regressions are not reported again."""
    max_pvalue, min_effect_pct = check_settings(max_pvalue, min_effect_pct)
    known = check_state(state)
    series: dict[tuple[Hashable, ...], dict[str, Any]]
    series, problems, seen, documents = {}, [], set(), 0
    for entry in entries:
        doc, error = read_entry(entry)
        if doc is None:
            problems.append({"cluster": entry.get("cluster"), "source": entry.get("source"), "error": error})
            continue
        cluster = entry.get("cluster") or str((doc.get("cluster") or {}).get("server") or "unknown")
        if (cluster, doc["run_id"]) in seen:  # the same run uploaded under two prefixes
            continue
        seen.add((cluster, doc["run_id"]))
        documents += 1
        doc = ensure_summaries(doc)
        for variant in filter(is_measured, doc["variants"]):  # a seed's reference figures are no run of it
            key, head = _series_key(cluster, doc, variant)
            series.setdefault(key, dict(head, runs=[]))["runs"].append(_point(doc, variant, entry.get("source")))
    rule = rule_of(max_pvalue, min_effect_pct)
    out = [_judge_series(series[k], rule) for k in sorted(series, key=_sort_key)]
    found = [r for s in out for r in _regressions(s, rule)]
    regressions, known_regressions, reported = _against_state(found, known, out)
    clusters = sorted({s["cluster"] for s in out})
    summary = {
        "documents": documents, "clusters": len(clusters), "series": len(out),
        "runs": sum(len(s["runs"]) for s in out),
        "failed_runs": sum(1 for s in out for r in s["runs"] if r["status"] != "ok"),
        "flagged_steps": sum(1 for s in out for r in s["runs"] for st in r["steps"] if st["regression"]),
        "regressions": len(regressions), "known_regressions": len(known_regressions), "problems": len(problems),
    }
    return {"history_schema_version": HISTORY_SCHEMA_VERSION, "title": "Benchmark history",
            "source": source or {}, "baseline": dict(rule, method=METHOD), "summary": summary, "clusters": clusters,
            "regressions": regressions, "known_regressions": known_regressions, "series": out, "problems": problems,
            "state": {"history_state_version": STATE_SCHEMA_VERSION, "reported": reported}}


def configuration(doc: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """What the run measured beyond its benchmark, variant and size: the variant's settings (Trident's concurrency,
    the snapshot-controller's tuning, a StorageClass), the document's storage class, and a rollout probe's phase."""
    config = {k: v for k, v in sorted((variant.get("settings") or {}).items()) if k not in NOT_CONFIGURATION}
    storage_class = (doc.get("parameters") or {}).get("storage_class")
    if storage_class and "storageClassName" not in config:
        config["storage_class"] = storage_class
    phase = next((p for p in ROLLOUT_PHASES if "-%s-" % p in doc["run_id"]), None)
    if phase:  # the rollout's probes: before and after the change, the same variant "as configured"
        config["rollout_phase"] = phase
    return config


def _series_key(cluster: str, doc: dict[str, Any], variant: dict[str, Any]) -> tuple[tuple[Hashable, ...], dict[str, Any]]:
    sweep = variant.get("sweep") or {}
    name = sweep.get("variant") or variant["name"]  # a sweep point joins the plain runs of its size
    params = doc.get("parameters") or {}
    if sweep.get("value") is not None:
        size_param, size = sweep.get("parameter") or "volumes", sweep["value"]
    else:
        size_param = next((p for p in SIZE_PARAMETERS if isinstance(params.get(p), int)), None)
        size = params.get(size_param) if size_param else None
    config = configuration(doc, variant)
    config_text = ", ".join("%s %s" % (k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)
                            for k, v in config.items())
    head = {"cluster": cluster, "benchmark": doc["benchmark"], "variant": name, "size": size,
            "size_parameter": size_param, "config": config, "config_text": config_text}
    head["id"] = "-".join(str(x) for x in (cluster, doc["benchmark"], name, size if size is not None else "any"))
    if config_text:
        head["id"] += "-" + config_text
    return (cluster, doc["benchmark"], name, size, config_text), head


def _sort_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    cluster, benchmark, variant, size, config = key
    return (cluster, benchmark, variant, -1 if size is None else size, config)


def evidence(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One run's evidence on one step, from its repetitions' records of that step: the mean log latency of every
    operation (objects[].latency), else of each repetition's wall time (a document without per-object timings,
    a benchmark that times a tool run). None when the run measured nothing of the step."""
    ops = [o.get("latency") for s in steps if s.get("status") == "ok" for o in s.get("objects") or ()]
    values = [v for v in ops if isinstance(v, (int, float)) and v > 0]
    kind = "operations"
    if not values:
        values = [s["wall_s"] for s in steps if s.get("status") == "ok" and isinstance(s.get("wall_s"), (int, float))
                  and s["wall_s"] > 0]
        kind = "wall time"
    if not values:
        return None
    return {"log_mean": sum(math.log(v) for v in values) / len(values), "n": len(values), "kind": kind}


def _point(doc: dict[str, Any], variant: dict[str, Any], source: str | None) -> dict[str, Any]:
    summ = variant.get("summary") or {}
    steps = {s["name"]: s for s in summ.get("steps") or []}
    records: dict[str, list[dict[str, Any]]] = {}
    for run in variant.get("runs") or ():
        for st in run.get("steps") or ():
            records.setdefault(st.get("name"), []).append(st)
    point = {"run_id": doc["run_id"], "started": doc.get("started") or "", "finished": doc.get("finished"),
             "status": doc.get("status", "interrupted"), "source": source, "_steps": steps,
             "_evidence": {n: evidence(records.get(n) or []) for n in steps}}
    if doc.get("reason"):
        point["reason"] = doc["reason"]
    if time_scale(doc):  # a twin's: history_render shows the run's cluster time, beside the seed's figure
        point["time_scale"] = time_scale(doc)
        point["_seeds"] = {n: seed_figure(doc, variant, n) for n in steps}
    return point


def _judge_series(series: dict[str, Any], rule: dict[str, float]) -> dict[str, Any]:
    runs = sorted(series["runs"], key=lambda r: (r["started"], r["run_id"]))
    names, labels = [], {}
    for run in runs:
        run["baseline"] = run["status"] == "ok"
        if not run["baseline"]:
            run["baseline_note"] = NOT_A_BASELINE
        run["steps"] = []
        for name, summ in run["_steps"].items():
            if name not in labels:
                names.append(name)
                labels[name] = {"name": name, "label": summ.get("label") or humanize(name), "unit": summ.get("unit")}
            ev = run["_evidence"].get(name) if run["baseline"] else None
            wall, rate = summ.get("wall_s") or {}, summ.get("rate") or {}
            step = {"name": name, "status": summ.get("status", "ok"), "wall_s": wall.get("median"),
                    "rate": rate.get("median"), "text": operation_cell(summ)["text"], "regression": False,
                    "evidence": None if ev is None else {"geomean_s": round(math.exp(ev["log_mean"]), 6),
                                                         "n": ev["n"], "kind": ev["kind"]}}
            seed = (run.get("_seeds") or {}).get(name)
            if seed:
                step["seed_s"] = seed["seconds"]
            run["steps"].append(step)
    changes = []
    for name in names:
        changes += _changes(runs, name, rule)
    for run in runs:
        for key in ("_steps", "_evidence", "_seeds"):
            run.pop(key, None)
    regressions = sum(1 for c in changes if c["regression"] and c["current"])
    return dict(series, runs=runs, steps=[labels[n] for n in names], latest=runs[-1]["run_id"], changes=changes,
                regressions=regressions)


def judge(values: list[float], rule: dict[str, float]) -> list[dict[str, Any]]:
    """The change points of one step's per-run figures (log seconds, oldest first) under the rule (max_pvalue,
    min_effect_pct, single_run_effect_pct): each with its effect, whether it is a regression, and whether it is
    still in force at the newest run (no later change brought the level back below the minimum effect).
    benchmarks/history_calibration.py measures this function's error rates."""
    if len(values) < 3:
        return []
    points = CP.change_points(values, rule["max_pvalue"])
    level_now = sum(values[points[-1].index:]) / len(values[points[-1].index:]) if points else 0.0
    out = []
    for cp in points:
        effect = 100.0 * (math.exp(cp.mean_after - cp.mean_before) - 1.0)
        needed = rule["single_run_effect_pct"] if cp.n_after == 1 else rule["min_effect_pct"]
        out.append({"index": cp.index, "before_s": math.exp(cp.mean_before), "after_s": math.exp(cp.mean_after),
                    "change_pct": round(effect, 2), "pvalue": cp.pvalue, "runs_before": cp.n_before,
                    "runs_after": cp.n_after, "needed_pct": needed, "regression": effect >= needed and effect > 0,
                    "current": 100.0 * (math.exp(level_now - cp.mean_before) - 1.0) >= rule["min_effect_pct"]})
    return out


def rule_of(max_pvalue: float = DEFAULT_MAX_PVALUE, min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT) -> dict[str, float]:
    return {"max_pvalue": max_pvalue, "min_effect_pct": min_effect_pct,
            "single_run_effect_pct": min_effect_pct * SINGLE_RUN_FACTOR}


def _changes(runs: list[dict[str, Any]], name: str, rule: dict[str, float]) -> list[dict[str, Any]]:
    """The change points of one step across the series' ok runs, each marked on the run that starts the new level."""
    judged = [(r, r["_evidence"][name]) for r in runs if r["baseline"] and r["_evidence"].get(name)]
    out = []
    for change in judge([ev["log_mean"] for _, ev in judged], rule):
        run, ev = judged[change["index"]]
        change.update(step=name, run_id=run["run_id"], kind=ev["kind"],
                      baseline_runs=[r["run_id"] for r, _ in judged[change["index"] - change["runs_before"]:change["index"]]])
        step = next(s for s in run["steps"] if s["name"] == name)
        step["change"] = change
        step["regression"] = change["regression"]
        out.append(change)
    return out


def limit_text(rule: dict[str, float], runs_after: int) -> str:
    needed = rule["single_run_effect_pct"] if runs_after == 1 else rule["min_effect_pct"]
    return "a change point at p ≤ %g, ≥ +%g%%%s" % (rule["max_pvalue"], needed, " (newest run alone)" if runs_after == 1 else "")


def _regressions(series: dict[str, Any], rule: dict[str, float]) -> list[dict[str, Any]]:
    """One entry per regression still in force at the series' latest run: what AWX alerts on."""
    out = []
    for c in series["changes"]:
        if not (c["regression"] and c["current"]):
            continue
        field = "latency" if c["kind"] == "operations" else "wall_s"
        what = "operations' geometric mean latency" if field == "latency" else "wall time (geometric mean)"
        reason = "+%.1f%% %s from run %s on (p = %.2g; %d run%s before, %d after)" % (
            c["change_pct"], what, c["run_id"], c["pvalue"], c["runs_before"], "" if c["runs_before"] == 1 else "s",
            c["runs_after"])
        out.append({"cluster": series["cluster"], "benchmark": series["benchmark"], "variant": series["variant"],
                    "size": series["size"], "config": series["config"], "run_id": c["run_id"],
                    "latest_run_id": series["latest"], "step": c["step"], "field": field,
                    "baseline": round(c["before_s"], 6), "candidate": round(c["after_s"], 6),
                    "change_pct": c["change_pct"], "pvalue": c["pvalue"], "limit": limit_text(rule, c["runs_after"]),
                    "reason": reason, "baseline_runs": c["baseline_runs"], "runs_after": c["runs_after"],
                    "series": series["id"], "known_since": None, "_index": c["index"],
                    "text": "%s %s %s%s%s %s: %s (%s -> %s)" % (
                        series["cluster"], series["benchmark"], series["variant"],
                        "" if series["size"] is None else " @%s" % series["size"],
                        " [%s]" % series["config_text"] if series["config_text"] else "", c["step"], reason,
                        stats.format_duration(c["before_s"]), stats.format_duration(c["after_s"]))})
    return out


def _against_state(found: list[dict[str, Any]], known: list[dict[str, Any]],
                   series: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(new regressions, regressions reported before, what the state keeps now).

    A regression is the one reported before when its series and step are the same and its first slow run is within
    SAME_CHANGE_RUNS runs of the one reported (more runs can move a change point by one or two). The state keeps
    every regression ever reported whose series still has runs, so that one which comes back later is known too."""
    order = {s["id"]: {r["run_id"]: i for i, r in enumerate(s["runs"])} for s in series}
    new, old = [], []
    for reg in found:
        runs = order[reg["series"]]
        match = next((k for k in known if k["series"] == reg["series"] and k["step"] == reg["step"]
                      and k["run_id"] in runs and abs(runs[k["run_id"]] - runs[reg["run_id"]]) <= SAME_CHANGE_RUNS),
                     None)
        reg.pop("_index")
        if match is None:
            new.append(reg)
            continue
        reg["known_since"] = match["known_since"]
        reg["text"] += " - known since run %s" % match["known_since"]
        old.append(reg)
    reported = [k for k in known if k["series"] in order]
    reported += [{"series": r["series"], "step": r["step"], "run_id": r["run_id"], "known_since": r["latest_run_id"],
                  "change_pct": r["change_pct"]} for r in new]
    return new, old, reported
