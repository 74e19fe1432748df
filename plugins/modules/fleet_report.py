#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: fleet_report
short_description: Put the benchmark results or tuning advice of many clusters side by side in one report
version_added: "0.2.0"
description:
  - Reads one result document (C(docs/results.md)) or one advice document per cluster and writes one fleet
    report, C(<reports_dir>/<name>/fleet.json), C(fleet.md) and C(fleet.html) (self-contained, with one chart).
  - "Benchmarks: per cluster and per variant every step's median time and rate, the sum of step times and the
    speedup of the last variant over the first. Advice: the cluster x tuning table, the state in each cell and
    the reasons as numbered notes."
  - A cluster without a result (its host failed or was unreachable, or its file cannot be read) is a row with
    its error, never left out. C(fleet.json) follows C(docs/fleet.schema.json) and is validated before it is written.
  - Files are written atomically and only when their content changes. Run it on the host that holds the
    documents, normally the controller (C(delegate_to) V(localhost)).
options:
  entries:
    description:
      - One entry per cluster. Keys C(cluster) (the inventory host name, required), C(path) (a C(result.json) or
        advice JSON file, or the run directory holding C(result.json)), C(document) (the document itself) and
        C(error) (why the cluster has no result). Give C(path) or C(document), or only C(error).
      - An entry with a document and an error (the host failed after writing its result) keeps its figures and
        is counted as failed.
    type: list
    elements: dict
    required: true
  kind:
    description:
      - V(bench) for result documents, V(advice) for advice documents. By default detected from the documents.
    type: str
    choices: [bench, advice]
  reports_dir:
    description: Parent directory; the files go to C(<reports_dir>/<name>/).
    type: path
    required: true
  name:
    description:
      - Directory name of the fleet report (letters, digits, C(.), C(_), C(-)). Default C(fleet-<UTC yyyymmddThhmmssZ>).
      - With a fixed name a second run over the same documents changes nothing.
    type: str
  title:
    description: Heading of the report. Default "<benchmark> benchmark across N clusters" or "Tuning advice across N clusters".
    type: str
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode builds and validates the report and says which files would be written, but writes nothing.
seealso:
  - module: storageperf.k8s.bench_report
  - module: storageperf.k8s.reports_upload
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""

EXAMPLES = r"""
- name: One report for three clusters, one of which never produced a result
  storageperf.k8s.fleet_report:
    entries:
      - cluster: prod-hangzhou
        path: reports/prod-hangzhou/csi_lifecycle-20260620T090000Z-a1b2c3/result.json
      - cluster: prod-beijing
        path: reports/prod-beijing/csi_lifecycle-20260620T090001Z-d4e5f6/result.json
      - cluster: staging
        error: "no result: the host failed or was unreachable"
    reports_dir: reports
    name: fleet-csi-lifecycle
  delegate_to: localhost
  run_once: true
  register: fleet

- name: Show the summary
  ansible.builtin.debug:
    msg: "{{ fleet.summary.ok }} of {{ fleet.summary.clusters }} clusters ok; {{ fleet.paths.html }}"
"""

RETURN = r"""
paths:
  description: Absolute path of each written (or, in check mode, would-be) file, by format.
  returned: always
  type: dict
  sample:
    json: /srv/reports/fleet-20260620T093000Z/fleet.json
    markdown: /srv/reports/fleet-20260620T093000Z/fleet.md
    html: /srv/reports/fleet-20260620T093000Z/fleet.html
output_dir:
  description: The directory the files are in.
  returned: always
  type: str
  sample: /srv/reports/fleet-20260620T093000Z
name:
  description: The fleet report's name (its directory name).
  returned: always
  type: str
  sample: fleet-20260620T093000Z
kind:
  description: V(bench) or V(advice).
  returned: always
  type: str
changed_files:
  description: Formats whose file was (or in check mode would be) written because its content changed.
  returned: always
  type: list
  elements: str
  sample: [json, markdown, html]
summary:
  description:
    - Clusters in the report, how many have a complete result (C(ok)) and how many do not (C(failed)),
      and the names of the failed ones. Advice reports add the count of tunings per state.
  returned: always
  type: dict
  sample: {clusters: 3, ok: 2, failed: 1, failed_clusters: [staging]}
table:
  description: The main table as Markdown lines (for debug output).
  returned: always
  type: list
  elements: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import fleet_report


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            entries=dict(type="list", elements="dict", required=True),
            kind=dict(type="str", choices=["bench", "advice"]),
            reports_dir=dict(type="path", required=True),
            name=dict(type="str"),
            title=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.run(lambda m: fleet_report(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
