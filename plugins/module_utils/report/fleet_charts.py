# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's chart, drawn with charts.py's palette, style and PNG encoding.

bench: per cluster, the sum of step times of each variant as grouped bars (failed clusters keep
their slot, labelled, so a gap is never mistaken for a fast cluster). advice: per cluster, the
tunings counted by state as one stacked bar. Same return shape as charts.py: a list of
{"id", "title", "png", "alt"}, empty without matplotlib.
"""
from __future__ import annotations

from typing import Any


from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.fleet_schema import ADVICE_STATES

HAS_MATPLOTLIB = C.HAS_MATPLOTLIB
STATE_LABELS = {"on": "on", "available": "available", "blocked": "blocked", "not_applicable": "n/a"}
STATE_COLOURS = {"on": "#009e73", "available": "#e69f00", "blocked": "#d55e00", "not_applicable": "#c4c8cf"}


def sums_bars(fleet: dict[str, Any]) -> list[dict[str, Any]]:
    if not HAS_MATPLOTLIB or fleet["kind"] != "bench":
        return []
    variants = fleet.get("variants") or []
    rows = fleet["clusters"]
    if not variants or not rows:
        return []
    nvar = len(variants)
    width = 0.8 / nvar
    fig, ax = C.plt.subplots(figsize=(C.MAX_WIDTH_IN, 4.2))
    vmax = 0.0
    for i, vname in enumerate(variants):
        xs, hs = [], []
        for j, r in enumerate(rows):
            total = next((v.get("sum_wall_s") for v in r.get("variants") or [] if v["name"] == vname), None)
            if total is None:
                continue
            xs.append(j + (i - (nvar - 1) / 2.0) * width)
            hs.append(total)
        ax.bar(xs, hs, width=width * 0.92, color=C.PALETTE[i % len(C.PALETTE)], label=vname,
               hatch=C.HATCHES[i % len(C.HATCHES)], edgecolor="#ffffff")
        for x, h in zip(xs, hs):
            ax.text(x, h, stats.format_duration(h), ha="center", va="bottom", fontsize=7, color="#374151")
        vmax = max([vmax] + hs)
    for j, r in enumerate(rows):
        if r["status"] == "error":
            ax.text(j, 0, "no result", ha="center", va="bottom", fontsize=8, color="#b91c1c", rotation=90)
        sp = (r.get("speedup") or {}).get("overall")
        if sp:
            ax.text(j, vmax * 1.1, stats.format_ratio(sp, approx=True), ha="center", fontsize=9, fontweight="bold")
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["cluster"] + ("" if r["status"] == "ok" else "\n(%s)" % r["status"]) for r in rows])
    C._duration_axis(ax.yaxis, (vmax or 1.0) * 1.2)
    ax.set_ylim(0, (vmax or 1.0) * 1.22)
    ax.set_ylabel("sum of step times (median)")
    C._style(ax)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return [{"id": "chart-fleet-sums", "title": "Sum of step times per cluster and variant", "png": C._png(fig),
             "alt": "Grouped bars: per cluster, the sum of the median step times of each variant"}]


def state_bars(fleet: dict[str, Any]) -> list[dict[str, Any]]:
    if not HAS_MATPLOTLIB or fleet["kind"] != "advice" or not fleet["clusters"]:
        return []
    rows = fleet["clusters"]
    fig, ax = C.plt.subplots(figsize=(C.MAX_WIDTH_IN, 0.9 + 0.45 * len(rows)))
    left = [0] * len(rows)
    for state in ADVICE_STATES:
        counts = [(r.get("counts") or {}).get(state, 0) for r in rows]
        ax.barh(range(len(rows)), counts, left=left, color=STATE_COLOURS[state], label=STATE_LABELS[state])
        for j, (c, x) in enumerate(zip(counts, left)):
            if c:
                ax.text(x + c / 2.0, j, str(c), ha="center", va="center", fontsize=8)
        left = [a + b for a, b in zip(left, counts)]
    for j, r in enumerate(rows):
        if r["status"] == "error":
            ax.text(0, j, " no advice: " + (r.get("error") or "")[:60], va="center", fontsize=8, color="#b91c1c")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["cluster"] for r in rows])
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(C.MaxNLocator(integer=True))
    ax.set_xlabel("tunings")
    C._style(ax)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return [{"id": "chart-fleet-states", "title": "Tunings by state per cluster", "png": C._png(fig),
             "alt": "Stacked bars: per cluster, how many tunings are on, available, blocked or not applicable"}]


def all_charts(fleet: dict[str, Any]) -> list[dict[str, Any]]:
    return sums_bars(fleet) + state_bars(fleet)
