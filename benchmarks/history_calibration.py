"""The history's error rates, from a seeded simulation: the table docs/history.md quotes ("Calibration").

    python benchmarks/history_calibration.py                  # the table, about 20 s
    python benchmarks/history_calibration.py --series 1000    # tighter figures, five times as long

Each simulated series is one step of one cluster's runs, judged the way bench_history judges it: the same
function (report/history.py judge(): Otava's change points at max_pvalue, the minimum effect, twice that for a new
level seen in the newest run alone), run after every run from the third on, as a scheduled history job would. A
series raises an alarm when any of those histories reports a regression in force.

The data is shaped like the twin's runs at time scale 0.05 (20 volumes, Trident concurrency on; docs/history.md):
- a run's step has 20 operations; log latency = the step's level + a run effect N(0, 0.06) + the operation's own
  N(0, 0.35) (the operations of one run share its queue: the run, not the operation, is the unit of evidence);
- a run under machine load (another process keeping one of two CPUs busy) adds the load of its session, uniform on
  0 to +39 % (the largest three-run mean shift measured), and N(0, 0.12) of its own (single runs reached +70 %).

Scenarios: A/A series (nothing changes) of 12 quiet runs, of 3 quiet then 3 loaded runs (the functional test's
design), and of 12 runs each loaded with probability 1/2; and series of 8 quiet runs followed by 8 runs 20 %, 50 %
or 100 % slower, where an alarm counts as a detection when it names a run of the slower level (an alarm before the
slowdown is counted as a false alarm), with its delay: the number of slow runs made when it came (1: the first).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H  # noqa: E402

SEED = 20261207
SERIES = 200
OPS = 20
RUN_SD, OP_SD = 0.06, 0.35
LOAD_MAX, LOAD_RUN_SD = math.log(1.39), 0.12
BEFORE, AFTER = 8, 8
SLOWDOWNS = (0.2, 0.5, 1.0)
# the rules the table shows: the default, and what a quieter cluster might ask for
RULES = ((H.DEFAULT_MAX_PVALUE, H.DEFAULT_MIN_EFFECT_PCT), (H.DEFAULT_MAX_PVALUE, 25.0), (0.01, 25.0))


def _run(rng: Any, shift: float, load: float | None) -> float:
    """One run's figure: the mean log latency of its operations."""
    level = shift + rng.normal(0.0, RUN_SD)
    if load is not None:
        level += load + rng.normal(0.0, LOAD_RUN_SD)
    return float((level + rng.normal(0.0, OP_SD, OPS)).mean())


def _first_alarm(values: list[float], rule: dict[str, float]) -> tuple[int, list[int]] | None:
    """(runs made, the first runs of the regressions raised) at the first history that raises one, else None."""
    for made in range(3, len(values) + 1):
        raised = [c["index"] for c in H.judge(values[:made], rule) if c["regression"] and c["current"]]
        if raised:
            return made, raised
    return None


def _aa(rng: Any, runs: int, loaded: Callable[[int], bool]) -> list[float]:
    load = rng.uniform(0.0, LOAD_MAX)
    return [_run(rng, 0.0, load if loaded(i) else None) for i in range(runs)]


def calibrate(series: int = SERIES, seed: int = SEED) -> list[dict[str, Any]]:
    import numpy

    rows = []
    for max_pvalue, min_effect in RULES:
        rule = H.rule_of(max_pvalue, min_effect)
        rng = numpy.random.default_rng(seed)  # every rule sees the same series
        row: dict[str, Any] = {"max_pvalue": max_pvalue, "min_effect_pct": min_effect}
        scenarios: tuple[tuple[str, int, Callable[[int], bool]], ...] = (
            ("aa_quiet", 12, lambda i: False), ("aa_3_then_3_loaded", 6, lambda i: i >= 3),
            ("aa_half_loaded", 12, lambda i, coin=rng.random: bool(coin() < 0.5)))
        for name, runs, loaded in scenarios:
            row[name] = sum(_first_alarm(_aa(rng, runs, loaded), rule) is not None for _ in range(series)) / series
        for slow in SLOWDOWNS:
            delays, false_alarms = [], 0
            for _ in range(series):
                values = [_run(rng, 0.0, None) for _ in range(BEFORE)]
                values += [_run(rng, math.log(1 + slow), None) for _ in range(AFTER)]
                alarm = _first_alarm(values, rule)
                if alarm is None:
                    continue
                made, raised = alarm
                if made <= BEFORE or not any(i >= BEFORE - 1 for i in raised):
                    false_alarms += 1
                else:
                    delays.append(made - BEFORE)
            delays.sort()
            row["slow_%d" % round(slow * 100)] = {
                "detected": len(delays) / series, "false_alarm": false_alarms / series,
                "median_delay": delays[len(delays) // 2] if delays else None}
        rows.append(row)
    return rows


def _pct(x: float) -> str:
    return "%.1f %%" % (100 * x)


def table(rows: list[dict[str, Any]], series: int = SERIES) -> str:
    """The Markdown table docs/history.md holds (tests/unit/test_history_calibration.py compares them)."""
    out = ["| max_pvalue | min_effect_pct | A/A 12 quiet runs | A/A 3 quiet + 3 loaded | A/A 12, half loaded | "
           "20 % slower: detected (median delay) | 50 % slower | 100 % slower |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = ["%g" % r["max_pvalue"], "%g" % r["min_effect_pct"], _pct(r["aa_quiet"]),
                 _pct(r["aa_3_then_3_loaded"]), _pct(r["aa_half_loaded"])]
        for slow in SLOWDOWNS:
            d = r["slow_%d" % round(slow * 100)]
            cells.append("%s (%s)" % (_pct(d["detected"]), "-" if d["median_delay"] is None else
                                      "%d run%s" % (d["median_delay"], "" if d["median_delay"] == 1 else "s")))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("%d series per cell, seed %d; A/A cells: the share of series with any alarm (one step; a series of "
               "8 independent steps raises one about 1 - (1 - x)^8 of the time)." % (series, SEED))
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", type=int, default=SERIES, help="series per cell (default %d)" % SERIES)
    a = ap.parse_args()
    t0 = time.monotonic()
    print(table(calibrate(a.series), a.series))
    print("\n(%.1f s)" % (time.monotonic() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
