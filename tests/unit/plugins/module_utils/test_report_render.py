"""render.py / tables.py: the seed table layout, metric tables, HTML structure."""
from __future__ import annotations

import copy
import re

from ansible_collections.storageperf.k8s.plugins.module_utils.report import render
from tests.support import report_samples as sample
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize

# The seed's ONTAP NAS, 100 volumes table (seeds/002), as rendered cells.
SEED_ROWS = [
    "| Create Volume | 6m 57s · 0.24 vol/s | 41s · 2.44 vol/s | 10.2× |",
    "| Publish (Attach) | 2m 20s · 0.71 vol/s | 21s · 4.76 vol/s | 6.7× |",
    "| Unpublish (Detach) | 2m 20s · 0.71 vol/s | 26s · 3.85 vol/s | 5.4× |",
    "| Create Snapshot | 3m 03s · 0.55 vol/s | 16s · 6.25 vol/s | 11.4× |",
    "| Clone from Snapshot | 7m 40s · 0.22 vol/s | 42s · 2.38 vol/s | 11.0× |",
    "| Delete Clone | 2m 07s · 0.79 vol/s | 32s · 3.12 vol/s | 4.0× |",
    "| Delete Volume | 2m 04s · 0.81 vol/s | 26s · 3.85 vol/s | 4.8× |",
    "| **Sum of step times** | **28m 35s** | **3m 40s** | **~7.8× overall** |",
]


def test_markdown_reproduces_the_seed_table():
    md = render.to_markdown(sample.csi_lifecycle())
    for row in SEED_ROWS:
        assert row in md
    assert "| Operation | concurrency off | concurrency on | concurrency on vs concurrency off (throughput) |" in md


def test_failed_step_shows_status_and_sum_counts_common_steps_only():
    md = render.to_markdown(sample.csi_lifecycle(failure=True))
    assert "| Delete Clone | 2m 07s · 0.79 vol/s | timeout (1 error, 3 unfinished) | — |" in md
    assert "(7 of 8 steps)" in md
    assert "### Problems" in md and "clone-042: VolumeDeleteFailed: busy" in md


def test_three_variants_have_no_ratio_column_but_ratios_in_cells():
    doc = sample.csi_lifecycle(with_objects=False)
    third = copy.deepcopy(doc["variants"][1])
    third["name"] = "concurrency on, tuned"
    doc["variants"].append(third)
    md = render.to_markdown(doc)
    header = [l for l in md.splitlines() if l.startswith("| Operation |")][0]
    assert header == "| Operation | concurrency off | concurrency on | concurrency on, tuned |"
    assert "| Create Volume | 6m 57s · 0.24 vol/s | 41s · 2.44 vol/s (10.2×) | 41s · 2.44 vol/s (10.2×) |" in md


def test_metric_table_for_fio_and_sysbench():
    md = render.to_markdown(sample.fio_classes())
    # latency p99 names its unit in its header, as every duration column does ("latency p99 (ms)" over "1.74 ms")
    assert "| Step | Variant | IOPS | throughput | transactions/s | latency p99 (ms) | vs csi-pmem-lvm |" in md
    assert re.search(r"\| randwrite 4k psync x50 \| csi-pmem-lvm \| 9\d\.\dk \| 381 MB/s \| — \| 1\.7\d ms \| baseline \|", md)
    assert "| | alicloud-disk-ssd | — | — | 49.8k | — | 0.4× transactions/s |" in md.replace("|  |", "| |")


def test_metric_table_turns_past_four_figures():
    # seed 001's fio jobs as bench_fio records them: eight figures a step, so a row per metric, the variants side by
    # side, each metric's own ratio (lower latency is better) and its unit once, in the row's label
    md = render.to_markdown(sample.fio_jobs())
    table = md[md.index("### Measured metrics"):md.index("### Run")]
    assert "| Step | Metric | alicloud-disk-topology | csi-pmem-lvm | csi-pmem-lvm vs alicloud-disk-topology |" in table
    assert "| randwrite 4k psync ×50 | IOPS | 37.3k | 92.0k | 2.5× |" in table
    assert "| | clat mean (µs) | 24.8 µs | 10.5 µs | 2.3× |" in table.replace("|  |", "| |")
    assert "| | latency p99 (µs) | 59.4 µs | 25.3 µs | 2.3× |" in table.replace("|  |", "| |")
    assert "| | write throughput | 50.5 MB/s | 126 MB/s | 2.5× |" in table.replace("|  |", "| |")
    # the HTML page has the same rows, each metric's label a row header (its unit checked against its cells)
    html = render.to_html(sample.fio_jobs(), charts=False)
    assert '<th scope="row" class="rowhead">clat mean (µs)</th><td class="">24.8 µs</td>' in html
    # the summary's table (console, set_stats) is the same table
    assert "| randwrite 4k psync ×50 | IOPS | 37.3k | 92.0k | 2.5× |" in summarize(sample.fio_jobs())["table"]


def test_turned_metric_table_with_three_variants_and_a_failed_step():
    doc = sample.fio_jobs()
    third = copy.deepcopy(doc["variants"][1])
    third["name"] = "csi-pmem-direct"
    for st in third["runs"][0]["steps"]:
        if st["name"] == "rand_70read_4k":
            st.update(status="failed", reason="fio reported error 5 (errno) in job rand_70read_4k")
    third.pop("summary", None)
    doc["variants"].append(third)
    md = render.to_markdown(D.finalize(doc)).replace("|  |", "| |")
    assert "| Step | Metric | alicloud-disk-topology | csi-pmem-lvm | csi-pmem-direct |" in md
    # each cell its ratio to the first variant; the failed step says so once, then dashes
    assert "| randwrite 4k psync ×50 | IOPS | 37.3k | 92.0k (2.5×) | 92.0k (2.5×) |" in md
    assert re.search(r"\| randrw 4k psync ×50 \| IOPS \| 41\.0k \| 101\.2k \(2\.5×\) \| failed[^|]*\|", md)
    assert "| | read IOPS | 28.7k | 70.8k (2.5×) | — |" in md


def test_sysbench_metric_table_keeps_a_row_per_run():
    # four figures (tps, qps, latency avg, p99) fit A4 as the seed's own table does: Step | Variant | figures
    md = render.to_markdown(sample.sysbench_classes())
    assert ("| Step | Variant | transactions/s | queries/s | latency avg (ms) | latency p99 (ms) | "
            "vs alicloud-disk-topology |") in md
    assert "| | csi-pmem-lvm | 122.2k | 122.2k | 1.20 ms | 3.72 ms | 2.5× transactions/s |" in md.replace("|  |", "| |")


def test_parameter_steps_render_and_chart():
    doc = sample.gluster_handshake()
    html = render.to_html(doc)
    assert 'id="chart-param-volumes-wall_s"' in html
    assert "chart-param-volumes-handshake_s" not in html  # same numbers as wall_s: no duplicate chart
    assert "14.1× handshake" in render.to_markdown(doc)


def test_html_is_self_contained_with_charts():
    html = render.to_html(sample.csi_lifecycle())
    assert html.startswith("<!DOCTYPE html>")
    assert 'id="chart-steps"' in html and 'id="chart-latency"' in html
    assert not re.search(r'(src|href)="(https?:|//)', html)  # nothing fetched from the network
    assert html.count("data:image/png;base64,") == 2


def test_html_escapes_document_text():
    doc = sample.csi_lifecycle(with_objects=False)
    doc["title"] = "<script>alert(1)</script>"
    assert "<script>" not in render.to_html(doc, charts=False)


def test_render_of_a_document_without_summaries_leaves_it_alone():
    doc = sample.csi_lifecycle(with_objects=False)
    for v in doc["variants"]:
        del v["summary"]
    snapshot = copy.deepcopy(doc)
    md = render.to_markdown(doc)
    assert "6m 57s · 0.24 vol/s" in md
    assert doc == snapshot


def test_write_reports_is_idempotent_and_check_mode_writes_nothing(tmp_path):
    doc = sample.csi_lifecycle(with_objects=False)
    dry = render.write_reports(doc, str(tmp_path), check_mode=True)
    assert all(w["changed"] for w in dry.values()) and list(tmp_path.iterdir()) == []
    first = render.write_reports(doc, str(tmp_path))
    second = render.write_reports(doc, str(tmp_path))
    assert all(w["changed"] for w in first.values())
    assert not any(w["changed"] for w in second.values())
    assert D.load(first["json"]["path"])["run_id"] == doc["run_id"]


def test_summary_for_set_stats():
    s = summarize(sample.csi_lifecycle())
    assert s["speedup_text"] == "~7.8× overall"
    assert s["variants"][0]["sum_text"] == "28m 35s"
    assert s["step_speedups"]["create_volume"] > 10
    assert "objects" not in repr(s)  # per-object timings stay out of AWX artifacts
