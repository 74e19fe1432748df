"""cluster_info through ansible-playbook against the twin: the path every role's preflight takes."""
from __future__ import annotations

import json
import re

from tests.support.twin import REPO


def _facts(run):
    return run.task("Read the cluster's storage facts")


def test_cluster_info_reports_the_twin(twin):
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml")
    assert run.rc == 0, run.stdout + run.stderr
    res = _facts(run)["result"]
    nodes = twin.kubectl_json("get", "nodes")["items"]
    assert res["node_count"] == len(nodes) == 3
    assert {n["name"] for n in res["nodes"]} == {n["metadata"]["name"] for n in nodes}
    assert all(n["ready"] for n in res["nodes"])
    assert res["server_version"]["minor"] == "32"
    assert res["snapshot_crds_installed"] is True
    assert res["trident_installed"] is True
    assert res["changed"] is False


def test_cluster_info_sees_new_storage_objects(twin):
    twin.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.csi.k8s.io", "volumeBindingMode": "WaitForFirstConsumer"}))
    res = _facts(twin.playbook(REPO / "playbooks" / "cluster_info.yml"))["result"]
    fast = next(s for s in res["storage_classes"] if s["name"] == "fast")
    assert fast["volume_binding_mode"] == "WaitForFirstConsumer"
    assert res["default_storage_class"] == "fast"


def test_cluster_info_without_snapshot_crds(twin_factory):
    bare = twin_factory("bare", nodes=1, extra=["--crds", "none"])
    run = bare.playbook(REPO / "playbooks" / "cluster_info.yml")
    assert run.rc == 0, run.stdout + run.stderr
    res = _facts(run)["result"]
    assert res["snapshot_crds_installed"] is False
    assert res["trident_installed"] is False
    assert res["volume_snapshot_classes"] == []


def test_cluster_info_sees_snapshot_crds_removed_since_the_last_run(twin):
    # The kubernetes library's default discovery cache is a file per host URL that outlives the process: a
    # run after the CRDs were removed (or against another cluster behind the same URL) read "served" from it
    # and failed listing VolumeSnapshotClasses with 404.
    first = twin.playbook(REPO / "playbooks" / "cluster_info.yml")
    assert first.rc == 0 and _facts(first)["result"]["snapshot_crds_installed"] is True, first.stdout
    twin.kubectl("delete", "crd", "volumesnapshotclasses.snapshot.storage.k8s.io",
                 "volumesnapshotcontents.snapshot.storage.k8s.io", "volumesnapshots.snapshot.storage.k8s.io")
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml")
    assert run.rc == 0, run.stdout + run.stderr
    res = _facts(run)["result"]
    assert res["snapshot_crds_installed"] is False
    assert res["snapshot_crds"] == dict.fromkeys(("VolumeSnapshot", "VolumeSnapshotContent", "VolumeSnapshotClass"), False)
    assert res["volume_snapshot_classes"] == []


def test_wrong_token_gives_a_clear_error_without_the_token(twin):
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml", env={"K8S_AUTH_API_KEY": "sekret-wrong-token"})
    assert run.rc != 0
    res = _facts(run)
    assert res["status"] == "failed"
    assert "401 Unauthorized" in res["result"]["msg"]
    assert "sekret-wrong-token" not in run.stdout + run.stderr + json.dumps(res)


def test_unreachable_server_gives_a_clear_error(twin):
    """A server that answers nothing is given up after the environment's STORAGEPERF_API_UNREACHABLE_AFTER (2 s),
    not the option's default 20 s, which the message's silence says."""
    twin.down()
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml", extra_vars={"k8s_kubeconfig": str(twin.kubeconfig)},
                        env={"STORAGEPERF_API_UNREACHABLE_AFTER": "2"})
    assert run.rc != 0
    msg = _facts(run)["result"]["msg"]
    assert "cannot reach the Kubernetes API" in msg and "127.0.0.1" in msg
    # noticed at the first try that fails after 2 s of silence, at most one backoff step (3.2 s) past it; the default
    # gives up at 20 s, or once all 10 tries failed (their backoff sleeps add up to at least 13 s)
    assert re.search(r"nothing but .* for [2-5] s while sending", msg), msg


def test_server_errors_are_retried(twin):
    # Bounded to 5 hits, fewer than the 6 attempts a request gets: an unbounded 30 % could fail one request
    # six times running (seen in CI), which tests luck, not the retry.
    twin.twin_cmd("fault", "--name", "api", "--rule", json.dumps({"fraction": 0.5, "code": 500, "count": 5}))
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml")
    twin.twin_cmd("fault", "--name", "api", "--clear")
    assert run.rc == 0, run.stdout
    res = _facts(run)["result"]
    assert res["node_count"] == 3
    # 13 distinct requests at least; with half of the first ones failing some had to be sent again
    assert res["api_requests"] > 13
