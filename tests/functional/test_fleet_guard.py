"""Only named clusters are touched: an inventory that fails to parse, names no cluster, or lists a cluster with no
connection of its own stops the run before anything is written, even where a default context (here a twin behind
KUBECONFIG and K8S_AUTH_KUBECONFIG, as on an operator's laptop or an AWX node) would answer."""
from __future__ import annotations

import pytest

from tests.support.twin import REPO, Twin

STORAGEPERF_LABEL = "storageperf.k8s/run-id"


@pytest.fixture(scope="module")
def default_context(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("default-context"), nodes=2) as t:
        yield t


def cluster_state(twin: Twin) -> tuple[list[str], list[str]]:
    """The namespaces, and every object the collection would label, of the cluster nobody named."""
    namespaces = twin.kubectl("get", "namespaces", "-o", "name").stdout.split()
    labelled = twin.kubectl("get", "statefulsets,pods,pvc,configmaps,leases", "-A", "-l", STORAGEPERF_LABEL,
                            "-o", "name").stdout.split()
    return sorted(namespaces), labelled


def refused(twin: Twin, inventory, playbook="bench_attach_stress.yml"):
    before = cluster_state(twin)
    run = twin.playbook(REPO / "playbooks" / playbook, inventory=inventory, extra_vars={"replicas": 2})
    assert run.rc != 0, run.stdout
    assert cluster_state(twin) == before
    # nothing ran past the first play: the benchmark's role never started on any host
    assert [r["task"] for r in run.results if r["status"] != "skipped"] == [
        "Check that the inventory and the limit name the clusters", "Refuse clusters nobody named"]
    return run.task("Refuse clusters nobody named")["result"]["msg"]


def test_a_broken_inventory_does_not_fall_back_to_the_default_context(default_context, tmp_path):
    broken = tmp_path / "fleet.yml"
    broken.write_text("all:\n  children:\n    k8s_clusters:\n      hosts: [prod-1\n")
    msg = refused(default_context, broken)
    assert f"The inventory source {broken} yielded no host" in msg and "failed to parse" in msg


def test_an_inventory_whose_cluster_group_is_empty_is_refused(default_context, tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text("all:\n  children:\n    web:\n      hosts:\n        web-1:\n        web-2:\n")
    msg = refused(default_context, inv)
    assert "names no host in the group 'k8s_clusters'" in msg and "-e cluster_group=NAME" in msg


def test_a_cluster_with_no_connection_of_its_own_is_refused(default_context, tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text("all:\n  children:\n    k8s_clusters:\n      hosts:\n"
                   f"        named:\n          k8s_kubeconfig: {default_context.kubeconfig}\n"
                   "        forgotten:\n      vars:\n        ansible_connection: local\n")
    msg = refused(default_context, inv, "cluster_info.yml")
    assert "The cluster host forgotten has no connection of its own" in msg and "named" not in msg.split(".")[0]


def test_the_embedded_twin_inventory_still_runs_on_its_one_cluster(default_context):
    run = default_context.playbook(REPO / "playbooks" / "cluster_info.yml")
    assert run.rc == 0, run.stdout
    assert run.task("Read the cluster's storage facts")["result"]["api_host"] == default_context.server
