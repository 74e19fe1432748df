#!/usr/bin/python
# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gluster_bench_report
short_description: Write the GlusterFS volume-scale benchmark's result document and reports
version_added: "0.1.0"
description:
  - Turns the points collected by the C(gluster_volume_scale) role's benchmark into the collection's result
    document and writes C(<reports_dir>/<run_id>/result.json) atomically, then C(report.md) and C(report.html)
    from it with the shared renderer (C(storageperf.k8s.bench_report) writes the same files from the same
    document), a handshake-against-volume-count table first (a row per mode and count, the seed's reference rows
    marked reported), and in the HTML charts of handshake time against volume count per mode.
  - The document carries the run's plan under C(plan), in the shape the bench engine's C(bench_plan) stores
    (C(benchmark), C(options) from O(parameters), C(read) from O(cluster) and O(components), C(variants) and
    C(settings) from O(modes), C(repeat)). A document already under O(run_id) that holds another plan is refused
    before anything is written, so one run id never mixes the figures of two plans; call the module once with no
    O(points) to store the plan before measuring (the role does).
  - "Runs where the reports should land, normally the controller (C(delegate_to: localhost))."
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
options:
  points:
    description:
      - One entry per mode and volume count, with keys C(mode), C(volumes), C(create) (the result of
        storageperf.k8s.gluster_volumes), C(handshake) (the result of storageperf.k8s.gluster_handshake_bench)
        and optionally C(error).
    type: list
    elements: dict
    required: true
  modes:
    description: The modes in run order, each with C(name) and C(settings) (the cluster options used).
    type: list
    elements: dict
    required: true
  reports_dir:
    description: Directory that receives C(<run_id>/).
    type: path
    required: true
  run_id:
    description: Run id; empty makes one (C(gluster_volume_scale-<UTC time>-<hex>)).
    type: str
    default: ""
  status:
    description: Run status; V(failed) or V(interrupted) for partial results (they are written all the same).
    type: str
    choices: [ok, failed, interrupted]
    default: ok
  reason:
    description: Why the run failed.
    type: str
  parameters:
    description: Benchmark parameters to record.
    type: dict
    default: {}
  cluster:
    description: What the pool is (peers, addresses, machine).
    type: dict
    default: {}
  components:
    description: Component versions (glusterfs).
    type: dict
    default: {}
  reference:
    description: Include the seed's published figures (7.5 min and 2 min 18 s at about 2000 volumes) as reference rows.
    type: bool
    default: true
  started:
    description: ISO 8601 UTC start time of the run.
    type: str
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Write the reports
  storageperf.k8s.gluster_bench_report:
    points: "{{ points }}"
    modes: [{name: brick-multiplex off, settings: {brick_multiplex: false}}]
    reports_dir: reports
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
run_id:
  description: The run id (directory name under O(reports_dir)).
  returned: always
  type: str
paths:
  description: Absolute paths of result.json, report.md and report.html.
  returned: always
  type: dict
  sample: {json: /repo/reports/gluster_volume_scale-20250101T000000Z-abc123/result.json}
summary:
  description:
    - One row per mode and volume count (and the seed's reference rows), seconds, read from the document's
      handshake table (C(mode), C(volumes), C(measured), C(handshake_seconds), C(peers_connected_seconds),
      C(volume_status_seconds), C(volume_info_seconds), C(create_seconds), C(error); reference rows C(mode),
      C(volumes), C(measured), C(handshake_seconds)).
  returned: always
  type: list
  elements: dict
status:
  description: The run status written.
  returned: always
  type: str
progress:
  description:
    - The bench engine's progress line (as C(bench_measure) prints it) for the last point of O(points);
      empty without points.
  returned: always
  type: str
  sample: "gluster_volume_scale · brick-multiplex off #1 · Restart handshake, 200 volumes: 2/3 volume counts done, 9.4s (step finished)"
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.report import write_bench_report


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            points=dict(type="list", elements="dict", required=True),
            modes=dict(type="list", elements="dict", required=True),
            reports_dir=dict(type="path", required=True),
            run_id=dict(type="str", default=""),
            status=dict(type="str", choices=["ok", "failed", "interrupted"], default="ok"),
            reason=dict(type="str"),
            parameters=dict(type="dict", default={}),
            cluster=dict(type="dict", default={}),
            components=dict(type="dict", default={}),
            reference=dict(type="bool", default=True),
            started=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.run(lambda m: write_bench_report(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
