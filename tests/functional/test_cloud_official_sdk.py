"""Every ACK and ECS endpoint the collection calls, driven through the official Tea SDKs (alibabacloud_cs20151215,
alibabacloud_ecs20140526: V3 signatures) against the twin: each answer deserialises into the SDK's response model
with every field filled, apart from the few the real service leaves out for this kind of resource (named below
with the reason)."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from alibabacloud_cs20151215 import models as cs
from alibabacloud_ecs20140526 import models as ecs

from tests.support.alibaba import admin, cloud_calls
from tests.support.alibaba_sdk import cs_client, ecs_client, unset_fields
from tests.support.twin import Twin

ROOT = Path(__file__).resolve().parents[2]

# Fields ACK/ECS leave out of these answers, and why.
ABSENT = {
    # control_plane_config describes the masters of dedicated clusters; the twin's cluster is ManagedKubernetes
    "DescribeClusterDetail": {"control_plane_config"},
    # Lingjun (eflo) and edge (interconnect) settings exist only on those pool types; node_config holds only
    # kubelet / OS settings that were customised
    "DescribeClusterNodePools": {"nodepools[0].eflo_node_group", "nodepools[0].interconnect_config",
                                 "nodepools[0].node_config.kubelet_configuration",
                                 "nodepools[0].node_config.node_os_config"},
    "DescribeClusterNodePoolDetail": {"eflo_node_group", "interconnect_config", "node_config.kubelet_configuration",
                                      "node_config.node_os_config"},
    # disks created before 2020-06-10 have no serial number (the seeded disk is one)
    "DescribeDisks": {"disks.disk[0].serial_number"},
}


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("official-sdk") / "twin", nodes=2, time_scale=0.01) as t:
        admin(t, "alibaba", {"legacy_disk": {"name": "olddb"}})
        yield t


def collection_actions() -> set[str]:
    """The ACK and ECS actions the collection's plugins call (client.cs("X", ...) / client.ecs("X", ...))."""
    found = set()
    for path in (ROOT / "plugins").rglob("*.py"):
        found |= set(re.findall(r"\.(?:cs|ecs)\(\s*\"(\w+)\"", path.read_text()))
    return found


def calls(twin):
    c = twin.cloud["alibaba"]
    cid, region = c["cluster_id"], c["region"]
    ack, ec2 = cs_client(twin), ecs_client(twin)
    pools = ack.describe_cluster_node_pools(cid, cs.DescribeClusterNodePoolsRequest()).body.nodepools
    pool = pools[0].nodepool_info.nodepool_id
    iid = ack.describe_cluster_nodes(cid, cs.DescribeClusterNodesRequest()).body.nodes[0].instance_id
    return {
        "DescribeClusterDetail": lambda: ack.describe_cluster_detail(cid),
        "DescribeClustersV1": lambda: ack.describe_clusters_v1(cs.DescribeClustersV1Request(page_size=10)),
        "DescribeClusterUserKubeconfig": lambda: ack.describe_cluster_user_kubeconfig(
            cid, cs.DescribeClusterUserKubeconfigRequest(temporary_duration_minutes=60)),
        "DescribeClusterAddonsVersion": lambda: ack.describe_cluster_addons_version(cid),
        "DescribeClusterAddonUpgradeStatus": lambda: ack.describe_cluster_addon_upgrade_status(cid, "csi-plugin"),
        "DescribeClusterAddonsUpgradeStatus": lambda: ack.describe_cluster_addons_upgrade_status(
            cid, cs.DescribeClusterAddonsUpgradeStatusRequest(component_ids=["csi-plugin"])),
        "ListClusterAddonInstances": lambda: ack.list_cluster_addon_instances(cid),
        "GetClusterAddonInstance": lambda: ack.get_cluster_addon_instance(cid, "csi-plugin"),
        "ModifyClusterAddon": lambda: ack.modify_cluster_addon(
            cid, "csi-plugin", cs.ModifyClusterAddonRequest(config=json.dumps({"FeatureGate": "DiskParallelAttach=true"}))),
        "DescribeClusterNodePools": lambda: ack.describe_cluster_node_pools(cid, cs.DescribeClusterNodePoolsRequest()),
        "DescribeClusterNodePoolDetail": lambda: ack.describe_cluster_node_pool_detail(cid, pool),
        "ModifyClusterNodePool": lambda: ack.modify_cluster_node_pool(cid, pool, cs.ModifyClusterNodePoolRequest(
            scaling_group=cs.ModifyClusterNodePoolRequestScalingGroup(tags=[cs.Tag(key="team", value="storage")]))),
        "DescribeClusterNodes": lambda: ack.describe_cluster_nodes(cid, cs.DescribeClusterNodesRequest(page_size="10")),
        "TagResources": lambda: ec2.tag_resources(ecs.TagResourcesRequest(
            region_id=region, resource_type="instance", resource_id=[iid],
            tag=[ecs.TagResourcesRequestTag(key="bench", value="on")])),
        "ListTagResources": lambda: ec2.list_tag_resources(ecs.ListTagResourcesRequest(
            region_id=region, resource_type="instance", resource_id=[iid])),
        "UntagResources": lambda: ec2.untag_resources(ecs.UntagResourcesRequest(
            region_id=region, resource_type="instance", resource_id=[iid], tag_key=["bench"])),
        "DescribeInstanceTypes": lambda: ec2.describe_instance_types(ecs.DescribeInstanceTypesRequest(
            instance_types=["ecs.g7se.16xlarge"])),
        "DescribeDisks": lambda: ec2.describe_disks(ecs.DescribeDisksRequest(region_id=region, page_size=10)),
    }


def test_the_sdk_reads_every_endpoint_the_collection_uses_into_full_models(twin):
    table = calls(twin)
    assert collection_actions() <= set(table), "an endpoint the collection calls is not driven here"
    before = cloud_calls(twin)
    problems = {}
    for action, call in table.items():
        resp = call()
        assert resp.status_code == 200, action
        if action == "ModifyClusterAddon":  # its response model has no body
            continue
        unset = set(unset_fields(resp.body)) - ABSENT.get(action, set()) if resp.body is not None else {"<no body>"}
        if unset:
            problems[action] = sorted(unset)
    assert problems == {}
    after = cloud_calls(twin)
    for action in table:
        product = "ecs" if action in ("TagResources", "ListTagResources", "UntagResources", "DescribeInstanceTypes",
                                      "DescribeDisks") else "cs"
        key = f"{product}:{action}"
        assert after["ok"].get(key, 0) > before["ok"].get(key, 0), key
    assert not set(after["rejected"]) - set(before["rejected"])  # every V3 request was accepted


def wait_settled(read_state, what, timeout=120.0):
    """Poll ACK until a change has rolled out (its state leaves `updating`), as ACK clients wait."""
    deadline = time.monotonic() + timeout
    while read_state() == "updating":
        assert time.monotonic() < deadline, f"{what} still updating after {timeout}s"
        time.sleep(0.2)


def test_the_models_carry_what_the_twin_holds(twin):
    """Spot-check values through the models: the cluster, its pool's tags after ModifyClusterNodePool, the
    addon's config after ModifyClusterAddon, the instance type's disk quota, the seeded disk."""
    c = twin.cloud["alibaba"]
    cid = c["cluster_id"]
    ack, ec2 = cs_client(twin), ecs_client(twin)
    detail = ack.describe_cluster_detail(cid).body
    assert (detail.cluster_id, detail.region_id, detail.cluster_type) == (cid, c["region"], "ManagedKubernetes")
    listed = ack.describe_clusters_v1(cs.DescribeClustersV1Request(cluster_id=cid)).body
    assert [x.cluster_id for x in listed.clusters] == [cid] and listed.page_info.total_count == 1
    pool = ack.describe_cluster_node_pools(cid, cs.DescribeClusterNodePoolsRequest()).body.nodepools[0]
    np = pool.nodepool_info.nodepool_id
    # the first test's changes may still be rolling out
    wait_settled(lambda: ack.describe_cluster_node_pool_detail(cid, np).body.status.state, np)
    ack.modify_cluster_node_pool(cid, np, cs.ModifyClusterNodePoolRequest(
        scaling_group=cs.ModifyClusterNodePoolRequestScalingGroup(tags=[cs.Tag(key="owner", value="perf")])))
    again = ack.describe_cluster_node_pool_detail(cid, pool.nodepool_info.nodepool_id).body
    assert [(t.key, t.value) for t in again.scaling_group.tags] == [("owner", "perf")]
    wait_settled(lambda: ack.get_cluster_addon_instance(cid, "csi-plugin").body.state, "csi-plugin")
    ack.modify_cluster_addon(cid, "csi-plugin", cs.ModifyClusterAddonRequest(
        config=json.dumps({"FeatureGate": "DiskParallelDetach=true"})))
    addon = ack.get_cluster_addon_instance(cid, "csi-plugin").body
    assert json.loads(addon.config)["FeatureGate"] == "DiskParallelDetach=true"
    status = ack.describe_cluster_addon_upgrade_status(cid, "csi-plugin").body
    assert status["csi-plugin"]["addon_info"]["version"] == addon.version
    kubeconfig = ack.describe_cluster_user_kubeconfig(cid, cs.DescribeClusterUserKubeconfigRequest()).body
    assert "current-context" in kubeconfig.config and kubeconfig.expiration
    types = ec2.describe_instance_types(ecs.DescribeInstanceTypesRequest(instance_types=["ecs.g7se.16xlarge"])).body
    assert types.instance_types.instance_type[0].disk_quantity == 56
    disks = ec2.describe_disks(ecs.DescribeDisksRequest(region_id=c["region"])).body
    assert disks.total_count >= 1 and any(d.serial_number is None for d in disks.disks.disk)
