"""Seed 001 (NVM volumes on ACK) followed as written against the twin, with smaller sizes.

The seed's YAML (tests/twin/data/seed001_*.yaml) goes in with kubectl apply; the steps run through
kubectl exec: `mount | grep csi` and the seed's fio command in the fio pods, then sysbench against the
mysql:5.6 Deployment (hostNetwork) from a sysbench pod on the same node, at 127.0.0.1:3306.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from twin.host import exec_runner

DATA = Path(__file__).resolve().parents[1] / "twin" / "data"
FIO = ("fio -filename=./testfile -direct=1 -iodepth 1 -thread -rw=randwrite -ioengine=psync -bs=4k -size=16M "
       "-numjobs=2 -runtime=5 -group_reporting -name=rand_100write_4k")
SB = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=3306", "--mysql-user=root",
      "--mysql-password=admin", "--mysql-db=sbtest", "--tables=2", "--table-size=200"]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(p) for p in (*exec_runner.HOST_TOOLS, "fio", "sysbench", "mariadbd")),
    reason="needs root, fio, sysbench and MariaDB on the host")


def one_pod(twin, selector: str) -> dict:
    pods = twin.kubectl_json("get", "pods", "-l", selector)["items"]
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return pods[0]


def test_seed001_fio_through_exec(twin):
    twin.label_pmem_node()  # the seed's cluster has PMEM instances
    twin.kubectl("apply", "-f", str(DATA / "seed001_fio.yaml"))
    twin.kubectl("wait", "deployment/deployment-pmem-lvm", "deployment/deployment-ssd", "--for=condition=Available",
                 "--timeout=180s")
    for app in ("pmem-lvm", "ssd"):
        pod = one_pod(twin, f"app={app}")
        name = pod["metadata"]["name"]
        claim = pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
        pv = twin.kubectl_json("get", "pvc", claim)["spec"]["volumeName"]
        mounts = twin.kubectl("exec", name, "--", "sh", "-c", "mount | grep csi").stdout
        assert f"kubernetes.io~csi/{pv}/mount" in mounts
        out = twin.kubectl("exec", name, "--", "sh", "-c", f"cd /data && {FIO} --output-format=json",
                           timeout=300).stdout
        job = json.loads(out[out.index("{"):])["jobs"][0]
        assert job["jobname"] == "rand_100write_4k" and job["write"]["iops"] > 0 and job["error"] == 0
        # fio really wrote its file on the claim's volume
        size = twin.kubectl("exec", name, "--", "stat", "-c", "%s", "/data/testfile").stdout.strip()
        assert int(size) == 16 * 1024 * 1024


def test_seed001_sysbench_against_the_mysql_pod(twin):
    twin.kubectl("apply", "-f", str(DATA / "seed001_mysql.yaml"))
    twin.kubectl("wait", "deployment/mysql-normal", "--for=condition=Available", "--timeout=180s")
    db = one_pod(twin, "app=wordpress,tier=mysql")
    name, node = db["metadata"]["name"], db["spec"]["nodeName"]
    # mysqladmin --wait retries until the server answers (the image's first start initialises the volume)
    assert "mysqld is alive" in twin.kubectl("exec", name, "--", "mysqladmin", "-uroot", "-padmin", "--wait=120",
                                             "--connect-timeout=2", "ping", timeout=300).stdout
    version = twin.kubectl("exec", name, "--", "mysql", "-uroot", "-padmin", "-N", "-e",
                           "CREATE DATABASE sbtest; SELECT VERSION()").stdout
    said = db["metadata"]["annotations"]["storageperf.io/twin-runtime-mysql"]
    assert version.split("-")[0] in said  # the pod says which MariaDB stands in for mysql:5.6
    overrides = {"spec": {"hostNetwork": True, "nodeName": node}}
    twin.kubectl("run", "sysbench", "--image=severalnines/sysbench", "--restart=Never",
                 f"--overrides={json.dumps(overrides)}", "--command", "--", "sleep", "3600")
    twin.kubectl("wait", "pod/sysbench", "--for=condition=Ready", "--timeout=120s")
    twin.kubectl("exec", "sysbench", "--", "sysbench", "oltp_point_select", *SB, "prepare", timeout=300)
    run = twin.kubectl("exec", "sysbench", "--", "sysbench", "oltp_point_select", *SB, "--time=2", "--threads=2",
                       "run", timeout=300).stdout
    line = next(ln for ln in run.splitlines() if "transactions:" in ln)
    assert int(line.split()[1]) > 0
    twin.kubectl("delete", "pod", "sysbench", "--wait=true")
