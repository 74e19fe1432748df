#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_gate
short_description: Judge whether a change paid off on one cluster, from the probe runs before and after it
version_added: "0.2.0"
description:
  - The gate of the guarded rollout (C(playbooks/rollout.yml)). Reads the result documents of the same probe on one
    cluster, the baseline (before the change) and the candidate (after it), one of each or one per round, and returns
    a decision (V(passed), V(failed) or V(inconclusive)) with a reason for each check that did not pass.
  - The evidence is the repetitions of the last variant of each document, each with the per-operation latencies
    (C(objects[].latency)) of the judged steps. The operations of one repetition share its queues and are not
    independent, so each repetition counts once (its mean log latency per step). The speedup's one-sided bounds
    are Welch's t over those repetitions, widened by O(drift_pct).
  - "Passed: the lower bound of the speedup clears C(required_speedup = 1 + min_gain_fraction x (expected_speedup - 1))
    (no gain test without O(expected_speedup)) and nothing below failed. Failed: the upper bound is below the required
    speedup; a latency is zero, negative or not finite, or a ratio is beyond 1000x either way (a broken measurement);
    a step's median latency got worse by more than O(tolerance_pct) and significantly so; the candidate has more
    failed operations than the baseline, or Warning-event reasons the baseline had not; a judged step was measured
    on one side only. Inconclusive otherwise: the required speedup lies between the bounds, fewer than 2 repetitions
    or 8 operations a side. Inconclusive never passes."
  - The module fails only on bad input (a missing or invalid document, an option out of range, a step neither run
    measured). A failed gate is a result (RV(passed) false); the playbook decides what to do, e.g. roll back.
  - The same inputs give the same verdict. Reads only; changes nothing.
  - Why this test, and how the figures are computed, in C(docs/rollout-gate.md) of the collection.
requirements:
  - scipy >= 1.13 (the collection's requirements.txt)
options:
  baseline:
    description:
      - Path of the baseline result document (before the change) or of its run directory; a list of them in time
        order for a probe in rounds.
    type: list
    elements: path
    required: true
  candidate:
    description:
      - Path of the candidate result document (after the change) or of its run directory; a list of them in time
        order for a probe in rounds. Their number is the round judged.
    type: list
    elements: path
    required: true
  expected_speedup:
    description:
      - What the change is expected to bring, as time before / time after (the advisor's C(expected_speedup), e.g.
        V(8.1) for Trident's concurrent core on ontap-nas).
      - At least 1. Omit it for a change with no figure of its own; then the gate only checks that nothing got worse.
      - At most 100 - the seeds' largest gain is 8.4x; a speedup past 100 is a typo.
    type: float
  min_gain_fraction:
    description:
      - The share of the expected gain the data must show, above 0 and at most 1. With V(0.25) and an expected 8.1x the
        required speedup is 1 + 0.25 x 7.1 = 2.78x.
      - At most 1 - a share of the expected gain; 1 asks for all of it.
    type: float
    default: 0.25
  confidence:
    description:
      - Confidence of the tests and of each bound of the speedup, between 0.5 and 0.999.
      - At most 0.999 - past 99.9 percent a probe's few repetitions can never show a gain.
    type: float
    default: 0.95
  tolerance_pct:
    description:
      - How much slower (median latency, in percent) a step may get before a significant slowdown fails the gate.
      - At most 1000 - a step ten times slower than its baseline is broken, not slower.
    type: float
    default: 20
  steps:
    description:
      - The steps to judge. Default - every step both runs measured.
      - A step neither run has is bad input; a step only one run measured fails the gate.
    type: list
    elements: str
  drift_pct:
    description:
      - How much faster, in percent, the cluster may measure at another moment with no change at all (what else it
        does, its caches, its neighbours). The gate credits the change only with the speedup beyond it, and widens
        both bounds by it. 0 only where the probes before and after are interleaved and the cluster holds still.
      - At most 100 - a share in percent.
    type: float
    default: 10
  max_rounds:
    description:
      - The rounds of probing planned, the gate called after each with every document so far. The error rate
        (1 - O(confidence)) is split evenly over them, so stopping at the first round that decides keeps it. An
        inconclusive verdict at the last round holds the cluster.
      - At most 20 - rounds of one probe before and after a change; a gain 20 rounds have not shown is not there.
    type: int
    default: 1
  warmup:
    description:
      - The first repetitions of each candidate run that the gain and the steps' figures do not weigh - the change
        settling (the rollout's after-probe starts right after a controller restarted, and its first repetition
        measured 25 to 60 % slower than the rest on a loaded machine). Their failed operations, Warning events and
        broken measurements still count. Fix it before probing, never after seeing the data.
      - At most 10 - a warm-up longer than that is a change that has not settled; wait for it instead.
    type: int
    default: 0
author:
  - storageperf.k8s maintainers (@storageperf)
seealso:
  - module: storageperf.k8s.bench_compare
  - module: storageperf.k8s.tuning_advice
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: Did Trident's concurrent core pay off on this cluster?
  storageperf.k8s.rollout_gate:
    baseline: "{{ baseline.paths.json }}"
    candidate: "{{ after.paths.json }}"
    expected_speedup: "{{ advice.tunings | selectattr('name', 'eq', 'trident_concurrency') | map(attribute='expected_speedup') | first }}"
  register: gate

- name: Roll back when it did not
  ansible.builtin.include_role:
    name: storageperf.k8s.trident_concurrency
  vars:
    trident_concurrency_state: absent
  when: not gate.passed

- name: A change with no figure of its own - only check that nothing got worse
  storageperf.k8s.rollout_gate:
    baseline: reports/twin-1/csi_lifecycle-20261206T050000Z-1a2b3c
    candidate: reports/twin-1/csi_lifecycle-20261206T051500Z-4d5e6f
    steps: [create_volume, publish]
    tolerance_pct: 10

- name: A probe in rounds (before, after, before, after ...) - judged after each, up to 3
  storageperf.k8s.rollout_gate:
    baseline: "{{ rounds | map(attribute='before') | list }}"
    candidate: "{{ rounds | map(attribute='after') | list }}"
    expected_speedup: 3.9
    max_rounds: 3
  register: gate
  # gate.decision: passed (promote), failed (roll back), inconclusive (another round, or hold after the third)
"""

RETURN = r"""
passed:
  description: True when every check passed (RV(decision) is V(passed)).
  returned: always
  type: bool
  sample: false
decision:
  description: V(passed), V(failed) (a check failed, or the gain is shown to fall short) or V(inconclusive) (the
    evidence decides neither way; another round may).
  returned: always
  type: str
  sample: inconclusive
reasons:
  description: One sentence per failed check, naming its figures; empty when RV(passed).
  returned: always
  type: list
  elements: str
  sample: ["Step publish got slower: median 1.8s against the baseline's 1.2s (+50.0%, tolerance +20%), significant at 95 %
            confidence (one-sided Mann-Whitney p = 0.000412)."]
gain:
  description: The gain test and the observed speedup.
  returned: always
  type: dict
  contains:
    expected_speedup:
      description: O(expected_speedup), null without it.
      type: float
    min_gain_fraction:
      description: O(min_gain_fraction).
      type: float
    drift_pct:
      description: O(drift_pct).
      type: float
    required_speedup:
      description: 1 + min_gain_fraction x (expected_speedup - 1); null without an expected speedup.
      type: float
      sample: 2.775
    observed_speedup:
      description: The baseline / candidate latency ratio, the geometric mean over the judged steps of the ratio of
        their repetitions' mean log latencies; null with too few repetitions or operations.
      type: float
      sample: 3.9
    ci_low:
      description: One-sided lower bound of the speedup at O(confidence) (the error rate split over O(max_rounds)),
        drift allowance included. The gain is shown when it is above RV(gain.required_speedup).
      type: float
    ci_high:
      description: One-sided upper bound at the same level; below RV(gain.required_speedup) the gain falls short.
      type: float
    degrees_of_freedom:
      description: Welch's degrees of freedom of the repetitions.
      type: float
    repetitions:
      description: Repetitions that measured the judged steps, C(baseline) and C(candidate).
      type: dict
      sample: {baseline: 3, candidate: 3}
    confidence:
      description: O(confidence).
      type: float
    p_value:
      description: One-sided p-value of the gain test (the change brought at most the required speedup beyond the
        drift), multiplied by O(max_rounds); below 1 - O(confidence) exactly when RV(gain.ci_low) clears the required
        speedup. Null when the test was not run.
      type: float
      sample: 0.0001
    test:
      description: The name of the test.
      type: str
    samples:
      description: Measured operations in the judged steps, C(baseline) and C(candidate).
      type: dict
      sample: {baseline: 240, candidate: 240}
steps:
  description: One entry per judged step.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The step.
      type: str
    baseline_p50:
      description: Median per-operation latency before, in seconds (null when not measured).
      type: float
    candidate_p50:
      description: Median per-operation latency after, in seconds.
      type: float
    speedup:
      description: baseline_p50 / candidate_p50.
      type: float
    change_pct:
      description: Change of the median in percent (negative is faster).
      type: float
    tolerance_pct:
      description: O(tolerance_pct).
      type: float
    worse:
      description: The step got slower by more than the tolerance and significantly so.
      type: bool
    baseline_p95:
      description: 95th percentile of the per-operation latencies before, in seconds (also C(baseline_p99),
        C(candidate_p95), C(candidate_p99)).
      type: float
failed_operations:
  description: Failed operations (objects with errors or unfinished, broken steps and runs) per side.
  returned: always
  type: dict
  sample: {baseline: 0, candidate: 2}
new_warnings:
  description: Warning-event reasons the candidate has and the baseline had not.
  returned: always
  type: list
  elements: str
  sample: [FailedAttachVolume]
measurement_errors:
  description: Latencies that are zero, negative or not finite, per side, in the judged steps (every step without
    O(steps)).
  returned: always
  type: dict
  sample: {baseline: 0, candidate: 0}
baseline_run:
  description: The (last) baseline's run id.
  returned: always
  type: str
candidate_run:
  description: The (last) candidate's run id.
  returned: always
  type: str
baseline_runs:
  description: Every baseline's run id, in the order given.
  returned: always
  type: list
  elements: str
candidate_runs:
  description: Every candidate's run id, in the order given.
  returned: always
  type: list
  elements: str
warmup:
  description: O(warmup).
  returned: always
  type: int
round:
  description: The round judged (the number of candidate documents).
  returned: always
  type: int
max_rounds:
  description: O(max_rounds).
  returned: always
  type: int
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.gate import rollout_gate


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            baseline=dict(type="list", elements="path", required=True),
            candidate=dict(type="list", elements="path", required=True),
            expected_speedup=dict(type="float"),
            min_gain_fraction=dict(type="float", default=0.25),
            confidence=dict(type="float", default=0.95),
            tolerance_pct=dict(type="float", default=20.0),
            steps=dict(type="list", elements="str"),
            drift_pct=dict(type="float", default=10.0),
            max_rounds=dict(type="int", default=1),
            warmup=dict(type="int", default=0),
        ),
        supports_check_mode=True,
        limits={"expected_speedup": L.EXPECTED_SPEEDUP, "min_gain_fraction": L.GAIN_FRACTION,
                "confidence": L.CONFIDENCE, "tolerance_pct": L.TOLERANCE_PCT, "drift_pct": L.PERCENT,
                "max_rounds": L.ROUNDS, "warmup": L.WARMUP},
    )
    module.run(lambda m: rollout_gate(m.params))


if __name__ == "__main__":
    main()
