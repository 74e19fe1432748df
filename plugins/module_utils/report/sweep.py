# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scaling sweep in a result document: the same variants measured at several sizes N.

Each (variant, N) is a document variant of its own (its repetitions and summary as usual) that carries
`sweep: {variant, parameter, value}`. finalize() adds the document's `sweep` block (sweep_summary):
every (variant, N) point with each step's count, median wall time and rate, and the whole lifecycle's
operations per second, so a reader sees whether the rate holds as N grows (seed 002's claim for 1000
volumes against 100). Stdlib only; no import of document.py (which calls this module).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable


from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES

SEP = " · "
LIFECYCLE = "Whole lifecycle"
LIFECYCLE_UNIT = "op"


def point_name(variant: str, value: float, unit: str = "vol") -> str:
    """The document variant's name of one (variant, N): 'concurrency on · 100 vol'."""
    return "%s%s%d %s" % (variant, SEP, int(value), unit)


def is_sweep(doc: dict[str, Any]) -> bool:
    return any(v.get("sweep") for v in doc.get("variants", []))


def default_pair(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """The two variants an in-document ratio compares unless told: the first two; in a sweep the first two
    variants at the largest size (seed 002's OFF vs ON at 1000 volumes), never one variant at two sizes."""
    variants = doc.get("variants", [])
    names = [v["name"] for v in variants]
    points = [(v["sweep"].get("value"), v["name"]) for v in variants if v.get("sweep")]
    if points:
        top = max(value for value, _ in points)
        at_top = [name for value, name in points if value == top]
        if len(at_top) > 1:
            return at_top[0], at_top[1]
    return (names[0] if names else None), (names[1] if len(names) > 1 else None)


def baselines(doc: dict[str, Any]) -> list[int]:
    """For each variant, the index of the variant its ratios are taken against: the first variant, or in a
    sweep the first variant measured at the same size."""
    variants = doc.get("variants", [])
    out = []
    for v in variants:
        value = (v.get("sweep") or {}).get("value")
        same = [j for j, w in enumerate(variants) if value is not None and (w.get("sweep") or {}).get("value") == value]
        out.append(same[0] if same else 0)
    return out


def _median(spread: dict[str, Any] | None) -> float | None:
    return spread["median"] if spread else None


def _point_steps(summary: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for s in summary.get("steps", []):
        entry = {"name": s["name"], "status": s.get("status", "ok")}
        for key in ("label", "unit", "count"):
            if s.get(key) is not None:
                entry[key] = s[key]
        wall, rate = _median(s.get("wall_s")), _median(s.get("rate"))
        if s.get("ok_runs") and wall:
            entry["wall_s"] = wall
            entry["rate"] = rate if rate is not None else (s["count"] / wall if s.get("count") else None)
        out.append(entry)
    return out


def lifecycle(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Operations per second through the whole lifecycle: the objects of every step that has figures
    (count) over the sum of their median wall times, the seed's "Sum of step times" as a rate.

    complete: every step that ran has figures (skipped steps, not asked for or without a snapshot class,
    are left out at every size alike; a failed one would make the sizes incomparable).
    """
    ran = [s for s in steps if s.get("status") != "skipped"]
    timed = [s for s in ran if s.get("wall_s") and s.get("count")]
    if not timed:
        return {"count": 0, "wall_s": None, "rate": None, "steps": 0, "complete": False}
    count = sum(s["count"] for s in timed)
    wall = sum(s["wall_s"] for s in timed)
    return {"count": count, "wall_s": wall, "rate": count / wall, "steps": len(timed),
            "complete": len(timed) == len(ran)}


def sweep_summary(doc: dict[str, Any], summarize: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any] | None:
    """The document's `sweep` block, or None when no variant is a sweep point.

    summarize(variant) gives a variant's summary when it has none stored (document.summarize_variant).
    """
    points, bases, values, parameter = [], [], [], None
    for v in doc.get("variants", []):
        sw = v.get("sweep")
        if not sw:
            continue
        parameter = parameter or sw.get("parameter", "volumes")
        if sw["variant"] not in bases:
            bases.append(sw["variant"])
        if sw["value"] not in values:
            values.append(sw["value"])
        steps = _point_steps(v.get("summary") or summarize(v))
        points.append({"variant": sw["variant"], "value": sw["value"], "name": v["name"],
                       "status": _worst(s["status"] for s in steps if s["status"] != "skipped"), "steps": steps, "lifecycle": lifecycle(steps)})
    if not points:
        return None
    return {"parameter": parameter, "values": sorted(values), "variants": bases, "points": points}


def _worst(statuses: Iterable[str]) -> str:
    order = BROKEN_STEP_STATUSES + ("skipped", "ok")
    found = [s for s in statuses if s in order]
    return min(found, key=order.index) if found else "ok"


def point(sweep: dict[str, Any], variant: str, value: float) -> dict[str, Any] | None:
    for p in sweep["points"]:
        if p["variant"] == variant and p["value"] == value:
            return p
    return None


def step_order(sweep: dict[str, Any]) -> list[tuple[str, str]]:
    names, labels = [], {}
    for p in sweep["points"]:
        for s in p["steps"]:
            if s["name"] not in names:
                names.append(s["name"])
                labels[s["name"]] = s.get("label") or s["name"].replace("_", " ").capitalize()
    return [(n, labels[n]) for n in names]


def series(sweep: dict[str, Any], variant: str, step: str | None = None) -> list[tuple[float, float]]:
    """[(N, rate)] of one variant, for one step or (None) the whole lifecycle, N ascending; missing rates left out."""
    out = []
    for value in sweep["values"]:
        p = point(sweep, variant, value)
        if p is None:
            continue
        if step is None:
            rate = p["lifecycle"]["rate"]
        else:
            rate = next((s.get("rate") for s in p["steps"] if s["name"] == step), None)
        if rate:
            out.append((value, rate))
    return out


def scaling(sweep: dict[str, Any], variant: str, step: str | None = None) -> float | None:
    """Rate at the largest N over the rate at the smallest: >= 1 means the rate holds or improves."""
    pts = series(sweep, variant, step)
    if len(pts) < 2 or pts[0][0] == pts[-1][0]:
        return None
    return stats.ratio(pts[0][1], pts[-1][1])
