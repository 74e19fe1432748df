# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deterministic example documents shaped like the seeds' published numbers.

Used by the tests, by docs/report-example.md and by anyone who wants to see a report
without running a benchmark. The figures are the seed's (Trident concurrent core, ONTAP NAS,
100 volumes); the per-object timings are synthetic but consistent with them.
"""


import random

from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    new_result, add_variant, add_run, add_step, finalize, finish_run,
)

# (name, label, seconds with concurrency off, seconds with it on)
CSI_LIFECYCLE_SEED = (
    ("create_volume", "Create Volume", 417, 41),
    ("publish", "Publish (Attach)", 140, 21),
    ("unpublish", "Unpublish (Detach)", 140, 26),
    ("create_snapshot", "Create Snapshot", 183, 16),
    ("clone_from_snapshot", "Clone from Snapshot", 460, 42),
    ("delete_clone", "Delete Clone", 127, 32),
    ("delete_snapshot", "Delete Snapshot", 124, 16),
    ("delete_volume", "Delete Volume", 124, 26),
)
STARTED = "2026-06-20T09:00:00.000000Z"
FINISHED = "2026-06-20T09:32:15.000000Z"


def _objects(rng, n, wall, serial, prefix):
    """n objects submitted at t~0; serial ones finish one after another, parallel ones in waves."""
    objs = []
    for k in range(n):
        start = rng.uniform(0, min(1.0, wall * 0.02))
        if serial:
            end = wall * (k + rng.uniform(0.6, 1.0)) / n
        else:
            end = wall * min(1.0, rng.betavariate(2.2, 1.6) * 0.97 + 0.03)
        end = max(end, start + 0.05)
        objs.append({"name": "%s-%03d" % (prefix, k), "start": round(start, 3), "end": round(end, 3)})
    # the last object defines the batch's wall time, as in the seed's method
    objs[-1]["end"] = float(wall) if serial else objs[-1]["end"]
    return objs


def csi_lifecycle(volumes=100, repetitions=1, seed=7, with_objects=True, failure=False):
    """The seed's ONTAP NAS table as a two-variant document (concurrency off / on)."""
    rng = random.Random(seed)
    doc = new_result(
        "csi_lifecycle", run_id="csi_lifecycle-20260620T090000Z-a1b2c3", started=STARTED,
        title="Trident concurrent core: CSI lifecycle at %d volumes" % volumes,
        parameters={"volumes": volumes, "pods": volumes // 4, "pvcs_per_pod": 4, "size": "1Gi",
                    "storage_class": "ontap-nas"},
        cluster={"server": "https://10.0.0.1:6443", "version": "v1.34.9", "nodes": 100},
        components={"trident": "26.06.0", "snapshot-controller": "v8.2.0", "ontap": "9.18.1P2"},
    )
    scale = volumes / 100.0
    for vi, (vname, enabled) in enumerate((("concurrency off", False), ("concurrency on", True))):
        variant = add_variant(doc, vname, settings={"enableConcurrency": enabled})
        for rep in range(repetitions):
            run = add_run(variant, started=STARTED)
            jitter = 1.0 + (rng.uniform(-0.04, 0.04) if rep else 0.0)
            for si, (name, label, off_s, on_s) in enumerate(CSI_LIFECYCLE_SEED):
                wall = (on_s if enabled else off_s) * scale * jitter
                if failure and enabled and name == "delete_clone":
                    add_step(run, name, label=label, status="timeout", count=volumes, unit="vol",
                             reason="3 clones still Terminating after 10m 00s",
                             unfinished=["clone-%03d" % k for k in (11, 42, 77)],
                             errors=[{"object": "clone-042", "reason": "VolumeDeleteFailed: busy"}])
                    continue
                objects = _objects(rng, volumes, wall, not enabled, name) if with_objects else None
                add_step(run, name, label=label, count=volumes, wall_s=wall, unit="vol", objects=objects,
                         api_requests=volumes * (3 if enabled else 5))
            finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


def fio_classes(seed=3):
    """Seed 001: fio 4k randwrite on PMEM-LVM vs SSD (iops, bw_bytes, latency)."""
    rng = random.Random(seed)
    doc = new_result("fio", run_id="fio-20260620T100000Z-d4e5f6", started=STARTED,
                     title="fio: PMEM-LVM vs SSD", parameters={"bs": "4k", "rw": "randwrite", "numjobs": 50,
                                                               "ioengine": "psync", "runtime": 60},
                     cluster={"server": "https://10.0.0.1:6443", "version": "v1.32.1", "nodes": 3})
    for name, iops, bw in (("csi-pmem-lvm", 92000, 381e6), ("alicloud-disk-ssd", 37300, 153e6)):
        variant = add_variant(doc, name, settings={"storageClassName": name})
        run = add_run(variant, started=STARTED)
        p99 = 50.0 / iops * 3.2
        add_step(run, "randwrite_4k", label="randwrite 4k psync x50", wall_s=60.0,
                 latency={"min": p99 / 20, "p50": p99 / 3, "p90": p99 / 1.6, "p99": p99, "max": p99 * 4,
                          "mean": p99 / 2.8},
                 metrics={"iops": iops * rng.uniform(0.99, 1.01), "bw_bytes": bw})
        add_step(run, "sysbench_oltp", label="sysbench MySQL oltp", wall_s=300.0,
                 metrics={"tps": 122156 if "pmem" in name else 49812})
        finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


# seed 001's fio figures (its "Expected output"): IOPS, bytes/s, completion latency min / avg / max in seconds
FIO_SEED = {"alicloud-disk-topology": (37300, 153e6, (20e-6, 24.76e-6, 7168e-6)),
            "csi-pmem-lvm": (92000, 381e6, (2.054e-6, 10.544e-6, 95.278e-6))}


def _fio_latency(lo, mean, hi):
    return {"min": lo, "p50": mean * 0.9, "p90": mean * 1.3, "p99": mean * 2.4, "p99_9": mean * 6, "max": hi,
            "mean": mean}


def fio_jobs():
    """Seed 001 as bench_fio records it (plugins/module_utils/bench/fio.py, its output read by fio_output.py): the seed's 4k random write on the disk
    (the baseline, first) and on PMEM-LVM, and a 70/30 random read/write job whose step carries read and write
    IOPS and throughput as well: eight figures per step, the metrics table turned."""
    doc = new_result("fio", run_id="fio-20260620T120000Z-f10f10", started=STARTED, title="fio: SSD vs PMEM-LVM",
                     parameters={"bs": "4k", "ioengine": "psync", "numjobs": 50, "runtime": 180, "size": "10G"},
                     cluster={"server": "https://10.0.0.1:6443", "version": "v1.32.1", "nodes": 3})
    for name, (iops, bw, lat) in FIO_SEED.items():
        run = add_run(add_variant(doc, name, settings={"storageClassName": name}), started=STARTED)
        add_step(run, "rand_100write_4k", label="randwrite 4k psync \u00d750", wall_s=180.0,
                 latency=_fio_latency(*lat),
                 metrics={"iops": iops, "bw_bytes": bw, "clat_mean_ns": round(lat[1] * 1e9, 1)})
        # a mixed job reads more than it writes; its latency is the reads' (the direction that did most I/O)
        mixed = {"iops": iops * 1.1, "bw_bytes": bw * 1.1, "read_iops": iops * 0.77, "read_bw_bytes": bw * 0.77,
                 "write_iops": iops * 0.33, "write_bw_bytes": bw * 0.33, "clat_mean_ns": round(lat[1] * 0.8e9, 1)}
        add_step(run, "rand_70read_4k", label="randrw 4k psync \u00d750", wall_s=180.0,
                 latency=_fio_latency(lat[0], lat[1] * 0.8, lat[2]), metrics=mixed)
        finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


def sysbench_classes():
    """Seed 001's MySQL case as bench_sysbench records it (plugins/module_utils/bench/sysbench.py, its output read by sysbench_output.py): point selects and
    inserts on the disk (the baseline, first) and on PMEM-LVM; the seed's 49,812 and 122,156 inserts per second."""
    doc = new_result("sysbench", run_id="sysbench-20260620T130000Z-5b5b5b", started=STARTED,
                     title="sysbench MySQL: SSD vs PMEM-LVM",
                     parameters={"tables": 32, "table_size": 10000, "threads": 150, "time": 100},
                     cluster={"server": "https://10.0.0.1:6443", "version": "v1.32.1", "nodes": 3},
                     components={"sysbench": "1.0.20"})
    figures = {"alicloud-disk-topology": ((88400, 3.4e-3), (49812, 3.0e-3)),
               "csi-pmem-lvm": ((131000, 1.1e-3), (122156, 1.2e-3))}
    for name, ((select_tps, select_avg), (insert_tps, insert_avg)) in figures.items():
        run = add_run(add_variant(doc, name, settings={"storageClassName": name, "image": "mysql:5.6"}),
                      started=STARTED)
        for test, tps, avg in (("oltp_point_select", select_tps, select_avg), ("oltp_insert", insert_tps, insert_avg)):
            add_step(run, test, label="%s \u00d7150 threads" % test.replace("_", " "), wall_s=100.0,
                     latency={"min": avg / 8, "p50": avg * 0.9, "p90": avg * 1.6, "p99": avg * 3.1, "max": avg * 12,
                              "mean": avg},
                     metrics={"tps": tps, "qps": tps, "latency_avg_s": avg})
        finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


def gluster_handshake():
    """Seed 003 / REFERENCE: peer handshake time vs volume count, brick-multiplex off/on."""
    doc = new_result("gluster_handshake", run_id="gluster_handshake-20260620T110000Z-0a0b0c", started=STARTED,
                     parameters={"peers": 3, "volume_counts": [50, 200, 500]})
    figures = {"brick-multiplex off": ((50, 4.5), (200, 18.0), (500, 127.0)),
               "brick-multiplex on": ((50, 3.1), (200, 5.2), (500, 9.0))}
    for vname, points in figures.items():
        variant = add_variant(doc, vname, settings={"cluster.brick-multiplex": vname.endswith("on")})
        run = add_run(variant, started=STARTED)
        for volumes, secs in points:
            add_step(run, "handshake_%d" % volumes, label="Handshake @ %d volumes" % volumes, wall_s=secs,
                     parameter={"name": "volumes", "value": volumes, "series": "restart handshake"},
                     metrics={"handshake_s": secs, "volumes": volumes})
        finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


def attach_stress(replicas=40, seed=11):
    """The ACK parallel-attach seed: scale-up gets ~4.7x faster, scale to 0 stays serial (1.0x)."""
    rng = random.Random(seed)
    doc = new_result("attach_stress", run_id="attach_stress-20260620T120000Z-0d0e0f", started=STARTED,
                     title="ACK parallel disk attach: %d pods x 2 disks on one node" % replicas,
                     parameters={"replicas": replicas, "disks_per_pod": 2, "storage_class": "alibabacloud-disk"},
                     cluster={"server": "https://10.0.0.1:6443", "version": "v1.34.9", "nodes": 3})
    # (seconds serial, seconds parallel) per step
    figures = (("scale_up", "Scale up (pods Ready, disks attached)", 470.0, 100.0),
               ("scale_down", "Scale to 0 (pods gone, disks detached)", 180.0, 180.0))
    for vname, parallel in (("serial attach", False), ("parallel attach", True)):
        variant = add_variant(doc, vname, settings={"parallel_attach": parallel})
        run = add_run(variant, started=STARTED)
        for name, label, serial_s, parallel_s in figures:
            wall = parallel_s if parallel else serial_s
            add_step(run, name, label=label, count=replicas, wall_s=wall, unit="pod",
                     objects=_objects(rng, replicas, wall, not parallel or name == "scale_down", name))
        finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)


# Seed 002, ONTAP NAS, the four volume steps at 100 and 1000 volumes: {N: (seconds off, seconds on)}
CSI_SWEEP_SEED = (
    ("create_volume", "Create Volume", {100: (417, 41), 1000: (3451, 630)}),
    ("publish", "Publish (Attach)", {100: (140, 21), 1000: (1384, 167)}),
    ("unpublish", "Unpublish (Detach)", {100: (140, 26), 1000: (1420, 156)}),
    ("delete_volume", "Delete Volume", {100: (124, 26), 1000: (1236, 318)}),
)


def csi_sweep(skipped=(), failed_at=None):
    """The seed's concurrency off / on at 100 and 1000 volumes as a sweep document (report/sweep.py).

    skipped: step names recorded as skipped at every point; failed_at (variant, N, step): that step failed there.
    """
    from ansible_collections.storageperf.k8s.plugins.module_utils.report.sweep import point_name

    doc = new_result("csi_lifecycle", run_id="csi_lifecycle-20260620T090000Z-5ee9a1", started=STARTED,
                     title="CSI lifecycle sweep at 100, 1000 volumes (4 PVCs per pod)",
                     parameters={"sweep": [100, 1000], "pvcs_per_pod": 4, "storage_class": "ontap-nas"})
    for vname, on in (("concurrency off", False), ("concurrency on", True)):
        for n in (100, 1000):
            variant = add_variant(doc, point_name(vname, n), settings={"enableConcurrency": on},
                                  sweep_point={"variant": vname, "parameter": "volumes", "value": n})
            run = add_run(variant, started=STARTED)
            for name, label, walls in CSI_SWEEP_SEED:
                if name in skipped:
                    add_step(run, name, label=label, status="skipped", reason="not in steps")
                elif failed_at == (vname, n, name):
                    add_step(run, name, label=label, status="failed", count=n, unit="vol",
                             errors=[{"object": "vol-0042", "reason": "ProvisioningFailed: busy"}])
                else:
                    add_step(run, name, label=label, count=n, wall_s=walls[n][on], unit="vol")
            finish_run(run, finished=FINISHED)
    return finalize(doc, finished=FINISHED)
