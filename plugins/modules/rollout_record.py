#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_record
short_description: Keep what a guarded rollout decided for each cluster, one record file per cluster
version_added: "0.2.0"
description:
  - Writes one record per cluster of a guarded rollout (C(playbooks/rollout.yml)) into
    C(<rollout_dir>/clusters/<cluster>.json). A record holds the cluster's wave, the decision (V(promoted),
    V(rolled_back), V(failed), V(skipped), V(aborted) or V(pending)) with its reason, the baseline and after probes, the gate's
    verdict, whether the change was applied, and the rollback. C(docs/rollout.schema.json) (C($defs.record)) is
    its format.
  - A cluster's earlier record, when it said something else, moves into the new record's C(history) (the last 20
    are kept), so a second run of the rollout resumes from the records and still shows what came before.
  - Writing the same decision again changes nothing, and the record keeps the time it was first written.
  - Files are written atomically. Every record is checked before any is written. A bad field, or a rollout id
    other than the one the directory's records carry, fails naming the field and the fix.
  - M(storageperf.k8s.rollout_report) assembles the records into C(rollout.json), C(rollout.md) and C(rollout.html).
options:
  rollout_dir:
    description: The rollout's directory, normally C(<reports_dir>/rollout-<rollout id>). Created when missing.
    type: path
    required: true
  rollout:
    description:
      - The rollout every record belongs to. Keys C(id) (letters, digits, C(.), C(_), C(-); required), C(change)
        (the change's name, required), C(state) (V(present) or V(absent), default V(present)), C(parameters)
        (the change's variables, default empty) and C(max_fail_percentage) (0 to 100, default 0).
    type: dict
    required: true
  records:
    description:
      - One entry per cluster. Keys C(cluster), C(wave) (from 1), C(decision) and C(reason) (one sentence) are
        required.
      - Optional keys C(baseline) and C(after) (C(result), C(run_id), C(finished), and C(reused) for the baseline),
        C(gate) (what M(storageperf.k8s.rollout_gate) returned; required for V(promoted) and V(rolled_back)),
        C(applied) (bool) and C(rollback) (C(done), C(verified), C(detail)).
      - C(state), the step of the write-ahead log the record is written before (V(planned), V(baseline_measured),
        V(applying), V(applied), V(after_measured), V(rolling_back), V(rolled_back), V(promoted), V(failed),
        V(skipped), V(aborted); default the decision's own), C(identity) (C(server) and C(uid), the kube-system
        namespace's), C(resumed_from) (the state an interrupted run left) and C(drift) (what the cluster read
        against an earlier record).
    type: list
    elements: dict
    required: true
  keep_existing:
    description:
      - Leave a cluster that already has a record alone. The rollout uses it to write V(pending) for every cluster
        at its start without overwriting the decisions of an earlier run.
    type: bool
    default: false
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode writes nothing and says which records would change; with C(--diff) it shows each changed record
    before and after.
  - A record file of the directory that cannot be read is named in a warning and replaced when its cluster is
    written.
seealso:
  - module: storageperf.k8s.rollout_report
  - module: storageperf.k8s.rollout_gate
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
"""

EXAMPLES = r"""
- name: Every cluster is pending at the start (earlier decisions stay)
  storageperf.k8s.rollout_record:
    rollout_dir: "{{ reports_dir }}/rollout-{{ rollout_id }}"
    rollout: {id: "{{ rollout_id }}", change: trident_concurrency, parameters: {enable: true}}
    records:
      - {cluster: twin-1, wave: 1, decision: pending, reason: not started yet}
      - {cluster: twin-2, wave: 2, decision: pending, reason: not started yet}
    keep_existing: true
  delegate_to: localhost
  run_once: true

- name: The gate passed on this cluster
  storageperf.k8s.rollout_record:
    rollout_dir: "{{ reports_dir }}/rollout-{{ rollout_id }}"
    rollout: {id: "{{ rollout_id }}", change: trident_concurrency, parameters: {enable: true}}
    records:
      - cluster: "{{ inventory_hostname }}"
        wave: 1
        decision: promoted
        reason: "{{ gate.reasons | default([]) | join(' ') or 'the gate passed' }}"
        baseline: {result: "{{ baseline.paths.json }}", run_id: "{{ baseline.run_id }}", reused: false}
        after: {result: "{{ after.paths.json }}", run_id: "{{ after.run_id }}"}
        gate: "{{ gate }}"
        applied: true
  delegate_to: localhost
"""

RETURN = r"""
records:
  description: The record now stored for each cluster of O(records) (in check mode, the one that would be).
  returned: always
  type: dict
  sample:
    twin-1:
      schema_version: 1
      rollout: {id: trident_concurrency-1a2b3c, change: trident_concurrency, state: present,
                parameters: {enable: true}, max_fail_percentage: 0}
      cluster: twin-1
      wave: 1
      decision: promoted
      reason: "3.9x faster (95% CI 3.1x to 4.6x), above the required 2.8x"
      updated: "2026-12-06T05:10:00Z"
      baseline: {result: /srv/reports/twin-1/csi_lifecycle-20261206T050000Z-a1b2c3/result.json, reused: false}
      after: {result: /srv/reports/twin-1/csi_lifecycle-20261206T050600Z-d4e5f6/result.json}
      gate: {passed: true, reasons: []}
      applied: true
      rollback: null
      history: [{decision: pending, reason: not started yet, updated: "2026-12-06T05:00:00Z"}]
paths:
  description: The record file of each cluster of O(records).
  returned: always
  type: dict
  sample: {twin-1: /srv/reports/rollout-trident_concurrency-1a2b3c/clusters/twin-1.json}
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.state_modules import rollout_record


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            rollout_dir=dict(type="path", required=True),
            rollout=dict(type="dict", required=True),
            records=dict(type="list", elements="dict", required=True),
            keep_existing=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    module.run(run)


def run(module: StoragePerfModule) -> Dict[str, Any]:
    # a record file that cannot be read: a warning that names it, then it is replaced
    return rollout_record(module.params, check_mode=module.check_mode, diff=module.diff_mode)


if __name__ == "__main__":
    main()
