#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_finish
short_description: Give a benchmark run's result document its final status, write and push its metrics, render it
version_added: "0.2.0"
description:
  - The last of the three bench modules (M(storageperf.k8s.bench_plan), M(storageperf.k8s.bench_measure),
    M(storageperf.k8s.bench_finish)). It reads no cluster.
  - Gives the run's result document its final status (V(ok) lets the steps decide) and per-variant summaries.
  - When the plan asked for metrics (M(storageperf.k8s.bench_plan)'s O(storageperf.k8s.bench_plan#module:metrics)),
    writes C(metrics.prom) next to C(result.json) and pushes the same metrics to the plan's Pushgateway when it has
    one, as M(storageperf.k8s.metrics_push) does, in this module's run. A push that fails only warns.
  - With O(formats), renders the final document next to C(result.json) as M(storageperf.k8s.bench_report) does
    (its O(storageperf.k8s.bench_report#module:result)), in this module's run, so a benchmark role needs no
    M(storageperf.k8s.bench_report) run of its own after this one (C(docs/performance.md)).
extends_documentation_fragment:
  - storageperf.k8s.bench_run_id
  - storageperf.k8s.attributes
options:
  status:
    description: Final status; V(ok) lets the steps decide (failed when one failed or timed out).
    type: str
    choices: [ok, failed, interrupted]
    default: ok
  reason:
    description: Why the run failed or was interrupted.
    type: str
  formats:
    description:
      - Reports to write next to C(result.json) once the document is final, as
        M(storageperf.k8s.bench_report)'s O(storageperf.k8s.bench_report#module:formats). The empty list renders
        nothing.
    type: list
    elements: str
    choices: [json, markdown, html]
    default: []
attributes:
  check_mode:
    support: full
    details: Computes the final status and summaries; writes no file and pushes nothing.
  diff_mode:
    support: none
seealso:
  - module: storageperf.k8s.bench_plan
  - module: storageperf.k8s.bench_report
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Close the document (and write metrics.prom and push it when the plan asked for metrics)
  storageperf.k8s.bench_finish:
    run_id: "{{ plan.run_id }}"
    reports_dir: reports
    status: "{{ 'failed' if failure else 'ok' }}"
    reason: "{{ failure | default(omit, true) }}"

- name: Close the document and write report.md and report.html next to it
  storageperf.k8s.bench_finish:
    run_id: "{{ plan.run_id }}"
    reports_dir: reports
    formats: [json, markdown, html]
"""

RETURN = r"""
run_id:
  description: The run id.
  returned: always
  type: str
result_path:
  description: Path of the result document.
  returned: always
  type: str
status:
  description: The document's final status.
  returned: always
  type: str
  sample: ok
summary:
  description: The short summary of the finalized document (report module_utils summarize()).
  returned: always
  type: dict
metrics:
  description: What was written and pushed (the keys of M(storageperf.k8s.metrics_push)'s result).
  returned: when the plan asked for metrics
  type: dict
  sample: {path: reports/twin-1/csi_lifecycle-20260620T090000Z-a1b2c3/metrics.prom, pushed: false, samples: 42}
report:
  description:
    - What M(storageperf.k8s.bench_report) returns for the final document (C(output_dir), C(paths), C(changed_files),
      C(summary) with its C(reports), C(markdown)).
  returned: when O(formats) is not empty
  type: dict
"""

# bench/finish.py, not bench/modules.py: this module reads no cluster, so it loads neither the bench engine nor the
# kubernetes client (docs/performance.md)
from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.finish import RUN_ARG_SPEC, bench_finish
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def argument_spec() -> Dict[str, Any]:
    return dict(
        **RUN_ARG_SPEC,
        status=dict(type="str", default="ok", choices=["ok", "failed", "interrupted"]),
        reason=dict(type="str"),
        formats=dict(type="list", elements="str", choices=["json", "markdown", "html"], default=[]),
    )


def main() -> None:
    module = StoragePerfModule(argument_spec=argument_spec(), supports_check_mode=True)
    module.run(lambda m: bench_finish(m.params, check_mode=m.check_mode, warn=m.warn))


if __name__ == "__main__":
    main()
