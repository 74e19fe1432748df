# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark history: every result document of a reports directory in time order, and its regressions.

    entries = find_results("reports")                   # [{"cluster", "source"}]: <reports_dir>/<cluster>/<run_id>/result.json
    history = build_history(entries)                    # series, regressions (history_render.py writes them)

A series is one cluster's runs of one benchmark, variant and size (the variant's sweep value, else the
document's `volumes` or `replicas` parameter), oldest first. Each run's steps are judged against that
series' own baseline: the median of the same figure over the previous `baseline_runs` runs (default 5) whose
status is ok, with compare.py's tolerance rows (compare.judge), so history flags exactly what compare.yml
would fail for the same two values. The default tolerance is the one compare's own help gives,
{"*.wall_s": {"max_increase_pct": 10}}. Failed and interrupted runs are shown but never baselines; a run
with no earlier ok run has no baseline and is not judged. docs/history.md says why this baseline.
"""
from __future__ import annotations

import json
import os
from typing import Any, Hashable

from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import RESULT_FILE, ensure_summaries, is_measured
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import SCHEMA_VERSION
from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import seed_figure, time_scale
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import humanize, operation_cell

HISTORY_SCHEMA_VERSION = 1
DEFAULT_TOLERANCES = {"*.wall_s": {"max_increase_pct": 10}}
DEFAULT_BASELINE_RUNS = 5
# the document parameter that says how big a run was, when its variant is not a sweep point
SIZE_PARAMETERS = ("volumes", "replicas")
NOT_A_BASELINE = "not a baseline: only runs whose status is ok are"
# what a verdict row keeps in history.json (compare's rows carry more, for its own tables)
ROW_KEYS = ("key", "field", "baseline", "candidate", "change_pct", "limit", "status", "reason",
            "baseline_text", "candidate_text", "change_text")


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


def check_tolerances(tolerances: object) -> dict[str, dict[str, Any]]:
    """compare's parsed tolerances, step-level ones only: history compares a variant's step with earlier runs."""
    specs = C.parse_tolerances(DEFAULT_TOLERANCES if tolerances is None else tolerances)
    for key in specs:
        scope = C.split_key(key)
        if scope["step"] is None or scope["field"] == "speedup":
            raise C.ToleranceError(
                "tolerances[%r]: history judges each step against the same step of earlier runs; give "
                "'[<variant>/]<step>.<field>' keys such as '*.wall_s' or 'create_volume.p99' (speedup and sum_wall_s "
                "compare variants inside one run: storageperf.k8s.compare)" % key)
    return specs


def check_baseline_runs(baseline_runs: object) -> int:
    if isinstance(baseline_runs, bool) or not isinstance(baseline_runs, int) or baseline_runs < 1:
        raise C.ToleranceError("baseline_runs must be a whole number of runs, at least 1, got %r" % (baseline_runs,))
    return baseline_runs


# --- building ---------------------------------------------------------------------------
def build_history(entries: list[dict[str, Any]], tolerances: object = None, baseline_runs: object = DEFAULT_BASELINE_RUNS,
                  source: dict[str, Any] | None = None) -> dict[str, Any]:
    """The history document of these entries ({"cluster", "source", "document"?, "error"?} each)."""
    specs = check_tolerances(tolerances)
    baseline_runs = check_baseline_runs(baseline_runs)
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
    out = [_judge_series(series[k], specs, baseline_runs) for k in sorted(series, key=_sort_key)]
    regressions = [r for s in out for r in _regressions(s, s["runs"][-1])]
    clusters = sorted({s["cluster"] for s in out})
    summary = {
        "documents": documents, "clusters": len(clusters), "series": len(out),
        "runs": sum(len(s["runs"]) for s in out),
        "failed_runs": sum(1 for s in out for r in s["runs"] if r["status"] != "ok"),
        "flagged_steps": sum(1 for s in out for r in s["runs"] for st in r["steps"] if st["regression"]),
        "regressions": len(regressions), "problems": len(problems),
    }
    return {"history_schema_version": HISTORY_SCHEMA_VERSION, "title": "Benchmark history",
            "source": source or {}, "baseline": {"method": "median of the previous ok runs", "runs": baseline_runs},
            "tolerances": specs, "summary": summary, "clusters": clusters, "regressions": regressions,
            "series": out, "problems": problems}


def _series_key(cluster: str, doc: dict[str, Any], variant: dict[str, Any]) -> tuple[tuple[Hashable, ...], dict[str, Any]]:
    sweep = variant.get("sweep") or {}
    name = sweep.get("variant") or variant["name"]  # a sweep point joins the plain runs of its size
    params = doc.get("parameters") or {}
    if sweep.get("value") is not None:
        size_param, size = sweep.get("parameter") or "volumes", sweep["value"]
    else:
        size_param = next((p for p in SIZE_PARAMETERS if isinstance(params.get(p), int)), None)
        size = params.get(size_param) if size_param else None
    head = {"cluster": cluster, "benchmark": doc["benchmark"], "variant": name, "size": size,
            "size_parameter": size_param}
    head["id"] = "-".join(str(x) for x in (cluster, doc["benchmark"], name, size if size is not None else "any"))
    return (cluster, doc["benchmark"], name, size), head


def _sort_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    cluster, benchmark, variant, size = key
    return (cluster, benchmark, variant, -1 if size is None else size)


def _point(doc: dict[str, Any], variant: dict[str, Any], source: str | None) -> dict[str, Any]:
    summ = variant.get("summary") or {}
    steps = {s["name"]: s for s in summ.get("steps") or []}
    point = {"run_id": doc["run_id"], "started": doc.get("started") or "", "finished": doc.get("finished"),
             "status": doc.get("status", "interrupted"), "source": source, "_steps": steps}
    if doc.get("reason"):
        point["reason"] = doc["reason"]
    if time_scale(doc):  # a twin's: history_render shows the run's cluster time, beside the seed's figure
        point["time_scale"] = time_scale(doc)
        point["_seeds"] = {n: seed_figure(doc, variant, n) for n in steps}
    return point


def _judge_series(series: dict[str, Any], specs: dict[str, dict[str, Any]], baseline_runs: int) -> dict[str, Any]:
    runs = sorted(series["runs"], key=lambda r: (r["started"], r["run_id"]))
    names, labels = [], {}
    for i, run in enumerate(runs):
        previous = [r for r in runs[:i] if r["status"] == "ok"][-baseline_runs:]
        run["baseline"] = run["status"] == "ok"
        if not run["baseline"]:
            run["baseline_note"] = NOT_A_BASELINE
        run["steps"] = []
        for name, summ in run["_steps"].items():
            if name not in labels:
                names.append(name)
                labels[name] = {"name": name, "label": summ.get("label") or humanize(name), "unit": summ.get("unit")}
            run["steps"].append(_judge_step(series["variant"], name, summ, previous, specs))
            seed = (run.get("_seeds") or {}).get(name)
            if seed:
                run["steps"][-1]["seed_s"] = seed["seconds"]
    for run in runs:
        del run["_steps"]
        run.pop("_seeds", None)
    return dict(series, runs=runs, steps=[labels[n] for n in names], latest=runs[-1]["run_id"],
                regressions=sum(1 for st in runs[-1]["steps"] if st["regression"]))


def _judge_step(variant: str, name: str, summ: dict[str, Any], previous: list[dict[str, Any]],
                specs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    wall = summ.get("wall_s") or {}
    rate = summ.get("rate") or {}
    out = {"name": name, "status": summ.get("status", "ok"), "wall_s": wall.get("median"), "rate": rate.get("median"),
           "text": operation_cell(summ)["text"], "checks": [], "regression": False}
    for key, spec in specs.items():
        scope = C.split_key(key)
        if not C.key_matches(scope, variant, name):
            continue
        cand = C.step_value(summ, scope["field"])
        base_runs, values = [], []
        for r in previous:
            v = C.step_value(r["_steps"].get(name), scope["field"])
            if v is not None:
                base_runs.append(r["run_id"])
                values.append(v)
        if cand is None or not values:  # nothing to judge: a failed step, or no earlier ok run
            continue
        row = C.judge(key, variant, name, scope["field"], spec, stats.median(values), cand)
        check = {k: row[k] for k in ROW_KEYS}
        check["baseline_runs"] = base_runs
        out["checks"].append(check)
        out["regression"] = out["regression"] or not row["passed"]
    return out


def _regressions(series: dict[str, Any], run: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per broken check of this run: what AWX alerts on."""
    out = []
    for st in run["steps"]:
        for c in st["checks"]:
            if c["status"] != "fail":
                continue
            out.append({"cluster": series["cluster"], "benchmark": series["benchmark"], "variant": series["variant"],
                        "size": series["size"], "run_id": run["run_id"], "started": run["started"], "step": st["name"],
                        "field": c["field"], "baseline": c["baseline"], "candidate": c["candidate"],
                        "change_pct": c["change_pct"], "limit": c["limit"], "reason": c["reason"],
                        "baseline_runs": c["baseline_runs"], "series": series["id"],
                        "text": "%s %s %s%s %s.%s: %s (%s -> %s)" % (
                            series["cluster"], series["benchmark"], series["variant"],
                            "" if series["size"] is None else " @%s" % series["size"], st["name"], c["field"],
                            c["reason"], c["baseline_text"], c["candidate_text"])})
    return out
