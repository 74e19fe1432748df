"""bench/fio.py and job_run.py: fio's command line, the option checks, and a repetition's steps from a Job's end."""
from __future__ import annotations

import json

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import fio as F
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import job_run as J
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import runner

CLASSES = ["alicloud-disk-topology", "csi-pmem-lvm"]


def plan(**kw):
    return F.Plan(dict({"storage_classes": CLASSES}, **kw))


def test_the_seed_job_makes_the_command_line_the_role_ran():
    p = plan()
    assert p.command == (
        "fio --direct=1 --directory=/data --filename=storageperf-fio.dat --group_reporting --ioengine=psync "
        "--runtime=180 --size=10G --thread --time_based "
        "--name=randwrite_4k --bs=4k --iodepth=1 --numjobs=50 --rw=randwrite --stonewall "
        "--name=randread_4k --bs=4k --iodepth=1 --numjobs=50 --rw=randread --stonewall "
        "--name=latency_randwrite_4k --bs=4k --iodepth=1 --numjobs=1 --rw=randwrite --stonewall")
    # a job that sets its own grouping is left as it is; false and null options are left out
    p = plan(jobs=[{"name": "a", "rw": "read", "new_group": True, "verify": False, "bs": None}])
    assert p.command.endswith("--name=a --new_group --rw=read")
    assert p.timeout == 180 + 600 and plan(timeout=30).timeout == 30


def test_problems_name_the_field_and_the_fix():
    text = " | ".join(F.problems({"storage_classes": ["a", "a"], "baseline": "b", "runtime": 0,
                                  "jobs": [{"name": "x y"}, {"rw": "read"}], "global": {"gtod_reduce": 1}}))
    assert "storage_classes must list distinct StorageClasses" in text
    assert "baseline b must be one of storage_classes" in text
    assert "jobs must be a non-empty list of fio jobs, each with a unique name" in text
    assert "gtod_reduce must not be set in jobs or global" in text
    assert "runtime must be > 0" in text
    assert F.problems({"storage_classes": CLASSES}) == []
    # the options every StorageClass benchmark shares are checked in one place (storage_classes.problems)
    assert any("pvc_size" in p for p in F.problems({"storage_classes": CLASSES, "pvc_size": "ten gigs"}))
    assert "storage_classes must list" in " ".join(F.problems({}))


def test_the_title_puts_the_classes_side_by_side_in_the_order_measured():
    p = plan()
    p.classes = {c: {"provisioner": "x", "parameters": {}} for c in CLASSES}
    assert runner.title("fio", F.facts(p)) == "fio: alicloud-disk-topology vs csi-pmem-lvm"
    assert F.plan_messages(plan(baseline="csi-pmem-lvm"), preflight=True) == [
        "Baseline: csi-pmem-lvm (ratios are candidate / baseline)."]


FIO_DOC = {"fio version": "fio-3.33", "jobs": [{
    "jobname": "randwrite_4k", "groupid": 0, "error": 0, "job options": {"rw": "randwrite", "bs": "4k"},
    "write": {"iops": 1000.0, "bw_bytes": 4096000, "io_bytes": 8192000, "runtime": 2000, "total_ios": 2000,
              "clat_ns": {"min": 1000, "max": 9000, "mean": 2000, "stddev": 1,
                          "percentile": {"50.000000": 2000, "90.000000": 3000, "99.000000": 5000}}}}]}


def ran(log, end="Complete", step=None):
    return J.JobRun(step or {"name": "job_fio", "status": "ok"}, end, "fio-abc", "node-1", log)


def test_a_completed_job_gives_one_step_per_fio_job():
    log = "storageperf: fio exit code 0\n" + json.dumps(FIO_DOC, indent=2)
    summary, steps = F.steps_of(plan(jobs=[{"name": "randwrite_4k"}]), ran(log))
    assert summary["fio_version"] == "fio-3.33"
    assert [(s["name"], s["status"]) for s in steps] == [("randwrite_4k", "ok")]
    assert steps[0]["metrics"]["iops"] == 1000.0 and steps[0]["latency"]["p99"] == 5e-06


def test_a_failed_job_fails_its_steps_with_the_reason():
    log = "fio: io_u error on file /data/x: No space left on device\nstorageperf: fio exit code 1\n" + json.dumps(FIO_DOC)
    _, steps = F.steps_of(plan(), ran(log, end="Failed"))
    assert steps[0]["status"] == "failed" and "fio exited with an error: fio: io_u error" in steps[0]["reason"]
    assert steps[0]["errors"] == [{"object": "fio", "reason": steps[0]["reason"]}]


def test_a_job_that_printed_no_document_fails_every_fio_job_and_quotes_the_log():
    step = {"name": "job_fio", "status": "timeout", "reason": "1 of 1 objects did not reach Job Complete or Failed"}
    summary, steps = F.steps_of(plan(), ran("sh: fio: not found", end=None, step=step))
    assert summary is None
    assert [s["name"] for s in steps] == ["randwrite_4k", "randread_4k", "latency_randwrite_4k"]
    assert all(s["status"] == "failed" for s in steps)
    assert "did not reach Job Complete or Failed" in steps[0]["reason"] and "Pod log: sh: fio: not found" in steps[0]["reason"]


class View:
    def __init__(self, job):
        self.job = job

    def get(self, kind, key):
        assert (kind, key) == ("Job", "ns/fio")
        return self.job


def test_a_job_has_ended_on_either_condition_only():
    check = J.job_ended("ns/fio")
    assert check(View(None)) == "Job not seen"
    assert check(View({"status": {"active": 1}})) == "Job running (1 active)"
    # SuccessCriteriaMet comes before Complete (Kubernetes 1.31+): the pod may still be terminating
    assert check(View({"status": {"conditions": [{"type": "SuccessCriteriaMet", "status": "True"}]}})) is not None
    for end in ("Complete", "Failed"):
        job = {"status": {"conditions": [{"type": end, "status": "True"}]}}
        assert check(View(job)) is None and J.job_end(job) == end


def test_the_job_mounts_its_claim_and_carries_the_labels_on_its_pod():
    body = J.job("fio", "ns", {"storageperf.k8s/run-id": "r1"}, {"name": "fio", "image": "i"}, "fio", "/data")
    pod = body["spec"]["template"]
    assert body["spec"]["backoffLimit"] == 0 and pod["spec"]["restartPolicy"] == "Never"
    assert pod["metadata"]["labels"] == {"storageperf.k8s/run-id": "r1"}
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "fio"}
