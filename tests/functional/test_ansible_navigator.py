"""ansible-navigator as a developer runs it from the repository root: ansible-navigator.yml is read (no execution
environment, stdout mode, its log and playbook artifacts under .cache/) and a playbook runs against a twin without a
container engine."""
from __future__ import annotations

import json
import os
import subprocess

import yaml

from tests.support.twin import COLLECTIONS, REPO, VENV_BIN

NAVIGATOR = str(VENV_BIN / "ansible-navigator")


def _navigator(*args, env, timeout=300):
    env = {**env, "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS), "ANSIBLE_NOCOLOR": "1"}
    env.pop("ANSIBLE_NAVIGATOR_CONFIG", None)  # the repository's own file, found in the working directory
    return subprocess.run([NAVIGATOR, *args], cwd=REPO, env=env, text=True, capture_output=True, timeout=timeout)


def test_settings_file_turns_the_ee_off_for_local_use(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
    proc = _navigator("settings", "--effective", "--mode", "stdout", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    effective = yaml.safe_load(proc.stdout)["ansible-navigator"]
    assert effective["execution-environment"]["enabled"] is False
    assert effective["mode"] == "stdout"
    assert effective["ansible"]["config"]["path"] == str(REPO / "ansible.cfg")
    assert effective["logging"]["file"].startswith(str(REPO / ".cache" / "ansible-navigator") + "/")


def test_navigator_runs_cluster_info_without_an_ee(twin):
    artifacts = REPO / ".cache" / "ansible-navigator"
    before = set(artifacts.glob("cluster_info-artifact-*.json")) if artifacts.is_dir() else set()
    proc = _navigator("run", "playbooks/cluster_info.yml", "-i", str(REPO / "inventories" / "twin"),
                      "--ee", "false", "--mode", "stdout", env=twin.env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TASK [Read the cluster's storage facts]" in proc.stdout
    assert "failed=0" in proc.stdout and "unreachable=0" in proc.stdout
    # the run's artifact holds the module's result: the twin's three nodes, read by the collection's module
    (artifact,) = set(artifacts.glob("cluster_info-artifact-*.json")) - before
    events = json.loads(artifact.read_text())["plays"]
    results = [t["res"] for p in events for t in p["tasks"] if t["task"] == "Read the cluster's storage facts"]
    assert [r["node_count"] for r in results] == [3]
    nodes = twin.kubectl_json("get", "nodes")["items"]
    assert {n["name"] for n in results[0]["nodes"]} == {n["metadata"]["name"] for n in nodes}
    artifact.unlink()
