# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The short summary of a result that roles put into facts and set_stats (AWX workflow data).

Small on purpose: no per-object timings, one line per step, so it fits in AWX artifacts.
"""
from __future__ import annotations

from typing import Any


from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from ansible_collections.storageperf.k8s.plugins.module_utils.report import warning_events as W
from ansible_collections.storageperf.k8s.plugins.module_utils.report.compare import headline, speedups
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import summaries
from ansible_collections.storageperf.k8s.plugins.module_utils.report.render import table_markdown
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import operation_cell


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    """{run_id, benchmark, status, reason, started, finished, variants[{name, steps, failed_steps,
    sum_wall_s, sum_text, step_times{name: text}}], speedup, speedup_text, step_speedups, table,
    warnings{count, reasons[{reason, count, events, message, steps, examples}]}, warning_lines}."""
    out = {k: doc.get(k) for k in ("run_id", "benchmark", "status", "started", "finished")}
    if doc.get("reason"):
        out["reason"] = doc["reason"]
    variants = []
    for vname, steps in summaries(doc):
        sums = [s["wall_s"]["median"] for s in steps.values() if s.get("wall_s")]
        variants.append({
            "name": vname,
            "steps": len(steps),
            "failed_steps": sum(1 for s in steps.values() if s.get("status") in BROKEN_STEP_STATUSES),
            "sum_wall_s": sum(sums) if sums else None,
            "sum_text": stats.format_duration(sum(sums)) if sums else stats.DASH,
            "step_times": {n: operation_cell(s)["text"] for n, s in steps.items()},
        })
    out["variants"] = variants
    sp = speedups(doc) if len(variants) >= 2 else None
    head = headline(doc) if sp else None
    out["speedup"] = round(head["speedup"], 3) if head and head["speedup"] else None
    out["speedup_text"] = head["text"] if out["speedup"] else None  # type: ignore[index]  # a speedup: a headline
    out["step_speedups"] = {r["step"]: round(r["speedup"], 3) for r in sp["steps"] if r["speedup"]} if sp else {}
    table = T.operations_table(doc) or T.metrics_table(doc)
    out["table"] = table_markdown(dict(table, title="", note="")).splitlines() if table else []
    warnings = W.collect(doc)
    out["warnings"] = warnings
    # shown on the console after the table: a run can be ok and still have retried objects
    out["warning_lines"] = W.lines(warnings)
    return out
