# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout gate: did a change pay off on one cluster, and did nothing get worse? (docs/rollout-gate.md)

judge() reads the probe runs of one cluster before (baseline) and after (candidate) the change: one of each, or
several of each in time order when the probe runs in rounds. Its evidence is the repetitions of the last variant of
each document (a probe measures one: the cluster as it is), each with the per-operation latencies
(objects[].latency) of the judged steps; the statistics are in gate_stats.py. The decision is
- passed: nothing below failed, and the lower bound of the speedup clears required_speedup() (always, without an
  expected_speedup: a change with no figure of its own only must not make anything worse);
- failed, with one sentence per reason, when
  - the upper bound of the speedup is below the required speedup (the change brings less, and the data show it);
  - a latency is zero, negative or not finite, or a ratio is beyond MAX_RATIO: a broken measurement, never a gain;
  - a step got worse: its candidate median is above the baseline's by more than tolerance_pct AND a one-sided
    Mann-Whitney test says it is slower at `confidence` (the size alone flags noise on a few operations, the test
    alone a real but trivial slowdown on many);
  - the candidate has more failed operations than the baseline, or Warning-event reasons the baseline had not;
  - a judged step was measured on one side only;
- inconclusive otherwise: the required speedup lies between the bounds, or there are too few repetitions or
  operations to judge. It never passes; before the last of `max_rounds` rounds another round may decide.
The first `warmup` repetitions of each candidate document are the change settling (a controller that just restarted):
their latencies are not weighed, their failures, warnings and broken measurements still count.
The bounds are seeded by nothing: the same documents give the same verdict.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Sequence

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate_stats as S
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.gate_rule import required_speedup

try:
    import numpy as np
    from scipy import stats as sps
    HAS_SCIPY = True
except ImportError:
    HAS_SCIPY = False

__all__ = ["judge", "required_speedup", "rollout_gate", "GateError"]

TEST = S.METHOD
# fewer operations than this on either side and the gate does not judge (8: below it even a perfect separation
# says little)
MIN_OPERATIONS = 8
# fewer repetitions than this on either side and there is no spread to weigh the gain against
MIN_REPETITIONS = 2
# step statuses whose finished objects are measurements (skipped and disturbed steps are not; docs/results.md)
MEASURED = ("ok", "failed", "timeout")
PASSED, FAILED, INCONCLUSIVE = "passed", "failed", "inconclusive"

LIMITS = {
    "min_gain_fraction": "a share of the expected speedup above 0 and at most 1, e.g. 0.25",
    "confidence": "between 0.5 and 0.999, e.g. 0.95",
    "tolerance_pct": "a percentage of 0 or more, e.g. 20",
    "expected_speedup": "a speedup of 1 or more (time before / time after, e.g. 8.1), or none for a change "
                        "with no figure of its own",
    "drift_pct": "a percentage from 0 to 100, e.g. 10 (0 only where the probes before and after are interleaved "
                 "and the cluster holds still)",
    "max_rounds": "a whole number of rounds of 1 or more, e.g. 3",
    "warmup": "a whole number of repetitions of 0 or more, e.g. 1 (the first of each candidate run, not weighed)",
}


class GateError(StoragePerfError, ValueError):
    """An input of the gate is wrong; the message names the option and the fix."""


def _check(name: str, value: object, ok: Callable[[Any], bool]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value)):
        raise GateError("%s must be %s, got %r" % (name, LIMITS[name], value))


def check_options(expected_speedup: float | None, min_gain_fraction: float | None, confidence: float | None,
                  tolerance_pct: float | None, drift_pct: float | None = S.DRIFT_PCT,
                  max_rounds: int | None = 1, warmup: int | None = 0) -> None:
    """Raise GateError naming the first option out of range."""
    _check("expected_speedup", expected_speedup, lambda v: math.isfinite(v) and v >= 1)
    _check("min_gain_fraction", min_gain_fraction, lambda v: 0 < v <= 1)
    _check("confidence", confidence, lambda v: 0.5 <= v <= 0.999)
    _check("tolerance_pct", tolerance_pct, lambda v: math.isfinite(v) and v >= 0)
    _check("drift_pct", drift_pct, lambda v: 0 <= v <= 100)
    _check("max_rounds", max_rounds, lambda v: v == int(v) and v >= 1)
    _check("warmup", warmup, lambda v: v == int(v) and v >= 0)
    for name, value in (("min_gain_fraction", min_gain_fraction), ("confidence", confidence),
                        ("tolerance_pct", tolerance_pct), ("drift_pct", drift_pct), ("max_rounds", max_rounds),
                        ("warmup", warmup)):
        if value is None:
            raise GateError("%s must be %s, got none" % (name, LIMITS[name]))


# what the documents hold -----------------------------------------------------------------------------------
def _runs(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    variants = doc.get("variants") or []
    return (variants[-1].get("runs") or []) if variants else []


def weighed(doc: Mapping[str, Any], warmup: int) -> Mapping[str, Any]:
    """The document without the first `warmup` repetitions of its judged variant: what the gain and the steps'
    figures weigh (a probe's warm-up, right after the change, is the change settling, not its effect)."""
    if not warmup:
        return doc
    variants = list(doc.get("variants") or [])
    if not variants:
        return doc
    variants[-1] = dict(variants[-1], runs=(variants[-1].get("runs") or [])[warmup:])
    return dict(doc, variants=variants)


def _latency(obj: Mapping[str, Any]) -> float | None:
    """The object's latency in seconds; None when it did not finish; NaN when what is recorded is not a number."""
    value = obj.get("latency")
    if value is None and obj.get("start") is not None and obj.get("end") is not None:
        value = obj["end"] - obj["start"]
    if value is None:
        return None
    return math.nan if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)


def _valid(value: float) -> bool:
    return math.isfinite(value) and value > 0


def _measured_steps(doc: Mapping[str, Any]) -> Iterable[tuple[int, dict[str, Any]]]:
    """(repetition index, step) of every measured step of the judged variant."""
    for i, run in enumerate(_runs(doc)):
        for step in run.get("steps", []):
            if step.get("status") in MEASURED:
                yield i, step


def step_order(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The judged variant's step names in the order the documents ran them."""
    names: list[str] = []
    for doc in docs:
        for run in _runs(doc):
            names += [s["name"] for s in run.get("steps", []) if s["name"] not in names]
    return names


def samples(docs: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """{step: [latency in seconds]} over every repetition of the documents; steps with none are left out. Only
    valid latencies (finite, above 0): measurement_errors() counts the others."""
    out: dict[str, list[float]] = {}
    for doc in docs:
        for _i, step in _measured_steps(doc):
            values = [v for v in (_latency(o) for o in step.get("objects") or []) if v is not None and _valid(v)]
            if values:
                out.setdefault(step["name"], []).extend(values)
    return out


def repetitions(docs: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[list[float]]:
    """One row per repetition of the documents (in order) that measured any of `names`: the mean log latency of
    its valid operations in each of `names`, NaN where it measured none of a step."""
    rows = []
    for doc in docs:
        logs: dict[int, dict[str, list[float]]] = {}
        for i, step in _measured_steps(doc):
            if step["name"] in names:
                values = [v for v in (_latency(o) for o in step.get("objects") or []) if v is not None and _valid(v)]
                logs.setdefault(i, {}).setdefault(step["name"], []).extend(math.log(v) for v in values)
        for i in sorted(logs):
            row = [sum(logs[i][n]) / len(logs[i][n]) if logs[i].get(n) else math.nan for n in names]
            if any(not math.isnan(v) for v in row):
                rows.append(row)
    return rows


def measurement_errors(docs: Sequence[Mapping[str, Any]], names: Sequence[str] | None) -> tuple[int, list[str]]:
    """(count, examples) of latencies in `names` (None: every step) that are recorded but zero, negative or not
    finite."""
    count, examples = 0, []
    for doc in docs:
        for _i, step in _measured_steps(doc):
            if names is None or step["name"] in names:
                for obj in step.get("objects") or []:
                    value = _latency(obj)
                    if value is not None and not _valid(value):
                        count += 1
                        examples.append("%s %s: %r s" % (step["name"], obj.get("name", "?"), value))
    return count, examples


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


def _ids(docs: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(str(d.get("run_id")) for d in docs)


def resolve_steps(steps: Sequence[str] | None, baseline_docs: Sequence[Mapping[str, Any]],
                  candidate_docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The steps to judge, in the baseline's order: the given ones (each measured by at least one run) or, by
    default, those both sides measured."""
    before, after = step_order(baseline_docs), step_order(candidate_docs)
    order = before + [n for n in after if n not in before]
    if steps is None:
        base, cand = samples(baseline_docs), samples(candidate_docs)
        return [n for n in order if n in base and n in cand]
    unknown = [s for s in steps if s not in order]
    if unknown:
        raise GateError("steps: %s in neither run (baseline %s has %s; candidate %s has %s): name steps the probe "
                        "measures, or leave steps out to judge every step both runs measured" % (
                            ", ".join(unknown), _ids(baseline_docs), ", ".join(before) or "none",
                            _ids(candidate_docs), ", ".join(after) or "none"))
    return [n for n in order if n in steps]


# the figures -----------------------------------------------------------------------------------------------
def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else float("%.*g" % (digits, value))


def gain(yb: list[list[float]], yc: list[list[float]], expected_speedup: float | None, min_gain_fraction: float,
         confidence: float, drift_pct: float, max_rounds: int) -> dict[str, Any]:
    """The gain block of the verdict (without samples) from the per-repetition rows of repetitions(); the figures
    stay null with fewer than MIN_REPETITIONS rows on a side."""
    required = None if expected_speedup is None else required_speedup(expected_speedup, min_gain_fraction)
    out = {"expected_speedup": expected_speedup, "min_gain_fraction": min_gain_fraction,
           "required_speedup": _round(required, 4), "observed_speedup": None, "ci_low": None, "ci_high": None,
           "confidence": confidence, "p_value": None, "test": TEST, "drift_pct": drift_pct,
           "repetitions": {"baseline": len(yb), "candidate": len(yc)}, "degrees_of_freedom": None}
    if min(len(yb), len(yc)) < MIN_REPETITIONS:
        return out
    zb, zc = S.scores(np.asarray(yb, dtype=float), np.asarray(yc, dtype=float))
    b = S.bounds(zb, zc, confidence, drift_pct, max_rounds)
    out.update(observed_speedup=_round(math.exp(float(b["estimate"]))), ci_low=_round(math.exp(float(b["low"]))),
               ci_high=_round(math.exp(float(b["high"]))), degrees_of_freedom=_round(float(b["df"]), 3),
               _low=float(b["low"]), _high=float(b["high"]))
    if required is not None:
        out["p_value"] = _round(float(S.p_value(b, math.log(required), drift_pct, max_rounds)), 4)
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


# the reasons -----------------------------------------------------------------------------------------------
def _pct(confidence: float) -> str:
    return "%g %%" % (confidence * 100)


def _evidence(g: Mapping[str, Any], n: Mapping[str, int]) -> str:
    return ("observed %s (lower bound %s, upper bound %s, each at %s confidence) over %d and %d repetitions (%d and "
            "%d operations), where %s is required (%g %% of the gain of the expected %s) beyond a drift of +-%g %%; "
            "p = %.3g (Welch t, %.3g degrees of freedom%s)" % (
                stats.format_ratio(g["observed_speedup"]), stats.format_ratio(g["ci_low"]),
                stats.format_ratio(g["ci_high"]), _pct(g["confidence"]), g["repetitions"]["baseline"],
                g["repetitions"]["candidate"], n["baseline"], n["candidate"], stats.format_ratio(g["required_speedup"]),
                g["min_gain_fraction"] * 100, stats.format_ratio(g["expected_speedup"]), g["drift_pct"],
                g["p_value"], g["degrees_of_freedom"], g["rounds_note"]))


def _gain_reasons(g: dict[str, Any], n: Mapping[str, int], look: int, max_rounds: int) -> tuple[str, str | None]:
    """(decision of the gain, its reason or None)."""
    required = g["required_speedup"]
    low, high = g.pop("_low", None), g.pop("_high", None)
    g["rounds_note"] = "; the error rate split over %d rounds" % max_rounds if max_rounds > 1 else ""
    if required is None:
        return PASSED, None
    more = (" Inconclusive after round %d of %d: another round may decide." % (look, max_rounds) if look < max_rounds
            else " Inconclusive after the last round (%d of %d): the cluster holds." % (look, max_rounds)
            if max_rounds > 1 else "")
    if low is None:
        return INCONCLUSIVE, ("The gain cannot be judged: %d and %d repetitions measured the judged steps, and the "
                              "gate needs at least %d on each side to weigh their spread (probe with repeat 3 or "
                              "more); %s is required.%s" % (
                                  g["repetitions"]["baseline"], g["repetitions"]["candidate"], MIN_REPETITIONS,
                                  stats.format_ratio(required), more))
    if low > math.log(required):
        return PASSED, None
    if high < math.log(required):
        return FAILED, "The gain falls short: %s." % _evidence(g, n)
    return INCONCLUSIVE, "The gain is not shown: %s.%s" % (_evidence(g, n), more)


def _bound_reasons(g: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A ratio beyond the physical bound, overall or in a step: a measurement error."""
    out = []
    ratios = [("the observed speedup", g["observed_speedup"])] + [("step %s's median speedup" % r["name"], r["speedup"])
                                                                  for r in rows]
    for what, ratio in ratios:
        if ratio is not None and not 1 / S.MAX_RATIO <= ratio <= S.MAX_RATIO:
            out.append("Measurement error: %s of %s is beyond the physical bound of %s either way: a broken "
                       "measurement (a clock, a unit, a probe that timed nothing), not a change." % (
                           what, stats.format_ratio(ratio), stats.format_ratio(S.MAX_RATIO)))
    return out


def _worse_reason(row: Mapping[str, Any], p: float, confidence: float) -> str:
    return ("Step %s got slower: median %s against the baseline's %s (%s, tolerance +%g%%), significant at %s "
            "confidence (one-sided Mann-Whitney p = %.3g)." % (
                row["name"], stats.format_duration(row["candidate_p50"]), stats.format_duration(row["baseline_p50"]),
                stats.format_pct(row["change_pct"]), row["tolerance_pct"], _pct(confidence), p))


def _missing_reason(name: str, base: list[float], cand: list[float]) -> str:
    side, other, n = ("candidate", "baseline", len(base)) if base else ("baseline", "candidate", len(cand))
    return "Step %s has no measured operation in the %s, against %d in the %s: it cannot be judged." % (
        name, side, n, other)


def _as_docs(value: Mapping[str, Any] | Sequence[Mapping[str, Any]], option: str) -> list[Mapping[str, Any]]:
    docs = [value] if isinstance(value, Mapping) else list(value)
    if not docs:
        raise GateError("%s: no result document; give one, or one per round in time order" % option)
    return docs


def _new_trouble(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
                 counted: Sequence[str] | None) -> tuple[dict[str, int], list[str], list[str]]:
    """({side: failed operations}, new Warning reasons, their reasons to fail) of the candidate against the
    baseline, failures per run where the sides differ in runs."""
    sides = (("baseline", before), ("candidate", after))
    failed = {side: [failed_operations(doc, counted) for doc in docs] for side, docs in sides}
    total = {side: sum(f[0] for f in found) for side, found in failed.items()}
    reasons = []
    if total["candidate"] * len(before) > total["baseline"] * len(after):
        reasons.append("The candidate has %d failed operations against the baseline's %d (%s)." % (
            total["candidate"], total["baseline"], "; ".join(e for f in failed["candidate"] for e in f[1][:3])[:600]))
    seen = {r for doc in before for r in warning_reasons(doc, counted)}
    new: dict[str, dict[str, int]] = {}
    for doc in after:
        for r, w in warning_reasons(doc, counted).items():
            if r not in seen:
                both = new.setdefault(r, {"objects": 0, "events": 0})
                both["objects"] += w["objects"]
                both["events"] += w["events"]
    if new:
        reasons.append("The candidate has Warning events the baseline had not: %s." % ", ".join(
            "%s (%d objects, %d events)" % (r, new[r]["objects"], new[r]["events"]) for r in sorted(new)))
    return total, sorted(new), reasons


# the verdict -----------------------------------------------------------------------------------------------
def judge(baseline: Mapping[str, Any] | Sequence[Mapping[str, Any]],
          candidate: Mapping[str, Any] | Sequence[Mapping[str, Any]], expected_speedup: float | None = None,
          min_gain_fraction: float = 0.25, confidence: float = 0.95, tolerance_pct: float = 20.0,
          steps: Iterable[str] | None = None, drift_pct: float = S.DRIFT_PCT, max_rounds: int = 1,
          warmup: int = 0) -> dict[str, Any]:
    """The verdict on one cluster's change (docs/rollout-gate.md): decision, passed, reasons, gain, steps, ...

    baseline, candidate: a result document each, or a list of them in time order (a probe in rounds; the round
    judged is the number of candidate documents, of max_rounds planned). warmup: the first repetitions of each
    candidate document that the gain and the steps' figures do not weigh."""
    if not HAS_SCIPY:
        raise GateError(missing_required_lib("scipy") + " It is in the collection's requirements.txt: pip install "
                        "-r requirements.txt on the controller or in the EE.")
    check_options(expected_speedup, min_gain_fraction, confidence, tolerance_pct, drift_pct, max_rounds, warmup)
    before, after = _as_docs(baseline, "baseline"), _as_docs(candidate, "candidate")
    # failures, warnings and broken measurements count in every repetition; latencies only past the warm-up
    settled = [weighed(doc, int(warmup)) for doc in after]
    look = len(after)
    if look > max_rounds:
        raise GateError("max_rounds must be %s and at least the rounds measured: %d candidate runs (%s) against "
                        "max_rounds %d" % (LIMITS["max_rounds"], look, _ids(after), max_rounds))
    names = resolve_steps(list(steps) if steps is not None else None, before, settled)
    base_all, cand_all = samples(before), samples(settled)
    fails: list[str] = []
    holds: list[str] = []
    rows, both = [], []
    for name in names:
        base, cand = base_all.get(name, []), cand_all.get(name, [])
        row, p = step_row(name, base, cand, tolerance_pct, confidence)
        rows.append(row)
        if not (base and cand):
            fails.append(_missing_reason(name, base, cand))
            continue
        both.append(name)
        if row["worse"]:
            fails.append(_worse_reason(row, p, confidence))  # type: ignore[arg-type]  # worse: p was computed
    n = {"baseline": sum(len(base_all.get(s, [])) for s in names),
         "candidate": sum(len(cand_all.get(s, [])) for s in names)}
    counted = None if steps is None else names
    errors = {side: measurement_errors(docs, counted) for side, docs in (("baseline", before), ("candidate", after))}
    for side, (count, examples) in errors.items():
        if count:
            fails.insert(0, "Measurement error in the %s: %d latencies are zero, negative or not finite (%s): a "
                            "broken measurement is not a gain." % (side, count, "; ".join(examples[:3])))
    enough = min(n.values()) >= MIN_OPERATIONS
    yb, yc = (repetitions(before, both), repetitions(settled, both)) if enough else ([], [])
    g = gain(yb, yc, expected_speedup, min_gain_fraction, confidence, drift_pct, max_rounds)
    g["samples"] = n
    fails[:0] = _bound_reasons(g, rows)
    decided, why = _gain_reasons(g, n, look, max_rounds)
    if not enough:
        decided, why = INCONCLUSIVE, (
            "Not enough operations to judge: the baseline has %d and the candidate %d measured operations in %s, and "
            "the gate needs at least %d on each side." % (n["baseline"], n["candidate"],
                                                          ", ".join(names) or "no step both runs measured",
                                                          MIN_OPERATIONS))
    if why:
        (fails if decided == FAILED else holds).insert(0, why)
    del g["rounds_note"]
    failures, new, why_not = _new_trouble(before, after, counted)
    fails += why_not
    decision = FAILED if fails else INCONCLUSIVE if holds else PASSED
    return {"passed": decision == PASSED, "decision": decision, "reasons": holds + fails, "gain": g, "steps": rows,
            "failed_operations": failures, "new_warnings": new,
            "measurement_errors": {side: e[0] for side, e in errors.items()},
            "baseline_run": before[-1].get("run_id"), "candidate_run": after[-1].get("run_id"),
            "baseline_runs": [d.get("run_id") for d in before], "candidate_runs": [d.get("run_id") for d in after],
            "round": look, "max_rounds": max_rounds, "warmup": int(warmup)}


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
    docs = {name: [load(name, path) for path in p[name]] for name in ("baseline", "candidate")}
    verdict = judge(docs["baseline"], docs["candidate"], expected_speedup=p["expected_speedup"],
                    min_gain_fraction=p["min_gain_fraction"], confidence=p["confidence"],
                    tolerance_pct=p["tolerance_pct"], steps=p["steps"] or None, drift_pct=p["drift_pct"],
                    max_rounds=p["max_rounds"], warmup=p["warmup"])
    return dict(verdict, changed=False)
