#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_report
short_description: Assemble a guarded rollout's per-cluster records into rollout.json, rollout.md and rollout.html
version_added: "0.2.0"
description:
  - Reads the records M(storageperf.k8s.rollout_record) wrote, C(<rollout_dir>/clusters/<cluster>.json), and with
    O(bucket) those that M(storageperf.k8s.reports_upload) put under C(<prefix>/clusters/) in an S3-compatible bucket.
    Per cluster the newest record wins; the others stay in its C(history).
  - "Judges each wave: its failures (clusters rolled back or failed) against O(max_fail_percentage). A wave with more
    is C(halted), and the first such wave halts the rollout. A wave with a pending cluster is C(pending)."
  - Writes C(rollout.json) (C(docs/rollout.schema.json), validated before it is written), C(rollout.md) and a
    self-contained C(rollout.html) into O(output_dir). Each holds one table per wave (decision, reason, the gate's
    speedup with its confidence interval, the required speedup, failed operations, new warnings, rollback) and each
    cluster's step table from the gate.
  - Files are written atomically and only when their content changes; the same records give the same files.
  - A record file that is not JSON or not a record is left out and named (in a warning and in the reports), never
    merged. Records of two rollouts fail naming both ids.
options:
  rollout_dir:
    description:
      - The rollout's directory (C(<reports_dir>/rollout-<rollout id>)), holding C(clusters/<cluster>.json).
      - Required unless O(bucket) is given.
    type: path
  output_dir:
    description: Directory for C(rollout.json), C(rollout.md) and C(rollout.html). Default O(rollout_dir).
    type: path
  max_fail_percentage:
    description:
      - Percentage (0 to 100) of a wave's clusters that may be rolled back or failed before the wave halts the rollout.
      - Default the C(max_fail_percentage) of the records' rollout.
      - At most 100 - a share in percent.
    type: float
  title:
    description: Heading of the reports. Default "Rollout of <change> (<rollout id>)".
    type: str
  paused:
    description:
      - The run stopped after a wave on purpose (C(pause_after_wave) of the rollout) - C(after_wave) and C(left), the
        clusters of the later waves. The reports say so and name what is left; a rerun goes on.
    type: dict
  bucket:
    description: Also read the records under O(prefix) in this bucket (boto3's credential chain, as M(storageperf.k8s.reports_upload)).
    type: str
  prefix:
    description: The key prefix the rollout directory was uploaded under; the records are C(<prefix>/clusters/<cluster>.json).
    type: str
    default: ""
requirements:
  - boto3 on the host running the module, only with O(bucket) (C(requirements-s3.txt) of the collection)
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode reads and judges the records and returns the document, but writes nothing.
seealso:
  - module: storageperf.k8s.rollout_record
  - module: storageperf.k8s.reports_upload
extends_documentation_fragment:
  - storageperf.k8s.s3
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: The rollout's report
  storageperf.k8s.rollout_report:
    rollout_dir: "{{ reports_dir }}/rollout-{{ rollout_id }}"
  delegate_to: localhost
  run_once: true
  register: rollout

- name: Stop when a wave halted the rollout
  ansible.builtin.fail:
    msg: "{{ rollout.headline }}"
  when: rollout.halted

- name: The report of a rollout whose records another job uploaded to Alibaba Cloud OSS
  storageperf.k8s.rollout_report:
    bucket: perf-reports-hz
    prefix: "rollouts/rollout-{{ rollout_id }}"
    endpoint_url: https://s3.oss-cn-hangzhou.aliyuncs.com
    region: cn-hangzhou
    addressing_style: virtual
    signature_version: s3
    output_dir: /srv/reports/rollout-{{ rollout_id }}
"""

RETURN = r"""
rollout:
  description: The rollout document (C(docs/rollout.schema.json)), as written to C(rollout.json).
  returned: always
  type: dict
summary:
  description: The clusters by decision.
  returned: always
  type: dict
  sample: {promoted: [twin-1, twin-2], rolled_back: [twin-3], failed: [], skipped: [], pending: []}
halted:
  description: The first wave whose failures passed O(max_fail_percentage), and why; null when none did.
  returned: always
  type: dict
  sample: {wave: 1, reason: "wave 1: 1 of 1 cluster rolled back or failed (100%), above max_fail_percentage 0%;
    later waves are skipped"}
headline:
  description: The report's one line verdict.
  returned: always
  type: str
  sample: "3 clusters: 2 promoted, 1 rolled back; wave 2 of 2 done"
paths:
  description: Absolute path of each written (or, in check mode, would-be) file, by format.
  returned: always
  type: dict
  sample: {json: /srv/reports/rollout-x/rollout.json, md: /srv/reports/rollout-x/rollout.md,
           html: /srv/reports/rollout-x/rollout.html}
output_dir:
  description: The directory the files are in.
  returned: always
  type: str
changed_files:
  description: Formats whose file was (or in check mode would be) written because its content changed.
  returned: always
  type: list
  elements: str
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.state_modules import rollout_report


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            rollout_dir=dict(type="path"),
            output_dir=dict(type="path"),
            max_fail_percentage=dict(type="float"),
            title=dict(type="str"),
            paused=dict(type="dict"),
            bucket=dict(type="str"),
            prefix=dict(type="str", default=""),
            **U.S3_ARG_SPEC,
        ),
        required_one_of=[("rollout_dir", "bucket")],
        supports_check_mode=True,
        limits={"max_fail_percentage": L.PERCENT},
    )
    module.run(run)


def run(module: StoragePerfModule) -> Dict[str, Any]:
    return rollout_report(module.params, check_mode=module.check_mode)  # a record file left out: a warning


if __name__ == "__main__":
    main()
