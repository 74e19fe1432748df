"""changepoint.py: Apache Otava's change points (E-Divisive means, Student's t-test), case by case as Otava 0.8.0's
compute_change_points found them (index of the first point of the new level, p-value)."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import changepoint as CP

# series drawn from N(0, 1) (numpy default_rng(3), rounded to 3 digits) with shifts added: +2 from index 10;
# +3 from 20 and -2.5 from 55; +6 at the last point
S30 = [
    2.041, -2.556, 0.418, -0.568, -0.453, -0.216, -2.02, -0.232, -0.865, 3.323, 2.226, 1.647, 1.719, 1.332, 0.945,
    1.609, 2.482, 1.761, 2.958, 1.8, 2.024, 3.546, 2.545, 1.495, 1.817, 2.541, 3.935, 1.73, 1.756, 3.002,
]
S80 = [
    -0.886, -0.292, 0.883, 0.58, 0.092, 0.67, -2.828, 1.021, -0.96, -1.669, 0.276, 0.701, -0.445, -1.076, 0.026,
    -0.053, 1.406, 0.747, 0.194, 1.112, 2.794, 2.074, 3.584, 3.583, 2.785, 2.217, 3.229, 0.506, 3.69, 3.491, 1.361,
    3.061, 2.036, 3.757, 0.966, 2.086, 3.71, 4.156, 0.842, 2.502, 3.328, 2.391, 4.591, 1.809, 3.355, 1.952, 4.406,
    2.978, 2.628, 1.282, 4.682, 3.753, 3.754, 4.138, 3.349, -0.139, -0.3, -0.3, 1.87, -0.96, -0.096, 0.179, 0.725,
    1.075, -0.749, -1.23, 0.496, 1.714, 1.257, 0.716, 0.183, 0.793, 0.257, 1.317, -0.294, 0.634, 0.389, 1.043,
    0.725, 3.05,
]
S12 = [
    1.499, 1.497, -2.04, -0.34, -0.609, 0.533, -2.279, 1.174, 1.067, -1.302, -0.979, 5.199,
]


# (series, max_pvalue) -> what Otava found
OTAVA = [
    (S30, 0.001, [(9, 6.54619e-08)]),
    (S30, 0.01, [(9, 6.54619e-08)]),
    (S80, 0.001, [(20, 1.76929e-13), (55, 1.19509e-13)]),
    (S80, 0.01, [(20, 5.31323e-12), (55, 1.19509e-13), (79, 0.00296981)]),
    (S12, 0.001, []),
    (S12, 0.01, [(11, 0.00318517)]),
]


@pytest.mark.parametrize("series,max_pvalue,expected", OTAVA)
def test_the_change_points_are_otavas(series, max_pvalue, expected):
    found = CP.change_points(series, max_pvalue)
    assert [p.index for p in found] == [i for i, _ in expected]
    assert [p.pvalue for p in found] == pytest.approx([p for _, p in expected], rel=1e-3)


def test_a_change_point_carries_the_pieces_it_separates():
    (point,) = CP.change_points(S30, 0.001)
    assert (point.n_before, point.n_after) == (9, 21)
    assert point.mean_before == pytest.approx(sum(S30[:9]) / 9) and point.mean_after == pytest.approx(sum(S30[9:]) / 21)


def test_constant_and_short_series_have_no_change_point():
    assert CP.change_points([1.0] * 20) == [] and CP.change_points([1.0]) == [] and CP.change_points([]) == []
    assert CP.change_points([1.0, float("nan"), 1.0]) == []
    # two constant levels: the t-test of pieces without spread is decided by their means, not scipy's nan
    assert [p.index for p in CP.change_points([1.0] * 5 + [2.0] * 5)] == [5]
