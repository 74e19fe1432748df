"""metric_families.py (document -> families) and metrics_export.py (metrics.prom text, URL check), on a known document."""
from __future__ import annotations

import re

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import metric_families as MF
from tests.support import report_samples as sample

ME = pytest.importorskip("ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics_export")
parser = pytest.importorskip("prometheus_client.parser")


def known_document():
    """Two variants, two repetitions: create_volume 10 s / 12 s off (median 11), 2 s / 4 s on (median 3)."""
    doc = D.new_result("csi_lifecycle", run_id="csi_lifecycle-20260620T090000Z-abcdef", cluster={"nodes": 2})
    for name, walls in (("concurrency off", (10.0, 12.0)), ("concurrency on", (2.0, 4.0))):
        variant = D.add_variant(doc, name)
        for wall in walls:
            run = D.add_run(variant)
            D.add_step(run, "create_volume", count=4, wall_s=wall, unit="vol",
                       latency={"min": 1.0, "p50": 2.0, "p90": 3.0, "p99": 3.5, "max": 4.0, "mean": 2.5})
            D.add_step(run, "delete_volume", count=4, wall_s=wall / 2, unit="vol")
            D.finish_run(run)
    D.finalize(doc)
    return doc


def by_name(families):
    return {f["name"]: f for f in families}


def values(family, **match):
    return [(labels, value) for labels, value in family["samples"]
            if all(labels[k] == v for k, v in match.items())]


def test_step_duration_is_the_median_wall_time_per_variant_and_step():
    fams = by_name(MF.families(known_document(), "twin-1"))
    duration = fams["storageperf_step_duration_seconds"]
    assert duration["type"] == "gauge"
    got = {(lb["variant"], lb["step"]): v for lb, v in duration["samples"]}
    # label values are identifiers: the variant "concurrency on" is concurrency_on
    assert got == {("concurrency_off", "create_volume"): 11.0, ("concurrency_off", "delete_volume"): 5.5,
                   ("concurrency_on", "create_volume"): 3.0, ("concurrency_on", "delete_volume"): 1.5}
    [(labels, _)] = values(duration, variant="concurrency_on", step="create_volume")
    # no run id on the figures: a run's series continue the former run's
    assert labels == {"cluster": "twin-1", "benchmark": "csi_lifecycle", "variant": "concurrency_on", "step": "create_volume"}


def test_speedup_per_step_and_overall_against_the_first_variant():
    speedup = by_name(MF.families(known_document(), "twin-1"))["storageperf_speedup_ratio"]
    got = {lb["step"]: v for lb, v in speedup["samples"]}
    # per step the throughput ratio of the median rates (the report's ratio column), overall the ratio of the sums
    rate_off, rate_on = (4 / 10 + 4 / 12) / 2, (4 / 2 + 4 / 4) / 2
    assert got == pytest.approx({"create_volume": rate_on / rate_off, "delete_volume": rate_on / rate_off,
                                 "overall": 16.5 / 4.5})
    assert {(lb["baseline"], lb["variant"]) for lb, _ in speedup["samples"]} == {("concurrency_off", "concurrency_on")}


def test_each_latency_statistic_is_a_family_of_its_own_and_a_single_variant_has_no_speedup():
    doc = known_document()
    doc["variants"] = doc["variants"][:1]
    fams = by_name(MF.families(doc, "twin-1"))
    assert fams["storageperf_speedup_ratio"]["samples"] == []
    lat = {stat: [v for _, v in values(fams["storageperf_step_latency_%s_seconds" % stat], step="create_volume")]
           for stat in ("min", "p50", "p90", "p99", "max", "mean")}
    assert lat == {"min": [1.0], "p50": [2.0], "p90": [3.0], "p99": [3.5], "max": [4.0], "mean": [2.5]}
    assert fams["storageperf_run_ok"]["samples"] == [({"cluster": "twin-1", "benchmark": "csi_lifecycle"}, 1.0)]


def test_the_run_id_status_and_versions_are_one_info_series_of_value_1():
    doc = known_document()
    doc["cluster"]["version"] = "v1.34.9"
    doc["components"] = {"trident": "26.06.0", "snapshot-controller": "v8.2.0", "3PAR OS": "3.3.1 MU5"}
    doc["status"] = "failed"
    fams = by_name(MF.families(doc, "twin 1"))
    assert fams["storageperf_run_info"]["samples"] == [
        ({"cluster": "twin_1", "benchmark": "csi_lifecycle", "run_id": doc["run_id"], "status": "failed",
          "kubernetes_version": "v1.34.9", "trident_version": "26.06.0", "snapshot_controller_version": "v8.2.0",
          "component_3par_os_version": "3.3.1_MU5"}, 1.0)]
    assert fams["storageperf_run_ok"]["samples"] == [({"cluster": "twin_1", "benchmark": "csi_lifecycle"}, 0.0)]
    [(_, finished)] = fams["storageperf_run_finished_timestamp_seconds"]["samples"]
    assert finished == MF._epoch(doc["finished"]) and finished > 1.7e9
    assert MF.grouping_key(doc, "twin 1") == {"cluster": "twin_1", "benchmark": "csi_lifecycle"}


@pytest.mark.parametrize("key, name, factor", [
    ("iops", "storageperf_measured_io_operations_per_second", 1.0),
    ("bw_bytes", "storageperf_measured_throughput_bytes_per_second", 1.0),
    ("write_bps", "storageperf_measured_write_bytes_per_second", 1.0),
    ("tps", "storageperf_measured_transactions_per_second", 1.0),
    ("events_per_s", "storageperf_measured_events_per_second", 1.0),
    ("handshake_s", "storageperf_measured_handshake_seconds", 1.0),
    ("clat_mean_ns", "storageperf_measured_clat_mean_seconds", 1e-9),
    ("latency_avg_below_s", "storageperf_measured_latency_avg_upper_bound_seconds", 1.0),
    ("volumes", "storageperf_measured_volumes", 1.0),
    ("Create CLI calls", "storageperf_measured_create_cli_calls", 1.0),
])
def test_a_measured_figure_gets_a_family_named_by_its_unit(key, name, factor):
    assert MF.measured_family(key) == (name, factor)


def test_every_family_name_and_label_value_follows_the_naming_guide():
    docs = (known_document(), sample.fio_jobs(), sample.fio_classes(), sample.sysbench_classes(), sample.csi_sweep(),
            sample.gluster_handshake(), sample.attach_stress())
    for doc in docs:
        for fam in MF.families(doc, "twin-1"):
            assert re.fullmatch(r"storageperf_[a-z0-9_]+", fam["name"]), fam["name"]
            assert not fam["name"].endswith("_total")  # gauges, not counters
            for labels, _ in fam["samples"]:
                assert set(labels) == set(fam["labels"]), fam["name"]
                assert all(re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", k) and not k.startswith("__") for k in labels)
                assert all(re.fullmatch(r"[A-Za-z0-9_.:-]*", v) for v in labels.values()), labels
    fio = by_name(MF.families(sample.fio_jobs(), "c"))
    [clat] = [v for lb, v in fio["storageperf_measured_clat_mean_seconds"]["samples"]][:1]
    assert 0 < clat < 1  # nanoseconds in the document, seconds in the metric


def test_every_benchmark_kind_gives_families_and_seed_reference_variants_are_left_out():
    for doc in (sample.attach_stress(), sample.fio_classes(), sample.csi_sweep()):
        fams = by_name(MF.families(doc, "c"))
        assert fams["storageperf_step_duration_seconds"]["samples"] or any(n.startswith(MF.MEASURED_PREFIX) for n in fams)
    gluster = sample.gluster_handshake()
    # gluster/report.py adds the seed's figures as a variant with settings.measured false: not a measurement
    seed = D.add_variant(gluster, "seed 003", settings={"source": "seed 003", "measured": False})
    run = D.add_run(seed)
    D.add_step(run, "handshake_2000", count=2000, wall_s=600.0, metrics={"handshake_s": 600.0})
    D.finish_run(run)
    D.finalize(gluster)
    fams = by_name(MF.families(gluster, "pool"))
    variants = {lb.get("variant") for f in fams.values() for lb, _ in f["samples"]}
    assert "seed_003" not in variants and len(variants - {None}) >= 1
    assert fams["storageperf_measured_handshake_seconds"]["samples"]


def test_metrics_prom_is_the_text_format_and_parses_back(tmp_path):
    doc = known_document()
    # a quote, a backslash, a line feed: what a label value would escape never reaches one (identifier())
    doc["variants"][0]["name"] = 'concurrency "off" \\ with\nline feed'
    path, changed = ME.write_textfile(str(tmp_path), MF.families(doc, "twin-1"))
    assert changed and path == str(tmp_path / "metrics.prom")
    text = (tmp_path / "metrics.prom").read_text()
    # Prometheus text format 0.0.4 (node-exporter's textfile collector), not OpenMetrics
    assert "# EOF" not in text and "# UNIT" not in text and text.endswith("\n")
    parsed = {f.name: f for f in parser.text_string_to_metric_families(text)}
    dur = parsed["storageperf_step_duration_seconds"]
    assert dur.type == "gauge"
    got = {(s.labels["variant"], s.labels["step"]): s.value for s in dur.samples}
    assert got[("concurrency_on", "create_volume")] == 3.0
    assert got[("concurrency_off_with_line_feed", "create_volume")] == 11.0
    assert {s.labels["cluster"] for s in dur.samples} == {"twin-1"}
    assert all(s.timestamp is None for f in parsed.values() for s in f.samples)
    assert parsed["storageperf_speedup_ratio"].samples
    assert not list(tmp_path.glob(".metrics.prom.*"))  # the temp file was renamed, none left behind
    assert ME.write_textfile(str(tmp_path), MF.families(doc, "twin-1"))[1] is False  # unchanged: not rewritten


@pytest.mark.parametrize("url", ["pushgateway:9091", "ftp://pg:9091", "http://", "http://user:pw@pg:9091",
                                 "http://pg:notaport", "http://pg:9091/?x=1"])
def test_a_bad_pushgateway_url_names_metrics_pushgateway_url(url):
    with pytest.raises(StoragePerfError) as e:
        ME.check_url(url)
    assert "metrics_pushgateway_url" in str(e.value)
    assert "pw" not in str(e.value).replace("pushgateway", "")  # a password in the URL is never repeated


def test_good_urls_and_empty_pass():
    assert ME.check_url("") == ""
    assert ME.check_url(" http://127.0.0.1:9091/ ") == "http://127.0.0.1:9091"
    assert ME.check_url("https://pg.example/prefix") == "https://pg.example/prefix"


def test_a_pushgateway_that_is_down_is_an_error_text_not_an_exception():
    error = ME.push("http://127.0.0.1:9", MF.families(known_document(), "twin-1"), {"cluster": "twin-1"},
                    "storageperf", timeout=2)
    assert error and "refused" in error.lower()
