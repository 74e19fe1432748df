# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One step summary in figures and words: its label, its throughput ratio between two variants, its cell.

A cell is {"text": str, "cls": css class or ""}. The comparison (compare.py), the fleet document (fleet.py)
and the tables (tables.py) all say a step's time the same way because they take it from here.
"""
from __future__ import annotations

from typing import Any, overload


from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import BROKEN_STEP, summaries

SEP = " · "


def cell(text: object, cls: str = "") -> dict[str, Any]:
    return {"text": text, "cls": cls}


def humanize(name: str) -> str:
    """'create_volume' -> 'Create volume' when a step has no label."""
    text = name.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def step_label(doc: dict[str, Any], name: str) -> str:
    for _, steps in summaries(doc):
        s = steps.get(name)
        if s and s.get("label"):
            return s["label"]
    return humanize(name)


@overload
def median(spread: None) -> None:
    ...


@overload
def median(spread: dict[str, Any]) -> float:
    ...


def median(spread: dict[str, Any] | None) -> float | None:
    return spread["median"] if spread else None


def status_text(s: dict[str, Any]) -> str:
    """Cell text for a step that has no ok repetition (or a partial one)."""
    st = s.get("status", "ok")
    if st == "disturbed":  # its errors are the disturbance's consequences: the reason says what happened
        return st + (" (%s)" % s["reason"] if s.get("reason") else "")
    bits = []
    if s.get("errors"):
        bits.append("%d error%s" % (s["errors"], "" if s["errors"] == 1 else "s"))
    if s.get("unfinished"):
        bits.append("%d unfinished" % s["unfinished"])
    if s.get("reason") and st in ("skipped", "disturbed"):
        bits.append(s["reason"])
    return st + (" (%s)" % ", ".join(bits) if bits else "")


def operation_cell(s: dict[str, Any] | None) -> dict[str, Any]:
    """'6m 57s · 0.24 vol/s', or the status when no repetition succeeded."""
    if s is None:
        return cell(stats.DASH, "missing")
    if not s.get("ok_runs") or not s.get("wall_s"):
        return cell(status_text(s), "fail" if s.get("status") in BROKEN_STEP else "skip")
    text = stats.format_duration(median(s["wall_s"]))
    if s.get("rate"):
        text += SEP + stats.format_rate(median(s["rate"]), s.get("unit") or "obj")
    if s["ok_runs"] < s["runs"]:
        return cell("%s (%d/%d ok)" % (text, s["ok_runs"], s["runs"]), "warn")
    return cell(text)


def step_speedup(base: dict[str, Any] | None, cand: dict[str, Any] | None) -> float | None:
    """Throughput ratio cand vs base: rates when both have them, else wall-time speedup."""
    if not base or not cand or not base.get("ok_runs") or not cand.get("ok_runs"):
        return None
    r = stats.ratio(median(base.get("rate")), median(cand.get("rate")))
    if r is None:
        r = stats.speedup(median(base.get("wall_s")), median(cand.get("wall_s")))
    return r
