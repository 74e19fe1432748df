#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_plan
short_description: Plan a guarded rollout of one change over a fleet of clusters
version_added: "0.2.0"
description:
  - Puts the clusters of a rollout in waves (O(waves), read as Ansible's C(serial); a named O(canary) first) and
    says for every cluster what this run does there, from the records earlier runs of the same rollout left in
    C(<reports_dir>/rollout-<rollout id>/clusters/). A promoted cluster is left alone, a rolled-back one too unless
    O(retry_rolled_back), every other one is measured, changed, measured again and judged.
  - A rollout is identified by its change and the change's parameters (or O(rollout_id)), so running the same
    rollout again resumes it.
  - Reads only; changes nothing. C(playbooks/rollout.yml) of the collection runs the plan; see C(docs/rollout.md).
options:
  change:
    description: The change to roll out.
    type: str
    required: true
    choices: [trident_concurrency, snapshot_controller, csi_sidecars, parallel_attach]
  change_parameters:
    description:
      - The change's variables, overlaid on its defaults (C(docs/rollout.md) lists them per change).
    type: dict
    default: {}
  clusters:
    description: The clusters of the rollout (the play's hosts), in inventory order.
    type: list
    elements: str
    required: true
  canary:
    description: Clusters that form the first wave, in this order (the members of a canary group).
    type: list
    elements: str
    default: []
  waves:
    description:
      - Wave sizes as Ansible's C(serial) list, a number of clusters or a share of the fleet (C("25%")); the last
        one repeats. With O(canary) the canary is the first wave and the other entries size the rest.
    type: list
    elements: raw
    default: [1, "25%", "100%"]
  first_wave:
    description:
      - The number of this run's first wave (a workflow that runs the rest of the fleet in a second job passes 2).
      - At most 1000 - waves of one rollout, a fleet of 1000 clusters one at a time.
    type: int
    default: 1
  rollout_id:
    description: Name of the rollout; default the change with a digest of its parameters.
    type: str
  reports_dir:
    description: Where the rollout's directory C(rollout-<rollout id>) is.
    type: path
    default: reports
  retry_rolled_back:
    description: Also run the clusters where an earlier run of this rollout rolled the change back.
    type: bool
    default: false
  max_fail_percentage:
    description:
      - The share of a wave's clusters that may fail the gate or fail (in percent) before the rollout halts.
      - At most 100 - a share in percent.
    type: float
    default: 0
  baseline_max_age:
    description:
      - A baseline measured by an earlier run of this rollout is reused when younger than this (seconds).
      - At most 604800 - a week; an older baseline no longer stands for the cluster.
    type: int
    default: 86400
  rollout_action:
    description:
      - V(run) rolls the change out (resuming an earlier run of the same rollout); V(abort) rolls back every cluster
        this rollout changed, wave by wave, reads each back and records it V(aborted).
    type: str
    choices: [run, abort]
    default: run
  pause_after_wave:
    description:
      - Stop cleanly after this wave; the later waves are left for a rerun of the same rollout, which goes on
        from there. The plan and the report name what is left.
      - At most 1000 - waves of one rollout, a fleet of 1000 clusters one at a time.
    type: int
  bucket:
    description:
      - Also read the records under C(<prefix>/rollout-<rollout id>/clusters/) of this bucket, where the other jobs and
        slices of the rollout keep them (boto3's credential chain, as M(storageperf.k8s.reports_upload)).
    type: str
  prefix:
    description: The key prefix the rollout's directory is under in O(bucket).
    type: str
    default: storageperf
author:
  - storageperf.k8s maintainers (@storageperf)
seealso:
  - module: storageperf.k8s.rollout_gate
  - module: storageperf.k8s.rollout_record
  - module: storageperf.k8s.rollout_report
requirements:
  - boto3 on the host running the module, only with O(bucket) (C(requirements-s3.txt) of the collection)
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
  - storageperf.k8s.s3
"""

EXAMPLES = r"""
- name: Plan the rollout of Trident's concurrent core, canary first
  storageperf.k8s.rollout_plan:
    change: trident_concurrency
    clusters: "{{ ansible_play_hosts_all }}"
    canary: "{{ groups['canary'] | default([]) }}"
    waves: [1, "100%"]
    reports_dir: /srv/reports
  register: plan

- name: Show it
  ansible.builtin.debug:
    msg: "{{ plan.lines }}"
"""

RETURN = r"""
rollout:
  description: The rollout's identity, as every record of it carries it.
  returned: always
  type: dict
  sample: {"id": "trident_concurrency-1a2b3c4d", "change": "trident_concurrency", "state": "present",
           "parameters": {"storage_class": "ontap-nas"}, "max_fail_percentage": 0}
rollout_dir:
  description: The rollout's directory (records in C(clusters/), the reports beside).
  returned: always
  type: str
waves:
  description: The waves in order, each C({wave, clusters}).
  returned: always
  type: list
  elements: dict
serial:
  description: The waves' sizes, for the play's C(serial).
  returned: always
  type: list
  elements: int
order:
  description: The clusters in wave order, for the group the rollout play runs over (not those after a pause).
  returned: always
  type: list
  elements: str
clusters:
  description:
    - Per cluster C({wave, reason, record}) - C(record) is its latest record (null when none), which the
      cluster's turn reads against the cluster (M(storageperf.k8s.rollout_record) is a write-ahead log), C(reason)
      what the record alone suggests.
  returned: always
  type: dict
action:
  description: The run's O(rollout_action).
  returned: always
  type: str
paused:
  description: With O(pause_after_wave), C({after_wave, left}) - the clusters of the waves left for a later run; else null.
  returned: always
  type: dict
probe:
  description: The benchmark that proves the change, its size and the steps the gate judges.
  returned: always
  type: dict
tuning:
  description: The advisor's name for the change (its expected gain is in M(storageperf.k8s.tuning_advice)'s entry of that name).
  returned: always
  type: str
pending:
  description: A C(pending) record for every cluster this run works on, for M(storageperf.k8s.rollout_record) with keep_existing.
  returned: always
  type: list
  elements: dict
lines:
  description: The plan as text lines for the console.
  returned: always
  type: list
  elements: str
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import plan as P
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import waves as W


def _plan(module: StoragePerfModule) -> Dict[str, Any]:
    return dict(P.plan_with_records(module.params), changed=False)


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            change=dict(type="str", required=True, choices=["trident_concurrency", "snapshot_controller",
                                                            "csi_sidecars", "parallel_attach"]),
            change_parameters=dict(type="dict", default={}),
            clusters=dict(type="list", elements="str", required=True),
            canary=dict(type="list", elements="str", default=[]),
            waves=dict(type="list", elements="raw", default=list(W.DEFAULT_WAVES)),
            first_wave=dict(type="int", default=1),
            rollout_id=dict(type="str"),
            reports_dir=dict(type="path", default="reports"),
            retry_rolled_back=dict(type="bool", default=False),
            max_fail_percentage=dict(type="float", default=0),
            baseline_max_age=dict(type="int", default=86400),
            rollout_action=dict(type="str", choices=["run", "abort"], default="run"),
            pause_after_wave=dict(type="int"),
            bucket=dict(type="str"),
            prefix=dict(type="str", default="storageperf"),
            **U.S3_ARG_SPEC,
        ),
        supports_check_mode=True,
        limits={"first_wave": L.FIRST_WAVE, "max_fail_percentage": L.PERCENT, "baseline_max_age": L.BASELINE_AGE,
                "pause_after_wave": L.FIRST_WAVE},
    )
    p = module.params
    if p["max_fail_percentage"] < 0:
        module.fail_json(msg="max_fail_percentage is %s: give a share of a wave in percent, 0 to 100"
                         % p["max_fail_percentage"])
    if p["first_wave"] < 1:
        module.fail_json(msg="first_wave is %d: waves are numbered from 1" % p["first_wave"])
    module.run(_plan)


if __name__ == "__main__":
    main()
