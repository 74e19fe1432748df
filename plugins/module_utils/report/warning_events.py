# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Warning events the measured objects received (ProvisioningFailed, FailedAttachVolume ...), by reason.

A step that succeeds after retries is ok, but the retries are part of what was measured: the console
summary, report.md and report.html say how many objects had warnings, which reasons, how often, and name
examples. Each step result carries `warnings` (engine.warning_summary); older documents only have the
objects_with_warnings metric, which is shown as a count without reasons.
"""
from __future__ import annotations

from typing import Any


EXAMPLES = 5


def collect(doc: dict[str, Any]) -> dict[str, Any]:
    """{count, reasons: [{reason, count, events, message, steps, examples}]} over the whole document.

    count: objects with Warning events, an object once per step it had them in (a volume retried in two steps
    counts twice)."""
    reasons: dict[str, dict[str, Any]] = {}
    objects = 0
    for v in doc.get("variants", []):
        for r in v.get("runs", []):
            for s in r.get("steps", []):
                warned = s.get("warned_objects")
                if warned is None:
                    warned = (s.get("metrics") or {}).get("objects_with_warnings") or 0
                objects += int(warned)
                where = "%s #%s %s" % (v["name"], r.get("repetition"), s.get("label") or s["name"])
                for w in s.get("warnings") or []:
                    agg = reasons.setdefault(w["reason"], {"reason": w["reason"], "count": 0, "events": 0,
                                                           "message": w.get("message", ""), "steps": [],
                                                           "examples": []})
                    agg["count"] += int(w.get("objects") or 0)
                    agg["events"] += int(w.get("events") or 0)
                    agg["steps"].append(where)
                    for name in w.get("examples") or []:
                        if len(agg["examples"]) < EXAMPLES and name not in agg["examples"]:
                            agg["examples"].append(name)
    out = sorted(reasons.values(), key=lambda a: (-a["count"], a["reason"]))
    return {"count": objects, "reasons": out}


def lines(summary: dict[str, Any] | None) -> list[str]:
    """Console lines: one per reason, with examples."""
    if not summary or not summary.get("count"):
        return []
    out = ["Warnings: %d object%s had Warning events" % (summary["count"], "" if summary["count"] == 1 else "s")]
    for w in summary["reasons"]:
        out.append("  %s: %d object%s, %d event%s (e.g. %s)%s" % (
            w["reason"], w["count"], "" if w["count"] == 1 else "s", w["events"], "" if w["events"] == 1 else "s",
            ", ".join(w["examples"]) or "-", (" - " + w["message"][:160]) if w.get("message") else ""))
    return out


def table(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The Warnings table of report.md / report.html, or None when no object had a warning."""
    summary = collect(doc)
    if not summary["count"]:
        return None
    rows = [[{"text": w["reason"], "cls": "warn"}, {"text": ", ".join(w["examples"]), "cls": ""},
             {"text": (w.get("message") or "")[:200], "cls": ""}, {"text": str(w["count"]), "cls": ""},
             {"text": str(w["events"]), "cls": ""}] for w in summary["reasons"]]
    if not rows:
        rows = [[{"text": "(reasons not recorded)", "cls": "warn"}, {"text": "", "cls": ""}, {"text": "", "cls": ""},
                 {"text": str(summary["count"]), "cls": ""}, {"text": "", "cls": ""}]]
    return {"id": "warnings", "title": "Warnings (%d object%s)" % (summary["count"], "" if summary["count"] == 1 else "s"),
            "headers": ["Reason", "Examples", "Latest message", "Objects", "Events"], "rows": rows, "left": 3,
            "note": "Warning events of the measured objects (controllers retried them); the step times include the "
                    "retries. Objects that never succeeded are listed under Problems."}
