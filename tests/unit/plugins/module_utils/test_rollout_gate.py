"""rollout/gate.py and the rollout_gate module: verdicts on synthetic probe runs whose answer is known.

Latencies are log-normal (skewed, as the twin's and real clusters' are), drawn from a seeded generator, in steps
whose scales differ by 50x, as a create and a snapshot do.
"""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import validate
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate as G
from ansible_collections.storageperf.k8s.plugins.modules.rollout_gate import main
from tests.support.module_args import run_main

SCALES = {"create_volume": 1.0, "publish": 10.0, "create_snapshot": 0.2}
VERDICT_KEYS = {"passed", "decision", "reasons", "gain", "steps", "failed_operations", "new_warnings",
                "measurement_errors", "baseline_run", "candidate_run", "baseline_runs", "candidate_runs", "round",
                "max_rounds", "warmup"}
GAIN_KEYS = {"expected_speedup", "min_gain_fraction", "required_speedup", "observed_speedup", "ci_low", "ci_high",
             "confidence", "p_value", "test", "samples", "drift_pct", "repetitions", "degrees_of_freedom"}
STEP_KEYS = {"name", "baseline_p50", "candidate_p50", "speedup", "change_pct", "tolerance_pct", "worse",
             "baseline_p95", "candidate_p95", "baseline_p99", "candidate_p99"}


def probe(seed, speedup=1.0, n=20, reps=3, sigma=0.3, scales=None, slower=None, rep_sd=0.0):
    """A csi_lifecycle-like probe: reps x steps of n objects; every latency divided by `speedup`, the steps in
    `slower` ({step: factor}) multiplied by their factor, and each repetition's latencies by its own luck
    (log-normal, sd rep_sd: its operations queue behind the same controller)."""
    rng = np.random.default_rng(seed)
    doc = D.new_result("csi_lifecycle", run_id="csi_lifecycle-20261206T050000Z-%06d" % seed,
                       started="2026-12-06T05:00:00.000000Z")
    variant = D.add_variant(doc, "as configured")
    for _ in range(reps):
        run = D.add_run(variant, started="2026-12-06T05:00:00.000000Z")
        luck = rng.normal(0.0, rep_sd)
        for name, scale in (scales or SCALES).items():
            mu = math.log(scale / speedup * (slower or {}).get(name, 1.0)) + luck
            lat = rng.lognormal(mu, sigma, n)
            D.add_step(run, name, count=n, wall_s=float(lat.max()), unit="vol",
                       objects=[{"name": "%s-%03d" % (name, i), "start": 0.0, "end": float(x)} for i, x in enumerate(lat)])
        D.finish_run(run, finished="2026-12-06T05:05:00.000000Z")
    return validate(D.finalize(doc, finished="2026-12-06T05:05:00.000000Z"))


def failing(reason, verdict):
    """The verdict failed, and its reasons include one containing `reason`."""
    return verdict["decision"] == "failed" and not verdict["passed"] and any(reason in r for r in verdict["reasons"])


def holding(reason, verdict):
    """The verdict is inconclusive (never a pass), and its reasons include one containing `reason`."""
    return verdict["decision"] == "inconclusive" and not verdict["passed"] and any(reason in r for r in verdict["reasons"])


# the gain ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def baseline():
    return probe(1)


def test_required_speedup_is_the_share_of_the_expected_gain():
    assert G.required_speedup(8.1, 0.25) == pytest.approx(2.775) and G.required_speedup(5.0, 1.0) == 5.0
    assert G.required_speedup(1.0, 0.5) == 1.0


def test_a_clear_gain_passes_with_the_speedup_it_had(baseline):
    v = G.judge(baseline, probe(2, speedup=5.0), expected_speedup=5.0)
    assert set(v) == VERDICT_KEYS and set(v["gain"]) == GAIN_KEYS and all(set(s) == STEP_KEYS for s in v["steps"])
    assert v["passed"] and v["decision"] == "passed" and v["reasons"] == []
    g = v["gain"]
    assert g["required_speedup"] == 2.0  # 1 + 0.25 x (5 - 1)
    assert 4.5 < g["observed_speedup"] < 5.5 and g["ci_low"] <= 5.0 <= g["ci_high"]
    assert g["ci_low"] > g["required_speedup"] and g["p_value"] < 1e-3
    assert g["samples"] == {"baseline": 180, "candidate": 180} and g["repetitions"] == {"baseline": 3, "candidate": 3}
    assert 2 <= g["degrees_of_freedom"] <= 4 and g["drift_pct"] == 10.0
    assert [s["name"] for s in v["steps"]] == list(SCALES)
    assert all(4 < s["speedup"] < 6.5 and s["change_pct"] < -75 and not s["worse"] for s in v["steps"])
    assert all(s["baseline_p50"] <= s["baseline_p95"] <= s["baseline_p99"] for s in v["steps"])
    assert v["baseline_run"] == baseline["run_id"] and v["candidate_run"].endswith("000002")
    assert v["baseline_runs"] == [baseline["run_id"]] and v["round"] == v["max_rounds"] == 1
    assert v["measurement_errors"] == {"baseline": 0, "candidate": 0}


def test_no_gain_fails_and_says_what_was_required(baseline):
    v = G.judge(baseline, probe(3), expected_speedup=8.1)
    g = v["gain"]
    assert g["required_speedup"] == 2.775 and g["p_value"] > 0.5
    assert 0.85 < g["observed_speedup"] < 1.15 and g["ci_low"] < 1.0 < g["ci_high"] < 2.775
    assert failing("The gain falls short", v) and len(v["reasons"]) == 1
    assert "2.8× is required (25 % of the gain of the expected 8.1×) beyond a drift of +-10 %" in v["reasons"][0]
    assert "over 3 and 3 repetitions (180 and 180 operations)" in v["reasons"][0]


def test_weak_evidence_is_inconclusive_where_the_same_gain_measured_more_often_passes():
    # a true 2.6x where 2x is required, on a noisy cluster (sigma 1: a latency's 95 % range spans 50x)
    few = G.judge(probe(11, n=5, reps=2, sigma=1.0, scales={"create_volume": 1.0}),
                  probe(12, speedup=2.6, n=5, reps=2, sigma=1.0, scales={"create_volume": 1.0}), expected_speedup=5.0)
    g = few["gain"]
    # the point estimate clears the requirement, the evidence does not: the lower bound is below it, the upper above
    assert g["observed_speedup"] > g["required_speedup"] == 2.0
    assert g["ci_low"] < 2.0 < g["ci_high"] and g["p_value"] > 0.05
    assert holding("The gain is not shown", few)
    many = G.judge(probe(11, n=100, reps=5, sigma=1.0), probe(12, speedup=2.6, n=100, reps=5, sigma=1.0),
                   expected_speedup=5.0)
    assert many["passed"], many["reasons"]
    assert many["gain"]["p_value"] < 0.05 and 2.0 < many["gain"]["observed_speedup"] < 3.2


def test_repetitions_not_operations_are_the_evidence():
    # each repetition has its own luck (sd 0.3 on the log scale): 3 repetitions are 3 pieces of evidence, however
    # many operations each has, so 300 operations a repetition do not narrow the bounds below the repetitions' spread
    small = G.judge(probe(61, n=10, rep_sd=0.3), probe(62, speedup=2.0, n=10, rep_sd=0.3), expected_speedup=5.0)
    large = G.judge(probe(61, n=300, rep_sd=0.3), probe(62, speedup=2.0, n=300, rep_sd=0.3), expected_speedup=5.0)
    for v in (small, large):
        assert v["gain"]["repetitions"] == {"baseline": 3, "candidate": 3}
        assert v["gain"]["ci_high"] / v["gain"]["ci_low"] > 1.5, v["gain"]  # the spread of 3 lucky draws a side
    assert not large["passed"]  # exactly the required 2x: 2700 operations a side do not make it a shown gain


def test_steps_of_different_scales_are_centred_not_pooled():
    # create 1 s and publish 10 s, each exactly 2x faster: pooled raw latencies would mix the candidate's publishes
    # (5 s) with the baseline's creates; centred per step the estimate is clean
    scales = {"create_volume": 1.0, "publish": 10.0}
    v = G.judge(probe(21, sigma=0.1, scales=scales), probe(22, speedup=2.0, sigma=0.1, scales=scales),
                expected_speedup=3.0, min_gain_fraction=0.5)  # requires exactly 2x: the boundary
    assert 1.9 < v["gain"]["observed_speedup"] < 2.1
    assert v["gain"]["ci_low"] < 2.0 < v["gain"]["ci_high"]  # at the boundary: not shown, and not shown short
    assert holding("The gain is not shown", v)


def test_the_test_and_the_bounds_never_disagree():
    # one rule: p < 1 - confidence exactly when the lower bound clears the required speedup, over gains around it
    for seed in range(12):
        for rounds in (1, 3):
            v = G.judge(probe(100 + seed, n=8, sigma=0.6, rep_sd=0.1),
                        probe(200 + seed, speedup=1.6 + 0.1 * seed, n=8, sigma=0.6, rep_sd=0.1),
                        expected_speedup=4.0, max_rounds=rounds)
            g = v["gain"]
            assert (g["p_value"] < 0.05) == (g["ci_low"] > g["required_speedup"]) == v["passed"], g
            assert (v["decision"] == "failed") == (g["ci_high"] < g["required_speedup"]), g


def test_without_an_expected_speedup_only_nothing_may_get_worse(baseline):
    v = G.judge(baseline, probe(4))
    assert v["passed"] and v["gain"]["required_speedup"] is None and v["gain"]["p_value"] is None
    assert v["gain"]["observed_speedup"] is not None  # still shown


# rounds --------------------------------------------------------------------------------------------------
def test_rounds_split_the_error_rate_and_hold_after_the_last():
    scales = {"create_volume": 1.0}
    before = [probe(71, n=10, scales=scales, rep_sd=0.2), probe(73, n=10, scales=scales, rep_sd=0.2)]
    after = [probe(72, speedup=2.0, n=10, scales=scales, rep_sd=0.2),
             probe(74, speedup=2.0, n=10, scales=scales, rep_sd=0.2)]
    alone = G.judge(before[:1], after[:1], expected_speedup=5.0)
    first = G.judge(before[:1], after[:1], expected_speedup=5.0, max_rounds=3)
    # the same data judged as round 1 of 3 spends a third of the error rate: wider bounds
    assert first["gain"]["ci_low"] < alone["gain"]["ci_low"] and first["gain"]["ci_high"] > alone["gain"]["ci_high"]
    assert first["round"] == 1 and first["max_rounds"] == 3
    assert holding("Inconclusive after round 1 of 3: another round may decide.", first)
    assert "the error rate split over 3 rounds" in first["reasons"][0]
    last = G.judge(before, after, expected_speedup=5.0, max_rounds=2)
    assert last["gain"]["repetitions"] == {"baseline": 6, "candidate": 6} and last["round"] == 2
    assert last["baseline_runs"] == [d["run_id"] for d in before] and last["candidate_run"] == after[-1]["run_id"]
    assert holding("Inconclusive after the last round (2 of 2): the cluster holds.", last)
    with pytest.raises(G.GateError, match="max_rounds must be .* 2 candidate runs .* against max_rounds 1"):
        G.judge(before, after, expected_speedup=5.0)


# bad data is not a gain ----------------------------------------------------------------------------------
def _set_latencies(doc, value, count=None):
    doc = copy.deepcopy(doc)
    objects = [o for r in doc["variants"][-1]["runs"] for s in r["steps"] for o in s["objects"]]
    for o in objects[:count]:
        o.pop("start", None), o.pop("end", None)
        o["latency"] = value
    return doc


@pytest.mark.parametrize("value", [0.0, -0.5, float("nan"), float("inf")])
def test_a_latency_that_is_not_a_time_fails_the_gate(baseline, value):
    v = G.judge(baseline, _set_latencies(probe(5, speedup=5.0), value, count=2), expected_speedup=5.0)
    assert failing("Measurement error in the candidate: 2 latencies are zero, negative or not finite "
                   "(create_volume create_volume-000: %r s" % value, v), v["reasons"]
    assert v["measurement_errors"] == {"baseline": 0, "candidate": 2}


def test_an_all_zero_candidate_is_no_gain(baseline):
    # floored to 1e-6 s, zeros once passed at an observed 1,034,700x
    v = G.judge(baseline, _set_latencies(baseline, 0.0), expected_speedup=5.0)
    assert failing("Measurement error in the candidate: 180 latencies", v) and not v["passed"]
    assert v["gain"]["observed_speedup"] is None


def test_a_ratio_beyond_the_physical_bound_fails(baseline):
    v = G.judge(baseline, probe(6, speedup=5000.0), expected_speedup=5.0)
    assert failing("Measurement error: the observed speedup of 4", v)
    assert "beyond the physical bound of 1000× either way" in " ".join(v["reasons"])
    assert any(r.startswith("Measurement error: step publish's median speedup") for r in v["reasons"])
    # and the other way: a candidate 5000x slower is no slowdown to weigh, it is a broken probe
    v = G.judge(probe(6, speedup=5000.0), baseline)
    assert failing("Measurement error: the observed speedup of 0.0", v), v["reasons"]


def _slow_first_repetition(doc, factor):
    """The document with its first repetition's latencies multiplied by `factor`: a controller that just restarted."""
    doc = copy.deepcopy(doc)
    for step in doc["variants"][-1]["runs"][0]["steps"]:
        for o in step["objects"]:
            o["end"] = o["start"] + (o["end"] - o["start"]) * factor
            if "latency" in o:
                o["latency"] *= factor
    return doc


def test_a_warm_up_repetition_is_not_weighed_but_its_failures_count(baseline):
    # 4 repetitions after the change, the first twice as slow: the change settling, not its effect
    cand = _slow_first_repetition(probe(8, speedup=5.0, reps=4, rep_sd=0.05), 2.0)
    counted = G.judge(baseline, cand, expected_speedup=5.0)
    settled = G.judge(baseline, cand, expected_speedup=5.0, warmup=1)
    assert counted["gain"]["repetitions"]["candidate"] == 4 and settled["gain"]["repetitions"]["candidate"] == 3
    assert settled["warmup"] == 1 and settled["passed"], settled["reasons"]
    # the slow repetition widened the bounds and pulled the estimate down; without it they are tight around 5x
    assert counted["gain"]["observed_speedup"] < settled["gain"]["observed_speedup"]
    assert (settled["gain"]["ci_high"] / settled["gain"]["ci_low"]) < (counted["gain"]["ci_high"] / counted["gain"]["ci_low"])
    assert settled["gain"]["samples"]["candidate"] == 180
    # what went wrong in the warm-up still fails the gate
    cand["variants"][-1]["runs"][0]["steps"][0]["errors"] = [{"object": "create_volume-001", "reason": "boom"}]
    assert failing("The candidate has 1 failed operations", G.judge(baseline, cand, expected_speedup=5.0, warmup=1))
    # a warm-up that leaves nothing to weigh is no evidence, never a pass
    v = G.judge(baseline, probe(9, speedup=5.0, reps=1), expected_speedup=5.0, warmup=1)
    assert v["decision"] == "inconclusive" and not v["passed"], v["reasons"]


# nothing got worse --------------------------------------------------------------------------------------
def test_a_step_that_got_50_percent_worse_fails_naming_it(baseline):
    v = G.judge(baseline, probe(5, slower={"publish": 1.5}))
    worse = [s for s in v["steps"] if s["worse"]]
    assert [s["name"] for s in worse] == ["publish"] and 30 < worse[0]["change_pct"] < 70
    assert len(v["reasons"]) == 1 and v["reasons"][0].startswith("Step publish got slower: median ")
    assert "tolerance +20%" in v["reasons"][0] and "Mann-Whitney p = " in v["reasons"][0]


def test_a_slowdown_needs_both_size_and_evidence():
    scales = {"create_volume": 1.0}
    # 5 % slower, measured 900 times: significant but within the tolerance
    small = G.judge(probe(31, n=300, scales=scales), probe(32, n=300, scales=scales, slower={"create_volume": 1.05}))
    assert small["passed"] and 2 < small["steps"][0]["change_pct"] < 9
    # 50 % slower in the median of 8 noisy operations: beyond the tolerance but not significant
    noisy = G.judge(probe(33, n=4, reps=2, sigma=1.0, scales=scales),
                    probe(34, n=4, reps=2, sigma=1.0, scales=scales, slower={"create_volume": 1.5}))
    assert noisy["steps"][0]["change_pct"] > 20 and not noisy["steps"][0]["worse"] and noisy["passed"]


def test_new_failed_operations_fail(baseline):
    cand = probe(6, speedup=5.0)
    step = cand["variants"][0]["runs"][1]["steps"][0]
    step["errors"] = [{"object": "create_volume-003", "reason": "ProvisioningFailed: backend full"}]
    step["unfinished"] = ["create_volume-003", "create_volume-007"]
    cand["variants"][0]["runs"][2]["steps"][2]["status"] = "timeout"
    v = G.judge(baseline, cand, expected_speedup=5.0)
    assert v["failed_operations"] == {"baseline": 0, "candidate": 3}  # 2 objects + a timed-out step without names
    assert failing("The candidate has 3 failed operations against the baseline's 0", v) and len(v["reasons"]) == 1
    assert "create_volume create_volume-003: ProvisioningFailed: backend full" in v["reasons"][0]
    # as many failures as the baseline had is no news
    assert G.judge(cand, copy.deepcopy(cand))["failed_operations"] == {"baseline": 3, "candidate": 3}
    assert G.judge(cand, copy.deepcopy(cand))["passed"]


def test_new_warning_reasons_fail_and_old_ones_do_not(baseline):
    base = copy.deepcopy(baseline)
    base["variants"][0]["runs"][0]["steps"][1]["warnings"] = [{"reason": "FailedMount", "objects": 1, "events": 2}]
    cand = probe(7, speedup=5.0)
    for run in cand["variants"][0]["runs"][:2]:
        run["steps"][1]["warnings"] = [{"reason": "FailedAttachVolume", "objects": 2, "events": 3},
                                       {"reason": "FailedMount", "objects": 4, "events": 4}]
    v = G.judge(base, cand, expected_speedup=5.0)
    assert v["new_warnings"] == ["FailedAttachVolume"]
    assert v["reasons"] == ["The candidate has Warning events the baseline had not: FailedAttachVolume "
                            "(4 objects, 6 events)."]


def test_too_few_operations_never_pass():
    scales = {"create_volume": 1.0}
    v = G.judge(probe(41, n=7, reps=1, scales=scales), probe(42, speedup=5.0, n=7, reps=1, scales=scales),
                expected_speedup=5.0)
    assert v["decision"] == "inconclusive" and not v["passed"]
    assert v["reasons"] == ["Not enough operations to judge: the baseline has 7 and the candidate 7 measured "
                            "operations in create_volume, and the gate needs at least 8 on each side."]
    assert v["gain"]["observed_speedup"] is None and v["gain"]["p_value"] is None
    # a candidate that measured nothing at all
    empty = D.finalize(D.new_result("csi_lifecycle", run_id="empty-1"), status="failed", reason="preflight: no SC")
    v = G.judge(probe(41), empty, expected_speedup=5.0)
    assert failing("run empty-1 failed: preflight: no SC", v) and v["steps"] == []
    assert any("in no step both runs measured" in r for r in v["reasons"])


def test_one_repetition_a_side_cannot_show_a_gain():
    # 8 steps of one operation: enough operations, but one repetition a side has no spread to weigh a gain against
    scales = {"step_%d" % i: 1.0 + i for i in range(8)}
    v = G.judge(probe(43, n=1, reps=1, scales=scales), probe(44, speedup=5.0, n=1, reps=1, scales=scales),
                expected_speedup=5.0)
    assert v["gain"]["samples"] == {"baseline": 8, "candidate": 8} and v["gain"]["p_value"] is None
    assert v["gain"]["repetitions"] == {"baseline": 1, "candidate": 1}
    assert v["reasons"] == ["The gain cannot be judged: 1 and 1 repetitions measured the judged steps, and the gate "
                            "needs at least 2 on each side to weigh their spread (probe with repeat 3 or more); 2.0× "
                            "is required."]
    assert v["decision"] == "inconclusive"


def test_a_step_only_one_run_measured_fails_when_asked_for(baseline):
    cand = probe(8, speedup=5.0, scales={"create_volume": 1.0, "publish": 10.0})
    v = G.judge(baseline, cand, expected_speedup=5.0)
    assert [s["name"] for s in v["steps"]] == ["create_volume", "publish"] and v["passed"]  # default: both measured
    v = G.judge(baseline, cand, expected_speedup=5.0, steps=["create_snapshot", "publish"])
    assert [s["name"] for s in v["steps"]] == ["publish", "create_snapshot"]
    assert v["reasons"] == ["Step create_snapshot has no measured operation in the candidate, against 60 in the "
                            "baseline: it cannot be judged."]


def test_the_same_input_gives_the_same_verdict(baseline):
    cand = probe(9, speedup=3.0, sigma=0.8)
    first = G.judge(baseline, cand, expected_speedup=5.0)
    again = G.judge([json.loads(json.dumps(baseline))], [json.loads(json.dumps(cand))], expected_speedup=5.0)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)


@pytest.mark.parametrize("options, named", [
    ({"min_gain_fraction": 0}, "min_gain_fraction must be a share of the expected speedup above 0 and at most 1"),
    ({"min_gain_fraction": 1.5}, "min_gain_fraction"),
    ({"confidence": 0.9999}, "confidence must be between 0.5 and 0.999"),
    ({"tolerance_pct": -1}, "tolerance_pct must be a percentage of 0 or more"),
    ({"expected_speedup": 0.5}, "expected_speedup must be a speedup of 1 or more"),
    ({"drift_pct": -1}, "drift_pct must be a percentage from 0 to 100"),
    ({"max_rounds": 0}, "max_rounds must be a whole number of rounds of 1 or more"),
    ({"max_rounds": 1.5}, "max_rounds must be a whole number"),
    ({"warmup": -1}, "warmup must be a whole number of repetitions of 0 or more"),
    ({"steps": ["create_volume", "publsh"]}, "steps: publsh in neither run"),
])
def test_bad_options_are_refused_naming_them(baseline, options, named):
    with pytest.raises(G.GateError, match=named):
        G.judge(baseline, baseline, **options)


# the module -----------------------------------------------------------------------------------------------
@pytest.fixture
def runs(tmp_path, baseline):
    paths = {}
    for name, doc in (("baseline", baseline), ("candidate", probe(10, speedup=5.0))):
        paths[name] = D.write_atomic(doc, str(tmp_path / name))
    return paths


def test_module_returns_the_verdict_at_the_top_level(capsys, runs):
    rc, out = run_main(capsys, main, {"baseline": runs["baseline"], "candidate": runs["candidate"],
                                      "expected_speedup": 5, "steps": ["create_volume", "publish"]}, check_mode=True)
    assert rc == 0 and out["changed"] is False and out["passed"] is True
    assert VERDICT_KEYS <= set(out) and [s["name"] for s in out["steps"]] == ["create_volume", "publish"]
    assert out["gain"]["min_gain_fraction"] == 0.25 and out["gain"]["confidence"] == 0.95
    assert out["steps"][0]["tolerance_pct"] == 20.0 and out["gain"]["drift_pct"] == 10.0 and out["max_rounds"] == 1


def test_module_takes_rounds_as_lists_of_paths(capsys, runs):
    rc, out = run_main(capsys, main, {"baseline": [runs["baseline"], runs["baseline"]],
                                      "candidate": [runs["candidate"], runs["candidate"]], "expected_speedup": 5,
                                      "max_rounds": 3, "drift_pct": 0})
    assert rc == 0 and out["round"] == 2 and out["max_rounds"] == 3 and out["passed"], out["reasons"]
    assert out["gain"]["repetitions"] == {"baseline": 6, "candidate": 6} and out["gain"]["drift_pct"] == 0
    assert len(out["candidate_runs"]) == 2


def test_module_succeeds_when_the_gate_fails(capsys, runs):
    # the candidate as baseline: the change "made it 5x slower"
    rc, out = run_main(capsys, main, {"baseline": runs["candidate"], "candidate": runs["baseline"],
                                      "expected_speedup": 2})
    assert rc == 0 and out["passed"] is False and out.get("failed") is not True
    assert len(out["reasons"]) == 4 and out["decision"] == "failed"  # the gain and three slower steps


@pytest.mark.parametrize("args, message", [
    ({"candidate": "/nowhere/result.json"}, "candidate: cannot read result document /nowhere/result.json"),
    ({"min_gain_fraction": 0}, "min_gain_fraction must be"),
    ({"steps": ["nope"]}, "steps: nope in neither run"),
])
def test_module_fails_on_bad_input_naming_the_option(capsys, runs, args, message):
    rc, out = run_main(capsys, main, dict(runs, **args))
    assert rc == 1 and out["failed"] and out["msg"].startswith(message) and out["changed"] is False


def test_module_refuses_a_file_that_is_not_a_result_document(capsys, runs, tmp_path):
    bad = tmp_path / "advice.json"
    bad.write_text(json.dumps({"cluster": {}, "tunings": []}))
    rc, out = run_main(capsys, main, dict(runs, baseline=str(bad)))
    assert rc == 1 and out["msg"].startswith("baseline: ") and "run directory" in out["msg"] and out["problems"]
