#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_history
short_description: Every benchmark run of a reports directory in time order, with each step's regressions flagged
version_added: "0.2.0"
description:
  - Reads every result document (C(docs/results.md)) under O(reports_dir), laid out as
    C(<reports_dir>/<cluster>/<run_id>/result.json), and, with O(bucket), every C(.../<cluster>/<run_id>/result.json)
    under O(prefix) in an S3-compatible bucket (where M(storageperf.k8s.reports_upload) puts them).
  - "Groups the runs into series: one cluster's runs of one benchmark, variant and size (the variant's sweep value,
    else the document's C(volumes) or C(replicas) parameter), oldest first, and writes C(history.json),
    C(history.md) and C(history.html) (self-contained, one trend chart per series) into O(output_dir)."
  - "Each step of each run is judged against its series' baseline: the median of the same figure over the previous
    O(baseline_runs) runs whose status is C(ok), with the tolerances of M(storageperf.k8s.bench_compare). A step
    worse than that beyond the tolerance is flagged C(regression). Failed and interrupted runs are shown but never
    baselines. C(docs/history.md) says why this baseline."
  - Returns the regressions of each series' latest run, for an AWX notification or a later workflow node.
  - Files are written atomically and only when their content changes.
options:
  reports_dir:
    description:
      - Directory the benchmarks wrote into (their C(reports_dir)), holding C(<cluster>/<run_id>/result.json).
      - Required unless O(bucket) is given. The history goes to C(<reports_dir>/history/) unless O(output_dir) says
        otherwise.
    type: path
  output_dir:
    description: Directory for C(history.json), C(history.md) and C(history.html). Default C(<reports_dir>/history).
    type: path
  tolerances:
    description:
      - "Mapping of step tolerance key to limits, as for M(storageperf.k8s.bench_compare), for example
        C({\"*.wall_s\": {\"max_increase_pct\": 10}, \"publish.p99\": {\"max_increase_pct\": 25}})."
      - "Only step keys (C([<variant>/]<step>.<field>)); C(speedup) and C(sum_wall_s) compare variants inside one run."
      - "Default C({\"*.wall_s\": {\"max_increase_pct\": 10}}), the example compare's own help gives."
    type: dict
  baseline_runs:
    description:
      - How many earlier C(ok) runs of the same series make the baseline (their median). V(1) compares every run with
        the one before it. At most 50.
    type: int
    default: 5
  bucket:
    description: Also read the result documents of this bucket (boto3's credential chain, as M(storageperf.k8s.reports_upload)).
    type: str
  prefix:
    description: Key prefix to read under (every key ending in C(<cluster>/<run_id>/result.json) below it).
    type: str
    default: ""
requirements:
  - boto3 on the host running the module, only with O(bucket) (C(requirements-s3.txt) of the collection)
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode reads and judges every document and returns the regressions, but writes nothing.
  - A document that cannot be read or is not a result document is listed under "Documents left out", never dropped
    silently; no document at all fails (a history of nothing must not pass as "no regression").
seealso:
  - module: storageperf.k8s.bench_compare
  - module: storageperf.k8s.fleet_report
extends_documentation_fragment:
  - storageperf.k8s.s3
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: History of every cluster's benchmarks
  storageperf.k8s.bench_history:
    reports_dir: /srv/reports
  delegate_to: localhost
  run_once: true
  register: history

- name: Alert when the latest run of a series regressed
  ansible.builtin.fail:
    msg: "{{ history.regressions | map(attribute='text') | join('; ') }}"
  when: history.regressions | length > 0

- name: The history of the reports kept in Alibaba Cloud OSS, with looser limits on a noisy staging cluster
  storageperf.k8s.bench_history:
    bucket: perf-reports-hz
    prefix: storageperf
    endpoint_url: https://s3.oss-cn-hangzhou.aliyuncs.com
    region: cn-hangzhou
    addressing_style: virtual
    signature_version: s3
    output_dir: /srv/reports/history
    tolerances:
      "*.wall_s": {max_increase_pct: 25}
    baseline_runs: 3
"""

RETURN = r"""
regressions:
  description:
    - One entry per broken tolerance in the latest run of each series (older flags stay in the history files).
    - C(baseline) is the median of the runs in C(baseline_runs); C(text) is one line for a notification.
  returned: always
  type: list
  elements: dict
  sample:
    - cluster: prod-hangzhou
      benchmark: csi_lifecycle
      variant: concurrency on
      size: 100
      run_id: csi_lifecycle-20260627T090000Z-d4e5f6
      step: create_volume
      field: wall_s
      baseline: 41.0
      candidate: 58.2
      change_pct: 41.95
      limit: "≤ +10%"
      reason: "+42.0% above the baseline (limit +10%)"
      baseline_runs: [csi_lifecycle-20260620T090000Z-a1b2c3]
      text: "prod-hangzhou csi_lifecycle concurrency on @100 create_volume.wall_s: +42.0% above the baseline (limit +10%) (41s -> 58s)"
summary:
  description: Documents read, clusters, series, runs, failed runs, steps flagged in any run, regressions in the latest runs, documents left out.
  returned: always
  type: dict
  sample: {documents: 12, clusters: 2, series: 4, runs: 24, failed_runs: 1, flagged_steps: 2, regressions: 1, problems: 0}
baseline:
  description: How the baseline is made.
  returned: always
  type: dict
  sample: {method: median of the previous ok runs, runs: 5}
tolerances:
  description: The tolerances applied (the default when none were given).
  returned: always
  type: dict
paths:
  description: Absolute path of each written (or, in check mode, would-be) file, by format.
  returned: always
  type: dict
  sample: {json: /srv/reports/history/history.json, markdown: /srv/reports/history/history.md,
           html: /srv/reports/history/history.html}
output_dir:
  description: The directory the files are in.
  returned: always
  type: str
changed_files:
  description: Formats whose file was (or in check mode would be) written because its content changed.
  returned: always
  type: list
  elements: str
table:
  description: The regressions table as Markdown lines (for debug output).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import bench_history


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            reports_dir=dict(type="path"),
            output_dir=dict(type="path"),
            tolerances=dict(type="dict"),
            baseline_runs=dict(type="int", default=5),
            bucket=dict(type="str"),
            prefix=dict(type="str", default=""),
            **U.S3_ARG_SPEC,
        ),
        required_one_of=[("reports_dir", "bucket")],
        supports_check_mode=True,
        limits={"baseline_runs": L.BASELINE_RUNS},
    )
    module.run(lambda m: bench_history(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
