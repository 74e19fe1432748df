# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history's trend charts, drawn with charts.py's palette, style, duration axis and PNG encoding.

One chart per series (cluster, benchmark, variant, size, settings) of two runs or more: each step's figure per run,
what the history judges (the geometric mean of its operations' latencies, else of its repetitions' wall times),
oldest left. The run where a regression starts is ringed in red; a run that failed or was interrupted is a red
cross on the axis, so a gap is never mistaken for a fast run. Same return shape as charts.py: [{"id", "title",
"png", "alt"}], empty without matplotlib.
"""
from __future__ import annotations

from typing import Any


from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts as C

HAS_MATPLOTLIB = C.HAS_MATPLOTLIB
# a page of hundreds of charts helps nobody and takes long to draw: the series with regressions come first
MAX_CHARTS = 40
# rotated by 30 degrees, an "06-20 09:00" tick label takes 0.75 in of a 7 in axis at 9 pt: eight of them fit
MAX_TICKS = 8
REGRESSION = "#b91c1c"  # the pages' fail colour (render.CSS --fail), not one of the steps' palette


def _when(started: str | None) -> str:
    # "2026-06-20T09:00:00.000000Z" -> "06-20 09:00": the year is the same on almost every axis
    return started[5:16].replace("T", " ") if started else "?"


def trend(series: dict[str, Any]) -> dict[str, Any]:
    runs = series["runs"]
    # 2.5 in of axes: a trend reads at that height, and a history of a dozen series stays a few screens long
    fig, ax = C.plt.subplots(figsize=(C.MAX_WIDTH_IN, 2.5))
    xs = list(range(len(runs)))
    vmax = 0.0
    for i, st in enumerate(series["steps"]):
        colour = C.PALETTE[(i + 1) % len(C.PALETTE)]  # the grey is the in-report baseline variant's
        points = []
        for x, run in zip(xs, runs):
            s = next((s for s in run["steps"] if s["name"] == st["name"]), None)
            if s and s.get("evidence") and s["status"] == "ok":
                points.append((x, s["evidence"]["geomean_s"], s["regression"]))
        if not points:
            continue
        ax.plot([p[0] for p in points], [p[1] for p in points], markersize=4.5, linewidth=1.4,
                color=colour, label=st["label"], **C.series_style(i))
        flagged = [p for p in points if p[2]]
        if flagged:
            ax.scatter([p[0] for p in flagged], [p[1] for p in flagged], s=90, facecolors="none",
                       edgecolors=REGRESSION, linewidths=1.6, zorder=5)
        vmax = max([vmax] + [p[1] for p in points])
    failed = [x for x, run in zip(xs, runs) if run["status"] != "ok"]
    if failed:
        ax.scatter(failed, [0] * len(failed), marker="x", color="#b91c1c", s=40, zorder=6, clip_on=False,
                   label="run failed")
    stride = max(1, -(-len(runs) // MAX_TICKS))
    ax.set_xticks(xs[::stride])
    ax.set_xticklabels([_when(r["started"]) for r in runs[::stride]], rotation=30, ha="right", fontsize=7)
    ax.set_xlim(-0.5, len(runs) - 0.5)
    C._duration_axis(ax.yaxis, (vmax or 1.0) * 1.1)
    ax.set_ylim(0, (vmax or 1.0) * 1.12)
    ax.set_ylabel("latency (geometric mean)")  # the operations' (alt, note): a longer label meets the dates at 2.5 in
    C._style(ax)
    C._legend_above(ax, len(series["steps"]) + (1 if failed else 0))
    title = "%s · %s · %s%s" % (series["cluster"], series["benchmark"], series["variant"],
                                "" if series["size"] is None else " · %s %s" % (series["size"], series["size_parameter"]))
    if series["regressions"]:
        title += " · %d regression%s in force" % (series["regressions"], "" if series["regressions"] == 1 else "s")
    return {"id": "chart-" + series["id"], "title": title, "png": C._png(fig),
            "alt": "Lines: each step's geometric mean operation latency per run, oldest left; red rings mark the "
                   "runs where regressions start, red crosses failed runs"}


def all_charts(history: dict[str, Any]) -> dict[str, Any]:
    """The trend charts of the series with two runs or more (one run is a dot: its table says it), series with
    regressions first, at most MAX_CHARTS; {"charts", "left_out"}."""
    if not HAS_MATPLOTLIB:
        return {"charts": [], "left_out": 0}
    trends = [s for s in history["series"] if len(s["runs"]) >= 2]
    chosen = sorted(trends, key=lambda s: s["regressions"] == 0)[:MAX_CHARTS]
    return {"charts": [trend(s) for s in chosen], "left_out": len(trends) - len(chosen)}
