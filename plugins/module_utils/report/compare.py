# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare a candidate result document against a baseline (or against itself) with tolerances.

Tolerance keys (docs/results.md, "Comparing runs"):

    "<step>.<field>"             every variant, e.g. "publish.p99", "create_volume.wall_s"
    "<variant>/<step>.<field>"   one variant, e.g. "concurrency on/publish.p99"
    "speedup", "sum_wall_s"      document level: overall speedup between two variants, sum of steps
    "<step>.speedup"             that step's throughput ratio between two variants

<step> and <variant> may use shell wildcards ("*.p99", "delete_*.wall_s"). Fields: wall_s, rate,
count, errors, unfinished, the latency keys (min p50 p90 p99 max mean, p95 ...), any metric key
(iops, tps, handshake_s ...) and speedup. Limits (any combination):

    {"max_increase_pct": 10}  candidate may be at most 10 % above the baseline
    {"max_decrease_pct": 5}   ... at most 5 % below (throughput, IOPS)
    {"max": 300}, {"min": 4}  absolute bounds on the candidate's value

Speedup keys take "baseline_variant"/"candidate_variant" (default: first and second variant).
Values are medians over repetitions. A key that matches nothing fails, and no tolerances at all is bad
input: a check that checks nothing must not pass silently.
"""
from __future__ import annotations

import fnmatch
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import step_names, summaries
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import format_metric
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import step_label, step_speedup
from ansible_collections.storageperf.k8s.plugins.module_utils.report.sweep import default_pair
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

LIMIT_KEYS = ("max_increase_pct", "max_decrease_pct", "min", "max")
OPTION_KEYS = ("baseline_variant", "candidate_variant")
DOC_FIELDS = ("speedup", "sum_wall_s")
LATENCY_FIELDS = ("min", "p50", "p90", "p95", "p99", "max", "mean")


class ToleranceError(StoragePerfError, ValueError):
    """A tolerance is malformed; the message names the key and the fix."""


NO_TOLERANCES = ("tolerances is empty, so the comparison would check nothing and pass: give at least one, e.g. "
                 "tolerances={'*.wall_s': {'max_increase_pct': 10}} or {'speedup': {'min': 2}} (storageperf.k8s.compare "
                 "-e tolerances=..., the bench_report role's bench_report_compare_tolerances, or `tolerances:` in "
                 "baseline_file; keys and limits in docs/results.md, 'Comparing runs')")


def parse_tolerances(tolerances: object) -> dict[str, dict[str, Any]]:
    """Validate and normalise {key: {limit: number}}; raises ToleranceError naming the bad key, or when empty."""
    if not tolerances and isinstance(tolerances, (dict, type(None))):
        raise ToleranceError(NO_TOLERANCES)
    if not isinstance(tolerances, dict):
        raise ToleranceError("tolerances must be a mapping of metric key to limits, e.g. "
                             "{'publish.p99': {'max_increase_pct': 10}}; got %s" % type(tolerances).__name__)
    out = {}
    for key, spec in tolerances.items():
        if not isinstance(spec, dict):
            raise ToleranceError("tolerances[%r] must be a mapping such as {'max_increase_pct': 10}, got %r"
                                 % (key, spec))
        unknown = [k for k in spec if k not in LIMIT_KEYS + OPTION_KEYS]
        if unknown:
            raise ToleranceError("tolerances[%r]: unknown limit %s; use %s" % (
                key, ", ".join(repr(u) for u in unknown), ", ".join(LIMIT_KEYS + OPTION_KEYS)))
        if not any(k in spec for k in LIMIT_KEYS):
            raise ToleranceError("tolerances[%r] sets no limit; give one of %s" % (key, ", ".join(LIMIT_KEYS)))
        clean: dict[str, Any] = {}
        for k, v in spec.items():
            if k in OPTION_KEYS:
                clean[k] = str(v)
                continue
            try:  # survey answers arrive as strings
                clean[k] = float(v)
            except (TypeError, ValueError):
                raise ToleranceError("tolerances[%r].%s must be a number, got %r" % (key, k, v))
        scope = split_key(key)
        if scope["field"] not in DOC_FIELDS and scope["step"] is None:
            raise ToleranceError("tolerances key %r: expected '<step>.<field>' (e.g. 'publish.p99'), "
                                 "'[<variant>/]<step>.<field>' or one of %s" % (key, ", ".join(DOC_FIELDS)))
        out[key] = clean
    return out


def split_key(key: str) -> dict[str, Any]:
    """'concurrency on/publish.p99' -> {"variant": "concurrency on", "step": "publish", "field": "p99"}."""
    variant, rest = (key.split("/", 1) + [None])[:2] if "/" in key else (None, key)
    if variant is not None and rest is None:
        rest = ""
    if "." in rest:  # type: ignore[operator]  # "/" in key: split gave two parts
        step, field = rest.rsplit(".", 1)  # type: ignore[union-attr]
    else:
        step, field = None, rest
    return {"variant": variant, "step": step, "field": field}


def _median(spread: dict[str, Any] | None) -> float | None:
    return spread["median"] if spread else None


def step_value(step_summary: dict[str, Any] | None, field: str) -> float | None:
    """A step summary's median for a field, or None."""
    if step_summary is None:
        return None
    if field in ("wall_s", "rate"):
        return _median(step_summary.get(field))
    if field in ("count", "errors", "unfinished"):
        return step_summary.get(field)
    lat = step_summary.get("latency") or {}
    if field in lat:
        return _median(lat[field])
    return _median((step_summary.get("metrics") or {}).get(field))


def _variant_pair(doc: dict[str, Any], spec: dict[str, Any]) -> tuple[str | None, str | None]:
    first, second = default_pair(doc)
    return spec.get("baseline_variant") or first, spec.get("candidate_variant") or second


def speedups(doc: dict[str, Any], baseline_variant: str | None = None, candidate_variant: str | None = None) -> dict[str, Any] | None:
    """In-document comparison: {"baseline", "candidate", "steps": [{step, label, baseline_s,
    candidate_s, speedup}], "overall": ratio of the sums over steps ok in both}."""
    summ = dict(summaries(doc))
    first, second = default_pair(doc)
    base = baseline_variant or first
    cand = candidate_variant or second
    if base not in summ or cand not in summ:
        return None
    rows, tb, tc = [], 0.0, 0.0
    for n in step_names(doc):
        b, c = summ[base].get(n), summ[cand].get(n)
        r = step_speedup(b, c)
        bs, cs = step_value(b, "wall_s"), step_value(c, "wall_s")
        if bs is not None and cs is not None and (b or {}).get("ok_runs") and (c or {}).get("ok_runs"):
            tb += bs
            tc += cs
        rows.append({"step": n, "label": step_label(doc, n), "baseline_s": bs, "candidate_s": cs, "speedup": r})
    return {"baseline": base, "candidate": cand, "steps": rows,
            "overall": stats.speedup(tb, tc) if tc else None, "baseline_sum_s": tb, "candidate_sum_s": tc}


# The headline figure of each benchmark is its seed's own metric, chosen here and nowhere else:
# benchmark -> (step whose speedup is the headline, words after the ratio). A benchmark not listed
# (csi_lifecycle: the seed sums its 8 steps) headlines the ratio of the step-time sums.
HEADLINES = {
    # the seed measures pod startup; scale to 0 stays serial by design (1.0x) and must not dilute it
    "attach_stress": ("scale_up", "pod startup"),
}
OVERALL_WORDS = "overall"


def headline(doc: dict[str, Any], baseline_variant: str | None = None, candidate_variant: str | None = None) -> dict[str, Any] | None:
    """{"speedup": ratio or None, "text": "~4.7× pod startup", "step": step name or None} or None
    when the document has fewer than two variants."""
    sp = speedups(doc, baseline_variant, candidate_variant)
    if not sp:
        return None
    step, words = HEADLINES.get(doc.get("benchmark"), (None, OVERALL_WORDS))  # type: ignore[arg-type]  # get(None): the default
    if step is None:
        ratio = sp["overall"]
    else:
        ratio = next((r["speedup"] for r in sp["steps"] if r["step"] == step), None)
    text = (stats.format_ratio(ratio, approx=True) + " " + words) if ratio else None
    return {"speedup": ratio, "text": text, "step": step}


def _doc_value(doc: dict[str, Any] | None, field: str, spec: dict[str, Any]) -> float | None:
    if doc is None:
        return None
    if field == "speedup":
        base, cand = _variant_pair(doc, spec)
        s = speedups(doc, base, cand)
        return s and s["overall"]  # type: ignore[return-value]  # speedups() gives None or a filled dict
    if field == "sum_wall_s":
        # one figure per document: the candidate variant's sum (default: the last variant)
        summ = summaries(doc)
        name = spec.get("candidate_variant") or (summ[-1][0] if summ else None)
        for v in doc.get("variants", []):
            if v["name"] == name:
                return (v.get("summary") or {}).get("sum_wall_s")
    return None


def _step_speedup(doc: dict[str, Any] | None, step: str, spec: dict[str, Any]) -> float | None:
    if doc is None:
        return None
    base, cand = _variant_pair(doc, spec)
    s = speedups(doc, base, cand)
    if not s:
        return None
    for row in s["steps"]:
        if row["step"] == step:
            return row["speedup"]
    return None


def format_value(field: str, value: float | None) -> str:
    if value is None:
        return stats.DASH
    if field == "speedup":
        return stats.format_ratio(value)
    if field in ("count", "errors", "unfinished"):
        return "%d" % value
    if field == "rate":
        return stats.format_rate(value, "obj")
    if field in LATENCY_FIELDS or field == "wall_s" or field == "sum_wall_s":
        return stats.format_duration(value)
    return format_metric(field, value)


def format_limit(field: str, spec: dict[str, Any]) -> str:
    parts = []
    if "max_increase_pct" in spec:
        parts.append("≤ +%g%%" % spec["max_increase_pct"])
    if "max_decrease_pct" in spec:
        parts.append("≥ -%g%%" % spec["max_decrease_pct"])
    if "min" in spec:
        parts.append("≥ %s" % format_value(field, spec["min"]))
    if "max" in spec:
        parts.append("≤ %s" % format_value(field, spec["max"]))
    return ", ".join(parts)


def _judge(field: str, spec: dict[str, Any], base: float | None, cand: float | None, have_baseline: bool) -> tuple[bool, str]:
    """(passed, reason) for one value against its limits."""
    if cand is None:
        return False, "no value in the candidate"
    reasons = []
    change = stats.change_pct(base, cand)
    relative = [k for k in ("max_increase_pct", "max_decrease_pct") if k in spec]
    if relative and change is None:
        return False, ("no value in the baseline" if have_baseline else
                       "a relative limit needs a baseline document")
    if "max_increase_pct" in spec and change > spec["max_increase_pct"]:
        reasons.append("%s above the baseline (limit +%g%%)" % (stats.format_pct(change), spec["max_increase_pct"]))
    if "max_decrease_pct" in spec and change < -spec["max_decrease_pct"]:
        reasons.append("%s below the baseline (limit -%g%%)" % (stats.format_pct(change), spec["max_decrease_pct"]))
    if "min" in spec and cand < spec["min"]:
        reasons.append("%s is below the minimum %s" % (format_value(field, cand), format_value(field, spec["min"])))
    if "max" in spec and cand > spec["max"]:
        reasons.append("%s is above the maximum %s" % (format_value(field, cand), format_value(field, spec["max"])))
    return (not reasons), "; ".join(reasons)


def key_matches(scope: dict[str, Any], variant: str, step: str) -> bool:
    """Whether a split tolerance key (split_key) applies to this variant's step: shell wildcards on both."""
    return ((scope["variant"] is None or fnmatch.fnmatchcase(variant, scope["variant"]))
            and scope["step"] is not None and fnmatch.fnmatchcase(step, scope["step"]))


def judge(key: str, variant: str | None, step: str | None, field: str, spec: dict[str, Any], base: float | None,
          cand: float | None) -> dict[str, Any]:
    """One verdict row for a value against its baseline value, as compare() judges it (history.py's regressions)."""
    return _row(key, variant, step, field, spec, base, cand, True)


def _row(key: str, variant: str | None, step: str | None, field: str, spec: dict[str, Any], base: float | None,
         cand: float | None, have_baseline: bool) -> dict[str, Any]:
    passed, reason = _judge(field, spec, base, cand, have_baseline)
    metric = "%s%s.%s" % (variant + "/" if variant else "", step, field) if step else field
    return {
        "key": key, "metric": metric, "variant": variant, "step": step, "field": field,
        "baseline": base, "candidate": cand, "change_pct": stats.change_pct(base, cand),
        "baseline_text": format_value(field, base), "candidate_text": format_value(field, cand),
        "change_text": stats.format_pct(stats.change_pct(base, cand)),
        "limit": format_limit(field, spec), "status": "pass" if passed else "fail",
        "passed": passed, "reason": reason,
    }


def compare(baseline_doc: dict[str, Any] | None, candidate_doc: dict[str, Any], tolerances: object) -> dict[str, Any]:
    """Check the candidate against the tolerances; returns the verdict.

    baseline_doc may be None: then only absolute limits (min/max) and in-document speedups
    can pass. Verdict: {"passed", "failed", "checks", "failures", "rows": [...], "message",
    "baseline": run_id or None, "candidate": run_id}.
    """
    specs = parse_tolerances(tolerances)
    have_baseline = baseline_doc is not None
    cand_summ = summaries(candidate_doc)
    base_summ = dict(summaries(baseline_doc)) if have_baseline else {}  # type: ignore[arg-type]  # have_baseline: not None
    rows = []
    for key, spec in specs.items():
        scope = split_key(key)
        field = scope["field"]
        if scope["step"] is None:  # document level
            rows.append(_row(key, None, None, field, spec, _doc_value(baseline_doc, field, spec),
                             _doc_value(candidate_doc, field, spec), have_baseline))
            continue
        matched = False
        if field == "speedup":
            for n in step_names(candidate_doc):
                if fnmatch.fnmatchcase(n, scope["step"]):
                    matched = True
                    rows.append(_row(key, None, n, field, spec, _step_speedup(baseline_doc, n, spec),
                                     _step_speedup(candidate_doc, n, spec), have_baseline))
        else:
            for vname, steps in cand_summ:
                for n in step_names(candidate_doc):
                    if n not in steps or not key_matches(scope, vname, n):
                        continue
                    matched = True
                    base = step_value(base_summ.get(vname, {}).get(n), field) if have_baseline else None
                    row = _row(key, vname, n, field, spec, base, step_value(steps[n], field), have_baseline)
                    if row["candidate"] is None and steps[n].get("status") != "ok":
                        row["reason"] = "step %s in the candidate (%d of %d repetitions ok)" % (
                            steps[n].get("status"), steps[n].get("ok_runs", 0), steps[n].get("runs", 0))
                    rows.append(row)
        if not matched:
            row = _row(key, scope["variant"], scope["step"], field, spec, None, None, have_baseline)
            row["reason"] = "no step matches %r in the candidate (steps: %s)" % (
                key, ", ".join(step_names(candidate_doc)) or "none")
            rows.append(row)
    failures = [r for r in rows if not r["passed"]]
    if failures:
        message = "%d of %d checks failed: %s" % (len(failures), len(rows), "; ".join(
            "%s %s" % (r["metric"], r["reason"]) for r in failures[:5]))
    else:
        message = "all %d checks passed" % len(rows)
    return {
        "passed": not failures, "failed": bool(failures), "checks": len(rows), "failures": len(failures),
        "rows": rows, "message": message,
        "baseline": baseline_doc.get("run_id") if have_baseline else None,  # type: ignore[union-attr]
        "candidate": candidate_doc.get("run_id"),
        "benchmark": candidate_doc.get("benchmark"),
    }
