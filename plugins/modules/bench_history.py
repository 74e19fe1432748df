#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_history
short_description: Every benchmark run of a reports directory in time order, with the regressions its change points show
version_added: "0.2.0"
description:
  - Reads every result document (C(docs/results.md)) under O(reports_dir), laid out as
    C(<reports_dir>/<cluster>/<run_id>/result.json), and, with O(bucket), every C(.../<cluster>/<run_id>/result.json)
    under O(prefix) in an S3-compatible bucket (where M(storageperf.k8s.reports_upload) puts them).
  - "Groups the runs into series: one cluster's runs of one configuration, oldest first: benchmark, variant, size
    (the variant's sweep value, else the document's C(volumes) or C(replicas) parameter) and the settings the run
    measured (the variant's settings such as Trident's C(enableConcurrency), the storage class, and a rollout probe's
    phase, C(-before-) or C(-after-) in its run id). Writes C(history.json), C(history.md) and C(history.html)
    (self-contained, one trend chart per series) into O(output_dir)."
  - "Each ok run gives each step one figure from its per-operation latencies (their geometric mean over the run's
    repetitions; the repetitions' wall times where the document kept no per-object timings). Change points in each
    step's series are found with E-Divisive means and Student's t-test, Apache Otava's algorithm, at O(max_pvalue).
    A change point is a regression when the level after it is at least O(min_effect_pct) above the level before it
    (twice that when the new level rests on the newest run alone). Failed and interrupted runs are shown but are no
    evidence. C(docs/history.md) gives the false-alarm and detection rates this has."
  - "A regression is reported once: C(history-state.json) in O(output_dir) keeps what was reported, and later runs
    return it under C(known_regressions) (\"known since run <id>\"), not under C(regressions)."
  - Returns the regressions still in force at each series' latest run, for an AWX notification or a later workflow node.
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
  max_pvalue:
    description:
      - Significance of a change point (the two-sided t-test between the runs before and after it). Above 0. At most 0.5.
      - The default is Otava's. A larger value finds smaller and younger changes and raises more false alarms
        (C(docs/history.md), "Calibration").
    type: float
    default: 0.001
    version_added: "0.3.0"
  min_effect_pct:
    description:
      - How much slower (in per cent of the level before) a change point must make a step to be a regression. A new
        level that rests on the newest run alone needs twice this. At most 1000.
      - The default, 50, lies above what machine load alone moved a step by on the twin (up to +39 % over three runs)
        and below what a real fault did (+60 % to +380 %); a quiet cluster can ask for less (C(docs/history.md)).
    type: float
    default: 50.0
    version_added: "0.3.0"
  tolerances:
    description:
      - No longer used (ignored, with a warning). History judged each run against a median with compare's
        tolerances; it now finds change points (O(max_pvalue), O(min_effect_pct)).
    type: dict
  baseline_runs:
    description:
      - "No longer used (ignored, with a warning): a change point's baseline is every run of its level before it.
        At most 50."
    type: int
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
  - Check mode reads and judges every document and returns the regressions, but writes nothing (the state neither,
    so a later run reports them again).
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

- name: The history of the reports kept in Alibaba Cloud OSS, asking a larger effect of a noisy staging cluster
  storageperf.k8s.bench_history:
    bucket: perf-reports-hz
    prefix: storageperf
    endpoint_url: https://s3.oss-cn-hangzhou.aliyuncs.com
    region: cn-hangzhou
    addressing_style: virtual
    signature_version: s3
    output_dir: /srv/reports/history
    min_effect_pct: 100
"""

RETURN = r"""
regressions:
  description:
    - One entry per regression still in force at the latest run of each series and not reported before (older ones
      are under C(known_regressions); every change point stays in the history files).
    - C(run_id) is the first run of the slower level; C(baseline) and C(candidate) are the levels before and after it,
      in seconds (the geometric mean of the operations' latencies, C(field) latency, or of the repetitions' wall
      times, C(field) wall_s); C(baseline_runs) are the runs of the level before; C(text) is one line for a
      notification.
  returned: always
  type: list
  elements: dict
  sample:
    - cluster: prod-hangzhou
      benchmark: csi_lifecycle
      variant: concurrency on
      size: 100
      config: {enableConcurrency: true, storage_class: ontap-nas}
      run_id: csi_lifecycle-20260627T090000Z-d4e5f6
      latest_run_id: csi_lifecycle-20260628T090000Z-a7b8c9
      step: create_volume
      field: latency
      baseline: 0.41
      candidate: 1.74
      change_pct: 325.3
      pvalue: 0.00085
      limit: "a change point at p ≤ 0.001, ≥ +50%"
      reason: "+325.3% operations' geometric mean latency from run csi_lifecycle-20260627T090000Z-d4e5f6 on (p = 0.00085; 6 runs before, 2 after)"
      baseline_runs: [csi_lifecycle-20260620T090000Z-a1b2c3]
      runs_after: 2
      known_since: null
      text: "prod-hangzhou csi_lifecycle concurrency on @100 create_volume: +325.3% ... (410ms -> 1.7s)"
known_regressions:
  description:
    - The regressions still in force that an earlier run of this module reported (its C(history-state.json)), in the
      shape of C(regressions), with C(known_since) the latest run of the series when it was first reported and
      C(text) ending "known since run <id>".
  returned: always
  type: list
  elements: dict
summary:
  description: Documents read, clusters, series, runs, failed runs, steps that start a regression in any run, regressions
    new in the latest runs, regressions known from before, documents left out.
  returned: always
  type: dict
  sample: {documents: 12, clusters: 2, series: 4, runs: 24, failed_runs: 1, flagged_steps: 2, regressions: 1,
           known_regressions: 1, problems: 0}
baseline:
  description: How regressions are found.
  returned: always
  type: dict
  sample: {method: "change points: E-Divisive means with Student's t-test (Apache Otava's algorithm)",
           max_pvalue: 0.001, min_effect_pct: 50, single_run_effect_pct: 100}
tolerances:
  description: Always empty; kept for playbooks that read it (the option is no longer used).
  returned: always
  type: dict
paths:
  description: Absolute path of each written (or, in check mode, would-be) file, by format.
  returned: always
  type: dict
  sample: {json: /srv/reports/history/history.json, markdown: /srv/reports/history/history.md,
           html: /srv/reports/history/history.html, state: /srv/reports/history/history-state.json}
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
            max_pvalue=dict(type="float", default=0.001),
            min_effect_pct=dict(type="float", default=50.0),
            tolerances=dict(type="dict"),
            baseline_runs=dict(type="int"),
            bucket=dict(type="str"),
            prefix=dict(type="str", default=""),
            **U.S3_ARG_SPEC,
        ),
        required_one_of=[("reports_dir", "bucket")],
        supports_check_mode=True,
        limits={"max_pvalue": L.HISTORY_PVALUE, "min_effect_pct": L.MIN_EFFECT_PCT, "baseline_runs": L.BASELINE_RUNS},
    )
    module.run(lambda m: bench_history(m.params, check_mode=m.check_mode, warn=m.warn))


if __name__ == "__main__":
    main()
