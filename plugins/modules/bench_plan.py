#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: bench_plan
short_description: Plan a benchmark run once - check the options and the cluster, start the result document
version_added: "0.2.0"
description:
  - The first of the three bench modules (M(storageperf.k8s.bench_plan), M(storageperf.k8s.bench_measure),
    M(storageperf.k8s.bench_finish)); each takes only the options its job reads.
  - "Checks the options and reads the cluster once (nothing is created there), starts the result document (format
    in C(docs/results.md)) at C(<reports_dir>/<run_id>/result.json) and stores the plan in it (the document's
    C(plan): the benchmark's options, what this preflight read, the run's engine settings, variants, repetitions and
    metrics target). M(storageperf.k8s.bench_measure) runs repetitions of that stored plan by run id and variant."
  - "O(csi_lifecycle) plans the 8-step CSI lifecycle of the Trident concurrent-core benchmark: create N volumes,
    publish them in pods of 4 PVCs, unpublish, snapshot, clone from the snapshots, delete the clones, the snapshots
    and the volumes."
  - "O(attach_stress) plans the ACK parallel disk attach test: a StatefulSet whose pods have 2 disks each and are
    pinned to one node is scaled from 0 to O(attach_stress.replicas) and back to 0. This preflight picks the node
    and caps the replicas at its disk limit."
  - "O(fio) plans seed 001's fio comparison: fio on a PVC of each StorageClass in O(fio.storage_classes), each class
    a variant of its own (the variant's name is the class). M(storageperf.k8s.bench_measure) then creates the PVC and
    a Job running every fio job, waits for the Job's end by watch and parses the pod log into one step per fio job
    (IOPS, bandwidth, completion latency). This preflight checks that every class exists."
  - "O(sysbench) plans seed 001's sysbench comparison: MySQL/MariaDB on a PVC of each StorageClass in
    O(sysbench.storage_classes), each class a variant of its own. M(storageperf.k8s.bench_measure) starts the database
    (awaited by watch), runs a sysbench Job on its node (prepare, then each test), parses each test's output into a
    step and stops the database. The root password comes from E(STORAGEPERF_SYSBENCH_PASSWORD) in
    M(storageperf.k8s.bench_measure)'s environment (random when unset) and goes only into a Secret."
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
options:
  # GENERATED from the benchmark modules' OPTIONS, LIMITS and DOCS: python -m tests.support.bench_yaml --write
  csi_lifecycle:
    description: Plan the CSI lifecycle benchmark with these options. Give one of it, O(attach_stress),
      O(fio), O(sysbench).
    type: dict
    suboptions:
      storage_class:
        description:
          - StorageClass of the volumes. Required; it must bind C(Immediate) so the create step can be timed
            without pods.
        type: str
      snapshot_class:
        description:
          - VolumeSnapshotClass; empty picks the (default) class of the StorageClass's driver.
        type: str
      volumes:
        description:
          - Number of volumes (PVCs).
          - At most 5000 - 5x seed 002's largest run of 1000; the run makes as many clones and snapshots
            again, and each ontap-nas volume is a FlexVol, of which an ONTAP node holds 1000 to 2500.
        type: int
        default: 100
      sweep:
        description:
          - The sizes (volume counts) of a scaling sweep, e.g. V([10, 100, 1000]); empty measures one size.
          - Each a whole number of at least 1, each once, at least two; any order (the sweep and the report
            go ascending). Recorded as the document's C(parameters.sweep); M(storageperf.k8s.bench_measure)
            then measures one size per repetition (its O(storageperf.k8s.bench_measure#module:sweep_point)).
          - At most 10 entries - sizes of one sweep, each a whole lifecycle run; each at most 5000 - 5x
            seed 002's largest run of 1000; the run makes as many clones and snapshots again, and each ontap-nas
            volume is a FlexVol, of which an ONTAP node holds 1000 to 2500.
        type: list
        elements: int
        default: []
      pvcs_per_pod:
        description:
          - PVCs mounted by each pod of the publish step.
          - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity;
            ecs.g7se.16xlarge 56) and above any CSINode attach limit of the clouds' disk drivers.
        type: int
        default: 4
      size:
        description:
          - Size of every volume.
          - At most 100Ti - ONTAP's largest FlexVol on most platforms (300Ti needs large-volume support);
            Trident makes one FlexVol or LUN per ontap-nas/-san volume.
        type: str
        default: 1Gi
      access_modes:
        description:
          - Access modes of the PVCs.
        type: list
        elements: str
        default: [ReadWriteOnce]
      steps:
        description:
          - Steps to run; the others are recorded as skipped.
        type: list
        elements: str
        choices: [create_volume, publish, unpublish, create_snapshot, clone_from_snapshot, delete_clone,
          delete_snapshot, delete_volume]
        default: [create_volume, publish, unpublish, create_snapshot, clone_from_snapshot, delete_clone,
          delete_snapshot, delete_volume]
      pod_image:
        description:
          - Image of the pods of the publish step.
        type: str
        default: registry.k8s.io/pause:3.10
      cleanup:
        description:
          - After each repetition, delete its namespace and everything in it and wait until the volumes
            are gone.
          - V(false) keeps each repetition's objects for inspection; in a sweep only the run's very last
            repetition's (every size must start on a cluster without the previous size's objects).
        type: bool
        default: true
      cleanup_timeout:
        description:
          - Seconds the cleanup after a repetition may take.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: float
        default: 1800.0
  attach_stress:
    description: Plan the attach-stress benchmark with these options. Give one of it, O(csi_lifecycle),
      O(fio), O(sysbench).
    type: dict
    suboptions:
      replicas:
        description:
          - Replicas to scale to (the seed's 28); capped by the node's disk limit.
          - At most 64 - every pod mounts at least one disk and a node takes at most 64.
        type: int
        default: 28
      node:
        description:
          - Node to pin the pods to; empty picks the first Ready node that has the disk driver.
        type: str
      storage_class:
        description:
          - StorageClass of the disks; the seed's class is created as in the seed when it does not exist.
          - Any other missing class is refused (listing the classes that exist) unless O(attach_stress.create_storage_class)
            is on.
        type: str
        default: alibabacloud-disk
      create_storage_class:
        description:
          - Create O(attach_stress.storage_class) (O(attach_stress.provisioner), O(attach_stress.disk_type))
            when it does not exist, labelled with the run so the cleanup removes it.
        type: bool
        default: false
      provisioner:
        description:
          - CSI driver of the disks.
        type: str
        default: diskplugin.csi.alibabacloud.com
      disk_type:
        description:
          - The StorageClass's C(type) parameter.
        type: str
        default: cloud_auto
      volumes_per_pod:
        description:
          - Disks per pod.
          - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity;
            ecs.g7se.16xlarge 56) and above any CSINode attach limit of the clouds' disk drivers.
        type: int
        default: 2
      size:
        description:
          - Size of every disk.
          - At most 64Ti - Alibaba Cloud's largest ESSD / cloud_auto disk, 65536 GiB.
        type: str
        default: 1Gi
      disk_limit:
        description:
          - Disks the node can take, used when its CSINode has no allocatable count for the driver (DescribeInstanceTypes
            C(DiskQuantity), 56 for ecs.g7se.16xlarge). 0 reads the CSINode only.
          - At most 64 - the most data disks an ECS instance takes (DescribeInstanceTypes DiskQuantity;
            ecs.g7se.16xlarge 56) and above any CSINode attach limit of the clouds' disk drivers.
        type: int
        default: 0
      statefulset:
        description:
          - Name of the StatefulSet.
        type: str
        default: attach-stress
      prewarm:
        description:
          - Before the first timed scale-up of the run, scale to O(attach_stress.replicas) and back once,
            so every disk exists and each variant times attaching, not provisioning (the seed's parallel
            run found its disks there already). V(false) runs the seed's sequence exactly; the first timed
            scale-up then provisions too.
        type: bool
        default: true
      pod_image:
        description:
          - Image of the pods.
        type: str
        default: registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox
  fio:
    description: Plan the fio benchmark with these options. Give one of it, O(csi_lifecycle), O(attach_stress),
      O(sysbench).
    type: dict
    suboptions:
      storage_classes:
        description:
          - StorageClasses to measure, each a variant named after it (give the same list as O(variants),
            the baseline first, since the report's ratios are against the document's first variant). Required.
          - At most 8 entries - StorageClasses measured side by side, one after another; the seed compares
            2.
        type: list
        elements: str
        default: []
      baseline:
        description:
          - The class the ratios are computed against, named in the document's notes; empty = the first.
        type: str
      pvc_size:
        description:
          - Requested size of each PVC.
          - At most 64Ti - Alibaba Cloud's largest disk (65536 GiB); a PMEM node has at most a few TiB.
        type: str
        default: 100Gi
      timeout:
        description:
          - Seconds to wait for one class's Job; 0 = runtime x number of jobs + 600.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 0
      cleanup:
        description:
          - After each class, delete its namespace (the PVC and the Job) and wait until it is gone.
        type: bool
        default: true
      cleanup_timeout:
        description:
          - Seconds the cleanup after a class may take.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: float
        default: 600.0
      jobs:
        description:
          - fio jobs, run one after the other (each its own group); each a dict of fio options with a C(name).
          - C(gtod_reduce) is refused (it turns off the latency the report needs).
          - At most 16 entries - fio jobs run one after another in one pod; the seed runs 3.
        type: list
        elements: dict
        default:
          - name: randwrite_4k
            rw: randwrite
            bs: 4k
            numjobs: 50
            iodepth: 1
          - name: randread_4k
            rw: randread
            bs: 4k
            numjobs: 50
            iodepth: 1
          - name: latency_randwrite_4k
            rw: randwrite
            bs: 4k
            numjobs: 1
            iodepth: 1
      global:
        description:
          - fio options of every job (V(true) = a flag such as C(thread)).
        type: dict
        default:
          ioengine: psync
          direct: 1
          thread: true
          group_reporting: true
          time_based: true
      size:
        description:
          - Size of the test file (fio C(size)), shared by the threads of a job.
          - At most 64Ti - the file fio writes must fit the PVC, at most 64Ti.
        type: str
        default: 10G
      runtime:
        description:
          - Seconds each job runs (fio C(runtime), with C(time_based)).
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 180
      image:
        description:
          - Image with fio and a shell (the seed's image by default).
        type: str
        default: registry.cn-hangzhou.aliyuncs.com/eric-dev/sysbench:fio
      mount_path:
        description:
          - Where the volume is mounted in the pod; fio's file and JSON output go there.
        type: str
        default: /data
  sysbench:
    description: Plan the sysbench benchmark with these options. Give one of it, O(csi_lifecycle), O(attach_stress),
      O(fio).
    type: dict
    suboptions:
      storage_classes:
        description:
          - StorageClasses to measure, each a variant named after it (give the same list as O(variants),
            the baseline first, since the report's ratios are against the document's first variant). Required.
          - At most 8 entries - StorageClasses measured side by side, one after another; the seed compares
            2.
        type: list
        elements: str
        default: []
      baseline:
        description:
          - The class the ratios are computed against, named in the document's notes; empty = the first.
        type: str
      pvc_size:
        description:
          - Requested size of each PVC.
          - At most 64Ti - Alibaba Cloud's largest disk (65536 GiB); a PMEM node has at most a few TiB.
        type: str
        default: 100Gi
      timeout:
        description:
          - Seconds to wait for one class's sysbench Job; 0 = tests x (time + warmup) + db_timeout + 900.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 0
      cleanup:
        description:
          - After each class, delete its namespace (database, PVC, Job) and wait until it is gone.
        type: bool
        default: true
      cleanup_timeout:
        description:
          - Seconds the cleanup after a class may take.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: float
        default: 600.0
      tests:
        description:
          - sysbench OLTP tests to run, in this order, on the same tables.
          - At most 10 entries - sysbench tests run one after another; the seed runs 2.
        type: list
        elements: str
        choices: [oltp_insert, oltp_point_select, oltp_read_write, oltp_read_only, oltp_write_only, oltp_update_index,
          oltp_update_non_index, oltp_delete, select_random_points, select_random_ranges]
        default: [oltp_point_select, oltp_insert]
      tables:
        description:
          - Number of tables (C(--tables)).
          - At most 1000 - sysbench prepares every table before the run; the seed uses 32.
        type: int
        default: 32
      table_size:
        description:
          - Rows per table (C(--table-size)).
          - At most 100000000 - rows per table; 32 tables of 100 million rows are about 700 GB.
        type: int
        default: 10000
      threads:
        description:
          - Client threads (C(--threads)).
          - At most 1000 - one MySQL connection each; the seed runs 150 against max_connections 151.
        type: int
        default: 150
      time:
        description:
          - Seconds each test runs (C(--time)).
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 100
      warmup_time:
        description:
          - Seconds each test runs first with its figures thrown away (sysbench 1.0 has no C(--warmup-time)).
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 0
      percentile:
        description:
          - The latency percentile sysbench reports itself (C(--percentile)); the histogram gives p50/p90/p99
            anyway.
          - At most 99 - sysbench's --percentile takes 1 to 99.
        type: int
        default: 99
      db_image:
        description:
          - MySQL or MariaDB image (official image conventions - C(MYSQL_ROOT_PASSWORD), C(MYSQL_DATABASE),
            data in C(/var/lib/mysql)).
        type: str
        default: mysql:5.6
      db_args:
        description:
          - Extra mysqld options, for example C(["--innodb-buffer-pool-size=1G"]).
        type: list
        elements: str
        default: []
      host_network:
        description:
          - Run the database and sysbench with hostNetwork on the same node (the seed's setup; sysbench
            uses 127.0.0.1).
        type: bool
        default: true
      db_port:
        description:
          - Port the database listens on (3306 in the official images).
          - At most 65535 - the largest TCP port.
        type: int
        default: 3306
      database:
        description:
          - Database sysbench uses (created by the image from C(MYSQL_DATABASE)).
        type: str
        default: sbtest
      mysql_user:
        description:
          - User sysbench connects as.
        type: str
        default: root
      image:
        description:
          - Image with sysbench 1.0.x and a shell.
        type: str
        default: severalnines/sysbench
      db_timeout:
        description:
          - Seconds to wait for the database pod to run and accept connections.
          - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
        type: int
        default: 600
  # GENERATED (end)
  run_id:
    description:
      - The run id (label value on every object, directory under O(reports_dir)). Empty makes one
        (C(<benchmark>-<UTC time>-<6 hex>)).
    type: str
    default: ""
  reports_dir:
    description: Directory that receives C(<run_id>/result.json) on the host running the module.
    type: path
    required: true
  cluster_name:
    description:
      - The cluster's name in the inventory (C(inventory_hostname)), recorded as C(cluster.name) in the result
        document beside its API server (and the metrics' C(cluster) label), so the documents of a fleet run say which
        cluster each one measured.
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
  variants:
    description:
      - The run's variants, in the order they are measured; M(storageperf.k8s.bench_measure) refuses any other.
        Empty accepts any name.
      - In a csi_lifecycle sweep with O(csi_lifecycle.cleanup) off, the last of them is the one whose last repetition
        at the largest size keeps its objects.
    type: list
    elements: str
    default: []
  repeat:
    description:
      - Repetitions per variant (per size in a sweep); M(storageperf.k8s.bench_measure) refuses one more.
      - At most 20 - repetitions of a variant; 20 give a stable median, more only lengthen the run.
    type: int
    default: 1
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
  metrics:
    description:
      - Check O(pushgateway_url) and that prometheus-client is installed now, before the result document is started;
        M(storageperf.k8s.bench_finish) then writes C(metrics.prom) next to C(result.json) and pushes the same
        metrics to O(pushgateway_url) when it is set, as M(storageperf.k8s.metrics_push) does.
      - A push that fails only warns; the run and C(metrics.prom) are kept (docs/results.md, "Metrics").
      - Requires O(cluster_name) (the metrics' C(cluster) label).
    type: bool
    default: false
  pushgateway_url:
    description:
      - With O(metrics), the Prometheus Pushgateway's base URL, e.g. C(http://pushgateway.example:9091); empty
        writes C(metrics.prom) only. No user or password in it (the basic auth comes from the environment,
        see M(storageperf.k8s.metrics_push)); it is stored in the plan.
    type: str
    default: ""
  pushgateway_timeout:
    description:
      - Seconds the push may take.
      - At most 3600.
    type: float
    default: 10
attributes:
  check_mode:
    support: full
    details: Checks the options and reads the cluster; creates nothing and writes no file.
  diff_mode:
    support: none
notes:
  - "Run it on the controller (C(delegate_to: localhost) or a play on localhost), so the result document lands where
    M(storageperf.k8s.bench_measure) and M(storageperf.k8s.bench_report) read it."
seealso:
  - module: storageperf.k8s.bench_measure
  - module: storageperf.k8s.bench_finish
  - module: storageperf.k8s.bench_cleanup
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: fio on two StorageClasses, the SSD disk (the baseline) first
  storageperf.k8s.bench_plan:
    fio:
      storage_classes: [alicloud-disk-topology, csi-pmem-lvm]
      runtime: 60
    variants: [alicloud-disk-topology, csi-pmem-lvm]
    reports_dir: reports

- name: Check the cluster, start the result document with the plan of two variants
  storageperf.k8s.bench_plan:
    csi_lifecycle:
      storage_class: ontap-nas
      volumes: 100
    variants: [concurrency off, concurrency on]
    reports_dir: reports
  register: plan

- name: Attach stress, 28 pods with 2 disks on one node, three repetitions per variant, metrics at the end
  storageperf.k8s.bench_plan:
    attach_stress:
      replicas: 28
    repeat: 3
    reports_dir: reports
    cluster_name: "{{ inventory_hostname }}"
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
  returned: always
  type: dict
  sample: {replicas: 28, node: cn-hangzhou.192.168.0.1, disk_limit: 56, attach_required: true}
messages:
  description: Things worth knowing, e.g. why replicas were capped or why snapshot steps are skipped.
  returned: always
  type: list
  elements: str
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.modules import bench_plan
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.runner import BENCHMARKS
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def argument_spec() -> Dict[str, Any]:
    spec = {name: dict(type="dict", options=entry.OPTIONS) for name, entry in BENCHMARKS.items()}
    spec.update(
        run_id=dict(type="str", default=""),
        reports_dir=dict(type="path", required=True),
        cluster_name=dict(type="str"),
        components=dict(type="dict", default={}),
        notes=dict(type="list", elements="str", default=[]),
        variants=dict(type="list", elements="str", default=[]),
        repeat=dict(type="int", default=1),
        concurrency=dict(type="int", default=16),
        step_timeout=dict(type="float", default=1800.0),
        give_up_after_warnings=dict(type="int", default=0),
        keep_objects=dict(type="bool", default=True),
        metrics=dict(type="bool", default=False),
        pushgateway_url=dict(type="str", default=""),
        pushgateway_timeout=dict(type="float", default=10.0),
    )
    return spec


# the maxima (docs/limits.md): each benchmark's own, and the run's
LIMITS = {**{"%s.%s" % (name, option): limit for name, entry in BENCHMARKS.items() for option, limit in entry.LIMITS.items()},
          "repeat": L.REPEAT, "concurrency": L.CONCURRENCY, "step_timeout": L.TIMEOUT,
          "give_up_after_warnings": L.WARNINGS, "pushgateway_timeout": L.REQUEST_TIMEOUT}


def main() -> None:
    module = StoragePerfModule(argument_spec=argument_spec(), auth="k8s", supports_check_mode=True, limits=LIMITS,
                               mutually_exclusive=[tuple(BENCHMARKS)], required_one_of=[tuple(BENCHMARKS)])
    module.run(lambda m: bench_plan(m.params, m.client, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
