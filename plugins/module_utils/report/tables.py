# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table models built from a finalized result document, shared by the Markdown and HTML renderers.

A table is {"id", "title", "headers": [str], "rows": [[cell]], "note"}; a cell is
{"text": str, "cls": css class or ""}. Keeping the numbers-to-words step here (a step's cell and
label in steps.py, a metric's in metrics.py) means both output formats always say the same thing.
"""
from __future__ import annotations

from typing import Any


from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from ansible_collections.storageperf.k8s.plugins.module_utils.report import warning_events as W
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    BROKEN_STEP_STATUSES, get_variant, step_names, summaries, sweep_block,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import (
    better_ratio, column_label, column_unit, format_in_unit, metric_info, metric_keys, primary_metric,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.parameter_table import parameter_tables
from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import seed_figure, time_scale
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import (
    cell, median, operation_cell, status_text, step_label, step_speedup,
)


def is_operation(summary: dict[str, Any]) -> bool:
    """Steps that time a batch of objects (the seed's rows); pure metric steps go elsewhere."""
    return summary.get("count") is not None or not summary.get("metrics")


def operations_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The seed layout: Operation | <variant> ... | <B> vs <A> (throughput), plus the sum row."""
    variants = summaries(doc)
    if not variants:
        return None
    names = [n for n in step_names(doc)
             if any(steps.get(n) and is_operation(steps[n]) for _, steps in variants)]
    if not names:
        return None
    two = len(variants) == 2
    headers = ["Operation"] + [v for v, _ in variants]
    if two:
        headers.append("%s vs %s (throughput)" % (variants[1][0], variants[0][0]))
    rows = []
    # ratios against the first variant; in a sweep against the first variant at the same size
    base_of = S.baselines(doc)
    for n in names:
        base = variants[0][1].get(n)
        row = [cell(step_label(doc, n))]
        for i, (_, steps) in enumerate(variants):
            c = operation_cell(steps.get(n))
            if not two and base_of[i] != i and len(variants) > 2:
                r = step_speedup(variants[base_of[i]][1].get(n), steps.get(n))
                if r is not None:
                    c["text"] += " (%s)" % stats.format_ratio(r)
            row.append(c)
        if two:
            row.append(cell(stats.format_ratio(step_speedup(base, variants[1][1].get(n))), "ratio"))
        rows.append(row)
    rows.append(_sum_row(variants, names, two, base_of))
    return {"id": "operations", "title": "Step times", "headers": headers, "rows": rows,
            "note": "Median over repetitions: wall time of the whole batch · objects per second."
                    + (" Ratio: %s throughput / %s throughput." % (variants[1][0], variants[0][0]) if two else "")}


# cluster time is labelled the same way on every page that shows it (bench, fleet, history)
CLUSTER_TIME = "cluster time"
CLUSTER_TIME_NOTE = ("This cluster ran its latencies scaled by %g: cluster time = wall time ÷ %g, the time the same "
                     "work takes at the calibrated latencies. Compare these, not the wall times, with a seed's figures.")
# the same note for pages of many clusters or runs (fleet, history), each with its own scale
SCALED_NOTE = ("Clusters that ran their latencies scaled (a twin's time scale, shown beside each) only: cluster time = "
               "wall time ÷ time scale, the time the same work takes at the calibrated latencies. Compare these, not "
               "the wall times, with a seed's figures. A real cluster has no time scale and is not listed.")
SEED_RATIO = "ours ÷ seed"
SEED_NOTE = (" Seed: the field report's own figure where this run repeats its experiment (same benchmark, batch size, "
             "storage class and setting; docs/reference/seeds.md); ours ÷ seed near 1.00 means the cluster behaves "
             "as the seed's did.")


def cluster_time_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """On a scaled cluster (the twin): every step time as cluster time (wall / time scale), the figure to set beside
    a seed's, and where the step repeats a seed's measurement (seed_figures.py) that figure and ours ÷ the seed's;
    None on a real cluster."""
    scale = time_scale(doc)
    if not scale or not operations_table(doc):
        return None
    variants = summaries(doc)
    names = [n for n in step_names(doc) if any(steps.get(n) and is_operation(steps[n]) for _, steps in variants)]
    # the sum over the steps every variant finished, as the step-times table sums them
    common = [n for n in names if all(steps.get(n) and steps[n].get("wall_s") for _, steps in variants)]
    seeds = [{n: seed_figure(doc, get_variant(doc, v), n) for n in names} for v, _ in variants]
    headers = ["Operation"]
    for (v, _), seed in zip(variants, seeds):
        headers.append("%s · %s" % (v, CLUSTER_TIME))
        if any(seed.values()):
            headers += ["%s · seed %s" % (v, _seeds_named(seed)), SEED_RATIO]
    rows = [[cell(step_label(doc, n))] for n in names]
    sums = [cell("Sum of step times", "sum")]
    for (_, steps), seed in zip(variants, seeds):
        for row, n in zip(rows, names):
            w = (steps.get(n) or {}).get("wall_s")
            ours = median(w) / scale if w else None
            row.append(cell(stats.format_duration(ours) if w else stats.DASH, "" if w else "missing"))
            if any(seed.values()):
                row += seed_cells(ours, (seed[n] or {}).get("seconds"))
        total = sum(median(steps[n]["wall_s"]) for n in common) / scale if common else None
        sums.append(cell(stats.format_duration(total), "sum"))
        if any(seed.values()):
            seed_total = sum(seed[n]["seconds"] for n in common) if common and all(seed[n] for n in common) else None  # type: ignore[index]
            sums += [dict(c, cls=(c["cls"] + " sum").strip()) for c in seed_cells(total, seed_total)]
    rows.append(sums)
    note = CLUSTER_TIME_NOTE % (scale, scale) + (SEED_NOTE if any(any(seed.values()) for seed in seeds) else "")
    return {"id": "cluster-time", "title": "Step times in cluster time (time scale %g)" % scale,
            "headers": headers, "rows": rows, "note": note}


def _seeds_named(seed: dict[str, dict[str, Any] | None]) -> str:
    return " and ".join(sorted({f["seed"] for f in seed.values() if f}))


def seed_cells(ours: float | None, seed_s: float | None) -> list[dict[str, Any]]:
    """The seed's figure and ours ÷ the seed's, dashes where the step has no seed figure."""
    if seed_s is None:
        return [cell(stats.DASH, "missing"), cell(stats.DASH, "missing")]
    return [cell(stats.format_duration(seed_s)), cell("%.2f" % (ours / seed_s) if ours else stats.DASH, "ratio")]


def _sum_row(variants: list[tuple[str, dict[str, dict[str, Any]]]], names: list[str], two: bool,
             base_of: list[int] | None = None) -> list[dict[str, Any]]:
    # The overall ratio only counts steps that succeeded in every variant, so a step that
    # failed on one side cannot make the other look faster.
    common = [n for n in names if all(steps.get(n) and steps[n].get("wall_s") for _, steps in variants)]
    row = [cell("Sum of step times", "sum")]
    sums = []
    for _, steps in variants:
        total = sum(median(steps[n]["wall_s"]) for n in common) if common else None
        sums.append(total)
        row.append(cell(stats.format_duration(total), "sum"))
    if two:
        text = stats.format_ratio(stats.speedup(sums[0], sums[1]), approx=True) + " overall"
        if len(common) < len(names):
            text += " (%d of %d steps)" % (len(common), len(names))
        row.append(cell(text, "sum ratio"))
    elif len(variants) > 2:
        base_of = base_of or [0] * len(variants)
        for i in range(2, len(row)):
            if base_of[i - 1] == i - 1:
                continue
            r = stats.speedup(sums[base_of[i - 1]], sums[i - 1])
            if r is not None:
                row[i]["text"] += " (%s)" % stats.format_ratio(r, approx=True)
    return row


def latency_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Per-object latency p50 / p99 (max) per step and variant, where steps carry latencies."""
    variants = summaries(doc)
    names = [n for n in step_names(doc) if any(steps.get(n, {}).get("latency") for _, steps in variants)]
    if not names:
        return None
    rows = []
    for n in names:
        row = [cell(step_label(doc, n))]
        for _, steps in variants:
            lat = (steps.get(n) or {}).get("latency") or {}
            if "p50" in lat and "p99" in lat:
                row.append(cell("%s / %s (max %s)" % (
                    stats.format_duration(median(lat["p50"])), stats.format_duration(median(lat["p99"])),
                    stats.format_duration(median(lat.get("max"))))))
            else:
                row.append(cell(stats.DASH, "missing"))
        rows.append(row)
    return {"id": "latency", "title": "Latency per object", "rows": rows,
            "headers": ["Operation"] + ["%s p50 / p99" % v for v, _ in variants],
            "note": "Each object's own interval (client clock; per I/O for fio, per transaction for sysbench); "
                    "percentiles by linear interpolation, median over repetitions."}


# More measured figures per step than this and the metrics table turns (metrics as rows, variants as columns):
# Step | Variant | four figures | ratio fits A4's printable 703 px and reads as the seed's own table (seed 001:
# Volume type | IOPS | Throughput); a mixed fio job's read/write IOPS and throughput, its latencies and more
# (up to 18 columns) do not, and a row per metric also gives each figure its own ratio.
WIDE_METRIC_COLUMNS = 4
METRICS_TITLE = "Measured metrics"
# the p99 figure, from the step's latency spread; named as a duration metric in seconds would be (metrics.py:
# "latency p99 (ms)", lower is better), and the same figure as sysbench's own p99 where it has no histogram
P99 = "latency_p99_s"


def metrics_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """fio/sysbench style: Step | Variant | IOPS | throughput | ... | latency p99 | ratio vs first; with more than
    WIDE_METRIC_COLUMNS figures, Step | Metric (unit) | <variant> ... | ratio (metrics_by_row)."""
    variants = summaries(doc)
    names = [n for n in step_names(doc) if any((steps.get(n) or {}).get("metrics") for _, steps in variants)]
    if not names:
        return None
    keys = list(metric_keys(doc))
    has_p99 = any(((steps.get(n) or {}).get("latency") or {}).get("p99")
                  for n in names for _, steps in variants)
    if len(keys) + has_p99 > WIDE_METRIC_COLUMNS:
        return metrics_by_row(doc, variants, names, keys)
    # one unit per duration column, said in its header (never "attach max s" over cells in ms)
    units = {k: column_unit(k, [median(((steps.get(n) or {}).get("metrics") or {}).get(k))
                                for n in names for _, steps in variants]) for k in keys}
    headers = ["Step", "Variant"] + [column_label(k, units[k]) for k in keys]
    if has_p99:
        units[P99] = column_unit(P99, [_row_value(steps.get(n), P99) for n in names for _, steps in variants])
        headers.append(column_label(P99, units[P99]))
    ratio_keys = {}
    if len(variants) > 1:
        headers.append("vs %s" % variants[0][0])
    rows = []
    for n in names:
        base = variants[0][1].get(n) or {}
        present = [k for k in keys if any(k in ((steps.get(n) or {}).get("metrics") or {}) for _, steps in variants)]
        pk = primary_metric(present)
        ratio_keys[n] = pk
        for i, (vname, steps) in enumerate(variants):
            s = steps.get(n)
            row = [cell(step_label(doc, n) if i == 0 else ""), cell(vname)]
            if s is None or not s.get("ok_runs"):
                filler = status_text(s) if s else stats.DASH
                row += [cell(filler, "fail" if s else "missing")] + [cell("")] * (len(headers) - 3)
                rows.append(row)
                continue
            m = s.get("metrics") or {}
            for k in keys:
                row.append(cell(format_in_unit(k, median(m.get(k)), units[k]) if k in m else stats.DASH))
            if has_p99:
                p99 = _row_value(s, P99)
                row.append(cell(format_in_unit(P99, p99, units[P99]) if p99 is not None else stats.DASH))
            if len(variants) > 1:
                row.append(_metric_ratio_cell(i, pk, base, s))
            rows.append(row)
    return {"id": "metrics", "title": METRICS_TITLE, "headers": headers, "rows": rows, "left": 2,
            "note": "Median over repetitions. Ratio: how many times better than %s on the step's "
                    "primary metric (higher IOPS/TPS, or lower time); for a step that times a batch of objects, "
                    "on the step's time." % variants[0][0]}


def metrics_by_row(doc: dict[str, Any], variants: list[tuple[str, dict[str, dict[str, Any]]]], names: list[str],
                   keys: list[str]) -> dict[str, Any]:
    """The metrics table turned: per step one row per metric (its unit said once, in the row's label, "clat mean
    (µs)"), the variants side by side as columns, and each metric's own ratio to the first variant (higher IOPS or
    throughput, lower latency is better); a row whose metric ranks nothing (a count) has no ratio."""
    two = len(variants) == 2
    headers = ["Step", "Metric"] + [v for v, _ in variants]
    if two:
        headers.append("%s vs %s" % (variants[1][0], variants[0][0]))
    rows = []
    for n in names:
        steps_n = [steps.get(n) for _, steps in variants]
        ok = [s if s and s.get("ok_runs") else None for s in steps_n]
        figures = [k for k in keys if any(k in (s.get("metrics") or {}) for s in ok if s)]
        if P99 not in figures and any(((s or {}).get("latency") or {}).get("p99") for s in ok):
            figures.append(P99)
        for j, k in enumerate(figures):
            values = [_row_value(s, k) for s in ok]
            unit = column_unit(k, values)
            row = [cell(step_label(doc, n) if j == 0 else ""), cell(column_label(k, unit), "rowhead")]
            for i, (s, v) in enumerate(zip(steps_n, values)):
                if ok[i] is None:
                    row.append(cell(status_text(s) if s and j == 0 else stats.DASH, "fail" if s else "missing"))
                    continue
                c = cell(format_in_unit(k, v, unit) if v is not None else stats.DASH)
                if len(variants) > 2 and i > 0:
                    r = better_ratio(k, values[0], v)
                    if r is not None:
                        c["text"] += " (%s)" % stats.format_ratio(r)
                row.append(c)
            if two:
                r = better_ratio(k, values[0], values[1])
                row.append(cell(stats.format_ratio(r), "ratio"))
            rows.append(row)
    return {"id": "metrics", "title": METRICS_TITLE, "headers": headers, "rows": rows, "left": 2,
            "note": "Median over repetitions; a row per metric, its unit in the row's label. "
                    + ("Ratio: how many times better %s is than %s on that row's metric (higher IOPS or throughput, "
                       "lower latency); — where the metric ranks nothing. " % (variants[1][0], variants[0][0])
                       if two else "")
                    + ("In brackets: how many times better than %s on that row's metric. " % variants[0][0]
                       if len(variants) > 2 else "")
                    + "Latency p99: each I/O's (fio) or transaction's (sysbench) own."}


def _row_value(s: dict[str, Any] | None, key: str) -> float | None:
    if s is None:
        return None
    m = s.get("metrics") or {}
    if key == P99 and key not in m:
        return median((s.get("latency") or {}).get("p99"))
    return median(m.get(key))


def _metric_ratio_cell(i: int, pk: str | None, base: dict[str, Any] | None, s: dict[str, Any]) -> dict[str, Any]:
    """The ratio on a figure that means something for the row: a batch step's time (its count of attachments is
    no figure to rank by), else the step's primary metric."""
    if i == 0:
        return cell("baseline", "ratio")
    if is_operation(s) or pk is None:
        r = step_speedup(base, s)
        return cell("%s step time" % stats.format_ratio(r) if r else stats.DASH, "ratio")
    r = better_ratio(pk, median((base.get("metrics") or {}).get(pk)), median((s.get("metrics") or {}).get(pk)))  # type: ignore[union-attr]  # i > 0
    return cell("%s %s" % (stats.format_ratio(r), metric_info(pk)[0]) if r else stats.DASH, "ratio")


def repetitions_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Median and range per step when any variant ran more than once."""
    variants = summaries(doc)
    if not any(len(v.get("runs", [])) > 1 for v in doc.get("variants", [])):
        return None
    rows = []
    for n in step_names(doc):
        row = [cell(step_label(doc, n))]
        for _, steps in variants:
            s = steps.get(n)
            w = (s or {}).get("wall_s")
            if not w:
                row.append(cell(status_text(s) if s else stats.DASH, "missing"))
                continue
            text = "%s (%s – %s, n=%d)" % (stats.format_duration(w["median"]), stats.format_duration(w["min"]),
                                           stats.format_duration(w["max"]), w["n"])
            if w.get("q1") is not None and w["n"] >= 4:
                text += " IQR %s – %s" % (stats.format_duration(w["q1"]), stats.format_duration(w["q3"]))
            row.append(cell(text))
        rows.append(row)
    return {"id": "repetitions", "title": "Spread across repetitions", "rows": rows,
            "headers": ["Operation"] + [v for v, _ in variants],
            "note": "median (min – max, n = ok repetitions); IQR from 4 repetitions on."}


def facts_table(doc: dict[str, Any]) -> dict[str, Any]:
    """Key/value facts: run, cluster, components, parameters."""
    rows = [
        ("Run", doc.get("run_id", "")),
        ("Benchmark", doc.get("benchmark", "")),
        ("Status", doc.get("status", "") + (": %s" % doc["reason"] if doc.get("reason") else "")),
        ("Started", doc.get("started") or stats.DASH),
        ("Finished", doc.get("finished") or stats.DASH),
    ]
    cluster = doc.get("cluster") or {}
    for key in ("server", "version", "nodes"):
        if cluster.get(key) not in (None, ""):
            rows.append(("Cluster " + key, str(cluster[key])))
    for key in sorted(k for k in cluster if k not in ("server", "version", "nodes")):
        rows.append(("Cluster " + key, _short(cluster[key])))
    for name, version in sorted((doc.get("components") or {}).items()):
        rows.append((name, version))
    for key, value in sorted((doc.get("parameters") or {}).items()):
        rows.append(("Parameter " + key, _short(value)))
    for v in doc.get("variants", []):
        if v.get("settings"):
            rows.append(("Variant " + v["name"], ", ".join("%s=%s" % (k, _short(x)) for k, x in sorted(v["settings"].items()))))
    return {"id": "facts", "title": "Run", "headers": ["", ""],
            "rows": [[cell(k, "key"), cell(str(v))] for k, v in rows], "note": ""}


def _short(value: object, limit: int = 120) -> str:
    text = value if isinstance(value, str) else _compact(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _compact(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def problem_list(doc: dict[str, Any], limit: int = 20) -> list[tuple[str, str]]:
    """[(where, what)] for failed/skipped/timed-out steps, object errors and unfinished objects."""
    out = []
    for v in doc.get("variants", []):
        for r in v.get("runs", []):
            for s in r.get("steps", []):
                where = "%s / run %s / %s" % (v["name"], r.get("repetition"), s.get("label") or s["name"])
                if s["status"] != "ok":
                    out.append((where, s["status"] + (": " + s["reason"] if s.get("reason") else "")))
                for e in s.get("errors") or []:
                    out.append((where, "%s: %s" % (e.get("object") or "(step)", e.get("reason"))))
                unfinished = s.get("unfinished") or []
                if unfinished:
                    shown = ", ".join(unfinished[:10]) + (" …" if len(unfinished) > 10 else "")
                    out.append((where, "%d unfinished: %s" % (len(unfinished), shown)))
    if len(out) > limit:
        out = out[:limit] + [("", "… and %d more (see result.json)" % (len(out) - limit))]
    return out


# --- sweep ----------------------------------------------------------------------------------
def _rate_cell(step: dict[str, Any] | None) -> dict[str, Any]:
    if step is None:
        return cell(stats.DASH, "missing")
    if not step.get("rate"):
        return cell(step.get("status", "missing"), "fail" if step.get("status") in BROKEN_STEP_STATUSES else "skip")
    return cell(stats.format_rate(step["rate"], step.get("unit") or "obj"))


def sweep_table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Rate per step and for the whole lifecycle, one column per (variant, N), then per variant the rate at the
    largest N against the smallest (sweep.py's figures), or None without a sweep."""
    sweep = sweep_block(doc)
    if not sweep:
        return None
    values, bases = sweep["values"], sweep["variants"]
    cols = [(b, n) for b in bases for n in values]
    lo, hi = values[0], values[-1]
    headers = ["Operation"] + ["%s%s%s" % (b, S.SEP, _value_text(sweep, n)) for b, n in cols]
    if len(values) > 1:
        headers += ["%s: %s vs %s" % (b, _value_text(sweep, hi), _value_text(sweep, lo)) for b in bases]
    rows = []
    for name, label in S.step_order(sweep):
        if all(s["status"] == "skipped" for p in sweep["points"] for s in p["steps"] if s["name"] == name):
            continue  # not asked for, or no snapshot class: the step table says so
        row = [cell(label)]
        for b, n in cols:
            p = S.point(sweep, b, n)
            row.append(_rate_cell(next((s for s in p["steps"] if s["name"] == name), None) if p else None))
        if len(values) > 1:
            row += [cell(stats.format_ratio(S.scaling(sweep, b, name)), "ratio") for b in bases]
        rows.append(row)
    row = [cell(S.LIFECYCLE, "sum")]
    for b, n in cols:
        p = S.point(sweep, b, n)
        lc = p["lifecycle"] if p else None
        if not lc or not lc["rate"]:
            row.append(cell(stats.DASH, "sum missing"))
            continue
        text = stats.format_rate(lc["rate"], S.LIFECYCLE_UNIT)
        if not lc["complete"]:
            text += " (%d of %d steps)" % (lc["steps"], len([s for s in p["steps"] if s["status"] != "skipped"]))  # type: ignore[index]  # lc: p
        row.append(cell(text, "sum"))
    if len(values) > 1:
        row += [cell(stats.format_ratio(S.scaling(sweep, b)), "sum ratio") for b in bases]
    rows.append(row)
    return {"id": "sweep", "title": "Rate against %s" % sweep["parameter"], "headers": headers, "rows": rows,
            "note": "Median rate at each number of %s. %s: operations (the objects of every timed step) over the sum of the "
                    "step times. Last columns: rate at %s over rate at %s; 1.0× or more means the rate holds or "
                    "improves as the batch grows." % (sweep["parameter"], S.LIFECYCLE,
                                                      _value_text(sweep, hi), _value_text(sweep, lo))}


def _value_text(sweep: dict[str, Any], value: float) -> str:
    return "%d %s" % (value, "vol" if sweep["parameter"] == "volumes" else sweep["parameter"])


def all_tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    # figures against a step parameter first: where a document has them (gluster's handshake against volume count),
    # they are its headline; the step-by-step tables follow
    rest = (operations_table(doc), cluster_time_table(doc), sweep_table(doc), latency_table(doc), metrics_table(doc),
            repetitions_table(doc), W.table(doc))
    return parameter_tables(doc) + [t for t in rest if t]
