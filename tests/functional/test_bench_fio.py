"""playbooks/bench_fio.yml on the twin: real fio on a PMEM class (ext4 in RAM) and an SSD class (the disk).

Small jobs (two seconds each, one writer) so the test stays short; the seed's 4k random write job otherwise. The
comparison is measured within the same run: the RAM-backed class must beat the disk one on 4k random write
completion latency at its floor (the fastest I/O), which the medium decides. IOPS at queue depth 1 is not
compared: the PMEM path (ext4 on a loop device in /dev/shm) spends this machine's CPU on every I/O while a
virtual disk's spends the host's, so another process on the CPUs flips the IOPS ranking. Figures are read from
the result document the role wrote, and checked against the schema.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "bench_fio.yml"
PMEM_SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-pmem-lvm"},
           "provisioner": "localplugin.csi.alibabacloud.com", "mountOptions": ["dax"],
           "parameters": {"lvmType": "striping", "nodeAffinity": "true", "volumeType": "PMEM"},
           "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
SMALL = {
    "bench_fio_size": "32M", "bench_fio_runtime": 2, "bench_fio_report_formats": ["json", "markdown"],
    # one writer at queue depth 1: the medium's own speed (with more threads than CPUs both classes measure the CPU)
    "bench_fio_jobs": [{"name": "randwrite_4k", "rw": "randwrite", "bs": "4k", "numjobs": 1, "iodepth": 1},
                       {"name": "latency_randread_4k", "rw": "randread", "bs": "4k", "numjobs": 1, "iodepth": 1}],
}

pytestmark = pytest.mark.skipif(not shutil.which("fio") or not Path("/dev/loop-control").exists(),
                                reason="needs fio (apt-get install fio) and loop devices")


def test_fio_on_pmem_and_ssd(twin, tmp_path):
    twin.label_pmem_node()
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(PMEM_SC))
    run = twin.playbook(PLAYBOOK, extra_vars={**SMALL, "bench_fio_reports_dir": str(tmp_path)})
    assert run.rc == 0, run.stdout[-3000:] + run.stderr[-2000:]

    fact = run.task("Remember the outcome")["result"]["ansible_facts"]["bench_fio"]
    doc = json.loads(Path(fact["result_path"]).read_text())
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema

    assert schema.problems(doc) == []
    assert doc["status"] == "ok" and doc["benchmark"] == "fio" and doc["components"]["fio"].startswith("fio-3")
    # the baseline (the disk) first, as the ratio column reads it
    assert [v["name"] for v in doc["variants"]] == ["alicloud-disk-topology", "csi-pmem-lvm"]
    steps = {v["name"]: {s["name"]: s for s in v["runs"][0]["steps"]} for v in doc["variants"]}
    for cls, by_name in steps.items():
        assert set(by_name) == {"randwrite_4k", "latency_randread_4k"}, cls
        for s in by_name.values():
            assert s["status"] == "ok"
            assert s["metrics"]["iops"] > 0 and s["metrics"]["bw_bytes"] > 0
            lat = s["latency"]
            assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
        assert by_name["randwrite_4k"]["label"] == "randwrite 4k psync iodepth 1 ×1"
    # A preempted I/O only gets slower, so the fastest of thousands is the medium's own latency, however busy the
    # CPUs were; IOPS (and even p50) measured how much CPU the loop device's worker got (docstring)
    pmem, ssd = steps["csi-pmem-lvm"]["randwrite_4k"], steps["alicloud-disk-topology"]["randwrite_4k"]
    assert ssd["latency"]["min"] / pmem["latency"]["min"] > 1.0, (
        f"PMEM min {pmem['latency']['min'] * 1e6:.1f} µs ({pmem['metrics']['iops']:.0f} IOPS) vs disk min "
        f"{ssd['latency']['min'] * 1e6:.1f} µs ({ssd['metrics']['iops']:.0f} IOPS)")

    # the command the pods ran: the seed's options, never gtod_reduce
    command = doc["parameters"]["command"]
    for option in ("--direct=1", "--ioengine=psync", "--thread", "--rw=randwrite", "--bs=4k", "--numjobs=1"):
        assert option in command
    assert "gtod_reduce" not in command

    report = (Path(fact["result_path"]).parent / "report.md").read_text()
    assert "| Step | Variant | IOPS | throughput |" in report and "× IOPS" in report

    # everything the run created is gone; the PMEM data lived on the memory-backed filesystem
    assert twin.kubectl_json("get", "namespaces", "-l", f"storageperf.k8s/run-id={doc['run_id']}")["items"] == []
    assert twin.kubectl_json("get", "pvc", "-A", "-l", "storageperf.k8s/benchmark=fio")["items"] == []


def test_preflight_refuses_and_check_mode_creates_nothing(twin, tmp_path):
    reports = tmp_path / "reports"
    missing = twin.playbook(PLAYBOOK, extra_vars={**SMALL, "bench_fio_reports_dir": str(reports)})
    assert missing.rc != 0
    assert "StorageClass csi-pmem-lvm does not exist" in missing.stdout

    gtod = twin.playbook(PLAYBOOK, extra_vars={"bench_fio_storage_classes": "alicloud-disk-topology",
                                               "bench_fio_jobs": [{"name": "fast", "rw": "randwrite", "gtod_reduce": 1}]})
    assert gtod.rc != 0 and "gtod_reduce must not be set" in gtod.stdout

    check = twin.playbook(PLAYBOOK, check=True, extra_vars={**SMALL, "bench_fio_storage_classes": "alicloud-disk-topology",
                                                            "bench_fio_baseline": "", "bench_fio_reports_dir": str(reports)})
    assert check.rc == 0, check.stdout[-3000:]
    assert "--rw=randwrite" in check.task("Show the plan")["result"]["msg"]
    assert twin.kubectl_json("get", "namespaces", "-l", "storageperf.k8s/benchmark=fio")["items"] == []
    assert not reports.exists()


def test_a_class_that_cannot_be_measured_is_recorded_and_the_next_one_still_runs(twin, tmp_path):
    # a class whose provisioner nobody runs: its PVC stays Pending, so its Job never starts and its wait times out
    nowhere = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "no-provisioner"},
               "provisioner": "example.com/nobody", "volumeBindingMode": "Immediate", "reclaimPolicy": "Delete"}
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(nowhere))
    run = twin.playbook(PLAYBOOK, extra_vars={
        **SMALL, "bench_fio_reports_dir": str(tmp_path), "bench_fio_storage_classes": "no-provisioner,alicloud-disk-topology",
        "bench_fio_baseline": "", "bench_fio_timeout": 5, "bench_fio_jobs": SMALL["bench_fio_jobs"][:1]})
    # the play fails (bench_fio_fail_on_error) after the report was written, naming the class's failed job
    assert run.rc != 0
    assert "failed: randwrite_4k: " in run.stdout

    fact = run.task("Remember the outcome")["result"]["ansible_facts"]["bench_fio"]
    doc = json.loads(Path(fact["result_path"]).read_text())
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema

    assert schema.problems(doc) == []
    assert doc["status"] == "failed"
    assert [v["name"] for v in doc["variants"]] == ["no-provisioner", "alicloud-disk-topology"]
    broken, measured = (v["runs"][0] for v in doc["variants"])
    assert broken["job"]["status"] == "timeout" and broken["job"]["end"] is None
    assert [(s["name"], s["status"]) for s in broken["steps"]] == [("randwrite_4k", "failed")]
    assert "did not reach Job Complete or Failed within 5" in broken["steps"][0]["reason"]
    assert measured["job"]["end"] == "Complete"
    assert measured["steps"][0]["status"] == "ok" and measured["steps"][0]["metrics"]["iops"] > 0
    assert (Path(fact["result_path"]).parent / "report.md").exists()
    assert twin.kubectl_json("get", "namespaces", "-l", f"storageperf.k8s/run-id={doc['run_id']}")["items"] == []
