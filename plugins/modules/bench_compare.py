#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_compare
short_description: Compare a storageperf.k8s benchmark result against a baseline with tolerances
version_added: "0.1.0"
description:
  - Loads a candidate result document and, optionally, a baseline result document, checks each tolerance
    and returns one verdict row per checked value (metric, baseline, candidate, change %, limit, pass/fail).
  - The module fails only on bad input (unreadable or invalid documents, malformed tolerances). A broken
    threshold is reported in RV(failed_checks) and RV(verdict); the playbook decides whether to stop, see
    the C(storageperf.k8s.compare) playbook.
  - "Tolerance keys: C(<step>.<field>), C(<variant>/<step>.<field>), C(<step>.speedup), C(speedup),
    C(sum_wall_s); steps and variants may use shell wildcards. Fields: C(wall_s), C(rate), C(count),
    C(errors), C(unfinished), latency keys (C(p50), C(p90), C(p99), C(max) ...) and any metric (C(iops), C(tps) ...).
    Details in C(docs/results.md) of the collection."
options:
  baseline:
    description:
      - Path of the baseline result document or of its run directory.
      - Without it only absolute limits (C(min), C(max)) and in-document speedups can pass.
    type: path
  candidate:
    description:
      - Path of the candidate result document or of its run directory.
    type: path
    required: true
  tolerances:
    description:
      - Mapping of tolerance key to limits. Limits are C(max_increase_pct), C(max_decrease_pct), C(min)
        and C(max); speedup keys also take C(baseline_variant) and C(candidate_variant).
    type: dict
    default: {}
  junit_path:
    description:
      - Write the verdict as JUnit XML to this path (one testcase per verdict row). Not written in check mode.
    type: path
author:
  - storageperf.k8s maintainers (@storageperf)
seealso:
  - module: storageperf.k8s.bench_report
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: Compare tonight's run with the release baseline
  storageperf.k8s.bench_compare:
    baseline: reports/baselines/csi_lifecycle-100.json
    candidate: "{{ report.paths.json }}"
    tolerances:
      "*.p99": {max_increase_pct: 10}
      create_volume.rate: {max_decrease_pct: 5}
      speedup: {min: 4}
    junit_path: reports/junit/csi_lifecycle.xml
  register: cmp

- name: Stop when a threshold is broken
  ansible.builtin.fail:
    msg: "{{ cmp.message }}"
  when: cmp.failed_checks
"""

RETURN = r"""
verdict:
  description: Overall result, C(pass) or C(fail).
  returned: always
  type: str
  sample: fail
failed_checks:
  description: True when at least one tolerance is broken (the module itself still succeeds).
  returned: always
  type: bool
  sample: true
checks:
  description: Number of checked values.
  returned: always
  type: int
  sample: 3
failures:
  description: Number of broken tolerances.
  returned: always
  type: int
  sample: 1
rows:
  description: One entry per checked value.
  returned: always
  type: list
  elements: dict
  contains:
    metric:
      description: What was checked, C(<variant>/<step>.<field>) or a document-level key.
      type: str
      sample: concurrency on/publish.p99
    baseline:
      description: Baseline value (seconds for times), null when there is none.
      type: float
    candidate:
      description: Candidate value, null when the candidate has none.
      type: float
    change_pct:
      description: Change from baseline to candidate in percent.
      type: float
    limit:
      description: The limits as text.
      type: str
      sample: "≤ +10%"
    status:
      description: C(pass) or C(fail).
      type: str
    reason:
      description: Why the check failed (empty when it passed).
      type: str
message:
  description: One line saying how many checks failed and which.
  returned: always
  type: str
  sample: "1 of 3 checks failed: concurrency on/publish.p99 +25.0% above the baseline (limit +10%)"
lines:
  description: The verdict as fixed-width text lines for debug output.
  returned: always
  type: list
  elements: str
junit_path:
  description: Absolute path of the JUnit XML file, when O(junit_path) was given.
  returned: when junit_path is set
  type: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import bench_compare


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            baseline=dict(type="path"),
            candidate=dict(type="path", required=True),
            tolerances=dict(type="dict", default={}),
            junit_path=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    module.run(lambda m: bench_compare(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
