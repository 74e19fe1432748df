# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statistics and human formatting for benchmark results (stdlib only).

Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, the
default of numpy.percentile and Excel PERCENTILE.INC): p0 is the minimum, p100 the maximum,
and the result never decreases as p grows. With one sample every percentile is that sample.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

LATENCY_KEYS = ("min", "p50", "p90", "p99", "max", "mean")
SPREAD_KEYS = ("n", "median", "min", "max", "q1", "q3")


def _clean(values: Iterable[Any] | None) -> list[float]:
    """Finite numbers only: None, NaN and inf (a step that never finished) are not samples."""
    out = []
    for v in values or ():
        if isinstance(v, bool) or v is None:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out.append(f)
    return out


def percentile(values: Iterable[Any] | None, p: float, presorted: bool = False) -> float | None:
    """The p-th percentile (0 <= p <= 100) by linear interpolation; None when there are no samples."""
    if not 0 <= p <= 100:
        raise ValueError("percentile p must be within 0..100, got %r" % (p,))
    # ignore: presorted callers pass the sorted list of floats they made
    data: list[float] = values if presorted else sorted(_clean(values))  # type: ignore[assignment]
    if not data:
        return None
    if len(data) == 1:
        return data[0]
    rank = (len(data) - 1) * (p / 100.0)
    lo = int(math.floor(rank))
    hi = min(lo + 1, len(data) - 1)
    frac = rank - lo
    # a + (b - a) * f can overshoot b by one ulp; clamp keeps percentiles within [a, b]
    return min(max(data[lo] + (data[hi] - data[lo]) * frac, data[lo]), data[hi])


def median(values: Iterable[Any] | None) -> float | None:
    return percentile(values, 50)


def summary(values: Iterable[Any] | None) -> dict[str, Any] | None:
    """Latency summary {min, p50, p90, p99, max, mean} of samples in seconds; None if empty."""
    data = sorted(_clean(values))
    if not data:
        return None
    return {
        "min": data[0],
        "p50": percentile(data, 50, presorted=True),
        "p90": percentile(data, 90, presorted=True),
        "p99": percentile(data, 99, presorted=True),
        "max": data[-1],
        # fsum: the mean of many similar floats without accumulated rounding error
        "mean": min(max(math.fsum(data) / len(data), data[0]), data[-1]),
    }


def spread(values: Iterable[Any] | None) -> dict[str, Any] | None:
    """Median and spread of one figure across repetitions: {n, median, min, max, q1, q3}; None if empty."""
    data = sorted(_clean(values))
    if not data:
        return None
    return {
        "n": len(data),
        "median": percentile(data, 50, presorted=True),
        "min": data[0],
        "max": data[-1],
        "q1": percentile(data, 25, presorted=True),
        "q3": percentile(data, 75, presorted=True),
    }


def ratio(baseline: float | None, candidate: float | None) -> float | None:
    """candidate / baseline, or None when either is missing or the baseline is zero."""
    if baseline is None or candidate is None:
        return None
    try:
        b, c = float(baseline), float(candidate)
    except (TypeError, ValueError):
        return None
    if b == 0 or not math.isfinite(b) or not math.isfinite(c):
        return None
    return c / b


def speedup(baseline_seconds: float | None, candidate_seconds: float | None) -> float | None:
    """How many times faster the candidate is: baseline time / candidate time."""
    return ratio(candidate_seconds, baseline_seconds)


def change_pct(baseline: float | None, candidate: float | None) -> float | None:
    """Relative change in percent from baseline to candidate; None when undefined."""
    r = ratio(baseline, candidate)
    return None if r is None else (r - 1.0) * 100.0


# ---------------------------------------------------------------------------------------
# human formatting (the seed tables: "6m 57s · 0.24 vol/s", "10.2×", "5h 00m 52s")
# ---------------------------------------------------------------------------------------
DASH = "—"


def format_duration(seconds: float | None) -> str:
    """Seconds as the seed writes them.

    >= 1 h: ``5h 00m 52s`` (``1h 41m`` when the seconds are zero); >= 1 min: ``6m 57s``;
    >= 10 s: ``41s``; below that one decimal (``4.2s``), then ``420ms``, ``4.2ms``, ``85µs`` so that
    fast twin runs stay readable. Rounds to the shown precision first (59.6 s -> ``1m 00s``).
    """
    if seconds is None:
        return DASH
    s = float(seconds)
    if not math.isfinite(s):
        return DASH
    sign = "-" if s < 0 else ""
    s = abs(s)
    if s < 0.000995:
        return "%s%dµs" % (sign, int(round(s * 1e6)))
    if s < 0.00995:
        return "%s%.1fms" % (sign, s * 1000)
    if s < 0.9995:
        return "%s%dms" % (sign, int(round(s * 1000)))
    if s < 9.95:
        return "%s%.1fs" % (sign, s)
    total = int(round(s))
    h, rest = divmod(total, 3600)
    m, sec = divmod(rest, 60)
    if h:
        if sec:
            return "%s%dh %02dm %02ds" % (sign, h, m, sec)
        return "%s%dh %02dm" % (sign, h, m)
    if m:
        return "%s%dm %02ds" % (sign, m, sec)
    return "%s%ds" % (sign, sec)


def format_number(value: float | None, digits: int = 2) -> str:
    """A plain number: thousands with k/M suffixes (92.0k), small ones with `digits` decimals."""
    if value is None:
        return DASH
    v = float(value)
    if not math.isfinite(v):
        return DASH
    a = abs(v)
    if a >= 1e9:
        return "%.1fG" % (v / 1e9)
    if a >= 1e6:
        return "%.1fM" % (v / 1e6)
    if a >= 1e4:
        return "%.1fk" % (v / 1e3)
    if a >= 100 or v == int(v):
        return "%d" % int(round(v))
    return "%.*f" % (digits, v)


def format_rate(per_second: float | None, unit: str | None = "obj") -> str:
    """Objects per second: ``0.24 vol/s``."""
    if per_second is None:
        return DASH
    v = float(per_second)
    if not math.isfinite(v):
        return DASH
    text = "%.2f" % v if abs(v) < 100 else format_number(v)
    return "%s %s/s" % (text, unit or "obj")


def format_ratio(value: float | None, approx: bool = False) -> str:
    """A ratio as ``10.2×`` (``~7.8×`` with approx); whole numbers above 100 (``152×``)."""
    if value is None:
        return DASH
    v = float(value)
    if not math.isfinite(v):
        return DASH
    text = "%d×" % int(round(v)) if abs(v) >= 100 else "%.1f×" % v
    return ("~" if approx else "") + text


def format_pct(value: float | None) -> str:
    """A signed percentage: ``+12.5%``, ``-3.0%``."""
    if value is None:
        return DASH
    v = float(value)
    return "%+.1f%%" % (0.0 if abs(v) < 0.05 else v)  # no "-0.0%"


def format_bytes_rate(bytes_per_second: float | None) -> str:
    """Throughput in decimal units as fio and the seed print it: ``381 MB/s``."""
    if bytes_per_second is None:
        return DASH
    v = float(bytes_per_second)
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(v) >= scale:
            n = v / scale
            return ("%.0f %s" if abs(n) >= 100 else "%.1f %s") % (n, unit)
    return "%.0f B/s" % v
