#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_run
short_description: Time Kubernetes storage operations object by object from watch events
version_added: "0.1.0"
description:
  - Runs the storage benchmarks of the collection against a Kubernetes cluster and writes their result
    document (format in C(docs/results.md)) to C(<reports_dir>/<run_id>/result.json).
  - "O(benchmark=csi_lifecycle) is the 8-step CSI lifecycle of the Trident concurrent-core benchmark: create
    N volumes, publish them in pods of 4 PVCs, unpublish, snapshot, clone from the snapshots, delete the
    clones, the snapshots and the volumes."
  - "O(benchmark=attach_stress) is the ACK parallel disk attach test: a StatefulSet whose pods have 2 disks
    each and are pinned to one node is scaled from 0 to O(replicas) and back to 0."
  - Each step submits its batch (O(concurrency) requests at a time) and waits for every object to reach its
    terminal state, which it learns from one watch per resource kind started before the first request,
    never by polling objects. Start and end of every object are the client's monotonic receive times.
  - "O(mode=preflight) checks the parameters and the cluster and starts the result document; O(mode=measure)
    runs one repetition of one variant in an owner namespace (labelled C(storageperf.k8s/run-id) and
    C(storageperf.k8s/benchmark) like everything it creates), writing the document after every step;
    O(mode=finalize) gives the document its final status."
  - "csi_lifecycle uses a namespace per repetition and deletes it afterwards (O(cleanup)); attach_stress keeps
    one namespace for the run, whose StatefulSet and disks every variant reuses, as the seed does: remove it
    with M(storageperf.k8s.bench_cleanup) at the end of the run (the roles do)."
  - While a step runs, the action plugin of the same name prints progress lines on the controller
    (objects done / total and rate) when the module runs there (connection C(local)).
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
options:
  benchmark:
    description: Which benchmark.
    type: str
    required: true
    choices: [csi_lifecycle, attach_stress]
  mode:
    description: What to do; see the description.
    type: str
    choices: [preflight, measure, finalize]
    default: measure
  run_id:
    description:
      - The run id (label value on every object, directory under O(reports_dir)).
      - Empty with O(mode=preflight) makes one (C(<benchmark>-<UTC time>-<6 hex>)); required otherwise.
    type: str
    default: ""
  reports_dir:
    description: Directory that receives C(<run_id>/result.json) on the host running the module.
    type: path
    required: true
  cluster_name:
    description:
      - The cluster's name in the inventory (C(inventory_hostname)), recorded as C(cluster.name) in the result
        document beside its API server, so the documents of a fleet run say which cluster each one measured.
    type: str
    version_added: 0.2.0
  variant:
    description: Name of the configuration being measured (a column in the report), e.g. C(concurrency on).
    type: str
    default: as configured
  variant_settings:
    description: 'What the variant sets, recorded in the document, e.g. C({"enableConcurrency": true}).'
    type: dict
    default: {}
  volumes:
    description:
      - (csi_lifecycle) Number of volumes (PVCs).
      - At most 5000 - 5x seed 002's largest run of 1000; the run makes as many clones and snapshots again, and each
        ontap-nas volume is a FlexVol, of which an ONTAP node holds 1000 to 2500.
    type: int
    default: 100
  sweep:
    description:
      - (csi_lifecycle) The sizes (volume counts) of a scaling sweep, e.g. V([10, 100, 1000]); empty measures one size.
      - Each a whole number of at least 1, each once, at least two; any order (the sweep and the report go ascending).
      - With O(mode=preflight) it is checked and recorded as the document's C(parameters.sweep) (the sizes, ascending,
        in the returned C(plan)). With O(mode=measure) the repetition is the sweep point at O(volumes) - the document
        variant C(<variant> · <volumes> vol), which records C(sweep) {variant, parameter, value}.
      - At most 10 entries - sizes of one sweep, each a whole lifecycle run; each at most 5000 - 5x seed 002's largest
        run of 1000; the run makes as many clones and snapshots again, and each ontap-nas volume is a FlexVol, of
        which an ONTAP node holds 1000 to 2500.
    type: list
    elements: int
    default: []
    version_added: 0.2.0
  pvcs_per_pod:
    description:
      - (csi_lifecycle) PVCs mounted by each pod of the publish step.
      - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity; ecs.g7se.16xlarge
        56) and above any CSINode attach limit of the clouds' disk drivers.
    type: int
    default: 4
  size:
    description:
      - Size of every volume.
      - At most 100Ti - ONTAP's largest FlexVol on most platforms (300Ti needs large-volume support); Trident makes
        one FlexVol or LUN per ontap-nas/-san volume.
    type: str
    default: 1Gi
  storage_class:
    description:
      - StorageClass of the volumes.
      - (csi_lifecycle) Required; it must bind C(Immediate) so the create step can be timed without pods.
      - (attach_stress) Default C(alibabacloud-disk), the seed's class, created as in the seed when it does not exist.
        Any other missing class is refused (listing the classes that exist) unless O(create_storage_class) is on.
    type: str
  create_storage_class:
    description:
      - (attach_stress) Create O(storage_class) (O(provisioner), O(disk_type)) when it does not exist, labelled with
        the run so the cleanup removes it.
    type: bool
    default: false
    version_added: 0.2.0
  snapshot_class:
    description: (csi_lifecycle) VolumeSnapshotClass; empty picks the (default) class of the StorageClass's driver.
    type: str
  access_modes:
    description: (csi_lifecycle) Access modes of the PVCs.
    type: list
    elements: str
    default: [ReadWriteOnce]
  steps:
    description: (csi_lifecycle) Steps to run; the others are recorded as skipped.
    type: list
    elements: str
    choices: [create_volume, publish, unpublish, create_snapshot, clone_from_snapshot, delete_clone, delete_snapshot,
              delete_volume]
  pod_image:
    description: Image of the pods (csi_lifecycle default C(registry.k8s.io/pause:3.10); attach_stress the seed's busybox).
    type: str
  replicas:
    description:
      - (attach_stress) Replicas to scale to; capped by the node's disk limit.
      - Default 28, the seed's (the bench_attach_stress role passes its own O(replicas) default, stated in its argument spec).
      - At most 64 - every pod mounts at least one disk and a node takes at most 64.
    type: int
  node:
    description: (attach_stress) Node to pin the pods to; empty picks the first Ready node that has the disk driver.
    type: str
  provisioner:
    description: (attach_stress) CSI driver of the disks.
    type: str
    default: diskplugin.csi.alibabacloud.com
  disk_type:
    description: (attach_stress) The StorageClass's C(type) parameter.
    type: str
    default: cloud_auto
  volumes_per_pod:
    description:
      - (attach_stress) Disks per pod.
      - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity; ecs.g7se.16xlarge
        56) and above any CSINode attach limit of the clouds' disk drivers.
    type: int
    default: 2
  disk_limit:
    description:
      - (attach_stress) Disks the node can take, used when its CSINode has no allocatable count for the driver
        (DescribeInstanceTypes C(DiskQuantity), 56 for ecs.g7se.16xlarge). 0 reads the CSINode only.
      - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity; ecs.g7se.16xlarge
        56) and above any CSINode attach limit of the clouds' disk drivers.
    type: int
    default: 0
  statefulset:
    description: (attach_stress) Name of the StatefulSet.
    type: str
    default: attach-stress
  prewarm:
    description:
      - (attach_stress) Before the first timed scale-up of the run, scale to O(replicas) and back once, so every
        disk exists and each variant times attaching, not provisioning (the seed's parallel run found its disks
        there already). V(false) runs the seed's sequence exactly; the first timed scale-up then provisions too.
    type: bool
    default: true
  concurrency:
    description:
      - Requests in flight at once while a step submits its batch.
      - At most 200 - kube-apiserver's default --max-mutating-requests-inflight; more only queue or get 429.
    type: int
    default: 16
  step_timeout:
    description:
      - Seconds a step waits for its objects; then it ends with status timeout and lists the unfinished ones.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: float
    default: 1800
  give_up_after_warnings:
    description:
      - Settle an object as failed after this many Warning events (e.g. C(ProvisioningFailed)) instead of waiting
        for the step timeout. 0 waits (controllers retry, and a retried object that succeeds is not a failure).
      - At most 100 - Warning events of one object; Kubernetes aggregates repeated events.
    type: int
    default: 0
  keep_objects:
    description: Keep every object's timing in the result document (not only the summaries).
    type: bool
    default: true
  cleanup:
    description:
      - (csi_lifecycle) After a repetition, delete its namespace and everything in it and wait until volumes are gone.
    type: bool
    default: true
  cleanup_timeout:
    description:
      - Seconds the cleanup after a repetition may take.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: float
    default: 900
  status:
    description:
      - (finalize) Final status; V(ok) lets the steps decide (failed when one failed or timed out).
    type: str
    choices: [ok, failed, interrupted]
    default: ok
  reason:
    description: (finalize) Why the run failed or was interrupted.
    type: str
  components:
    description: 'Component versions to record, e.g. C({"trident": "26.06.0"}).'
    type: dict
    default: {}
  notes:
    description: Notes to record in the document.
    type: list
    elements: str
    default: []
  metrics:
    description:
      - (preflight) check O(pushgateway_url) and that prometheus-client is installed, before the result document
        is started; (finalize) write C(metrics.prom) next to C(result.json) and push the same metrics to
        O(pushgateway_url) when it is set, as M(storageperf.k8s.metrics_push) does, in this module's run.
      - A push that fails only warns; the run and C(metrics.prom) are kept (docs/results.md, "Metrics").
      - Requires O(cluster_name) in finalize (the metrics' C(cluster) label).
    type: bool
    default: false
  pushgateway_url:
    description:
      - With O(metrics), the Prometheus Pushgateway's base URL, e.g. C(http://pushgateway.example:9091); empty
        writes C(metrics.prom) only. No user or password in it (the basic auth comes from the environment,
        see M(storageperf.k8s.metrics_push)).
    type: str
    default: ""
  pushgateway_timeout:
    description:
      - Seconds the push may take.
      - At most 3600.
    type: float
    default: 10
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
    details: Checks parameters and reads the cluster; creates nothing and writes no file.
  diff_mode:
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
    details: The action plugin relays progress while the module runs.
notes:
  - "Run it on the controller (C(delegate_to: localhost) or a play on localhost) to see progress, and so the
    result document lands where C(storageperf.k8s.bench_report) reads it."
  - A step whose prerequisite is missing (no VolumeSnapshotClass) or whose input step failed is recorded as
    skipped with the reason.
seealso:
  - module: storageperf.k8s.bench_cleanup
  - module: storageperf.k8s.bench_report
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Check the cluster and start the result document
  storageperf.k8s.bench_run:
    benchmark: csi_lifecycle
    mode: preflight
    storage_class: ontap-nas
    volumes: 100
    reports_dir: reports
  register: pre

- name: Measure one repetition with Trident concurrency on
  storageperf.k8s.bench_run:
    benchmark: csi_lifecycle
    run_id: "{{ pre.run_id }}"
    variant: concurrency on
    variant_settings: {enableConcurrency: true}
    storage_class: ontap-nas
    volumes: 100
    reports_dir: reports

- name: Attach stress, 28 pods with 2 disks on one node
  storageperf.k8s.bench_run:
    benchmark: attach_stress
    run_id: "{{ pre.run_id }}"
    replicas: 28
    variant: parallel attach on
    reports_dir: reports

- name: Close the document, write metrics.prom and push it
  storageperf.k8s.bench_run:
    benchmark: csi_lifecycle
    mode: finalize
    run_id: "{{ pre.run_id }}"
    reports_dir: reports
    cluster_name: twin-1
    metrics: true
    pushgateway_url: http://pushgateway.example:9091
"""

RETURN = r"""
run_id:
  description: The run id.
  returned: always
  type: str
  sample: csi_lifecycle-20260620T090000Z-a1b2c3
result_path:
  description: Path of the result document.
  returned: always
  type: str
plan:
  description: What the benchmark runs with, read from the cluster (node, capped replicas, snapshot class ...).
  returned: preflight and measure
  type: dict
  sample: {replicas: 28, node: cn-hangzhou.192.168.0.1, disk_limit: 56, attach_required: true}
messages:
  description: Things worth knowing, e.g. why replicas were capped or why snapshot steps are skipped.
  returned: preflight and measure
  type: list
  elements: str
status:
  description: Status of the repetition (measure) or of the document (finalize).
  returned: measure and finalize
  type: str
  sample: ok
variant:
  description: The variant measured; in a sweep the document variant of the point, C(<variant> · <volumes> vol).
  returned: measure
  type: str
repetition:
  description: The repetition number within the variant.
  returned: measure
  type: int
namespace:
  description: The owner namespace of the repetition.
  returned: measure
  type: str
steps:
  description: One line per step (no per-object timings; those are in the document).
  returned: measure
  type: list
  elements: dict
  sample:
    - {name: create_volume, status: ok, count: 100, unit: vol, wall_s: 41.2, rate: 2.43, api_requests: 104,
       latency: {min: 0.8, p50: 20.1, p90: 37.0, p99: 40.9, max: 41.2, mean: 20.5}}
cleanup:
  description: What the cleanup after the repetition deleted, or its error.
  returned: measure
  type: dict
summary:
  description: The short summary of the finalized document (report module_utils summarize()).
  returned: finalize
  type: dict
metrics:
  description: What was written and pushed (the keys of M(storageperf.k8s.metrics_push)'s result).
  returned: finalize with O(metrics)
  type: dict
  sample: {path: reports/twin-1/csi_lifecycle-20260620T090000Z-a1b2c3/metrics.prom, pushed: false, samples: 42}
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle, runner
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def argument_spec():
    return dict(
        benchmark=dict(type="str", required=True, choices=list(runner.BENCHMARKS)),
        mode=dict(type="str", default="measure", choices=["preflight", "measure", "finalize"]),
        run_id=dict(type="str", default=""),
        reports_dir=dict(type="path", required=True),
        cluster_name=dict(type="str"),
        variant=dict(type="str", default="as configured"),
        variant_settings=dict(type="dict", default={}),
        volumes=dict(type="int", default=100),
        sweep=dict(type="list", elements="int", default=[]),
        pvcs_per_pod=dict(type="int", default=4),
        size=dict(type="str", default="1Gi"),
        storage_class=dict(type="str"),
        create_storage_class=dict(type="bool", default=False),
        snapshot_class=dict(type="str"),
        access_modes=dict(type="list", elements="str", default=["ReadWriteOnce"]),
        steps=dict(type="list", elements="str", choices=list(csi_lifecycle.STEP_NAMES)),
        pod_image=dict(type="str"),
        replicas=dict(type="int"),
        node=dict(type="str"),
        provisioner=dict(type="str", default="diskplugin.csi.alibabacloud.com"),
        disk_type=dict(type="str", default="cloud_auto"),
        volumes_per_pod=dict(type="int", default=2),
        disk_limit=dict(type="int", default=0),
        statefulset=dict(type="str", default="attach-stress"),
        prewarm=dict(type="bool", default=True),
        concurrency=dict(type="int", default=16),
        step_timeout=dict(type="float", default=1800.0),
        give_up_after_warnings=dict(type="int", default=0),
        keep_objects=dict(type="bool", default=True),
        cleanup=dict(type="bool", default=True),
        cleanup_timeout=dict(type="float", default=900.0),
        status=dict(type="str", default="ok", choices=["ok", "failed", "interrupted"]),
        reason=dict(type="str"),
        components=dict(type="dict", default={}),
        notes=dict(type="list", elements="str", default=[]),
        metrics=dict(type="bool", default=False),
        pushgateway_url=dict(type="str", default=""),
        pushgateway_timeout=dict(type="float", default=10.0),
        progress_file=dict(type="path"),
        progress_interval=dict(type="float", default=2.0),
    )


# the maxima (docs/limits.md); attach_stress also caps size at the largest cloud disk (attach_stress.problems)
LIMITS = {"volumes": L.VOLUMES, "sweep": L.SWEEP, "pvcs_per_pod": L.DISKS_PER_NODE, "size": L.ONTAP_VOLUME_SIZE,
          "replicas": L.PODS_PER_NODE, "volumes_per_pod": L.DISKS_PER_NODE, "disk_limit": L.DISKS_PER_NODE,
          "concurrency": L.CONCURRENCY, "step_timeout": L.TIMEOUT, "give_up_after_warnings": L.WARNINGS,
          "cleanup_timeout": L.TIMEOUT, "progress_interval": L.INTERVAL, "pushgateway_timeout": L.REQUEST_TIMEOUT}


def main():
    module = StoragePerfModule(argument_spec=argument_spec(), auth="k8s", supports_check_mode=True, limits=LIMITS,
                               required_if=[("mode", "measure", ("run_id",)), ("mode", "finalize", ("run_id",))])
    module.run(runner.bench_run)


if __name__ == "__main__":
    main()
