"""Charts drawn as a reader needs them: legends clear of bars and labels, CDF x axis titled, narrow enough that
paper shows their text at 11 px or more, no two labels on each other."""
from __future__ import annotations

import base64
import itertools

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts, fleet_charts, history_charts
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
from tests.support import report_samples as sample
from tests.unit.plugins.module_utils.test_report_fleet import write_result
from tests.unit.plugins.module_utils.test_report_history import run, write

pytestmark = pytest.mark.skipif(not charts.HAS_MATPLOTLIB, reason="matplotlib not installed")


@pytest.fixture
def figures(monkeypatch):
    """Every figure a chart function saves, laid out (fitted and drawn as _png saves it) but not encoded."""
    drawn = []

    def keep(fig):
        charts.fit(fig)
        fig.canvas.draw()
        drawn.append(fig)
        return ""

    monkeypatch.setattr(charts, "_png", keep)
    yield drawn
    for fig in drawn:
        charts.plt.close(fig)


def _covered(fig):
    """(legend, artist) pairs whose display boxes intersect: bars, value labels, lines' points."""
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends, "chart has no legend"
    hits = []
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            for artist in list(ax.patches) + list(ax.texts):
                if artist.get_visible() and box.overlaps(artist.get_window_extent(renderer)):
                    hits.append((leg, artist))
            for line in ax.get_lines():
                xy = ax.transData.transform(line.get_xydata())
                if any(box.contains(x, y) for x, y in xy):
                    hits.append((leg, line))
    return hits


@pytest.mark.parametrize("doc,fn", [
    (sample.csi_lifecycle(), charts.step_bars),
    (sample.attach_stress(), charts.step_bars),
    (sample.fio_classes(), charts.metric_bars),
    (sample.gluster_handshake(), charts.parameter_lines),
])
def test_legend_covers_no_bar_label_or_point(figures, doc, fn):
    assert fn(doc)
    assert figures
    for fig in figures:
        assert not _covered(fig)


def test_legend_check_catches_a_legend_inside_the_bars(figures):
    charts.step_bars(sample.csi_lifecycle())
    fig = figures[0]
    # a legend inside the axes, over the first step's bars: the check must see it
    fig.axes[0].legend(loc="upper left", bbox_to_anchor=(0.05, 0.98), frameon=False)
    fig.canvas.draw()
    assert _covered(fig)


def test_cdf_charts_title_the_x_axis_with_its_unit(figures):
    assert charts.latency_cdf(sample.csi_lifecycle())
    panels = [ax for ax in figures[0].axes if ax.axison]
    assert len(panels) == 8
    # every panel's batch takes minutes with concurrency off (417 s create ... 124 s delete)
    assert {ax.get_xlabel() for ax in panels} == {"latency per object (min)"}


@pytest.mark.parametrize("vmax,unit", [(0.5, "ms"), (5.0, "s"), (59.0, "s"), (417.0, "min"), (7200.0, "h")])
def test_duration_unit_names_what_the_ticks_read(vmax, unit):
    assert charts.duration_unit(vmax) == unit


# A4's printable width (210 mm less two 12 mm margins, tests/support/chromium.py) inside the figure's 1 px border
PRINT_PX = round((210 - 2 * 12) / 25.4 * 96) - 2


def drawn_texts(fig):
    """The texts the saved image shows: tick labels of visible axes within their view, titles, value labels, legends."""
    hidden = set()
    for ax in fig.axes:
        for axis, i in ((ax.xaxis, 0), (ax.yaxis, 1)):
            lo, hi = sorted(axis.get_view_interval())
            slack = 1e-9 * abs(hi - lo)
            for t in axis.get_ticklabels(which="both"):
                if not (ax.get_visible() and ax.axison and lo - slack <= t.get_position()[i] <= hi + slack):
                    hidden.add(id(t))
    return [t for t in fig.findobj(charts.matplotlib.text.Text) if id(t) not in hidden and t.get_visible()
            and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]


def overlapping(fig):
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn_texts(fig)]
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]


def saved_width(fig):
    return fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * charts.PAD_IN


def fleet_of(tmp_path, clusters):
    entries = [{"cluster": "cluster-%d" % i, "path": write_result(tmp_path, "cluster-%d" % i, 100 * (i + 1))}
               for i in range(clusters)]
    return F.build_fleet(entries + [{"cluster": "shenzhen-dr", "error": "API server unreachable"}],
                         "fleet-20260620T093000Z")


def history_with(tmp_path, days):
    for day in range(1, days + 1):
        write(tmp_path, "prod-a", run(day, {"publish": 1.6} if day == days else None))
    return H.build_history(H.find_results(str(tmp_path)))


def every_chart(tmp_path):
    """Each page's charts: bench (every kind of step), fio, sysbench, parameters, a sweep, fleets, a long history."""
    drawn = []
    for doc in (sample.csi_lifecycle(), sample.attach_stress(), sample.fio_classes(), sample.fio_jobs(),
                sample.sysbench_classes(), sample.gluster_handshake(), sample.csi_sweep()):
        drawn += charts.all_charts(doc)
    for clusters in (3, 8):
        drawn += fleet_charts.sums_bars(fleet_of(tmp_path / ("fleet-%d" % clusters), clusters))
    drawn += history_charts.all_charts(history_with(tmp_path / "history", 24))["charts"]
    assert len(drawn) > 12
    return drawn


def test_every_chart_prints_its_text_at_11px_or_more_and_no_label_on_another(figures, tmp_path):
    # paper shows a chart at PRINT_PX / its width: 9 pt text (13.75 px at 110 dpi) stays at 11 px or more while the
    # saved image is at most 7.97 in wide; the narrowing keeps every label clear of the others
    every_chart(tmp_path)
    for fig in figures:
        width = saved_width(fig)
        assert width <= charts.MAX_WIDTH_IN, (fig.axes[0].get_title(), width)
        assert charts.MIN_TEXT_PX * min(1.0, PRINT_PX / (width * charts.DPI)) >= 11.0
        assert min(t.get_fontsize() for t in drawn_texts(fig)) >= charts.MIN_FONT_PT
        assert overlapping(fig) == [], fig.axes[0].get_title()


def test_every_saved_png_is_at_most_the_width_paper_shows_at_80_percent(tmp_path):
    # _png saves once and fits only a chart too wide or with crowded tick labels: the PNGs themselves are measured
    for chart in every_chart(tmp_path):
        png = base64.b64decode(chart["png"])
        assert int.from_bytes(png[16:20], "big") <= charts.MAX_WIDTH_IN * charts.DPI + 2, chart["title"]


def test_overlap_check_sees_a_label_on_a_tick_label(figures):
    charts.step_bars(sample.csi_lifecycle())
    fig = figures[0]
    ax = fig.axes[0]
    ax.text(0, 0, ax.get_yticklabels()[0].get_text(), transform=ax.get_yticklabels()[0].get_transform(), ha="right")
    fig.canvas.draw()
    assert overlapping(fig)


def test_fit_narrows_a_wide_chart_and_its_legend_to_the_printable_width(figures, tmp_path):
    # 12 in with a legend of four columns above (a history of eight steps): too wide for paper until fit() cuts both
    history_charts.all_charts(history_with(tmp_path, 3))
    fig = figures[0]
    assert saved_width(fig) <= charts.MAX_WIDTH_IN
    fig.set_size_inches(12, 3.4)
    charts.legend(fig.axes[0], 4, loc="lower left", bbox_to_anchor=(0.0, 1.01), frameon=False)
    fig.canvas.draw()
    assert saved_width(fig) > charts.MAX_WIDTH_IN
    assert charts.fit(fig) <= charts.MAX_WIDTH_IN
    assert fig.axes[0].get_legend().columns < 4
