#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
DOCUMENTATION = r"""
---
module: metrics_push
short_description: Export a benchmark result as Prometheus metrics (metrics.prom and a Pushgateway)
version_added: "0.2.0"
description:
  - Turns a result document (C(docs/results.md) of the collection) into Prometheus gauges such as
    C(storageperf_step_duration_seconds) and C(storageperf_speedup_ratio), with the run id and versions in one
    C(storageperf_run_info) series, writes them in the Prometheus text format 0.0.4 as C(metrics.prom) next to
    C(result.json) (what node-exporter's textfile collector reads; temporary file and rename),
    and, with O(pushgateway_url), pushes the same metrics to a Prometheus Pushgateway into the group
    C(job=storageperf), C(cluster), C(benchmark).
  - A Pushgateway that cannot be reached is a warning naming the URL and the error, never a failure; the run
    and the text file are kept.
  - Without O(result) the module only checks O(pushgateway_url) and that prometheus-client is installed; the
    benchmark roles call it so before they measure, so that a bad URL fails the run before anything runs.
  - "Basic auth for the Pushgateway comes from the environment of the controller only:
    E(STORAGEPERF_PUSHGATEWAY_USERNAME) and E(STORAGEPERF_PUSHGATEWAY_PASSWORD)."
options:
  result:
    description:
      - Path of a result document (C(result.json)) or of the run directory holding one.
      - C(metrics.prom) is written into the same directory.
    type: path
  cluster:
    description:
      - The value of the C(cluster) label and grouping key, normally the inventory host of the cluster, made an
        identifier (characters other than letters, digits and C(_.:-) become C(_)).
      - Required with O(result).
    type: str
  pushgateway_url:
    description:
      - Base URL of the Pushgateway (C(http://pushgateway:9091)); empty writes C(metrics.prom) only.
      - The playbooks take it as C(metrics_pushgateway_url). No user or password in the URL.
    type: str
    default: ""
  timeout:
    description:
      - Seconds to wait for the Pushgateway before giving up on the push (a warning).
      - At most 3600 - an hour for one API request.
    type: float
    default: 10
requirements:
  - prometheus-client
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode computes the metrics and reports the path, but writes and pushes nothing.
seealso:
  - module: storageperf.k8s.bench_report
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
"""
EXAMPLES = r"""
- name: Fail early on a bad Pushgateway URL
  storageperf.k8s.metrics_push:
    pushgateway_url: "{{ metrics_pushgateway_url | default('') }}"

- name: Write metrics.prom next to result.json and push to the Pushgateway
  storageperf.k8s.metrics_push:
    result: reports/twin-1/csi_lifecycle-20260620T090000Z-a1b2c3/result.json
    cluster: "{{ inventory_hostname }}"
    pushgateway_url: http://pushgateway.example:9091
  environment:
    STORAGEPERF_PUSHGATEWAY_USERNAME: "{{ lookup('ansible.builtin.env', 'PGW_USER') }}"
    STORAGEPERF_PUSHGATEWAY_PASSWORD: "{{ lookup('ansible.builtin.env', 'PGW_PASSWORD') }}"
"""
RETURN = r"""
path:
  description: Absolute path of C(metrics.prom).
  returned: when O(result) is given
  type: str
  sample: /srv/reports/twin-1/csi_lifecycle-20260620T090000Z-a1b2c3/metrics.prom
pushed:
  description: Whether the Pushgateway accepted the metrics.
  returned: always
  type: bool
pushgateway_url:
  description: The URL as used (trailing slash removed); empty when there is no push.
  returned: always
  type: str
grouping_key:
  description: The Pushgateway group the metrics replace.
  returned: when O(result) is given
  type: dict
  sample: {job: storageperf, cluster: twin-1, benchmark: csi_lifecycle}
run_id:
  description: The run id of the document.
  returned: when O(result) is given
  type: str
families:
  description: Names of the metric families written.
  returned: when O(result) is given
  type: list
  elements: str
  sample: [storageperf_run_info, storageperf_step_duration_seconds, storageperf_speedup_ratio]
samples:
  description: Number of samples (series) written.
  returned: when O(result) is given
  type: int
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import metrics_push


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            result=dict(type="path"),
            cluster=dict(type="str"),
            pushgateway_url=dict(type="str", default=""),
            timeout=dict(type="float", default=10),
        ),
        required_by={"result": ("cluster",)},
        supports_check_mode=True,
        limits={"timeout": L.REQUEST_TIMEOUT},
    )
    module.run(run)


def run(module: StoragePerfModule) -> Dict[str, Any]:
    return metrics_push(module.params, check_mode=module.check_mode)  # a Pushgateway that is down only warns


if __name__ == "__main__":
    main()
