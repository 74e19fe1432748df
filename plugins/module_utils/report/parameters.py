# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Figures against a step parameter, as data: the steps that carry `parameter` {name, value, series}, one row per
(variant, parameter value).

    parameter_blocks(doc) -> [{"name": "volumes", "series": ["handshake", "volume info"], "figures": [metric keys],
                              "rows": [{"variant", "value", "measured", "source", "status", "reason",
                                        "wall_s": {series: median or None}, "metrics": {key: median}}]}]

A row's wall times are its steps' medians, one per series measured at that value; its metrics are those of all its
steps (the first series' first). A step with no ok repetition (a handshake that timed out) still shows what it
measured: the median over its repetitions' own figures, with its status and reason on the row. `figures` are the
metrics the table shows: the registered ones (metrics.METRICS: a label and a direction; the others stay in the
measured metrics table) that rank a variant (counts such as volumes or created rank nothing), never the parameter,
never a series' own figure (the metric labelled as the series is named, or the primary metric equal to the series'
wall time: handshake_s of the handshake series).
A reference variant (settings measured: false, document.is_measured) gives rows with measured false and its source.
The gluster benchmark's handshake table is this (docs/gluster.md); sweeps (sweep.py) are variants of their own, not
step parameters, and have their own table.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    BROKEN_STEP_STATUSES, is_measured, summaries,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import (
    METRICS, metric_info, primary_metric,
)


def parameter_blocks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One block per parameter name, in the order the steps name them; [] when no step carries a parameter."""
    variants = {v["name"]: v for v in doc.get("variants", [])}
    blocks: dict[str, dict[str, Any]] = {}
    for vname, steps in summaries(doc):
        variant = variants.get(vname) or {}
        rows: dict[tuple[str, float], dict[str, Any]] = {}
        for s in steps.values():
            p = s.get("parameter")
            if not p:
                continue
            block = blocks.setdefault(p["name"], {"name": p["name"], "series": [], "rows": []})
            series = p.get("series") or ""
            if series not in block["series"]:
                block["series"].append(series)
            row = rows.get((p["name"], p["value"]))
            if row is None:
                row = rows[(p["name"], p["value"])] = _new_row(vname, variant, p["value"])
                block["rows"].append(row)
            _add_step(row, series, s, _raw_steps(variant, s["name"]))
    out = list(blocks.values())
    for block in out:
        block["rows"].sort(key=lambda r: (not r["measured"], _variant_index(doc, r["variant"]), r["value"]))
        # in the registry's order; from the rows, not the summaries: a broken step's figures count too
        block["figures"] = [k for k in METRICS if _is_figure(k, block)]
    return out


def _new_row(vname: str, variant: dict[str, Any], value: float) -> dict[str, Any]:
    settings = variant.get("settings") or {}
    return {"variant": vname, "value": value, "measured": is_measured(variant), "source": settings.get("source"),
            "status": "ok", "reason": None, "wall_s": {}, "metrics": {}}


def _raw_steps(variant: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [s for r in variant.get("runs", []) for s in r.get("steps", []) if s.get("name") == name]


def _add_step(row: dict[str, Any], series: str, summary: dict[str, Any], raw: list[dict[str, Any]]) -> None:
    if summary.get("ok_runs"):
        wall = (summary.get("wall_s") or {}).get("median")
        metrics = {k: v["median"] for k, v in (summary.get("metrics") or {}).items() if v}
    else:
        # no ok repetition: the summary keeps no figures, the steps themselves still hold what they measured
        wall = stats.median(s.get("wall_s") for s in raw)
        keys = [k for s in raw for k in (s.get("metrics") or {})]
        metrics = {k: stats.median((s.get("metrics") or {}).get(k) for s in raw) for k in dict.fromkeys(keys)}
    row["wall_s"][series] = wall
    for k, v in metrics.items():
        if v is not None:
            row["metrics"].setdefault(k, v)
    status = summary.get("status", "ok")
    if status in BROKEN_STEP_STATUSES and row["status"] not in BROKEN_STEP_STATUSES:
        row["status"], row["reason"] = status, summary.get("reason")


def _variant_index(doc: dict[str, Any], name: str) -> int:
    return next(i for i, v in enumerate(doc.get("variants", [])) if v["name"] == name)


def _is_figure(key: str, block: dict[str, Any]) -> bool:
    label, _, better = metric_info(key)
    if key == block["name"] or better is None or label in block["series"] or _is_a_wall_time(key, block):
        return False
    return any(r["metrics"].get(key) is not None for r in block["rows"])


def _is_a_wall_time(key: str, block: dict[str, Any]) -> bool:
    """The steps' primary metric (metrics.PRIMARY_METRICS) equal to a series' wall time in every row that has both:
    that series' own figure (handshake_s of a handshake step), its column says it already. Equal values alone prove
    nothing for any other metric (a handshake ends when the volume status answers: both are the same time)."""
    if key != primary_metric([k for r in block["rows"] for k in r["metrics"]]):
        return False
    for s in block["series"]:
        both = [(r["metrics"][key], r["wall_s"][s]) for r in block["rows"]
                if r["metrics"].get(key) is not None and r["wall_s"].get(s) is not None]
        if both and all(abs(m - w) <= 1e-9 * max(1.0, abs(w)) for m, w in both):
            return True
    return False
