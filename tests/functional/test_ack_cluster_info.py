"""ack_cluster_info: the cluster as the ACK and ECS APIs report it, plus its Kubernetes side."""
from __future__ import annotations

from tests.support.alibaba import admin, run_module

TASK = "module under test"


def test_reports_addons_pools_nodes_limits_and_disks_without_serial_with_their_users(twin_factory):
    twin = twin_factory(nodes=4, time_scale=0.01, extra=["--node-pools", "2"])
    admin(twin, "cloud", {"addon": "csi-plugin", "feature_gates": "DiskADController=true"})
    seeded = admin(twin, "alibaba", {"legacy_disk": {"name": "mysql-0", "namespace": "default"}})["legacy_disk"]
    run = run_module(twin, "ack_cluster_info", {})
    assert run.rc == 0, run.stdout + run.stderr
    r = run.task(TASK)["result"]
    assert r["changed"] is False
    assert r["cluster"]["version"] == "1.32.4-aliyun.1" and r["cluster"]["region"] == "cn-hangzhou"
    assert r["provisioner"] == "managed-csiprovisioner"
    assert r["addons"]["csi-plugin"]["feature_gates"] == {"DiskADController": True}
    assert r["addons"]["managed-csiprovisioner"]["feature_gate"] == ""
    assert len(r["node_pools"]) == 2 and all(p["tags"] == {} for p in r["node_pools"])
    assert {n["instance_id"] for n in r["nodes"]} == {n["instance_id"] for n in twin_nodes(twin)}
    assert all(n["disk_quantity"] == 56 for n in r["nodes"])
    assert r["instance_types"]["ecs.g7se.16xlarge"]["disk_quantity"] == 56
    [disk] = r["disks_without_serial"]
    assert disk["disk_id"] == seeded["disk_id"] and disk["instance_id"] == seeded["instance_id"]
    assert (disk["pv"], disk["pvc"], disk["namespace"]) == ("mysql-0-pv", "mysql-0-pvc", "default")
    assert disk["pods"] == [{"name": "mysql-0-pod", "namespace": "default", "node": seeded["node"]}]
    assert r["parallel_attach"] == {"controller_gates": False, "node_gates": True, "detach_gate": False,
                                    "node_pools_tagged": 0, "node_pools_total": 2, "instances_tagged": 0,
                                    "instances_detach_tagged": 0, "instances_total": 4, "enabled": False}
    plugin = r["kubernetes"]["csi"]["csi-plugin"]
    assert plugin["pods"] == plugin["ready"] == plugin["desired"] == 4
    assert r["kubernetes"]["csi"]["csi-provisioner"] is None  # managed: it runs outside the cluster
    assert r["api_calls"]["writes"] == 0


def twin_nodes(twin):
    return admin(twin, "stats", {})["nodes"]


def test_without_kubernetes_access_disks_are_found_through_the_instances(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    seeded = admin(twin, "alibaba", {"legacy_disk": {"name": "old"}})["legacy_disk"]
    run = run_module(twin, "ack_cluster_info", {}, env={"K8S_AUTH_KUBECONFIG": ""})
    assert run.rc == 0, run.stdout + run.stderr
    r = run.task(TASK)["result"]
    assert r["kubernetes"] is None
    [disk] = r["disks_without_serial"]
    assert disk["disk_id"] == seeded["disk_id"] and disk["node_name"] == seeded["node"] and disk["pv"] is None


def test_sts_credentials_from_the_environment(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    sts = twin.cloud["alibaba"]["sts"]
    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": sts["access_key_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": sts["access_key_secret"],
           "ALIBABA_CLOUD_SECURITY_TOKEN": sts["security_token"]}
    run = run_module(twin, "ack_cluster_info", {}, env=env,
                     extra_vars={"alibaba_access_key_id": "", "alibaba_access_key_secret": ""})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task(TASK)["result"]["cluster"]["cluster_id"] == twin.cloud["alibaba"]["cluster_id"]
    for secret in (sts["access_key_secret"], sts["security_token"]):
        assert secret not in run.stdout and secret not in str(run.task(TASK)["result"])
    # the same key without its token is refused, and the message says what to renew
    env.pop("ALIBABA_CLOUD_SECURITY_TOKEN")
    bad = run_module(twin, "ack_cluster_info", {}, env=env,
                     extra_vars={"alibaba_access_key_id": "", "alibaba_access_key_secret": ""})
    assert bad.rc != 0 and "security_token" in bad.task(TASK)["result"]["msg"]
