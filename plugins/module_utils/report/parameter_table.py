# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The table of figures against a step parameter (parameters.py's blocks), one table model per parameter name:

    Variant | volumes | handshake | volume info | all peers Connected | ... (one column per series, then per figure)

Each figure is written as the seed writes a time (stats.format_duration) or as its metric is (metrics.py). A
reference variant's row (settings measured: false) has its variant marked "reported" (in italics), its
source named in the note; a row whose step broke says its status and reason beside the variant.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import format_metric, metric_info
from ansible_collections.storageperf.k8s.plugins.module_utils.report.parameters import parameter_blocks
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell

REPORTED = "reported"
REASON_CHARS = 80


def parameter_tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [_table(block) for block in parameter_blocks(doc)]


def _table(block: dict[str, Any]) -> dict[str, Any]:
    name = block["name"]
    headers = ["Variant", name] + [s or "wall time" for s in block["series"]] + \
        [metric_info(k)[0] for k in block["figures"]]
    rows = []
    for r in block["rows"]:
        cls = "" if r["measured"] else REPORTED
        label = r["variant"]
        if r["status"] != "ok":
            cls = (cls + " fail").strip()
            label += " (%s%s)" % (r["status"], ": " + _short(r["reason"]) if r.get("reason") else "")
        row = [cell(label, cls), cell(stats.format_number(r["value"]))]
        row += [_figure(r["wall_s"].get(s)) for s in block["series"]]
        row += [_figure(r["metrics"].get(k), k) for k in block["figures"]]
        rows.append(row)
    sources = sorted({r["source"] or "another source" for r in block["rows"] if not r["measured"]})
    note = "Median over repetitions; a column per series of steps, then per figure the steps measured. "
    if sources:
        note += "Rows marked reported are published figures (%s), not measured here." % ", ".join(sources)
    # wrap1: the variant's cell wraps (a broken step's reason beside it), so the figures stay on the screen
    return {"id": "parameter-" + name, "title": "Against %s" % name, "headers": headers, "rows": rows,
            "note": note.strip(), "cls": "wrap1"}


def _figure(value: float | None, key: str | None = None) -> dict[str, Any]:
    if value is None:
        return cell(stats.DASH, "missing")
    return cell(format_metric(key, value) if key else stats.format_duration(value))


def _short(reason: str) -> str:
    # the whole reason is in the Problems section below the tables
    return reason if len(reason) <= REASON_CHARS else reason[:REASON_CHARS - 1].rstrip() + "…"
