# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout gate: did a change pay off on one cluster, and did nothing get worse? (docs/rollout-gate.md)

judge() reads two probe runs of one cluster, before (baseline) and after (candidate) the change. Its samples are
the per-operation latencies (objects[].latency) of every repetition of the judged steps, in the last variant of
each document (a probe measures one: the cluster as it is). The verdict fails, with one sentence per reason, when
- the gain is not shown: a stratified rank test (van Elteren; steps are the strata, so a snapshot is never
  ranked against a create) cannot say at `confidence` that the baseline's latencies exceed required_speedup x
  the candidate's, where required_speedup = 1 + min_gain_fraction * (expected_speedup - 1). Without
  expected_speedup (a change with no figure of its own) there is no gain test;
- a step got worse: its candidate median is above the baseline's by more than tolerance_pct AND a one-sided
  Mann-Whitney test says it is slower at `confidence` (the size alone flags noise on a few operations, the test
  alone flags a real but trivial slowdown on many);
- the candidate has more failed operations than the baseline, or Warning-event reasons the baseline had not;
- there are too few operations to judge (MIN_OPERATIONS on each side): the gate never passes on no evidence;
- the data is a measurement error: latencies that are zero, negative or not finite, or an observed ratio beyond
  PHYSICAL_BOUND either way; a broken clock is never a gain.
The observed speedup is the Hodges-Lehmann estimate of the baseline/candidate latency ratio (the median of
the within-step log ratios of every baseline/candidate pair), with a seeded bootstrap interval that resamples
within each step, so the same inputs give the same verdict.
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Iterable, Mapping, Sequence
import warnings

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES

try:
    import numpy as np
    from scipy import stats as sps
    HAS_SCIPY = True
except ImportError:
    HAS_SCIPY = False

TEST = "van Elteren stratified Mann-Whitney, one-sided, on log latency shifted by log(required_speedup)"
# fewer operations than this on either side and the gate fails rather than judge (8: a rank test of 8 against 8
# can reach p < 0.001; below it even a perfect separation says little)
MIN_OPERATIONS = 8
# step statuses whose finished objects are measurements (skipped and disturbed steps are not; docs/results.md)
MEASURED = ("ok", "failed", "timeout")
# a latency of 0 (a twin at a tiny time scale) stays finite on the log scale; zero latencies are a measurement error
# (bad_latencies), so the floor only keeps the arithmetic finite, it never stands for a measurement
FLOOR_S = 1e-6
# a ratio past this, either way, is not a storage control plane getting faster or slower: the seeds' largest gain
# is 8.4x, and a clock or a harness gone wrong is the likelier cause
PHYSICAL_BOUND = 1000.0
# Hodges-Lehmann: a step's side larger than this enters as that many of its quantiles, so a step adds at most
# 100 x 100 pairs and the bootstrap stays seconds, whatever the probe's size
MAX_PER_SIDE = 100
RESAMPLES = 999
METHOD = "percentile"
PAIRS_PER_BATCH = 4000000  # the bootstrap's memory: resamples x pairs per batch

LIMITS = {
    "min_gain_fraction": "a share of the expected speedup above 0 and at most 1, e.g. 0.25",
    "confidence": "between 0.5 and 0.999, e.g. 0.95",
    "tolerance_pct": "a percentage of 0 or more, e.g. 20",
    "expected_speedup": "a speedup of 1 or more (time before / time after, e.g. 8.1), or none for a change "
                        "with no figure of its own",
}


class GateError(StoragePerfError, ValueError):
    """An input of the gate is wrong; the message names the option and the fix."""


def _check(name: str, value: object, ok: Callable[[Any], bool]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value)):
        raise GateError("%s must be %s, got %r" % (name, LIMITS[name], value))


def check_options(expected_speedup: float | None, min_gain_fraction: float | None, confidence: float | None,
                  tolerance_pct: float | None) -> None:
    """Raise GateError naming the first option out of range."""
    _check("expected_speedup", expected_speedup, lambda v: math.isfinite(v) and v >= 1)
    _check("min_gain_fraction", min_gain_fraction, lambda v: 0 < v <= 1)
    _check("confidence", confidence, lambda v: 0.5 <= v <= 0.999)
    _check("tolerance_pct", tolerance_pct, lambda v: math.isfinite(v) and v >= 0)
    for name, value in (("min_gain_fraction", min_gain_fraction), ("confidence", confidence),
                        ("tolerance_pct", tolerance_pct)):
        if value is None:
            raise GateError("%s must be %s, got none" % (name, LIMITS[name]))


# what the documents hold -----------------------------------------------------------------------------------
def _runs(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    variants = doc.get("variants") or []
    return (variants[-1].get("runs") or []) if variants else []


def _raw_latency(obj: Mapping[str, Any]) -> float | None:
    """The object's latency as recorded (or end - start), whatever its value; None when it has none."""
    value = obj.get("latency")
    if value is None and obj.get("start") is not None and obj.get("end") is not None:
        value = obj["end"] - obj["start"]
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _latency(obj: Mapping[str, Any]) -> float | None:
    value = _raw_latency(obj)
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def bad_latencies(doc: Mapping[str, Any], steps: Sequence[str] | None = None) -> tuple[int, list[str]]:
    """(count, examples) of finished operations of the judged variant whose latency is zero, negative or not finite:
    a measurement error (a clock that went back, a harness that timed nothing), never a gain."""
    count, examples = 0, []
    for run in _runs(doc):
        for step in run.get("steps", []):
            if step.get("status") not in MEASURED or (steps is not None and step["name"] not in steps):
                continue
            for obj in step.get("objects") or []:
                value = _raw_latency(obj)
                if value is not None and (not math.isfinite(value) or value <= 0):
                    count += 1
                    if len(examples) < 3:
                        examples.append("%s %s: %r s" % (step["name"], obj.get("name", "?"), value))
    return count, examples


def step_order(doc: Mapping[str, Any]) -> list[str]:
    """The judged variant's step names in the order it ran them."""
    names = []
    for run in _runs(doc):
        names += [s["name"] for s in run.get("steps", []) if s["name"] not in names]
    return names


def samples(doc: Mapping[str, Any]) -> dict[str, list[float]]:
    """{step: [latency in seconds]} over every repetition of the judged variant; steps with none are left out."""
    out: dict[str, list[float]] = {}
    for run in _runs(doc):
        for step in run.get("steps", []):
            if step.get("status") in MEASURED:
                values = [v for v in (_latency(o) for o in step.get("objects") or []) if v is not None]
                if values:
                    out.setdefault(step["name"], []).extend(values)
    return out


def _step_failures(step: Mapping[str, Any]) -> tuple[int, list[str]]:
    """(count, examples) of one step: objects with errors or unfinished, step-level errors, else a broken status."""
    errors = step.get("errors") or []
    objects = sorted({e.get("object") for e in errors if e.get("object")} | set(step.get("unfinished") or []))
    general = [e for e in errors if not e.get("object")]
    examples = ["%s %s: %s" % (step["name"], e["object"], e.get("reason", "")) for e in errors if e.get("object")]
    examples += ["%s %s: unfinished" % (step["name"], u) for u in step.get("unfinished") or []
                 if u not in {e.get("object") for e in errors}]
    examples += ["%s: %s" % (step["name"], e.get("reason", "")) for e in general]
    count = len(objects) + len(general)
    if not count and step.get("status") in BROKEN_STEP_STATUSES:
        count = 1
        examples.append("%s %s%s" % (step["name"], step["status"], ": " + step["reason"] if step.get("reason") else ""))
    return count, examples


def failed_operations(doc: Mapping[str, Any], steps: Sequence[str] | None = None) -> tuple[int, list[str]]:
    """(count, examples): failed operations of the judged variant in `steps` (None: every step).

    A repetition (or a whole run) that ended badly with no failed operation recorded counts as one.
    """
    total, examples = 0, []
    for run in _runs(doc):
        count = 0
        for step in run.get("steps", []):
            if steps is None or step["name"] in steps:
                n, ex = _step_failures(step)
                count += n
                examples += ex
        if not count and run.get("status") not in ("ok", None):
            count = 1
            examples.append("repetition %s %s" % (run.get("repetition"), run.get("status")))
        total += count
    if not total and doc.get("status") not in ("ok", None):
        total = 1
        examples.append("run %s %s%s" % (doc.get("run_id"), doc.get("status"),
                                         ": " + doc["reason"] if doc.get("reason") else ""))
    return total, examples


def warning_reasons(doc: Mapping[str, Any], steps: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """{reason: {"objects": n, "events": n}} of the Warning events in the judged variant's `steps` (None: all)."""
    out: dict[str, dict[str, int]] = {}
    for run in _runs(doc):
        for step in run.get("steps", []):
            if steps is None or step["name"] in steps:
                for w in step.get("warnings") or []:
                    seen = out.setdefault(w["reason"], {"objects": 0, "events": 0})
                    seen["objects"] += int(w.get("objects") or 0)
                    seen["events"] += int(w.get("events") or 0)
    return out


def resolve_steps(steps: Sequence[str] | None, baseline_doc: Mapping[str, Any], candidate_doc: Mapping[str, Any]) -> list[str]:
    """The steps to judge, in the baseline's order: the given ones (each measured by at least one run) or, by
    default, those both runs measured."""
    order = step_order(baseline_doc) + [n for n in step_order(candidate_doc) if n not in step_order(baseline_doc)]
    if steps is None:
        base, cand = samples(baseline_doc), samples(candidate_doc)
        return [n for n in order if n in base and n in cand]
    unknown = [s for s in steps if s not in order]
    if unknown:
        raise GateError("steps: %s in neither run (baseline %s has %s; candidate %s has %s): name steps the probe "
                        "measures, or leave steps out to judge every step both runs measured" % (
                            ", ".join(unknown), baseline_doc.get("run_id"), ", ".join(step_order(baseline_doc)) or "none",
                            candidate_doc.get("run_id"), ", ".join(step_order(candidate_doc)) or "none"))
    return [n for n in order if n in steps]


# the statistics ------------------------------------------------------------------------------------------
def _logs(values: Sequence[float]) -> Any:
    return np.log(np.maximum(np.asarray(values, dtype=float), FLOOR_S))


def van_elteren(strata: Iterable[tuple[Any, Any]], shift: float) -> float:
    """One-sided p-value that, step by step, the baseline's log latencies exceed the candidate's by more than
    `shift`: van Elteren's stratified rank-sum (normal approximation, ties corrected). strata: [(log b, log c)]."""
    t = var = 0.0
    for lb, lc in strata:
        nb, nc = len(lb), len(lc)
        n = nb + nc
        ranks = sps.rankdata(np.concatenate([lb - shift, lc]))
        _values, counts = np.unique(ranks, return_counts=True)
        ties = float((counts.astype(float) ** 3 - counts).sum())
        # each step's rank sum divided by (n + 1): the weights that make the test most powerful for one common shift
        t += (ranks[:nb].sum() - nb * (n + 1) / 2.0) / (n + 1)
        var += nb * nc / 12.0 * ((n + 1) - ties / (n * (n - 1))) / (n + 1) ** 2
    if var <= 0:  # every latency tied: no evidence either way
        return 1.0
    return float(sps.norm.sf(t / math.sqrt(var)))


def _thin(x: Any) -> Any:
    """A side of more than MAX_PER_SIDE values as that many evenly spaced quantiles (along the last axis)."""
    if x.shape[-1] <= MAX_PER_SIDE:
        return x
    q = (np.arange(MAX_PER_SIDE) + 0.5) / MAX_PER_SIDE
    return np.moveaxis(np.quantile(x, q, axis=-1), 0, -1)


def hodges_lehmann(*sides: Any, axis: int = -1) -> Any:
    """Median of log b - log c over every baseline/candidate pair of the same step; sides = (b1, c1, b2, c2, ...).

    Pairs never cross steps, so a step's scale cancels without centring; vectorised for scipy's bootstrap."""
    diffs = []
    for lb, lc in zip(sides[0::2], sides[1::2]):
        lb, lc = _thin(np.moveaxis(lb, axis, -1)), _thin(np.moveaxis(lc, axis, -1))
        d = lb[..., :, None] - lc[..., None, :]
        diffs.append(d.reshape(d.shape[:-2] + (-1,)))
    return np.median(np.concatenate(diffs, axis=-1), axis=-1)


def _bootstrap(sides: tuple[Any, ...], confidence: float, seed: int) -> tuple[float, float]:
    """(low, high) of the log ratio: percentile bootstrap resampling each step's sides on their own."""
    pairs = sum(min(len(b), MAX_PER_SIDE) * min(len(c), MAX_PER_SIDE) for b, c in zip(sides[0::2], sides[1::2]))
    seeded = np.random.default_rng(seed)
    rng = {"rng": seeded} if "rng" in inspect.signature(sps.bootstrap).parameters else {"random_state": seeded}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: identical values give a zero-width interval
        res = sps.bootstrap(sides, hodges_lehmann, n_resamples=RESAMPLES, confidence_level=confidence,
                            method=METHOD, vectorized=True, batch=max(1, PAIRS_PER_BATCH // pairs), **rng)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else float("%.*g" % (digits, value))


def gain(strata: list[tuple[Any, Any]], expected_speedup: float | None, min_gain_fraction: float, confidence: float,
         seed: int) -> dict[str, Any]:
    """The gain block of the verdict (without samples) from [(log b, log c)] with >= 2 values on each side."""
    required = None if expected_speedup is None else 1 + min_gain_fraction * (expected_speedup - 1)
    out = {"expected_speedup": expected_speedup, "min_gain_fraction": min_gain_fraction,
           "required_speedup": _round(required, 4), "observed_speedup": None, "ci_low": None, "ci_high": None,
           "confidence": confidence, "p_value": None, "test": TEST}
    if not strata:
        return out
    sides = tuple(x for pair in strata for x in pair)
    low, high = _bootstrap(sides, confidence, seed)
    out.update(observed_speedup=_round(math.exp(float(hodges_lehmann(*sides)))), ci_low=_round(math.exp(low)),
               ci_high=_round(math.exp(high)))
    if required is not None:
        out["p_value"] = _round(van_elteren(strata, math.log(required)), 4)
    return out


def step_row(name: str, base: list[float], cand: list[float], tolerance_pct: float,
             confidence: float) -> tuple[dict[str, Any], float | None]:
    """One step's medians (and 95th and 99th percentiles), speedup and change; worse = beyond the tolerance and
    significantly slower.
    Also returns the Mann-Whitney p-value (None when a side has no operations)."""
    b50, c50 = stats.median(base) if base else None, stats.median(cand) if cand else None
    change = stats.change_pct(b50, c50)
    p = float(sps.mannwhitneyu(cand, base, alternative="greater").pvalue) if base and cand else None
    # ignore: a change is computed only when both sides have operations, and then so is p
    worse = change is not None and change > tolerance_pct and p < 1 - confidence  # type: ignore[operator]
    tails = {"%s_p%d" % (side, q): _round(stats.percentile(values, q)) if values else None
             for side, values in (("baseline", base), ("candidate", cand)) for q in (95, 99)}
    return dict({"name": name, "baseline_p50": _round(b50), "candidate_p50": _round(c50),
                 "speedup": _round(stats.speedup(b50, c50), 4), "change_pct": _round(change, 4),
                 "tolerance_pct": tolerance_pct, "worse": bool(worse)}, **tails), p


# the verdict -----------------------------------------------------------------------------------------------
def _pct(confidence: float) -> str:
    return "%g %%" % (confidence * 100)


def _gain_reason(g: Mapping[str, Any], n: Mapping[str, int]) -> str | None:
    if g["required_speedup"] is None or (g["p_value"] is not None and g["p_value"] < 1 - g["confidence"]):
        return None
    if g["p_value"] is None:  # enough operations, but spread one or none a step
        return ("The gain cannot be judged: no step has at least 2 measured operations on each side (%d and %d "
                "in all), and %s is required." % (
                    n["baseline"], n["candidate"], stats.format_ratio(g["required_speedup"])))
    return ("The gain is not shown: observed %s (%s interval %s to %s) over %d and %d operations, where %s is "
            "required (%g %% of the gain of the expected %s) at %s confidence; p = %.3g by the %s test." % (
                stats.format_ratio(g["observed_speedup"]), _pct(g["confidence"]), stats.format_ratio(g["ci_low"]),
                stats.format_ratio(g["ci_high"]), n["baseline"], n["candidate"],
                stats.format_ratio(g["required_speedup"]), g["min_gain_fraction"] * 100,
                stats.format_ratio(g["expected_speedup"]), _pct(g["confidence"]), g["p_value"], "van Elteren"))


def _worse_reason(row: Mapping[str, Any], p: float, confidence: float) -> str:
    return ("Step %s got slower: median %s against the baseline's %s (%s, tolerance +%g%%), significant at %s "
            "confidence (one-sided Mann-Whitney p = %.3g)." % (
                row["name"], stats.format_duration(row["candidate_p50"]), stats.format_duration(row["baseline_p50"]),
                stats.format_pct(row["change_pct"]), row["tolerance_pct"], _pct(confidence), p))


def _missing_reason(name: str, base: list[float], cand: list[float]) -> str:
    side, other, n = ("candidate", "baseline", len(base)) if base else ("baseline", "candidate", len(cand))
    return "Step %s has no measured operation in the %s, against %d in the %s: it cannot be judged." % (
        name, side, n, other)


def judge(baseline_doc: Mapping[str, Any], candidate_doc: Mapping[str, Any], expected_speedup: float | None = None,
          min_gain_fraction: float = 0.25, confidence: float = 0.95,
          tolerance_pct: float = 20.0, steps: Iterable[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """The verdict on one cluster's change (docs/rollout.md, "The gate"): passed, reasons, gain, steps, ..."""
    if not HAS_SCIPY:
        raise GateError(missing_required_lib("scipy") + " It is in the collection's requirements.txt: pip install "
                        "-r requirements.txt on the controller or in the EE.")
    check_options(expected_speedup, min_gain_fraction, confidence, tolerance_pct)
    names = resolve_steps(list(steps) if steps is not None else None, baseline_doc, candidate_doc)
    base_all, cand_all = samples(baseline_doc), samples(candidate_doc)
    reasons, rows, strata = [], [], []
    for name in names:
        base, cand = base_all.get(name, []), cand_all.get(name, [])
        row, p = step_row(name, base, cand, tolerance_pct, confidence)
        rows.append(row)
        if not (base and cand):
            reasons.append(_missing_reason(name, base, cand))
        elif row["worse"]:
            reasons.append(_worse_reason(row, p, confidence))  # type: ignore[arg-type]  # worse: p was computed
        if len(base) >= 2 and len(cand) >= 2:
            strata.append((_logs(base), _logs(cand)))
    n = {"baseline": sum(len(base_all.get(s, [])) for s in names),
         "candidate": sum(len(cand_all.get(s, [])) for s in names)}
    enough = min(n.values()) >= MIN_OPERATIONS
    g = gain(strata if enough else [], expected_speedup, min_gain_fraction, confidence, seed)
    g["samples"] = n
    if not enough:
        reasons.insert(0, "Not enough operations to judge: the baseline has %d and the candidate %d measured "
                          "operations in %s, and the gate needs at least %d on each side." % (
                              n["baseline"], n["candidate"], ", ".join(names) or "no step both runs measured",
                              MIN_OPERATIONS))
    else:
        why = _gain_reason(g, n)
        if why:
            reasons.insert(0, why)
    for side, doc in (("baseline", baseline_doc), ("candidate", candidate_doc)):
        bad, examples = bad_latencies(doc, names)
        if bad:
            reasons.insert(0, "Measurement error: the %s has %d operations whose latency is zero, negative or not "
                              "finite (%s); they are not a gain: measure again." % (side, bad, "; ".join(examples)))
    observed = g.get("observed_speedup")
    if observed is not None and not 1.0 / PHYSICAL_BOUND <= observed <= PHYSICAL_BOUND:
        reasons.insert(0, "Measurement error: the observed ratio %s is beyond the physical bound of %g× either way; "
                          "a clock or the harness went wrong, not the storage: measure again."
                       % (stats.format_ratio(observed), PHYSICAL_BOUND))
    counted = None if steps is None else names
    failed = {side: failed_operations(doc, counted) for side, doc in (("baseline", baseline_doc),
                                                                      ("candidate", candidate_doc))}
    if failed["candidate"][0] > failed["baseline"][0]:
        reasons.append("The candidate has %d failed operations against the baseline's %d (%s)." % (
            failed["candidate"][0], failed["baseline"][0], "; ".join(failed["candidate"][1][:3])))
    seen = warning_reasons(baseline_doc, counted)
    new = {r: w for r, w in sorted(warning_reasons(candidate_doc, counted).items()) if r not in seen}
    if new:
        reasons.append("The candidate has Warning events the baseline had not: %s." % ", ".join(
            "%s (%d objects, %d events)" % (r, w["objects"], w["events"]) for r, w in new.items()))
    return {"passed": not reasons, "reasons": reasons, "gain": g, "steps": rows,
            "failed_operations": {side: f[0] for side, f in failed.items()}, "new_warnings": list(new),
            "baseline_run": baseline_doc.get("run_id"), "candidate_run": candidate_doc.get("run_id")}


# the module ------------------------------------------------------------------------------------------------
def load(option: str, path: str) -> dict[str, Any]:
    """A result document given by a module option; a GateError naming the option when it is not one."""
    try:
        return D.load(path)
    except ValueError as e:  # unreadable, not JSON, or a ResultValidationError (with its problems)
        raise GateError("%s: %s" % (option, e), hint="Give the path of a result.json or of its run directory "
                        "(<reports_dir>/<cluster>/<run_id>/).", problems=getattr(e, "problems", [])) from e


def rollout_gate(p: Mapping[str, Any]) -> dict[str, Any]:
    """The rollout_gate module: the verdict's keys at the top level, never a change, never a failure on a fail."""
    docs = {name: load(name, p[name]) for name in ("baseline", "candidate")}
    verdict = judge(docs["baseline"], docs["candidate"], expected_speedup=p["expected_speedup"],
                    min_gain_fraction=p["min_gain_fraction"], confidence=p["confidence"],
                    tolerance_pct=p["tolerance_pct"], steps=p["steps"] or None)
    return dict(verdict, changed=False)
