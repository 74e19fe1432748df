"""playbooks/bench_sysbench.yml on the twin: real MariaDB on a PVC of each class, real sysbench next to it.

The database pods run mariadbd through the mysql:5.6 image's entrypoint (emulated by the twin), with their data
on the volume; sysbench runs with hostNetwork on the database's node and connects to 127.0.0.1:3306, as in
the seed. Small tables and two-second tests keep it short. The root password is given explicitly, so the test can
prove it appears nowhere: not in the play's output, the recorded task results, the result or the report.
"""
from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "bench_sysbench.yml"
PMEM_SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-pmem-lvm"},
           "provisioner": "localplugin.csi.alibabacloud.com", "mountOptions": ["dax"],
           "parameters": {"lvmType": "striping", "nodeAffinity": "true", "volumeType": "PMEM"},
           "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
PASSWORD = "Sb-Secret-7f3k9Q"

pytestmark = pytest.mark.skipif(not all(shutil.which(p) for p in ("sysbench", "mariadbd", "mariadb-install-db"))
                                or not Path("/dev/loop-control").exists(),
                                reason="needs sysbench and MariaDB (apt-get install sysbench mariadb-server) and loop devices")


def test_sysbench_mysql_on_pmem_and_ssd(twin, tmp_path):
    twin.label_pmem_node()
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(PMEM_SC))
    run = twin.playbook(PLAYBOOK, extra_vars={
        "bench_sysbench_tests": ["oltp_point_select", "oltp_insert"], "bench_sysbench_tables": 2,
        "bench_sysbench_table_size": 500, "bench_sysbench_threads": 4, "bench_sysbench_time": 2,
        "bench_sysbench_mysql_password": PASSWORD, "bench_sysbench_reports_dir": str(tmp_path),
        "bench_sysbench_report_formats": ["json", "markdown"]})
    assert run.rc == 0, run.stdout[-3000:] + run.stderr[-2000:]

    fact = run.task("Remember the outcome")["result"]["ansible_facts"]["bench_sysbench"]
    result = Path(fact["result_path"])
    doc = json.loads(result.read_text())
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema

    assert schema.problems(doc) == []
    assert doc["status"] == "ok" and doc["components"]["sysbench"] == "1.0.20"
    assert [v["name"] for v in doc["variants"]] == ["alicloud-disk-topology", "csi-pmem-lvm"]
    for v in doc["variants"]:
        assert v["settings"]["image"] == "mysql:5.6" and v["settings"]["node"]
        steps = {s["name"]: s for s in v["runs"][0]["steps"]}
        assert set(steps) == {"oltp_point_select", "oltp_insert"}
        for s in steps.values():
            assert s["status"] == "ok", s
            assert s["metrics"]["tps"] > 0 and s["metrics"]["qps"] > 0 and s["metrics"]["latency_avg_s"] > 0
            assert 0 < s["latency"]["p50"] <= s["latency"]["p99"] <= s["latency"]["max"]
            assert s["wall_s"] > 1.5  # a 2 s test: sysbench stops at the asked time, never before
        # both tests ran one after the other in the class's one Job, inside the repetition's clock: a unit mix-up
        # (ms read as s) cannot fit, and how much the run took beyond 2 x 2 s on this machine does not matter
        rep = v["runs"][0]
        span = (datetime.fromisoformat(rep["finished"]) - datetime.fromisoformat(rep["started"])).total_seconds()
        assert sum(s["wall_s"] for s in steps.values()) < span, (span, steps)
        # point selects read, inserts write: what sysbench counted, per test
        assert steps["oltp_insert"]["label"] == "oltp insert ×4 threads"

    report = (result.parent / "report.md").read_text()
    assert "transactions/s" in report and "× transactions/s" in report

    # the password: only in the Secret, never in what the play printed or recorded
    recorded = json.dumps(run.results)
    for text in (run.stdout, run.stderr, recorded, result.read_text(), report):
        assert PASSWORD not in text
    assert twin.kubectl_json("get", "namespaces", "-l", f"storageperf.k8s/run-id={doc['run_id']}")["items"] == []
