"""report/sweep.py: a scaling sweep's points, its rate table and chart, and the schema of both."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts, render, schema
from ansible_collections.storageperf.k8s.plugins.module_utils.report.tables import sweep_table
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from tests.support import report_samples as sample

# the seed's ONTAP NAS figures (seeds/002) at 100 and 1000 volumes, rates as the report writes them
SEED_ROWS = [
    "| Create Volume | 0.24 vol/s | 0.29 vol/s | 2.44 vol/s | 1.59 vol/s | 1.2× | 0.7× |",
    "| Publish (Attach) | 0.71 vol/s | 0.72 vol/s | 4.76 vol/s | 5.99 vol/s | 1.0× | 1.3× |",
    "| **Whole lifecycle** | **0.49 op/s** | **0.53 op/s** | **3.51 op/s** | **3.15 op/s** | **1.1×** | **0.9×** |",
]


def point(doc, variant, n):
    return S.point(doc["sweep"], variant, n)


def test_finalize_records_every_variant_and_size_with_its_figures():
    doc = sample.csi_sweep()
    sweep = doc["sweep"]
    assert sweep["parameter"] == "volumes" and sweep["values"] == [100, 1000]
    assert sweep["variants"] == ["concurrency off", "concurrency on"]
    assert [(p["variant"], p["value"], p["name"]) for p in sweep["points"]] == [
        ("concurrency off", 100, "concurrency off · 100 vol"), ("concurrency off", 1000, "concurrency off · 1000 vol"),
        ("concurrency on", 100, "concurrency on · 100 vol"), ("concurrency on", 1000, "concurrency on · 1000 vol")]
    create = point(doc, "concurrency on", 1000)["steps"][0]
    assert create == {"name": "create_volume", "label": "Create Volume", "unit": "vol", "status": "ok", "count": 1000,
                      "wall_s": 630.0, "rate": 1000 / 630.0}
    lc = point(doc, "concurrency on", 1000)["lifecycle"]
    assert lc == {"count": 4000, "wall_s": 630.0 + 167 + 156 + 318, "rate": 4000 / 1271.0, "steps": 4, "complete": True}
    assert schema.problems(doc) == []


def test_skipped_steps_are_left_out_of_the_lifecycle_and_a_failed_one_marks_it_incomplete():
    doc = sample.csi_sweep(skipped=("publish", "unpublish"), failed_at=("concurrency on", 1000, "delete_volume"))
    off = point(doc, "concurrency off", 100)
    assert off["status"] == "ok" and off["lifecycle"]["complete"] and off["lifecycle"]["count"] == 200
    broken = point(doc, "concurrency on", 1000)
    assert broken["status"] == "failed"
    assert broken["lifecycle"] == {"count": 1000, "wall_s": 630.0, "rate": 1000 / 630.0, "steps": 1, "complete": False}
    md = render.to_markdown(doc)
    assert "1.59 op/s (1 of 2 steps)" in md
    assert "| Delete Volume | 0.81 vol/s | 0.81 vol/s | 3.85 vol/s | failed | 1.0× | — |" in md


def test_scaling_is_the_rate_at_the_largest_size_over_the_smallest():
    sweep = sample.csi_sweep()["sweep"]
    assert S.series(sweep, "concurrency on", "publish") == [(100, 100 / 21.0), (1000, 1000 / 167.0)]
    assert S.scaling(sweep, "concurrency on", "publish") == pytest.approx((1000 / 167.0) / (100 / 21.0))
    assert S.scaling(sweep, "concurrency off") == pytest.approx((4000 / 7491.0) / (400 / 821.0))


def test_markdown_table_has_a_column_per_variant_and_size_and_the_scaling_ratio():
    md = render.to_markdown(sample.csi_sweep())
    assert "### Rate against volumes" in md
    assert ("| Operation | concurrency off · 100 vol | concurrency off · 1000 vol | concurrency on · 100 vol | "
            "concurrency on · 1000 vol | concurrency off: 1000 vol vs 100 vol | concurrency on: 1000 vol vs 100 vol |") in md
    for row in SEED_ROWS:
        assert row in md


def test_html_has_the_table_and_the_chart():
    html = render.to_html(sample.csi_sweep())
    assert '<table class="left1" id="sweep">' in html
    assert "<td class=\"sum\">Whole lifecycle</td>" in html
    if charts.HAS_MATPLOTLIB:
        assert 'id="chart-sweep"' in html and "Rate against volumes per variant" in html


def test_a_document_without_a_sweep_has_neither():
    doc = sample.csi_lifecycle()
    assert "sweep" not in doc and sweep_table(doc) is None
    assert "Rate against" not in render.to_markdown(doc)
    assert charts.sweep_lines(doc) == []


def test_a_document_written_mid_run_gets_its_table_from_the_variants():
    doc = sample.csi_sweep()
    del doc["sweep"]
    assert sweep_table(doc)["rows"][-1][3]["text"] == "3.51 op/s"


@pytest.mark.parametrize("field,bad", [("value", 0), ("variant", ""), ("parameter", None)])
def test_schema_refuses_a_bad_sweep_point(field, bad):
    doc = sample.csi_sweep()
    doc["variants"][0]["sweep"][field] = bad
    found = schema.problems(doc)
    assert found and all(p.startswith("variants[0].sweep.%s:" % field) for p in found), found


@pytest.mark.skipif(not charts.HAS_MATPLOTLIB, reason="matplotlib not installed")
def test_the_chart_has_the_lifecycle_panel_first_and_one_per_step(monkeypatch):
    drawn = []

    def keep(fig):
        drawn.append(fig)
        return ""

    monkeypatch.setattr(charts, "_png", keep)
    assert len(charts.sweep_lines(sample.csi_sweep())) == 1
    panels = [ax for ax in drawn[0].axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["Whole lifecycle", "Create Volume", "Publish (Attach)",
                                                 "Unpublish (Detach)", "Delete Volume"]
    # 100 to 1000 spans a factor 10: a log axis keeps both sizes readable
    assert panels[0].get_xscale() == "log"
    assert [len(ax.get_lines()) for ax in panels] == [2] * 5
    charts.plt.close(drawn[0])


def test_a_step_skipped_at_every_size_gets_no_row():
    md = render.to_markdown(sample.csi_sweep(skipped=("publish",)))
    table = md.split("### Rate against volumes")[1].split("###")[0]
    assert "Publish" not in table and "| Unpublish (Detach) |" in table


def test_step_ratios_compare_variants_at_the_same_size_never_one_variant_at_two_sizes():
    md = render.to_markdown(sample.csi_sweep())
    # concurrency on against off at 1000 volumes: the seed's 5.5x for Create Volume, ~5.9x overall
    assert ("| Create Volume | 6m 57s · 0.24 vol/s | 57m 31s · 0.29 vol/s | 41s · 2.44 vol/s (10.2×) "
            "| 10m 30s · 1.59 vol/s (5.5×) |") in md
    assert "| **Sum of step times** | **13m 41s** | **2h 04m 51s** | **1m 54s (~7.2×)** | **21m 11s (~5.9×)** |" in md


def test_the_summary_speedup_is_the_first_two_variants_at_the_largest_size():
    from ansible_collections.storageperf.k8s.plugins.module_utils.report.compare import speedups
    from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize

    doc = sample.csi_sweep()
    sp = speedups(doc)
    assert (sp["baseline"], sp["candidate"]) == ("concurrency off · 1000 vol", "concurrency on · 1000 vol")
    assert summarize(doc)["speedup"] == pytest.approx(7491 / 1271.0, abs=1e-3)
    # a document without a sweep keeps its first two variants
    assert speedups(sample.csi_lifecycle())["candidate"] == "concurrency on"
