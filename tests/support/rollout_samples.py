# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deterministic rollout records and documents: a three-cluster rollout of trident_concurrency in two waves.

Used by the rollout tests and by docs/rollout-example.md (its figures are synthetic, shaped like the seed's
CSI lifecycle at 20 volumes x 3 repetitions).
"""
from __future__ import annotations

import copy

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D

ROLLOUT = {"id": "trident_concurrency-1a2b3c", "change": "trident_concurrency", "state": "present",
           "parameters": {"enable": True}, "max_fail_percentage": 50}
STEPS = (("create_volume", 1.2, 0.3), ("publish", 0.9, 0.25), ("create_snapshot", 1.1, 0.2),
         ("delete_volume", 0.8, 0.4))


def gate(passed=True, observed=3.9, ci=(3.1, 4.6), required=2.78, p_value=0.0001, warnings=(), failed_after=0,
         worse=()):
    """A verdict as rollout_gate returns it (docs/rollout.schema.json $defs.gate_verdict)."""
    steps = []
    for name, before, after in STEPS:
        if name in worse:
            after = before * 1.5
        steps.append({"name": name, "baseline_p50": before, "candidate_p50": after, "speedup": round(before / after, 2),
                      "change_pct": round((after - before) * 100 / before, 1), "tolerance_pct": 20.0,
                      "worse": name in worse})
    reasons = [] if passed else ["the observed speedup %.1fx (95%% CI %.1fx to %.1fx) is below the required %.2fx"
                                 % (observed, ci[0], ci[1], required)]
    return {"passed": passed, "reasons": reasons,
            "gain": {"expected_speedup": 8.1, "min_gain_fraction": 0.25, "required_speedup": required,
                     "observed_speedup": observed, "ci_low": ci[0], "ci_high": ci[1], "confidence": 0.95,
                     "p_value": p_value, "test": "Mann-Whitney U on per-object latencies",
                     "samples": {"baseline": 240, "candidate": 240}},
            "steps": steps, "failed_operations": {"baseline": 0, "candidate": failed_after},
            "new_warnings": list(warnings), "baseline_run": "csi_lifecycle-20261206T050000Z-aaaaaa",
            "candidate_run": "csi_lifecycle-20261206T050600Z-bbbbbb"}


def probe(cluster, minute, reused=False):
    run_id = "csi_lifecycle-20261206T05%02d00Z-%s" % (minute, cluster[-1] * 6)
    out = {"result": "/srv/reports/%s/%s/result.json" % (cluster, run_id), "run_id": run_id,
           "finished": "2026-12-06T05:%02d:30Z" % minute}
    if reused is not None:
        out["reused"] = reused
    return out


def promoted(cluster, wave, minute, **gate_args):
    return D.new_record(ROLLOUT, cluster, wave, "promoted", "the gate passed: 3.9x faster, above the required 2.8x",
                        updated="2026-12-06T05:%02d:00Z" % (minute + 8), baseline=probe(cluster, minute),
                        after=dict(probe(cluster, minute + 6, reused=None)), gate=gate(**gate_args), applied=True)


def rolled_back(cluster, wave, minute):
    verdict = gate(passed=False, observed=1.4, ci=(0.9, 1.8), p_value=0.21, warnings=["FailedAttachVolume"],
                   failed_after=2, worse=("publish",))
    return D.new_record(ROLLOUT, cluster, wave, "rolled_back", verdict["reasons"][0],
                        updated="2026-12-06T05:%02d:00Z" % (minute + 9), baseline=probe(cluster, minute, reused=True),
                        after=dict(probe(cluster, minute + 6, reused=None)), gate=verdict, applied=True,
                        rollback={"done": True, "verified": True,
                                  "detail": "trident_concurrency absent again: the controller reads it back disabled"})


def records() -> dict:
    """twin-1 (wave 1) promoted; twin-2 promoted and twin-3 rolled back in wave 2: 1 of 2 = 50%, not above 50."""
    out = {"twin-1": promoted("twin-1", 1, 0), "twin-2": promoted("twin-2", 2, 10), "twin-3": rolled_back("twin-3", 2, 11)}
    out["twin-3"]["history"] = [{"decision": "pending", "reason": "not started yet", "updated": "2026-12-06T04:59:00Z",
                                 "state": "planned"}]
    return out


def document(max_fail_percentage=None) -> dict:
    return D.assemble(copy.deepcopy(records()), max_fail_percentage=max_fail_percentage)
