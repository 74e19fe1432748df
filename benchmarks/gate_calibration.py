"""The rollout gate's error rates, by a seeded simulation on data as dependent as real probes (docs/rollout-gate.md).

    .venv/bin/python benchmarks/gate_calibration.py [--replications 10000] [--seed 0] [--json FILE]

Each simulated cluster is a probe before and one after a change: repetitions of the judged steps (a 1 s and a 10 s
step, as create_volume and publish), each with its operations; log-normal latencies. A scenario adds what real
data has: a repetition effect (every operation of one repetition shares its luck: it queues behind the same
controller), drift (the whole cluster faster or slower during the after-probe, change or not), and sides that
differ in spread and size. The statistics are the gate's own (plugins/module_utils/rollout/gate_stats.py, vectorised
over simulated clusters); tests/unit/plugins/module_utils/test_rollout_gate_calibration.py checks that judge()
computes the same bounds from result documents, and that a smaller run of this script holds the published table.

The required speedup is 1.75x (expected 4x, min_gain_fraction 0.25), confidence 0.95, drift allowance 10 %, one
round. Columns: the type-I error (the gate passes a change whose true speedup is exactly the required one, the
boundary; the target is 5 % at most), the interval coverage (the one-sided bounds ci_low and ci_high both hold the
true speedup, over the boundary and the two powers' speedups; each bound misses at most 5 %, so the target is 93 %
or more), and the power (the share passed) at 1.2x and 1.5x the required speedup.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate_stats as S  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.gate_rule import required_speedup  # noqa: E402

EXPECTED, FRACTION, CONFIDENCE = 4.0, 0.25, 0.95
REQUIRED = required_speedup(EXPECTED, FRACTION)
STEP_SCALES = (1.0, 10.0)
# true speedup / required: the boundary, and the two the power is reported at
TRUTHS = (1.0, 1.2, 1.5)
# a probe as the rollout runs it: 3 repetitions of 20 operations in each judged step, sigma 0.3 on the log scale
PROBE = {"repetitions": 3, "operations": 20, "sigma": 0.3}
SCENARIOS: list[dict[str, Any]] = [
    {"name": "independent latencies"},
    {"name": "repetition effects sd 0.2", "repetition_sd": 0.2},
    {"name": "drift: after-probe 10 % faster", "drift": 0.10},
    {"name": "drift: after-probe 10 % slower", "drift": -0.10},
    {"name": "unequal: 3 x 10 ops at sigma 0.3 against 4 x 1 at sigma 1.0",
     "baseline": {"repetitions": 3, "operations": 10, "sigma": 0.3},
     "candidate": {"repetitions": 4, "operations": 1, "sigma": 1.0}},
    {"name": "all at once: repetition sd 0.2, 10 % faster after, unequal", "repetition_sd": 0.2, "drift": 0.10,
     "baseline": {"repetitions": 3, "operations": 10, "sigma": 0.3},
     "candidate": {"repetitions": 4, "operations": 1, "sigma": 1.0}},
    # what more evidence buys where repetitions vary: twice the probe at once, or up to 3 rounds of the probe
    # (each round a probe before and one after, judged after each with the error rate split over 3)
    {"name": "repetition effects sd 0.2, 6 repetitions a side", "repetition_sd": 0.2,
     "baseline": dict(PROBE, repetitions=6), "candidate": dict(PROBE, repetitions=6)},
    {"name": "repetition effects sd 0.2, up to 3 rounds of 3, stop when decided", "repetition_sd": 0.2, "rounds": 3},
]


def side(rng: np.random.Generator, n: int, shape: dict[str, Any], repetition_sd: float, shift: float) -> np.ndarray:
    """Per-step mean log latencies (n, repetitions, steps) of n simulated probes, every latency divided by
    exp(shift)."""
    reps, ops = shape["repetitions"], shape["operations"]
    logs = (np.log(STEP_SCALES)[None, None, :, None] - shift
            + rng.normal(0.0, repetition_sd, (n, reps, 1, 1))
            + rng.normal(0.0, shape["sigma"], (n, reps, len(STEP_SCALES), ops)))
    return logs.mean(axis=-1)


def cell(rng: np.random.Generator, n: int, scenario: dict[str, Any], truth: float) -> dict[str, np.ndarray]:
    """The gate's decisions on n simulated clusters whose change truly brings `truth` x REQUIRED: passed, the
    bounds held the truth (at the round that decided, or the last), and the rounds probed."""
    tau, rounds = scenario.get("repetition_sd", 0.0), scenario.get("rounds", 1)
    shift = math.log(truth * REQUIRED) + math.log1p(scenario.get("drift", 0.0))
    true, required = math.log(truth * REQUIRED), math.log(REQUIRED)
    passed, covered = np.zeros(n, bool), np.zeros(n, bool)
    used, open_ = np.full(n, rounds), np.ones(n, bool)
    yb = yc = None
    for look in range(1, rounds + 1):
        more_b = side(rng, n, scenario.get("baseline", PROBE), tau, 0.0)
        more_c = side(rng, n, scenario.get("candidate", PROBE), tau, shift)
        yb = more_b if yb is None else np.concatenate([yb, more_b], axis=1)
        yc = more_c if yc is None else np.concatenate([yc, more_c], axis=1)
        zb, zc = S.scores(yb, yc)
        b = S.bounds(zb, zc, CONFIDENCE, S.DRIFT_PCT, rounds)
        decided = open_ & ((b["low"] > required) | (b["high"] < required) | (look == rounds))
        passed |= decided & (b["low"] > required)
        covered |= decided & (b["low"] <= true) & (true <= b["high"])
        used = np.where(decided, look, used)
        open_ &= ~decided
    return {"passed": passed, "covered": covered, "rounds": used}


def calibrate(replications: int, seed: int) -> list[dict[str, Any]]:
    """One row per scenario: type_i, coverage, power_1_2, power_1_5 (shares) and the replications behind each."""
    rng = np.random.default_rng(seed)
    rows = []
    for scenario in SCENARIOS:
        cells = {t: cell(rng, replications, scenario, t) for t in TRUTHS}
        rows.append({"scenario": scenario["name"], "replications": replications,
                     "type_i": float(cells[1.0]["passed"].mean()),
                     "coverage": float(np.mean([c["covered"].mean() for c in cells.values()])),
                     "power_1_2": float(cells[1.2]["passed"].mean()), "power_1_5": float(cells[1.5]["passed"].mean()),
                     "rounds_1_5": float(np.median(cells[1.5]["rounds"]))})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| scenario | type-I error | interval coverage | power at 1.2x | power at 1.5x | median rounds at 1.5x |",
             "|---|---|---|---|---|---|"]
    lines += ["| %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %g |" % (
        r["scenario"], 100 * r["type_i"], 100 * r["coverage"], 100 * r["power_1_2"], 100 * r["power_1_5"],
        r["rounds_1_5"]) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replications", type=int, default=10000, help="simulated clusters per scenario and speedup")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    started = time.monotonic()
    rows = calibrate(args.replications, args.seed)
    print(markdown(rows))
    print("\n%d simulated clusters per cell, seed %d, required %.2fx, confidence %g, drift allowance %g %%: %.1f s"
          % (args.replications, args.seed, REQUIRED, CONFIDENCE, S.DRIFT_PCT, time.monotonic() - started))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
