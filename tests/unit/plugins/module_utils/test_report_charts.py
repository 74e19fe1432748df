"""Charts drawn as a reader needs them: legends clear of bars and labels, CDF x axis titled."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts
from tests.support import report_samples as sample

pytestmark = pytest.mark.skipif(not charts.HAS_MATPLOTLIB, reason="matplotlib not installed")


@pytest.fixture
def figures(monkeypatch):
    """Every figure a chart function saves, laid out (drawn) but not encoded."""
    drawn = []

    def keep(fig):
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
