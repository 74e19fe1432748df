# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Change points in a series of runs: E-Divisive means with Student's t-test, as Apache Otava (ex Hunter) does.

    points = change_points(values, max_pvalue=0.01)     # [ChangePoint(index, pvalue, mean_before, mean_after, ...)]

The algorithm is Otava's `compute_change_points` (Fleming et al., "Hunter: Using Change Point Detection to Hunt for
Performance Regressions", ICPE 2023), itself Matteson and James's E-Divisive means (2014) with the permutation test
replaced by a two-sided Student's t-test so that it is deterministic:

- split: slide a window (window_len runs, half a window at a time) over the series; in each window split the interval
  whose best split maximizes the E-statistic Q-hat, as long as the t-test between the two sides holds at a relaxed
  level (10 x max_pvalue below 0.05), giving "weak" change points;
- merge: drop the weak point with the largest p-value while any exceeds max_pvalue, recomputing its neighbours.

Why a port and not the package (requirements.txt says it too): apache-otava 0.8.0 pins numpy==2.2.0 on Python <3.14
and brings BigQuery, Postgres and Slack clients; signal-processing-algorithms 2.1.6 needs numpy<2, setuptools<71,
gevent and Python 3.11 exactly. Either would change the numpy this collection's venv and its execution environments
share with scipy and matplotlib. What is kept of Otava: the Q-hat, the t-test on its pieces (population standard
deviations, pooled), the split and merge steps and their defaults, down to which points merge recomputes. On 6,000
random series (3 to 120 runs, up to 3 shifts, max_pvalue 0.001, 0.01 and 0.05) it found the same change points as
apache-otava 0.8.0's compute_change_points with p-values equal to the last digit (docs/history.md);
tests/unit/plugins/module_utils/test_report_changepoint.py holds cases computed with Otava.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

# Otava's defaults: a window of 50 runs; first-pass significance relaxed tenfold
WINDOW_LEN = 50
RELAX = 10


@dataclass
class ChangePoint:
    """index: the first run of the new piece. The means and deviations are of the pieces it separates."""
    index: int
    qhat: float
    pvalue: float = 1.0
    mean_before: float = 0.0
    mean_after: float = 0.0
    std_before: float = 0.0
    std_after: float = 0.0
    n_before: int = 0
    n_after: int = 0


def _np() -> Any:
    import numpy  # scipy's own dependency: imported where a series is judged, not when history.py is imported

    return numpy


def ttest(left: Sequence[float], right: Sequence[float]) -> tuple[float, float, float, float, float]:
    """(pvalue, mean_l, mean_r, std_l, std_r): Otava's TTestSignificanceTester.compare, two-sided, pooled variance,
    population deviations; a side of one run has deviation 0, two runs in all give p = 1."""
    np = _np()
    mean_l, mean_r = float(np.mean(left)), float(np.mean(right))
    std_l = float(np.std(left)) if len(left) >= 2 else 0.0
    std_r = float(np.std(right)) if len(right) >= 2 else 0.0
    if len(left) + len(right) <= 2:
        return 1.0, mean_l, mean_r, std_l, std_r
    if std_l == 0.0 and std_r == 0.0:  # scipy gives nan: identical pieces do not differ, distinct constant ones do
        return (1.0 if mean_l == mean_r else 0.0), mean_l, mean_r, std_l, std_r
    # scipy.stats.ttest_ind_from_stats(equal_var=True), written out: a history judges thousands of pieces, and the
    # calibration hundreds of thousands, where its argument checks cost more than the arithmetic
    from scipy.special import stdtr

    n_l, n_r = len(left), len(right)
    df = n_l + n_r - 2
    pooled = ((n_l - 1) * std_l ** 2 + (n_r - 1) * std_r ** 2) / df
    t = (mean_l - mean_r) / math.sqrt(pooled * (1.0 / n_l + 1.0 / n_r))
    return float(2 * stdtr(df, -abs(t))), mean_l, mean_r, std_l, std_r


def _qhat(x: Any) -> Any:
    """Q[i, j] = Q-hat of x[:i + 1] against x[i + 1:j + 2] (the split before index i + 1, the right piece ending before
    j + 2); 0 below the diagonal, as in Otava's matrix, so that its argmax picks the same split."""
    np = _np()
    n = len(x)
    dist = np.abs(x[:, None] - x[None, :])
    cum = np.zeros((n + 1, n + 1))
    cum[1:, 1:] = dist.cumsum(0).cumsum(1)  # cum[a, b] = sum of dist[:a, :b]
    tau = np.arange(1, n)[:, None]  # the right piece starts here
    kappa = np.arange(2, n + 1)[None, :]  # and ends before here
    left, right = tau, kappa - tau
    cross = cum[tau, kappa] - cum[tau, tau]
    within_l = cum[tau, tau] / 2.0
    within_r = (cum[kappa, kappa] - 2 * cum[tau, kappa] + cum[tau, tau]) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (2.0 / (left + right) * cross
             - np.where(left > 1, 2.0 * right / (left + right) / (left - 1), 0.0) * within_l
             - np.where(right > 1, 2.0 * left / (left + right) / (right - 1), 0.0) * within_r)
    return np.where(right >= 1, q, 0.0)


def _candidate(x: Any, start: int, stop: int) -> tuple[int, float]:
    np = _np()
    q = _qhat(x[start:stop])
    i, _ = np.unravel_index(np.argmax(q), q.shape)
    return int(i) + 1 + start, float(q.max())


def _intervals(points: list[ChangePoint], n: int) -> list[tuple[int, int]]:
    bounds = [0] + [p.index for p in points] + [n]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if a != b]


def _tested(x: Any, index: int, qhat: float, intervals: list[tuple[int, int]]) -> ChangePoint:
    """The candidate's t-test: inside an interval it splits it (split step); at a boundary it joins the two intervals
    on either side (merge step)."""
    for k, (a, b) in enumerate(intervals):
        if b == index:
            lo, hi = a, intervals[k + 1][1]
            break
        if a < index < b:
            lo, hi = a, b
            break
    else:
        raise ValueError("change point %d is in no interval of %s" % (index, intervals))
    p, ml, mr, sl, sr = ttest(x[lo:index], x[index:hi])
    return ChangePoint(index, qhat, p, ml, mr, sl, sr, index - lo, hi - index)


def _divide(x: Any, max_pvalue: float) -> list[ChangePoint]:
    """E-Divisive on one window: split the best interval while the split is significant (Otava's ChangePointDetector)."""
    points: list[ChangePoint] = []
    while True:
        intervals = _intervals(points, len(x))
        candidates = [_candidate(x, a, b) for a, b in intervals if b - a > 1]
        if not candidates:
            return points
        index, qhat = max(candidates, key=lambda c: c[1])
        point = _tested(x, index, qhat, intervals)
        if point.pvalue > max_pvalue:
            return points
        points = sorted(points + [point], key=lambda p: p.index)


def _split(x: Any, window_len: int, max_pvalue: float) -> list[ChangePoint]:
    start, step, found = 0, window_len // 2, {}  # type: ignore[var-annotated]
    while start < len(x):
        end = min(start + window_len, len(x))
        new = _divide(x[start:end], max_pvalue)
        for p in new:
            found.setdefault(p.index + start, p.qhat)
        start = max(new[-1].index + start if new else 0, start + step)
    points = [ChangePoint(i, q) for i, q in sorted(found.items())]
    intervals = _intervals(points, len(x))
    return [_tested(x, p.index, p.qhat, intervals) for p in points]


def _merge(x: Any, points: list[ChangePoint], max_pvalue: float) -> list[ChangePoint]:
    while points:
        weakest = max(range(len(points)), key=lambda k: points[k].pvalue)
        if points[weakest].pvalue < max_pvalue:
            return points
        del points[weakest]
        intervals = _intervals(points, len(x))
        # Otava recomputes the point that took the dropped one's place and the one after it (not the one before,
        # whose right piece grew too): kept, so that this port finds what Otava finds
        for k in (weakest, weakest + 1):
            if 0 <= k < len(points):
                points[k] = _tested(x, points[k].index, points[k].qhat, intervals)
    return points


def change_points(values: Sequence[float], max_pvalue: float = 0.001, window_len: int = WINDOW_LEN) -> list[ChangePoint]:
    """The change points of `values` (oldest first) at significance max_pvalue, sorted by index."""
    np = _np()
    x = np.asarray(values, dtype=float)
    if len(x) < 2 or not all(math.isfinite(v) for v in x):
        return []
    first_pass = max_pvalue * RELAX if max_pvalue < 0.05 else (max_pvalue * 2 if max_pvalue < 0.5 else max_pvalue)
    return _merge(x, _split(x, window_len, first_pass), max_pvalue)
