"""stats.py: percentiles, summaries, spreads and the seed's human formatting."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats

samples = st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=200)


def test_percentile_linear_interpolation_known_values():
    data = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert stats.percentile(data, 50) == pytest.approx(5.5)
    assert stats.percentile(data, 90) == pytest.approx(9.1)
    assert stats.percentile(data, 0) == 1
    assert stats.percentile(data, 100) == 10


def test_percentile_ignores_missing_and_infinite_samples():
    assert stats.percentile([None, float("nan"), 3.0, float("inf")], 99) == 3.0
    assert stats.percentile([], 50) is None


def test_percentile_rejects_p_out_of_range():
    with pytest.raises(ValueError, match="0..100"):
        stats.percentile([1, 2], 101)


@given(samples, st.floats(0, 100), st.floats(0, 100))
def test_percentiles_never_decrease_with_p(values, p1, p2):
    lo, hi = sorted((p1, p2))
    assert stats.percentile(values, lo) <= stats.percentile(values, hi)


@given(samples)
def test_summary_is_ordered_and_within_bounds(values):
    s = stats.summary(values)
    assert s["min"] == min(values) and s["max"] == max(values)
    assert s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"]
    assert s["min"] <= s["mean"] <= s["max"]


@given(samples)
def test_spread_median_between_quartiles(values):
    s = stats.spread(values)
    assert s["n"] == len(values)
    assert s["min"] <= s["q1"] <= s["median"] <= s["q3"] <= s["max"]


# Every duration printed in the seed's Trident tables (seeds/002), as seconds -> text.
SEED_DURATIONS = [
    (417, "6m 57s"), (41, "41s"), (140, "2m 20s"), (21, "21s"), (183, "3m 03s"), (460, "7m 40s"),
    (127, "2m 07s"), (124, "2m 04s"), (1715, "28m 35s"), (220, "3m 40s"), (89, "1m 29s"),
    (125, "2m 05s"), (22, "22s"), (3451, "57m 31s"), (630, "10m 30s"), (6060, "1h 41m"),
    (18052, "5h 00m 52s"), (4287, "1h 11m 27s"), (9433, "2h 37m 13s"), (2169, "36m 09s"),
    (11775, "3h 16m 15s"), (6626, "1h 50m 26s"), (1244, "20m 44s"),
]


@pytest.mark.parametrize("seconds,text", SEED_DURATIONS)
def test_duration_matches_seed(seconds, text):
    assert stats.format_duration(seconds) == text


@pytest.mark.parametrize("seconds,text", [
    (59.6, "1m 00s"), (3599.6, "1h 00m"), (4.24, "4.2s"), (0.42, "420ms"), (0.0042, "4.2ms"),
    (0.000085, "85µs"), (None, "—"), (float("nan"), "—"), (-5, "-5.0s"),
])
def test_duration_edges(seconds, text):
    assert stats.format_duration(seconds) == text


def test_rate_ratio_and_pct_formatting_like_the_seed():
    assert stats.format_rate(100 / 417, "vol") == "0.24 vol/s"
    assert stats.format_rate(100 / 41, "vol") == "2.44 vol/s"
    assert stats.format_ratio(417 / 41) == "10.2×"
    assert stats.format_ratio(1715 / 220, approx=True) == "~7.8×"
    assert stats.format_ratio(None) == "—"
    assert stats.format_pct(-0.01) == "+0.0%"
    assert stats.format_pct(12.34) == "+12.3%"


def test_ratio_and_speedup_handle_zero_and_missing():
    assert stats.speedup(417, 41) == pytest.approx(10.17, abs=0.01)
    assert stats.speedup(417, 0) is None
    assert stats.ratio(None, 3) is None
    assert math.isclose(stats.change_pct(100, 125), 25.0)


def test_number_and_throughput_formatting_like_seed_001():
    assert stats.format_number(92000) == "92.0k"
    assert stats.format_bytes_rate(381e6) == "381 MB/s"
    assert stats.format_bytes_rate(1.5e9) == "1.5 GB/s"
