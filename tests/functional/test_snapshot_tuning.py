"""snapshot_controller_tuning and csi_sidecar_tuning against the twin's Deployments.

Arguments are read back with kubectl; refusals are checked to leave the Deployment's resourceVersion as it was.
"""
from __future__ import annotations

import json

import yaml

# The snapshot-controller as someone left it: a flag in `--flag value` form, one in `--flag=value` form, others around.
HAND_EDITED = ["--v=5", "--kube-api-qps", "5", "--leader-election=true", "--resync-period=15m", "--worker-threads=10"]
TUNED = ["--v=5", "--kube-api-qps=75", "--leader-election=true", "--resync-period=15m", "--worker-threads=25",
         "--kube-api-burst=150"]
UNTUNED = ["--v=5", "--leader-election=true", "--resync-period=15m"]

# A CSI controller Deployment with kubernetes-csi sidecars (the shape of most CSI drivers' controller).
CSI_CONTROLLER = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "ebs-csi-controller", "namespace": "kube-system", "labels": {"app": "ebs-csi-controller"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "ebs-csi-controller"}},
             "template": {"metadata": {"labels": {"app": "ebs-csi-controller"}}, "spec": {"containers": [
                 {"name": "ebs-plugin", "image": "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.40.0",
                  "args": ["controller", "--endpoint=$(CSI_ENDPOINT)"]},
                 {"name": "csi-provisioner", "image": "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0",
                  "args": ["--csi-address=$(ADDRESS)", "--v=2", "--feature-gates=Topology=true", "--timeout=60s"]},
                 {"name": "attacher", "image": "registry.k8s.io/sig-storage/csi-attacher:v4.8.0",
                  "args": ["--csi-address=$(ADDRESS)", "--v=2", "--worker-threads", "10", "--timeout=60s"]},
                 {"name": "csi-snapshotter", "image": "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.0",
                  "args": ["--csi-address=$(ADDRESS)", "--kube-api-qps=5", "--kube-api-burst=10"]}]}}},
}


def args_of(twin, name, container, namespace="kube-system"):
    dep = twin.kubectl_json("-n", namespace, "get", "deployment", name)
    return next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == container)["args"], dep


def _task(title, module, register, ignore_errors=False, **params):
    t = {"name": title, module: params, "register": register}
    if ignore_errors:
        t["ignore_errors"] = True
    return t


def _read(title, deployment, register):
    return {"name": title, "ansible.builtin.command": f"kubectl -n kube-system get deployment {deployment} -o json",
            "register": register}


def task_result(run, name):
    """The result of the task named exactly `name`, with `failed` from the recorded status (not in the result)."""
    rec = next(r for r in reversed(run.results) if r["task"] == name)
    return dict(rec["result"], failed=rec["status"] == "failed")


def test_tuning_merges_args_refuses_bad_values_and_rolls_back(twin, tmp_path):
    twin.kubectl("-n", "kube-system", "patch", "deployment", "snapshot-controller", "--type=json", "-p", json.dumps(
        [{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": HAND_EDITED}]))
    twin.kubectl("apply", "-f", "-", input=json.dumps(CSI_CONTROLLER))
    snap_mod, side_mod = "storageperf.k8s.snapshot_controller_tuning", "storageperf.k8s.csi_sidecar_tuning"
    tasks = [
        _read("Before", "snapshot-controller", "before"),
        _task("Burst below QPS", snap_mod, "r1", True, kube_api_qps=200, kube_api_burst=100),
        _task("Zero workers", snap_mod, "r2", True, worker_threads=0),
        _task("QPS above the default burst", snap_mod, "r3", True, kube_api_qps=300),
        _task("Unknown container", snap_mod, "r4", True, container="nope"),
        _read("After the refusals", "snapshot-controller", "after_refusals"),
        {**_task("Plan the seed values", snap_mod, "plan"), "check_mode": True, "diff": True},
        _read("After check mode", "snapshot-controller", "after_check"),
        _task("Apply the seed values", snap_mod, "apply"),
        _task("Apply them again", snap_mod, "again"),
        _task("Sidecar burst below QPS", side_mod, "s0", True, name="ebs-csi-controller", namespace="kube-system",
              sidecars=[{"name": "csi-snapshotter", "kube_api_qps": 50}]),
        _task("Tune the sidecars once", side_mod, "s1", name="ebs-csi-controller", namespace="kube-system", sidecars=[
            {"name": "csi-provisioner", "worker_threads": 100, "kube_api_qps": 50, "kube_api_burst": 100},
            {"name": "csi-attacher", "worker_threads": 25},
            {"name": "csi-snapshotter", "kube_api_qps": 75, "kube_api_burst": 150}]),
        _task("Tune the sidecars a second time", side_mod, "s2", name="ebs-csi-controller", namespace="kube-system", sidecars=[
            {"name": "csi-provisioner", "worker_threads": 100, "kube_api_qps": 50, "kube_api_burst": 100},
            {"name": "csi-attacher", "worker_threads": 25},
            {"name": "csi-snapshotter", "kube_api_qps": 75, "kube_api_burst": 150}]),
        _task("Sidecars back", side_mod, "s3", name="ebs-csi-controller", namespace="kube-system", state="absent",
              sidecars=[{"name": "csi-provisioner"}, {"name": "csi-attacher"}]),
        _task("Back to the upstream defaults", snap_mod, "absent", state="absent"),
    ]
    play = [{"name": "snapshot-controller and sidecar tuning", "hosts": "localhost", "gather_facts": False,
             "module_defaults": {"group/storageperf.k8s.k8s": {"kubeconfig": "{{ k8s_kubeconfig }}"}}, "tasks": tasks}]
    path = tmp_path / "tuning.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))

    # "Before" must be the settled Deployment: a rollout still finishing writes its status meanwhile
    twin.kubectl("-n", "kube-system", "rollout", "status", "deployment/snapshot-controller", "--timeout=60s")
    run = twin.playbook(path)
    assert run.rc == 0, run.stdout + run.stderr

    def result(name):
        return task_result(run, name)

    before = json.loads(result("Before")["stdout"])
    for name, fragment in (("Burst below QPS", "kube_api_burst=100 must be >= kube_api_qps=200"),
                           ("Zero workers", "worker_threads=0 must be > 0"),
                           ("QPS above the default burst", "kube_api_burst=150 must be >= kube_api_qps=300"),
                           ("Unknown container", "has no container named nope (it has snapshot-controller)")):
        res = result(name)
        assert res["failed"] and fragment in res["msg"], (name, res["msg"])
    assert json.loads(result("After the refusals")["stdout"])["metadata"]["resourceVersion"] == \
        before["metadata"]["resourceVersion"]

    plan = result("Plan the seed values")
    assert plan["changed"] and plan["args"] == TUNED
    assert "--kube-api-qps 5" not in plan["diff"]["after"] and "- --kube-api-qps=75" in plan["diff"]["after"]
    assert json.loads(result("After check mode")["stdout"])["metadata"]["resourceVersion"] == \
        before["metadata"]["resourceVersion"]

    applied = result("Apply the seed values")
    assert applied["changed"] and applied["before"] == {"worker_threads": "10", "kube_api_qps": "5", "kube_api_burst": None}
    assert applied["running"] == applied["after"] == {"worker_threads": "25", "kube_api_qps": "75", "kube_api_burst": "150"}
    assert applied["rollout"] == "successfully rolled out"
    assert result("Apply them again")["changed"] is False

    assert result("Sidecar burst below QPS")["failed"]
    assert "sidecars[csi-snapshotter].kube_api_burst=10 (the value left in place) must be >= kube_api_qps=50" in \
        result("Sidecar burst below QPS")["msg"]
    s1 = result("Tune the sidecars once")
    assert s1["changed"] and s1["sidecars"]["csi-attacher"]["container"] == "attacher"  # found by its image
    assert s1["sidecars"]["csi-attacher"]["args"] == ["--csi-address=$(ADDRESS)", "--v=2", "--worker-threads=25",
                                                      "--timeout=60s"]
    assert result("Tune the sidecars a second time")["changed"] is False
    assert result("Sidecars back")["changed"] is True

    # what the cluster runs now
    snap_args, dep = args_of(twin, "snapshot-controller", "snapshot-controller")
    assert snap_args == UNTUNED
    assert dep["status"]["observedGeneration"] == dep["metadata"]["generation"]
    prov, _ = args_of(twin, "ebs-csi-controller", "csi-provisioner")
    attacher, _ = args_of(twin, "ebs-csi-controller", "attacher")
    snapshotter, side_dep = args_of(twin, "ebs-csi-controller", "csi-snapshotter")
    plugin, _ = args_of(twin, "ebs-csi-controller", "ebs-plugin")
    assert prov == CSI_CONTROLLER["spec"]["template"]["spec"]["containers"][1]["args"]
    assert attacher == ["--csi-address=$(ADDRESS)", "--v=2", "--timeout=60s"]
    assert snapshotter == ["--csi-address=$(ADDRESS)", "--kube-api-qps=75", "--kube-api-burst=150"]
    assert plugin == ["controller", "--endpoint=$(CSI_ENDPOINT)"]
    assert side_dep["status"]["readyReplicas"] == 2
