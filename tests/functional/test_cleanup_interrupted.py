"""An interrupted benchmark (Ctrl-C / AWX cancel mid-step) is removed by playbooks/cleanup.yml."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from kubernetes import client

from tests.support.twin import COLLECTIONS, REPO, VENV_BIN
from tests.support.waits import watch_until

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"
CLEANUP = REPO / "playbooks" / "cleanup.yml"


def _kill_run(pid: int) -> None:
    """SIGKILL ansible-playbook and its workers. Each worker setsid()s, so killing the playbook's process group leaves
    the worker and its module running (a bench_measure module would go on measuring a twin that is gone)."""
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                os.killpg(int(proc_dir.name), signal.SIGKILL)  # a worker leads its own session and group
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not a worker of ours
    os.killpg(pid, signal.SIGKILL)


def test_interrupted_run_is_cleaned_up_completely(twin, tmp_path):
    env = dict(twin.env(), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS))
    cmd = [str(VENV_BIN / "ansible-playbook"), str(LIFECYCLE), "-i", str(REPO / "inventories" / "twin"),
           "-e", json.dumps({"volumes": 40, "reports_dir": str(tmp_path / "reports")})]
    # hold the run inside its publish step: with the attacher stalled no volume attaches, so the step cannot end
    # before the interrupt lands (without it the repetition sometimes finished first, and was rightly "ok")
    twin.twin_cmd("fault", "--name", "stall:csi-attacher", "--rule", "{}")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # wait until the run is in the middle of something: its pods exist (publish), seen on a watch
        core = client.CoreV1Api(twin.api_client())
        pods = watch_until(core.list_pod_for_all_namespaces, lambda pods: len(pods) >= 5 or proc.poll() is not None,
                           "the run's pods", label_selector="storageperf.k8s/run-id")
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert len(pods) >= 5
    finally:
        # what Ctrl-C and an AWX cancel do: SIGINT to ansible-playbook, which stops its workers (SIGTERM),
        # and the bench_measure module records the repetition as interrupted and leaves at once
        os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            _kill_run(proc.pid)
            raise
        finally:
            twin.twin_cmd("fault", "--clear", "--name", "stall:csi-attacher")
    [run_dir] = [p for p in (tmp_path / "reports" / "localhost").iterdir() if p.is_dir()]
    run_id = run_dir.name
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["status"] == "interrupted", "an interrupted run's document never claims to be complete"
    [rep] = doc["variants"][0]["runs"]
    assert rep["status"] == "interrupted" and "KeyboardInterrupt" in rep["reason"]
    assert rep["steps"][0]["name"] == "create_volume" and rep["steps"][0]["status"] == "ok"
    sel = "storageperf.k8s/run-id=" + run_id
    [ns] = [n["metadata"]["name"] for n in twin.kubectl_json("get", "namespaces", "-l", sel)["items"]]
    assert twin.kubectl_json("get", "pvc", "-n", ns)["items"], "the interrupted run left its objects behind"

    # check mode over every run lists the same namespace and deletes nothing
    preview = twin.playbook(CLEANUP, extra_vars={"all_runs": True}, check=True)
    assert preview.rc == 0, preview.stdout[-3000:]
    assert preview.task("Delete the run's objects")["result"]["found"]["Namespace"] == [ns]
    assert twin.kubectl_json("get", "pvc", "-n", ns)["items"]

    run = twin.playbook(CLEANUP, extra_vars={"run_id": run_id})
    assert run.rc == 0, run.stdout[-3000:]
    found = run.task("Delete the run's objects")["result"]["found"]
    assert found["PersistentVolumeClaim"] and found["Namespace"] == [ns]
    assert twin.kubectl_json("get", "namespaces", "-l", sel)["items"] == []
    assert [pv for pv in twin.kubectl_json("get", "pv")["items"]
            if (pv["spec"].get("claimRef") or {}).get("namespace") == ns] == []
    assert twin.kubectl_json("get", "volumeattachments")["items"] == []
    assert twin.kubectl_json("get", "pods", "-A", "-l", "storageperf.k8s/run-id")["items"] == []
    # a second cleanup finds nothing and changes nothing
    again = twin.playbook(CLEANUP, extra_vars={"run_id": run_id})
    assert again.rc == 0 and not again.task("Delete the run's objects")["result"]["changed"]
