#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_measure
short_description: Measure one repetition of a planned benchmark run, object by object from watch events
version_added: "0.2.0"
description:
  - Runs one repetition of one variant of the plan that M(storageperf.k8s.bench_plan) stored in the run's result
    document; it neither takes the benchmark's options again nor reads the cluster's preflight facts again.
  - The repetition runs in an owner namespace (labelled C(storageperf.k8s/run-id) and C(storageperf.k8s/benchmark)
    like everything it creates), and the document is rewritten after every step.
  - Each step submits its batch (the plan's C(concurrency) requests at a time) and waits for every object to reach
    its terminal state, which it learns from one watch per resource kind started before the first request, never by
    polling objects. Start and end of every object are the client's monotonic receive times.
  - "csi_lifecycle uses a namespace per repetition and deletes it afterwards (the plan's C(cleanup)); attach_stress
    keeps one namespace for the run, whose StatefulSet and disks every variant reuses, as the seed does: remove it
    with M(storageperf.k8s.bench_cleanup) at the end of the run (the roles do). fio and sysbench measure the
    StorageClass their variant is named after, in a namespace per repetition deleted afterwards (the plan's
    C(cleanup)); a step waits by watch for a Job's end, and what the tool printed (the fio jobs, the sysbench tests),
    parsed from the pod log, makes the repetition's steps. sysbench reads the database's root password from
    E(STORAGEPERF_SYSBENCH_PASSWORD) in this module's environment (random when unset), never from an argument."
  - While a step runs, the action plugin of the same name prints progress lines on the controller
    (objects done / total and rate) when the module runs there (connection C(local)).
extends_documentation_fragment:
  - storageperf.k8s.bench_run_id
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
options:
  variant:
    description:
      - Name of the configuration being measured (a column in the report), e.g. C(concurrency on); one of the
        plan's variants when it names them.
    type: str
    default: as configured
  variant_settings:
    description: 'What the variant sets, recorded in the document, e.g. C({"enableConcurrency": true}).'
    type: dict
    default: {}
  sweep_point:
    description:
      - In a run whose plan sweeps sizes, the size this repetition measures (one of them); refused in a run without
        a sweep. The document variant is then C(<variant> · <size> vol), which records C(sweep) {variant, parameter,
        value}.
      - At most 5000 - 5x seed 002's largest run of 1000; the run makes as many clones and snapshots again, and each
        ontap-nas volume is a FlexVol, of which an ONTAP node holds 1000 to 2500.
    type: int
  progress_file:
    description:
      - File the module rewrites with the running step's progress. Set by the action plugin; leave unset.
    type: path
  progress_interval:
    description:
      - Seconds between progress updates.
      - At most 600 - ten minutes between two progress lines or polls.
    type: float
    default: 2
attributes:
  check_mode:
    support: full
    details: Reads the stored plan; creates nothing and writes no file.
  diff_mode:
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
    details: The action plugin relays progress while the module runs.
notes:
  - "Run it on the controller (C(delegate_to: localhost) or a play on localhost) to see progress, and so the
    result document lands where M(storageperf.k8s.bench_report) reads it."
  - A step whose prerequisite is missing (no VolumeSnapshotClass) or whose input step failed is recorded as
    skipped with the reason.
seealso:
  - module: storageperf.k8s.bench_plan
  - module: storageperf.k8s.bench_finish
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Measure one repetition with Trident concurrency on
  storageperf.k8s.bench_measure:
    run_id: "{{ plan.run_id }}"
    reports_dir: reports
    variant: concurrency on
    variant_settings: {enableConcurrency: true}

- name: One point of a sweep planned with csi_lifecycle.sweep [10, 100]
  storageperf.k8s.bench_measure:
    run_id: "{{ plan.run_id }}"
    reports_dir: reports
    variant: concurrency on
    sweep_point: 100
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
plan:
  description: The stored plan's facts this repetition ran with (node, replicas, snapshot class ...).
  returned: always
  type: dict
messages:
  description: Things worth knowing, e.g. why replicas were capped.
  returned: always
  type: list
  elements: str
status:
  description: Status of the repetition.
  returned: always
  type: str
  sample: ok
variant:
  description: The variant measured; in a sweep the document variant of the point, C(<variant> · <volumes> vol).
  returned: always
  type: str
repetition:
  description: The repetition number within the variant.
  returned: success
  type: int
namespace:
  description: The owner namespace of the repetition.
  returned: success
  type: str
steps:
  description: One line per step (no per-object timings; those are in the document).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: create_volume, status: ok, count: 100, unit: vol, wall_s: 41.2, rate: 2.43, api_requests: 104,
       latency: {min: 0.8, p50: 20.1, p90: 37.0, p99: 40.9, max: 41.2, mean: 20.5}}
failed_steps:
  description: How many steps failed, timed out or were disturbed.
  returned: always
  type: int
cleanup:
  description: What the cleanup after the repetition deleted, or its error.
  returned: success
  type: dict
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.modules import RUN_ARG_SPEC, bench_measure
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def argument_spec() -> Dict[str, Any]:
    return dict(
        **RUN_ARG_SPEC,
        variant=dict(type="str", default="as configured"),
        variant_settings=dict(type="dict", default={}),
        sweep_point=dict(type="int"),
        progress_file=dict(type="path"),
        progress_interval=dict(type="float", default=2.0),
    )


LIMITS = {"sweep_point": L.VOLUMES, "progress_interval": L.INTERVAL}


def main() -> None:
    module = StoragePerfModule(argument_spec=argument_spec(), auth="k8s", supports_check_mode=True, limits=LIMITS)
    module.run(lambda m: bench_measure(m.params, m.client, check_mode=m.check_mode, warn=m.warn))


if __name__ == "__main__":
    main()
