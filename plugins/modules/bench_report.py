#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_report
short_description: Render a storageperf.k8s benchmark result as JSON, Markdown and HTML
version_added: "0.1.0"
description:
  - Reads a result document (the format in C(docs/results.md) of the collection), validates it against
    the result schema, and writes C(result.json), C(report.md) and C(report.html) into one directory.
  - The HTML page is self-contained (inline CSS, charts embedded as PNG) so it can be archived or attached
    to an AWX job as it is. Charts need matplotlib on the host running the module; without it the page
    holds the tables only.
  - Files are written atomically (temporary file and rename) and only when their content changes,
    so a second run reports C(changed=false).
  - With O(results), many runs are rendered in this one module run, one Python start and one matplotlib import
    for all of them. The fleet report renders the clusters' C(report.html) this way when the benchmark left it
    out of each cluster's path (role variable C(bench_report_defer_html)).
options:
  result:
    description:
      - Path of a result document (C(result.json)) or of the run directory holding one.
      - Exactly one of O(result), O(document) and O(results) is required.
    type: path
  results:
    description:
      - Paths of many result documents (or of their run directories), each rendered next to itself as O(result)
        would be, in this one module run. Returns RV(reports) in place of the single run's values.
      - The documents are spread over a pool of processes, one per CPU the module may run on (at most one per
        document), each importing the chart library once, so a fleet's report.html pages are drawn side by side.
    type: list
    elements: path
  document:
    description:
      - The result document itself, for example the fact a benchmark role returned.
    type: dict
  formats:
    description:
      - Which files to write. C(json) rewrites the document in canonical form with per-variant summaries.
    type: list
    elements: str
    choices: [json, markdown, html]
    default: [json, markdown, html]
  output_dir:
    description:
      - Directory the files go into.
      - Defaults to the directory of O(result); required when O(document) is given and O(reports_dir) is not.
      - Mutually exclusive with O(reports_dir) and O(results).
    type: path
  reports_dir:
    description:
      - Parent directory; files go into C(<reports_dir>/<run_id>/).
      - Mutually exclusive with O(results).
    type: path
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode renders everything and reports which files would change, but writes nothing.
seealso:
  - module: storageperf.k8s.bench_compare
  - ref: storageperf.k8s.bench_report role <ansible_collections.storageperf.k8s.bench_report_role>
    description: The role that calls this module and publishes the summary with set_stats.
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: Render a finished run next to its result.json
  storageperf.k8s.bench_report:
    result: reports/csi_lifecycle-20260620T090000Z-a1b2c3/result.json
  register: report

- name: Show where the HTML page is
  ansible.builtin.debug:
    msg: "{{ report.paths.html }}"

- name: Render a document held in a fact, Markdown only, under reports/<run_id>/
  storageperf.k8s.bench_report:
    document: "{{ storageperf_bench_result }}"
    formats: [markdown]
    reports_dir: reports

- name: Draw the HTML page of three runs in one module run
  storageperf.k8s.bench_report:
    results:
      - reports/twin-1/csi_lifecycle-20260620T090000Z-a1b2c3/result.json
      - reports/twin-2/csi_lifecycle-20260620T090001Z-d4e5f6/result.json
      - reports/twin-3/csi_lifecycle-20260620T090002Z-0a1b2c/result.json
    formats: [html]
"""

RETURN = r"""
paths:
  description: Absolute path of each written (or, in check mode, would-be) file, by format.
  returned: when O(result) or O(document) is given
  type: dict
  sample:
    json: /srv/reports/csi_lifecycle-20260620T090000Z-a1b2c3/result.json
    markdown: /srv/reports/csi_lifecycle-20260620T090000Z-a1b2c3/report.md
    html: /srv/reports/csi_lifecycle-20260620T090000Z-a1b2c3/report.html
output_dir:
  description: The directory the files are in.
  returned: when O(result) or O(document) is given
  type: str
  sample: /srv/reports/csi_lifecycle-20260620T090000Z-a1b2c3
changed_files:
  description: Formats whose file was (or would be) written because its content changed.
  returned: when O(result) or O(document) is given
  type: list
  elements: str
  sample: [markdown, html]
summary:
  description:
    - Short summary of the run for facts, set_stats and AWX; see C(docs/results.md) of the collection.
  returned: when O(result) or O(document) is given
  type: dict
  sample:
    run_id: csi_lifecycle-20260620T090000Z-a1b2c3
    benchmark: csi_lifecycle
    status: ok
    started: "2026-06-20T09:00:00.000000Z"
    finished: "2026-06-20T09:32:15.000000Z"
    variants:
      - name: concurrency off
        sum_wall_s: 1715.0
        sum_text: 28m 35s
        steps: 8
        failed_steps: 0
    speedup: 7.8
    speedup_text: "~7.8× overall"
    table: ["| Operation | concurrency off | concurrency on | ... |"]
markdown:
  description: The Markdown report text (also when C(markdown) is not among O(formats)).
  returned: when O(result) or O(document) is given
  type: str
reports:
  description: One entry per path of O(results), in their order.
  returned: when O(results) is given
  type: list
  elements: dict
  contains:
    result:
      description: The path as given.
      type: str
    output_dir:
      description: The directory its files are in.
      type: str
    paths:
      description: Absolute path of each written (or would-be) file, by format.
      type: dict
    changed_files:
      description: Formats whose file was (or would be) written because its content changed.
      type: list
      elements: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import bench_report, render_each


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            result=dict(type="path"),
            document=dict(type="dict"),
            results=dict(type="list", elements="path"),
            formats=dict(type="list", elements="str", choices=list(R.FORMATS), default=list(R.FORMATS)),
            output_dir=dict(type="path"),
            reports_dir=dict(type="path"),
        ),
        required_one_of=[("result", "document", "results")],
        mutually_exclusive=[("result", "document", "results"), ("output_dir", "reports_dir"), ("results", "output_dir"),
                            ("results", "reports_dir")],
        supports_check_mode=True,
    )
    module.run(lambda m: render_each(m.params, m.check_mode) if m.params["results"] is not None
               else bench_report(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
