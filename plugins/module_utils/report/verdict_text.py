# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A comparison verdict (compare.compare) in words: a table model and the fixed-width lines of the console.

junit.py writes the same verdict as JUnit XML for CI.
"""
from __future__ import annotations

from typing import Any


from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell


def verdict_table(verdict: dict[str, Any]) -> dict[str, Any]:
    """Table model (tables.py shape) of the verdict rows."""
    rows = []
    for r in verdict["rows"]:
        rows.append([cell(r["metric"]), cell(r["baseline_text"]), cell(r["candidate_text"]),
                     cell(r["change_text"]), cell(r["limit"]),
                     cell(("PASS" if r["passed"] else "FAIL") + ("" if r["passed"] else ": " + r["reason"]),
                          "" if r["passed"] else "fail")])
    return {"id": "verdict", "title": "Comparison: %s vs %s" % (verdict.get("candidate"), verdict.get("baseline") or "limits"),
            "headers": ["Metric", "Baseline", "Candidate", "Change", "Limit", "Verdict"], "rows": rows,
            "note": verdict["message"]}


def verdict_lines(verdict: dict[str, Any]) -> list[str]:
    """Fixed-width text lines of the verdict, for ansible debug output."""
    table = verdict_table(verdict)
    grid = [table["headers"]] + [[c["text"] for c in row] for row in table["rows"]]
    widths = [max(len(r[i]) for r in grid) for i in range(len(table["headers"]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in grid]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines + [verdict["message"]]
