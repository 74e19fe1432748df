#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_gate
short_description: Judge whether a change paid off on one cluster, from the probe runs before and after it
version_added: "0.2.0"
description:
  - The gate of the guarded rollout (C(playbooks/rollout.yml)). Reads two result documents of the same probe on one
    cluster, the baseline (before the change) and the candidate (after it), and returns a verdict with a reason for
    each failed check. The samples are the per-operation latencies (C(objects[].latency)) of every repetition of the
    judged steps, in the last variant of each document.
  - "The verdict fails when: the data do not show, at O(confidence), that the change brought at least
    C(required_speedup = 1 + min_gain_fraction x (expected_speedup - 1)) (a van Elteren stratified Mann-Whitney test
    with the steps as strata; skipped without O(expected_speedup)); a step's median latency got worse by more than
    O(tolerance_pct) and significantly so; the candidate has more failed operations than the baseline, or Warning-event
    reasons the baseline had not; or either run has fewer than 8 measured operations."
  - The module fails only on bad input (a missing or invalid document, an option out of range, a step neither run
    measured). A failed gate is a result (RV(passed) false); the playbook decides what to do, e.g. roll back.
  - The same inputs give the same verdict (the bootstrap interval is seeded). Reads only; changes nothing.
  - Why this test, and how the figures are computed, in C(docs/rollout-gate.md) of the collection.
requirements:
  - scipy >= 1.13 (the collection's requirements.txt)
options:
  baseline:
    description:
      - Path of the baseline result document (before the change) or of its run directory.
    type: path
    required: true
  candidate:
    description:
      - Path of the candidate result document (after the change) or of its run directory.
    type: path
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
      - Confidence of the tests and of the interval, between 0.5 and 0.999.
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
"""

RETURN = r"""
passed:
  description: True when every check passed.
  returned: always
  type: bool
  sample: false
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
    required_speedup:
      description: 1 + min_gain_fraction x (expected_speedup - 1); null without an expected speedup.
      type: float
      sample: 2.775
    observed_speedup:
      description: Hodges-Lehmann estimate of the baseline / candidate latency ratio over the judged steps; null with
        too few operations.
      type: float
      sample: 3.9
    ci_low:
      description: Lower end of the bootstrap interval of the observed speedup at O(confidence).
      type: float
    ci_high:
      description: Upper end of that interval.
      type: float
    confidence:
      description: O(confidence).
      type: float
    p_value:
      description: One-sided p-value of the gain test (the change brought less than the required speedup); null when
        the test was not run.
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
baseline_run:
  description: The baseline's run id.
  returned: always
  type: str
candidate_run:
  description: The candidate's run id.
  returned: always
  type: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.gate import rollout_gate


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            baseline=dict(type="path", required=True),
            candidate=dict(type="path", required=True),
            expected_speedup=dict(type="float"),
            min_gain_fraction=dict(type="float", default=0.25),
            confidence=dict(type="float", default=0.95),
            tolerance_pct=dict(type="float", default=20.0),
            steps=dict(type="list", elements="str"),
        ),
        supports_check_mode=True,
        limits={"expected_speedup": L.EXPECTED_SPEEDUP, "min_gain_fraction": L.GAIN_FRACTION,
                "confidence": L.CONFIDENCE, "tolerance_pct": L.TOLERANCE_PCT},
    )
    module.run(lambda m: rollout_gate(m.params))


if __name__ == "__main__":
    main()
