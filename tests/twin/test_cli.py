"""The twin's command contract: up/down/serve/status, kubeconfig and cloud.json."""
from __future__ import annotations

import json
import subprocess
import sys

import yaml

from tests.support.twin import REPO, Twin


def test_up_writes_kubeconfig_and_cloud_json_and_down_stops(tmp_path):
    t = Twin(tmp_path / "t", nodes=2).up()
    try:
        cfg = yaml.safe_load(t.kubeconfig.read_text())
        server = cfg["clusters"][0]["cluster"]["server"]
        assert server.startswith("https://127.0.0.1:")
        assert cfg["users"][0]["user"]["token"]
        assert isinstance(t.cloud, dict)
        assert len(t.kubectl_json("get", "nodes")["items"]) == 2
        pid = int((t.dir / "twin.pid").read_text())
        # a second `up` keeps the running twin
        again = subprocess.run([sys.executable, "-m", "twin", "up", "--dir", str(t.dir)], cwd=REPO,
                               capture_output=True, text=True, check=True)
        assert "already running" in again.stdout
        assert int((t.dir / "twin.pid").read_text()) == pid
        status = json.loads(t.twin_cmd("status").stdout)
        assert status["objects"] > 0 and len(status["nodes"]) == 2
    finally:
        t.down()
    assert not (t.dir / "ready").exists()
    from twin.__main__ import _alive

    assert not _alive(pid)  # gone, or a zombie nobody of ours can reap


def test_nodes_carry_ecs_instance_ids(tmp_path):
    with Twin(tmp_path / "t", nodes=3) as t:
        nodes = t.kubectl_json("get", "nodes")["items"]
        ids = [n["spec"]["providerID"] for n in nodes]
        assert all(i.startswith("cn-hangzhou.i-") for i in ids)
        assert len(set(ids)) == 3
        assert all(n["metadata"]["labels"]["node.kubernetes.io/instance-type"] for n in nodes)


def test_wrong_token_is_refused(tmp_path):
    with Twin(tmp_path / "t", nodes=1) as t:
        proc = t.kubectl("--token", "nope", "get", "nodes", check=False)
        assert proc.returncode != 0
        assert "Unauthorized" in proc.stderr or "401" in proc.stderr or "must be logged in" in proc.stderr
