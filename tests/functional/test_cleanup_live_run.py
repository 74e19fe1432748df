"""playbooks/cleanup.yml -e all_runs=true during a live benchmark: the run's Lease keeps its objects alive.

The benchmark is held in its first step by stalling the twin's csi-provisioner (the PVCs stay Pending), so
the cleanup certainly runs while the benchmark measures, however fast or slow the machine is.
"""
from __future__ import annotations

import json
import subprocess
import threading

from tests.support.twin import COLLECTIONS, REPO, VENV_BIN

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"
CLEANUP = REPO / "playbooks" / "cleanup.yml"
RUN_LABEL = "storageperf.k8s/run-id"


def start_benchmark(twin, reports):
    env = dict(twin.env(), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS))
    cmd = [str(VENV_BIN / "ansible-playbook"), str(LIFECYCLE), "-i", str(REPO / "inventories" / "twin"),
           "-e", json.dumps({"volumes": 8, "reports_dir": str(reports)})]
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_lease(twin, timeout=300):
    """The first Lease of a storageperf run, seen by a watch (kubectl get --watch), as a dict."""
    watch = subprocess.Popen(["kubectl", "get", "leases", "-A", "-l", RUN_LABEL, "--watch", "-o", "name"],
                             env=twin.env(), stdout=subprocess.PIPE, text=True)
    timer = threading.Timer(timeout, watch.kill)
    timer.start()
    try:
        line = watch.stdout.readline()
    finally:
        timer.cancel()
        watch.kill()
        watch.wait()
    assert line.startswith("lease"), "no run Lease appeared within %ss" % timeout
    [lease] = twin.kubectl_json("get", "leases", "-A", "-l", RUN_LABEL)["items"]
    return lease


def run_objects(twin, run_id):
    sel = "%s=%s" % (RUN_LABEL, run_id)
    return {"namespaces": sorted(n["metadata"]["name"] for n in twin.kubectl_json("get", "ns", "-l", sel)["items"]),
            "pvcs": sorted(p["metadata"]["name"] for p in twin.kubectl_json("get", "pvc", "-A", "-l", sel)["items"]),
            "leases": sorted(x["metadata"]["name"] for x in twin.kubectl_json("get", "leases", "-A", "-l", sel)["items"])}


def finish(proc, timeout=900):
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def test_cleanup_of_every_run_deletes_nothing_of_a_live_run(twin, tmp_path):
    twin.twin_cmd("fault", "--name", "stall:csi-provisioner", "--rule", "{}")
    proc = start_benchmark(twin, tmp_path / "reports")
    try:
        lease = wait_for_lease(twin)
        run_id = lease["metadata"]["labels"][RUN_LABEL]
        assert lease["spec"]["holderIdentity"] and lease["spec"]["leaseDurationSeconds"] == 60
        before = run_objects(twin, run_id)
        assert before["namespaces"] and before["leases"] == ["storageperf-run"]

        cleanup = twin.playbook(CLEANUP, extra_vars={"all_runs": True})
        assert cleanup.rc == 0, cleanup.stdout[-3000:]
        result = cleanup.task("Delete the run's objects")["result"]
        assert run_id in result["live_runs"] and run_id in result["msg"] and "force=true" in result["msg"]
        assert before["namespaces"][0] not in (result.get("found") or {}).get("Namespace", [])
        assert result.get("deleted") == {}
        assert "Live runs left alone: " + run_id in cleanup.task("Show what was removed")["result"]["msg"]
        # the benchmark's PVCs (created before the cleanup, still Pending) are all there
        assert run_objects(twin, run_id)["pvcs"] == before["pvcs"]
        assert run_objects(twin, run_id)["namespaces"] == before["namespaces"]
    finally:
        twin.twin_cmd("fault", "--clear", "--name", "stall:csi-provisioner")
    rc, out = finish(proc)
    assert rc == 0, out[-4000:]
    [run_dir] = [p for p in (tmp_path / "reports" / "localhost").iterdir() if p.is_dir()]
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["run_id"] == run_id and doc["status"] == "ok"
    assert {s["status"] for s in doc["variants"][0]["runs"][0]["steps"]} == {"ok"}
    # the run released its Lease and cleaned up after itself
    assert run_objects(twin, run_id) == {"namespaces": [], "pvcs": [], "leases": []}


def test_a_forced_cleanup_makes_the_live_run_report_disturbed_not_a_result(twin, tmp_path):
    twin.twin_cmd("fault", "--name", "stall:csi-provisioner", "--rule", "{}")
    proc = start_benchmark(twin, tmp_path / "reports")
    try:
        run_id = wait_for_lease(twin)["metadata"]["labels"][RUN_LABEL]
        cleanup = twin.playbook(CLEANUP, extra_vars={"all_runs": True, "force": True})
        assert cleanup.rc == 0, cleanup.stdout[-3000:]
        assert cleanup.task("Delete the run's objects")["result"]["deleted"]["Namespace"] == 1
    finally:
        twin.twin_cmd("fault", "--clear", "--name", "stall:csi-provisioner")
    rc, out = finish(proc)
    assert rc != 0, "a run whose objects were deleted under it must not end as a success"
    [run_dir] = [p for p in (tmp_path / "reports" / "localhost").iterdir() if p.is_dir()]
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["run_id"] == run_id and doc["status"] == "failed"
    steps = doc["variants"][0]["runs"][0]["steps"]
    assert steps[0]["name"] == "create_volume" and steps[0]["status"] == "disturbed"
    assert "not a measurement" in steps[0]["reason"] and "Lease" in steps[0]["reason"]
    assert all(s["status"] == "skipped" for s in steps[1:])
    assert "disturbed" in out and "failed steps: create_volume" in out
