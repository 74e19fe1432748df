# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Charts for the HTML report, drawn by matplotlib's Agg backend into base64 PNG.

Every function returns a list of {"id", "title", "png": base64 text, "alt"} and an empty list
when there is nothing to draw or matplotlib is missing (HAS_MATPLOTLIB tells which), so the
HTML report still renders its tables on a host without matplotlib.
"""
from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING, Any, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import step_names, summaries, sweep_block
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import format_metric, metric_info, metric_keys
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import step_label
from ansible_collections.storageperf.k8s.plugins.module_utils.report.tables import is_operation

if TYPE_CHECKING:  # annotations only: matplotlib is optional
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

try:
    import matplotlib

    matplotlib.use("Agg")  # no display on CI runners or AWX execution environments
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

    HAS_MATPLOTLIB = True
except ImportError:
    plt = None  # type: ignore[assignment]  # matplotlib is optional: every chart function checks HAS_MATPLOTLIB first
    HAS_MATPLOTLIB = False

# colour-blind safe (Okabe-Ito); the first variant is the baseline and gets the grey
PALETTE = ("#8a8f98", "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442")
# ... and, so that a series survives greyscale printing, a hatch (bars) or a line style and marker (lines) per series
HATCHES = ("", "///", "...", "xxx", "\\\\\\", "ooo", "---", "+++")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)), (0, (3, 1, 1, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MAX_CDF_PANELS = 12
CDF_XLABEL = "latency per object (%s)"
DPI = 110
# No chart text below 9 pt: 13.75 px in the PNG, so at least 11 px on the page while the page shows the chart at
# 80% of its size or more (the layout test measures it in Chromium).
MIN_FONT_PT = 9.0
MIN_TEXT_PX = MIN_FONT_PT * DPI / 72.0
# Paper is the narrowest page: A4's printable width (210 mm less two 12 mm margins: 703 CSS px, 701 inside the
# figure's border) shows a W in wide chart at 701 / (W * DPI) of its size, so its 9 pt text at 9 * 701 / (72 * W) px:
# 11 px or more while W <= 7.97 in. Every chart is saved at most MAX_WIDTH_IN wide (858 px, its text 11.2 px on A4
# and larger on Letter), which the 1116 px screen column (1280 and 1920 px windows) shows at full size, 13.75 px.
# A narrower figure rather than a larger font: 11.6 pt text (62 % of it 11 px) would crowd the panels' ticks and show
# at 17.7 px on screen.
MAX_WIDTH_IN = 7.8
PAD_IN = 0.1  # savefig's padding around the tight box, on each side


def series_style(i: int) -> dict[str, Any]:
    """Line style and marker of the i-th series (its colour is PALETTE[i])."""
    return {"linestyle": LINESTYLES[i % len(LINESTYLES)], "marker": MARKERS[i % len(MARKERS)]}


def _min_font(fig: Figure) -> None:
    import matplotlib.text

    for text in fig.findobj(matplotlib.text.Text):
        if text.get_fontsize() < MIN_FONT_PT:  # type: ignore[operator]  # a Text's size in points
            text.set_fontsize(MIN_FONT_PT)


def fit(fig: Figure) -> float:
    """Every text at MIN_FONT_PT or more, and the figure narrowed until its saved image is MAX_WIDTH_IN wide at most.

    Narrowing takes the excess off the figure's width: axes shrink, text keeps its size; a figure laid out by the
    "tight" layout engine is laid out again at each draw. Returns the saved width in inches. Laid out without
    rendering, and again only after a change: an eight-panel CDF takes a third of a second each time.
    """
    _min_font(fig)
    fig.set_dpi(DPI)
    fig.draw_without_rendering()
    while _fewer_legend_columns(fig):  # a legend wider than the image may be does not narrow with the axes
        pass
    width = _narrow(fig)
    if _turn_crowded_ticklabels(fig):
        width = _narrow(fig)
    return width


def _saved_width(fig: Figure) -> float:
    return fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * PAD_IN  # type: ignore[attr-defined]  # Agg canvas


def _narrow(fig: Figure) -> float:
    gain = 1.0  # how much of a cut in the figure's width the saved image loses (the axes' share of the width)
    width = _saved_width(fig)
    for _ in range(8):
        if width <= MAX_WIDTH_IN:
            break
        w, h = fig.get_size_inches()
        cut = (width - MAX_WIDTH_IN) / gain + 0.02
        if gain < 0.1 or cut >= w - 1.0:
            # what overhangs does not narrow with the axes: a legend of several columns above them takes a row more
            if not _fewer_legend_columns(fig):
                break
            gain, width = 1.0, _saved_width(fig)
            continue
        fig.set_size_inches(w - cut, h)
        fig.draw_without_rendering()
        narrower = _saved_width(fig)
        gain, width = (width - narrower) / cut, narrower
    return width


def _turn_crowded_ticklabels(fig: Figure) -> bool:
    """x tick labels that touch their neighbours (many clusters' names) turned by 30 degrees, or upright if need be."""
    turned = False
    for rotation in (30, 90):
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg canvas
        crowded = [ax for ax in fig.axes if ax.get_visible() and ax.axison and _touching(ax, renderer)]
        if not crowded:
            break
        for ax in crowded:
            ax.tick_params(axis="x", labelrotation=rotation)
            for t in ax.get_xticklabels():
                t.set_horizontalalignment("right" if rotation < 90 else "center")
                t.set_rotation_mode("anchor" if rotation < 90 else "default")
        fig.draw_without_rendering()
        turned = True
    return turned


def _touching(ax: Axes, renderer: Any) -> bool:
    lo, hi = sorted(ax.get_xlim())
    boxes = sorted((t.get_window_extent(renderer) for t in ax.get_xticklabels()
                    if t.get_text().strip() and lo <= t.get_position()[0] <= hi), key=lambda b: b.x0)
    return any(a.overlaps(b) for a, b in zip(boxes, boxes[1:]))


def _fewer_legend_columns(fig: Figure) -> bool:
    """One column less for the first legend whose right edge is past MAX_WIDTH_IN from the image's left edge."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg canvas
    left = fig.get_tightbbox(renderer).x0 - PAD_IN
    for made in list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        right = made.get_window_extent(renderer).x1 / fig.dpi  # type: ignore[union-attr]  # legends that exist
        if getattr(made, "columns", 1) > 1 and right - left > MAX_WIDTH_IN - PAD_IN:
            made.fewer_columns()  # type: ignore[union-attr]  # set by legend()
            fig.draw_without_rendering()
            return True
    return False


def _png(fig: Figure) -> str:
    _min_font(fig)
    data = _save(fig)
    # most charts fit as drawn: laid out once, by savefig; one too wide (its PNG's IHDR width) or with crowded tick
    # labels (the layout savefig left) is fitted and saved again
    if int.from_bytes(data[16:20], "big") > MAX_WIDTH_IN * DPI + 2 or \
            any(ax.get_visible() and ax.axison and _touching(ax, fig.canvas.get_renderer()) for ax in fig.axes):  # type: ignore[attr-defined]
        fit(fig)
        data = _save(fig)
    plt.close(fig)
    return base64.b64encode(data).decode("ascii")


def _save(fig: Figure) -> bytes:
    buf = io.BytesIO()
    # no Software/date metadata: the same document renders to the same bytes (idempotent writes)
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", pad_inches=PAD_IN, metadata={"Software": None})
    return buf.getvalue()


def legend(owner: Any, ncol: int, handles: Sequence[Any] | None = None, labels: Sequence[str] | None = None, **kw: Any) -> Any:
    """owner.legend() in ncol columns, which fit() cuts to fewer while the legend is wider than the image may be."""
    if handles is None:
        handles, labels = owner.get_legend_handles_labels()
    made = owner.legend(handles, labels, ncols=max(1, ncol), **kw)
    made.columns = max(1, ncol)  # what _fewer_legend_columns reads (matplotlib keeps no public getter)
    made.fewer_columns = lambda: (made.remove(), legend(owner, ncol - 1, handles, labels, **kw))
    return made


def _legend_above(ax: Axes, entries: int) -> None:
    # Outside the axes, above the plot area: inside it a legend covers bars and their value labels.
    # savefig(bbox_inches="tight") grows the image to keep it.
    legend(ax, min(entries, 4), loc="lower left", bbox_to_anchor=(0.0, 1.01), frameon=False, borderaxespad=0.0)


def _style(ax: Axes) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="both", color="#e5e7eb", linewidth=0.8)
    ax.set_axisbelow(True)


# tick spacings a person reads easily: 1 2 5 10 15 30 s, 1 2 5 10 15 30 min, 1 2 3 6 12 24 h
NICE_SECONDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600,
                900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def nice_step(vmax: float, ticks: int = 5) -> float:
    """The smallest nice spacing that puts at most `ticks` ticks on 0..vmax."""
    for step in NICE_SECONDS:
        if vmax / step <= ticks:
            return step
    return NICE_SECONDS[-1] * max(1, int(vmax / NICE_SECONDS[-1] / ticks) + 1)


def _duration_axis(axis: Any, vmax: float | None = None, ticks: int = 5) -> None:
    if vmax:
        axis.set_major_locator(MultipleLocator(nice_step(vmax, ticks)))
    axis.set_major_formatter(FuncFormatter(
        lambda v, _pos: "0" if abs(v) < 1e-12 else (_tick(v) if v > 0 else "")))


def duration_unit(vmax: float) -> str:
    """The unit a duration axis's ticks mostly read in (stats.format_duration: 500ms, 5.0s, 2m, 1h)."""
    for limit, unit in ((1.0, "ms"), (60.0, "s"), (3600.0, "min")):
        if vmax < limit:
            return unit
    return "h"


def _tick(v: float) -> str:
    # "2m" reads better than "2m 00s" on an axis
    text = stats.format_duration(v)
    return text[:-4] if text.endswith(" 00s") else text


def step_bars(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Median wall time per step, one bar per variant, min-max whiskers across repetitions."""
    if not HAS_MATPLOTLIB:
        return []
    variants = summaries(doc)
    names = [n for n in step_names(doc)
             if any((steps.get(n) or {}).get("wall_s") and is_operation(steps[n]) for _, steps in variants)]
    if not names:
        return []
    nvar = len(variants)
    height = 0.8 / max(nvar, 1)
    fig, ax = plt.subplots(figsize=(MAX_WIDTH_IN, 0.9 + 0.32 * len(names) * max(nvar, 1.5)))
    vmax = 0.0
    for i, (vname, steps) in enumerate(variants):
        ys, widths, lo, hi = [], [], [], []
        for j, n in enumerate(names):
            w = (steps.get(n) or {}).get("wall_s")
            if not w:
                continue
            ys.append(j + (i - (nvar - 1) / 2.0) * height)
            widths.append(w["median"])
            lo.append(w["median"] - w["min"])
            hi.append(w["max"] - w["median"])
        err = [lo, hi] if any(lo) or any(hi) else None
        ax.barh(ys, widths, height=height * 0.92, color=PALETTE[i % len(PALETTE)], label=vname,
                hatch=HATCHES[i % len(HATCHES)], edgecolor="#ffffff",
                xerr=err, error_kw={"ecolor": "#374151", "capsize": 2, "linewidth": 0.8})
        for y, w, h in zip(ys, widths, hi):
            ax.text(w + h, y, "  " + stats.format_duration(w), va="center", fontsize=8, color="#374151")
        vmax = max([vmax] + [w + h for w, h in zip(widths, hi)])
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([step_label(doc, n) for n in names])
    ax.invert_yaxis()
    _duration_axis(ax.xaxis, vmax * 1.12, ticks=6)
    ax.set_xlabel("wall time of the batch (median)")
    ax.margins(x=0.12)
    _style(ax)
    _legend_above(ax, nvar)
    return [{"id": "chart-steps", "title": "Step times per variant", "png": _png(fig),
             "alt": "Horizontal bars: median wall time of each step for each variant"}]


def latency_cdf(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Distribution of per-object latencies: one panel per step, one CDF line per variant."""
    if not HAS_MATPLOTLIB:
        return []
    series: dict[str, list[tuple[int, str, list[float]]]] = {}  # step -> [(variant index, variant name, sorted latencies)]
    for i, v in enumerate(doc.get("variants", [])):
        for n in step_names(doc):
            lats = []
            for r in v.get("runs", []):
                for s in r.get("steps", []):
                    if s["name"] == n:
                        lats += [o.get("latency") for o in s.get("objects") or []]
            lats = sorted(stats._clean(lats))
            if lats:
                series.setdefault(n, []).append((i, v["name"], lats))
    names = [n for n in step_names(doc) if n in series][:MAX_CDF_PANELS]
    if not names:
        return []
    # two panels a row: three made a 10 in chart that paper shows at 62 %, its text at 8.5 px (MAX_WIDTH_IN)
    cols = min(2, len(names))
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 0.8, 2.5 * rows + 0.6), squeeze=False)
    for k, n in enumerate(names):
        ax = axes[k // cols][k % cols]
        for i, vname, lats in series[n]:
            ys = [(j + 1) / float(len(lats)) for j in range(len(lats))]
            ax.step(lats, ys, where="post", color=PALETTE[i % len(PALETTE)], label=vname, linewidth=1.6,
                    linestyle=LINESTYLES[i % len(LINESTYLES)])
        ax.set_title(step_label(doc, n), fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        vmax = max(l[-1] for _, _, l in series[n])
        _duration_axis(ax.xaxis, vmax, ticks=4)
        ax.set_xlabel(CDF_XLABEL % duration_unit(vmax), fontsize=8)
        ax.tick_params(labelsize=8)
        _style(ax)
    for k in range(len(names), rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend(fig, len(labels), handles, labels, loc="upper center", frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.supylabel("fraction of objects done", fontsize=9)
    fig.set_layout_engine("tight", rect=(0, 0, 1, 0.95))
    return [{"id": "chart-latency", "title": "Per-object latency distribution (CDF)", "png": _png(fig),
             "alt": "Cumulative distribution of per-object latency per step and variant"}]


def parameter_lines(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Metric vs parameter (e.g. handshake time vs volume count): steps carrying `parameter`.

    One chart per parameter name; y is the step's wall time and, in further charts, each
    numeric metric the parametrised steps share. Lines are variant x series.
    """
    if not HAS_MATPLOTLIB:
        return []
    points: dict[str, dict[tuple[int, str, str], list[tuple[Any, dict[str, Any]]]]] = {}  # param name -> {(variant idx, variant, series): [(x, summary)]}
    for i, (vname, steps) in enumerate(summaries(doc)):
        for s in steps.values():
            p = s.get("parameter")
            if not p or not s.get("ok_runs"):
                continue
            key = (i, vname, p.get("series") or "")
            points.setdefault(p["name"], {}).setdefault(key, []).append((p["value"], s))
    out = []
    for pname, lines in points.items():
        ys = ["wall_s"] + [k for k in metric_keys(doc)
                           if k != pname and all(k in (s.get("metrics") or {}) for pts in lines.values() for _, s in pts)
                           and not _same_as_wall(k, lines)]
        for y in ys[:4]:
            fig, ax = plt.subplots(figsize=(MAX_WIDTH_IN, 4))
            for (i, vname, series), pts in sorted(lines.items()):
                pts = sorted(pts, key=lambda t: t[0])
                vals = [(s.get("wall_s") if y == "wall_s" else s["metrics"].get(y)) for _, s in pts]
                xy = [(x, v["median"]) for (x, _), v in zip(pts, vals) if v]
                if not xy:
                    continue
                label = vname + (" · " + series if series else "")
                ax.plot([a for a, _ in xy], [b for _, b in xy], color=PALETTE[i % len(PALETTE)],
                        label=label, linewidth=1.8, **series_style(i))
            kind = "duration" if y == "wall_s" else metric_info(y)[1]
            if kind == "duration":
                _duration_axis(ax.yaxis, max([b for ln in ax.get_lines() for b in ln.get_ydata()] or [1]))  # type: ignore[type-var, arg-type, union-attr]
            else:
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p, y=y: format_metric(y, v)))
            ylabel = "wall time" if y == "wall_s" else metric_info(y)[0]
            ax.set_xlabel(pname)
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            _style(ax)
            _legend_above(ax, len(ax.get_lines()))
            out.append({"id": "chart-param-%s-%s" % (pname, y), "title": "%s vs %s" % (ylabel, pname),
                        "png": _png(fig), "alt": "Line chart of %s against %s per variant" % (ylabel, pname)})
    return out


def _same_as_wall(key: str, lines: dict[Any, list[tuple[Any, dict[str, Any]]]]) -> bool:
    """A metric that repeats the wall time (handshake_s of a handshake step) gets no second chart."""
    for pts in lines.values():
        for _, s in pts:
            w, m = s.get("wall_s"), s["metrics"].get(key)
            if not w or not m or abs(w["median"] - m["median"]) > 1e-9 * max(1.0, abs(w["median"])):
                return False
    return True


def metric_bars(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """fio/sysbench style: the primary metrics of metric steps, one bar group per step."""
    if not HAS_MATPLOTLIB:
        return []
    variants = summaries(doc)
    keys = [k for k in metric_keys(doc) if metric_info(k)[2] and metric_info(k)[1] != "duration"][:3]
    names = [n for n in step_names(doc) if any((steps.get(n) or {}).get("metrics") for _, steps in variants)]
    if not keys or not names:
        return []
    # two panels a row: three side by side (a mixed fio job's IOPS, read IOPS, write IOPS) made a 13 in chart that
    # the page shows at 85 %, its text under 11 px; within MAX_WIDTH_IN for paper
    cols = min(len(keys), 2)
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols + 0.5, (0.8 + 0.45 * len(names) * len(variants)) * rows),
                             squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    height = 0.8 / len(variants)
    for a, k in enumerate(keys):
        ax = axes[a // cols][a % cols]
        for i, (vname, steps) in enumerate(variants):
            ys, ws = [], []
            for j, n in enumerate(names):
                m = ((steps.get(n) or {}).get("metrics") or {}).get(k)
                if m:
                    ys.append(j + (i - (len(variants) - 1) / 2.0) * height)
                    ws.append(m["median"])
            ax.barh(ys, ws, height=height * 0.92, color=PALETTE[i % len(PALETTE)], label=vname,
                    hatch=HATCHES[i % len(HATCHES)], edgecolor="#ffffff")
            for y, w in zip(ys, ws):
                ax.text(w, y, " " + format_metric(k, w), va="center", fontsize=8)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels([step_label(doc, n) for n in names] if a % cols == 0 else [""] * len(names))
        ax.invert_yaxis()
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p, k=k: format_metric(k, v)))
        ax.set_title(metric_info(k)[0], fontsize=10)
        ax.margins(x=0.25)
        _style(ax)
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend(fig, len(labels), handles, labels, loc="lower center", frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.set_layout_engine("tight")
    return [{"id": "chart-metrics", "title": "Metrics per variant", "png": _png(fig),
             "alt": "Bars of %s per step and variant" % ", ".join(metric_info(k)[0] for k in keys)}]


def sweep_lines(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rate against N for each variant of a sweep: the whole lifecycle first, then one panel per step.

    A line that stays level or rises as N grows is seed 002's claim (the rate holds at 1000 volumes).
    """
    block = sweep_block(doc)
    if not HAS_MATPLOTLIB or not block:
        return []
    panels: list[tuple[str | None, str, str]] = [(None, S.LIFECYCLE, S.LIFECYCLE_UNIT)]
    for name, label in S.step_order(block)[:MAX_CDF_PANELS - 1]:
        units = [s.get("unit") for p in block["points"] for s in p["steps"] if s["name"] == name and s.get("unit")]
        panels.append((name, label, units[0] if units else "obj"))
    panels = [p for p in panels if any(S.series(block, b, p[0]) for b in block["variants"])]
    if not panels:
        return []
    values = block["values"]
    log_x = len(values) > 1 and values[-1] >= 10 * values[0]
    cols = min(2, len(panels))  # two panels a row, as the CDF's: within MAX_WIDTH_IN for paper
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 0.8, 2.7 * rows + 0.6), squeeze=False)
    for k, (name, label, unit) in enumerate(panels):  # type: ignore[assignment]  # name: None for the lifecycle
        ax = axes[k // cols][k % cols]
        for i, base in enumerate(block["variants"]):
            pts = S.series(block, base, name)
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], color=PALETTE[i % len(PALETTE)],
                        label=base, linewidth=1.8 if name else 2.6, **series_style(i))
        ax.set_title(label, fontsize=10, fontweight="bold" if name is None else "normal")
        if log_x:
            ax.set_xscale("log")
        ax.set_xticks(values)
        ax.set_xticklabels([str(v) for v in values])
        ax.minorticks_off()  # the sizes measured are the only ticks worth reading
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.set_ylabel("%s/s" % unit, fontsize=8)
        ax.tick_params(labelsize=8)
        _style(ax)
    for k in range(len(panels), rows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend(fig, len(labels), handles, labels, loc="upper center", frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.supxlabel(block["parameter"] + (" (log scale)" if log_x else ""), fontsize=9)
    fig.set_layout_engine("tight", rect=(0, 0, 1, 0.94))
    return [{"id": "chart-sweep", "title": "Rate against %s per variant" % block["parameter"], "png": _png(fig),
             "alt": "Lines of the operations per second of the whole lifecycle and of each step against %s, one per "
                    "variant" % block["parameter"]}]


def all_charts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every chart that applies to this document, in report order."""
    out = []
    for fn in (sweep_lines, step_bars, metric_bars, latency_cdf, parameter_lines):
        out.extend(fn(doc))
    return out
