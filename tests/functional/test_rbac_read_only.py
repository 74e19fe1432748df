"""The read-only modules' documented rights are enough: cluster_info.yml run with the token of a ServiceAccount
bound only to the ClusterRole the collection ships (docs/rbac/storageperf-read-only.yaml), on the twin, which enforces RBAC
as kube-apiserver does."""
from __future__ import annotations

from tests.support.twin import COLLECTIONS, REPO

SHIPPED = COLLECTIONS / "ansible_collections" / "storageperf" / "k8s" / "docs" / "rbac"


def _reader(twin, tmp_path, bound: bool):
    twin.kubectl("create", "namespace", "ops")
    twin.kubectl("-n", "ops", "create", "serviceaccount", "storageperf")
    if bound:
        twin.kubectl("apply", "-f", str(SHIPPED))  # the files as the collection ships them, not the checkout's
        twin.kubectl("create", "clusterrolebinding", "storageperf-read-only", "--clusterrole=storageperf-read-only",
                     "--serviceaccount=ops:storageperf")
    token = twin.kubectl("-n", "ops", "create", "token", "storageperf").stdout.strip()
    return twin.kubeconfig_for(token, tmp_path / "storageperf.kubeconfig")


def _facts(run):
    return run.task("Read the cluster's storage facts")


def test_cluster_info_runs_with_the_shipped_read_only_role(twin, tmp_path):
    kubeconfig = _reader(twin, tmp_path, bound=True)
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml", extra_vars={"k8s_kubeconfig": str(kubeconfig)})
    assert run.rc == 0, run.stdout + run.stderr
    res = _facts(run)["result"]
    admin = _facts(twin.playbook(REPO / "playbooks" / "cluster_info.yml"))["result"]
    for key in ("node_count", "storage_classes", "csi_drivers", "csi_node_limits", "volume_snapshot_classes",
                "snapshot_crds_installed", "trident_installed"):
        assert res[key] == admin[key], key
    assert res["node_count"] == 3


def test_without_the_role_the_same_token_is_refused(twin, tmp_path):
    kubeconfig = _reader(twin, tmp_path, bound=False)
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml", extra_vars={"k8s_kubeconfig": str(kubeconfig)})
    assert run.rc != 0
    msg = _facts(run)["result"]["msg"]
    assert "403" in msg and 'User "system:serviceaccount:ops:storageperf" cannot list resource' in msg, msg
