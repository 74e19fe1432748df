# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout gate's statistics: repetitions are the unit of evidence (docs/rollout-gate.md, "The statistics").

The operations of one repetition queue behind the same controllers and share that repetition's luck, so they are
not independent evidence: counted one by one they made a 16-35 % false-pass rate out of a nominal 5 %. Here each
repetition enters as one number: the mean log latency of its operations in each judged step, the steps centred
(so that a 10 s publish and a 0.2 s snapshot weigh the same) and averaged. The log speedup is the difference of
the two sides' means of those numbers; its one-sided bounds are Welch's t at the repetitions' degrees of freedom,
widened by the drift allowance (how much faster a cluster may be at another moment with no change at all: no
design of one probe before and one after can tell that from the change) and with the error rate split evenly
over the planned rounds (a union bound: stopping at any of them keeps it).

One rule decides: the gain is shown when the lower bound clears the required speedup; the p-value is the same
comparison on another scale, so the two cannot disagree.

Everything is vectorised over leading axes, so that benchmarks/gate_calibration.py simulates with this very code.
"""
from __future__ import annotations

import math
from typing import Any

try:
    import numpy as np
    from scipy import stats as sps
except ImportError:  # gate.py reports the missing library; nothing here runs without it
    pass

# how much faster (or slower) a cluster may measure at another moment with no change at all, in percent: the
# probes before and after run minutes apart, and what else the cluster does moves its speed by this much
DRIFT_PCT = 10.0
# an observed ratio beyond this, either way, is a broken measurement (a clock, a unit, a probe that timed
# nothing), not a change: the seeds' largest gain is 8.4x
MAX_RATIO = 1000.0
METHOD = ("Welch t on repetition means of log latency (steps centred), one-sided, with a drift allowance and the "
          "error rate split over the planned rounds")


def scores(yb: Any, yc: Any) -> tuple[Any, Any]:
    """Per-repetition scores of both sides from their per-step mean log latencies.

    yb (..., repetitions, steps) and yc (..., repetitions, steps), NaN where a repetition measured nothing of a
    step. Each step is centred on its mean over both sides and the steps averaged, so a step's scale cancels and a
    repetition that missed a step is not moved by that step's absence."""
    centre = np.nanmean(np.concatenate([yb, yc], axis=-2), axis=-2, keepdims=True)
    return np.nanmean(yb - centre, axis=-1), np.nanmean(yc - centre, axis=-1)


def welch(zb: Any, zc: Any) -> tuple[Any, Any, Any]:
    """(estimate, standard error, degrees of freedom) of mean(zb) - mean(zc) along the last axis (>= 2 each)."""
    nb, nc = zb.shape[-1], zc.shape[-1]
    vb, vc = zb.var(axis=-1, ddof=1) / nb, zc.var(axis=-1, ddof=1) / nc
    se2 = vb + vc
    with np.errstate(invalid="ignore", divide="ignore"):
        df = se2 ** 2 / (vb ** 2 / (nb - 1) + vc ** 2 / (nc - 1))
    # identical repetitions on both sides: no spread to weigh, the pooled degrees of freedom
    df = np.where(np.isfinite(df), df, nb + nc - 2)
    return zb.mean(axis=-1) - zc.mean(axis=-1), np.sqrt(se2), df


def slack(drift_pct: float) -> float:
    """The drift allowance on the log scale."""
    return math.log1p(drift_pct / 100.0)


def bounds(zb: Any, zc: Any, confidence: float, drift_pct: float = DRIFT_PCT, rounds: int = 1) -> dict[str, Any]:
    """The log speedup of repetition scores zb (before) over zc (after): estimate, the one-sided lower and upper
    bounds at `confidence` (each; together an interval of 2 x confidence - 1 at the least), standard error and
    degrees of freedom. The error rate 1 - confidence is split over `rounds` planned looks."""
    d, se, df = welch(zb, zc)
    q = sps.t.ppf(1 - (1 - confidence) / rounds, df)
    s = slack(drift_pct)
    return {"estimate": d, "low": d - q * se - s, "high": d + q * se + s, "se": se, "df": df}


def p_value(b: dict[str, Any], log_required: float, drift_pct: float = DRIFT_PCT, rounds: int = 1) -> Any:
    """One-sided p-value of "the change brought at most the required speedup", Bonferroni-adjusted for `rounds`:
    below 1 - confidence exactly when bounds()'s lower bound clears log_required."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (b["estimate"] - slack(drift_pct) - log_required) / b["se"]
    p = np.where(np.isnan(t), 1.0, sps.t.sf(np.nan_to_num(t, nan=0.0), b["df"]))
    return np.minimum(1.0, p * rounds)
