"""A fleet of twins (`python -m twin up --clusters 3`): one API server per cluster, one ACK/ECS account for all,
the CS directory through aliyun-python-sdk-core, `down --cluster` making one cluster unreachable, the counter."""
from __future__ import annotations

import json
import os
import time

import pytest
import yaml
from aliyunsdkcore.acs_exception.exceptions import ServerException

from tests.support.alibaba import cloud_state
from tests.support.fleet import Fleet, cs, cs_error, ecs, list_all
from tests.support.twin import REPO, run_playbook

EXTRA = 1000


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("fleet") / "f", clusters=3, nodes=2,
               extra=["--ack-extra-clusters", str(EXTRA)]) as f:
        yield f


def node_names(twin) -> set[str]:
    return {n["metadata"]["name"] for n in twin.kubectl_json("get", "nodes")["items"]}


def test_files_follow_the_single_twin_shape_per_cluster(fleet):
    assert fleet.names == ["twin-1", "twin-2", "twin-3"]
    assert not (fleet.dir / "kubeconfig").exists() and not (fleet.dir / "cloud.json").exists()
    clouds = [m.cloud for m in fleet.members]
    for c in clouds:
        assert set(c) >= {"alibaba", "ontap"}
        assert set(c["alibaba"]) >= {"region", "cluster_id", "cs_endpoint", "ecs_endpoint", "access_key_id",
                                     "access_key_secret", "sts"}
    # one account: the same endpoints and keys, a cluster id each
    assert len({(c["alibaba"]["cs_endpoint"], c["alibaba"]["ecs_endpoint"], c["alibaba"]["access_key_id"])
                for c in clouds}) == 1
    assert len({c["alibaba"]["cluster_id"] for c in clouds}) == 3
    assert [c["cluster_id"] for c in fleet.index["clusters"]] == [c["alibaba"]["cluster_id"] for c in clouds]
    # each cluster has its own ONTAP
    assert len({c["ontap"]["management_lif"] for c in clouds}) == 3


def test_each_kubeconfig_reaches_its_own_api_server(fleet):
    t1, t2, t3 = fleet.members
    assert len({t1.server, t2.server, t3.server}) == 3
    names = [node_names(t) for t in (t1, t2, t3)]
    assert all(len(n) == 2 for n in names)
    assert not (names[0] & names[1]) and not (names[1] & names[2]) and not (names[0] & names[2])
    t2.kubectl("create", "configmap", "only-in-twin-2", "--from-literal=k=v")
    assert t2.kubectl("get", "configmap", "only-in-twin-2", check=False).returncode == 0
    assert t1.kubectl("get", "configmap", "only-in-twin-2", check=False).returncode != 0
    assert t3.kubectl("get", "configmap", "only-in-twin-2", check=False).returncode != 0


def test_cs_api_lists_the_fleet_and_the_extra_clusters(fleet):
    cloud = fleet.member("twin-1").cloud
    clusters, infos = list_all(cloud)
    assert len(clusters) == EXTRA + 3 == infos[0]["total_count"]
    assert all(i["page_size"] == 100 for i in infos) and len(infos) == 11
    assert len({c["cluster_id"] for c in clusters}) == len(clusters)
    ours = {c["name"]: c for c in clusters if c["name"].startswith("twin-")}
    assert sorted(ours) == ["twin-1", "twin-2", "twin-3"]
    assert [ours[c["name"]]["cluster_id"] for c in fleet.index["clusters"]] == \
        [c["cluster_id"] for c in fleet.index["clusters"]]
    assert all(c["size"] == 2 and c["state"] == "running" for c in ours.values())
    assert {"key": "twin-fleet", "value": "twin-2"} in ours["twin-2"]["tags"]
    named = cs(cloud, "/api/v1/clusters", {"name": "twin-"})
    assert named["page_info"]["total_count"] == 3


def test_user_config_is_a_working_kubeconfig_for_that_cluster(fleet, tmp_path):
    t3 = fleet.member("twin-3")
    answer = cs(t3.cloud, f"/k8s/{t3.cloud['alibaba']['cluster_id']}/user_config")
    assert yaml.safe_load(answer["config"])["clusters"][0]["cluster"]["server"] == t3.server
    path = tmp_path / "kubeconfig"
    path.write_text(answer["config"])
    nodes = t3.kubectl_json("--kubeconfig", str(path), "get", "nodes")["items"]
    assert {n["metadata"]["name"] for n in nodes} == node_names(t3)


def test_unknown_cluster_is_not_found_through_the_front(fleet):
    with pytest.raises(ServerException) as e:
        cs(fleet.member("twin-1").cloud, "/clusters/c0000000000000000000000000000dead/addon_instances")
    assert e.value.get_http_status() == 404 and cs_error(e.value)["code"] == "ErrorClusterNotFound"


def test_addon_change_acts_on_that_clusters_daemonset(fleet):
    t1, t2 = fleet.member("twin-1"), fleet.member("twin-2")
    cid = t2.cloud["alibaba"]["cluster_id"]
    cs(t2.cloud, f"/clusters/{cid}/components/csi-plugin/config", method="POST",
       body={"config": json.dumps({"FeatureGate": "DiskADController=true"})})
    # ModifyClusterAddon leaves the addon `updating` until the pods are rolled; wait for that condition
    deadline = time.monotonic() + 60
    while cs(t2.cloud, f"/clusters/{cid}/addon_instances/csi-plugin")["state"] != "active":
        assert time.monotonic() < deadline, "csi-plugin on twin-2 stayed updating"
        time.sleep(0.05)  # poll interval, not a wait: the loop ends on the state
    args = t2.kubectl_json("-n", "kube-system", "get", "ds", "csi-plugin")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--feature-gates=DiskADController=true" in args
    other = t1.kubectl_json("-n", "kube-system", "get", "ds", "csi-plugin")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert not any("DiskADController" in a for a in other)
    cid1 = t1.cloud["alibaba"]["cluster_id"]
    assert cs(t1.cloud, f"/clusters/{cid1}/addon_instances/csi-plugin")["config"] == json.dumps({"FeatureGate": ""})


def test_ecs_calls_reach_the_clusters_that_own_the_instances(fleet):
    t2, t3 = fleet.member("twin-2"), fleet.member("twin-3")
    i2 = t2.kubectl_json("get", "nodes")["items"][0]["spec"]["providerID"].split(".", 1)[1]
    i3 = t3.kubectl_json("get", "nodes")["items"][0]["spec"]["providerID"].split(".", 1)[1]
    ecs(t2.cloud, "TagResources", {"ResourceType": "instance", "ResourceId.1": i2, "ResourceId.2": i3,
                                   "Tag.1.Key": "fleet-test", "Tag.1.Value": "yes"})
    listed = ecs(t2.cloud, "ListTagResources", {"ResourceType": "instance", "ResourceId.1": i2, "ResourceId.2": i3})
    tagged = {r["ResourceId"] for r in listed["TagResources"]["TagResource"] if r["TagKey"] == "fleet-test"}
    assert tagged == {i2, i3}
    s2, s3 = cloud_state(t2)["instances"], cloud_state(t3)["instances"]
    assert s2[i2]["tags"]["fleet-test"] == "yes" and s3[i3]["tags"]["fleet-test"] == "yes"
    assert i3 not in s2 and i2 not in s3
    types = ecs(t3.cloud, "DescribeInstanceTypes", {"InstanceTypes.1": "ecs.g7se.16xlarge"})
    assert types["InstanceTypes"]["InstanceType"][0]["DiskQuantity"] == 56


def test_counter_counts_front_calls_per_action(fleet):
    cloud = fleet.member("twin-1").cloud
    before = fleet.status()["cloud_requests"]
    cs(cloud, "/api/v1/clusters")
    cs(cloud, f"/clusters/{cloud['alibaba']['cluster_id']}")
    after = fleet.status()["cloud_requests"]
    assert after["cs:DescribeClustersV1"] - before.get("cs:DescribeClustersV1", 0) == 1
    # the front's own reads of its members (the listing asked each for its detail) are not client calls
    assert after["cs:DescribeClusterDetail"] - before.get("cs:DescribeClusterDetail", 0) == 1
    assert fleet.status()["cloud_requests"] == after


FLEET_PLAYBOOK = """
- name: Every cluster of the fleet, reached through its own host vars
  hosts: k8s_clusters
  gather_facts: false
  tasks:
    - name: nodes of this host's cluster
      kubernetes.core.k8s_info:
        kind: Node
        kubeconfig: "{{ k8s_kubeconfig }}"
      register: nodes
    - name: what the inventory says about this host
      ansible.builtin.set_fact:
        seen:
          nodes: "{{ nodes.resources | map(attribute='metadata.name') | sort }}"
          ack_cluster_id: "{{ ack_cluster_id }}"
          ack_region: "{{ ack_region }}"
          ack_cs_endpoint: "{{ ack_cs_endpoint }}"
          ack_ecs_endpoint: "{{ ack_ecs_endpoint }}"
          credential_vars: "{{ query('ansible.builtin.varnames', '^(alibaba_access_key|alibaba_security_token|ontap_username|ontap_password)') }}"
          ontap_hostname: "{{ ontap_hostname }}"
          bench_fio_runtime: "{{ bench_fio_runtime }}"
"""


def test_fleet_inventory_gives_each_host_its_clusters_vars(fleet):
    path = fleet.dir / "fleet-inventory.yml"
    path.write_text(FLEET_PLAYBOOK)
    run = run_playbook(path, inventory=REPO / "inventories" / "twin-fleet", record_dir=fleet.dir,
                       env={**os.environ, "STORAGEPERF_TWIN_DIR": str(fleet.dir)})
    assert run.rc == 0, run.stdout + run.stderr
    seen = {r["host"]: r["result"]["ansible_facts"]["seen"] for r in run.results if r["task"] == "what the inventory says about this host"}
    assert sorted(seen) == ["twin-1", "twin-2", "twin-3"]
    for name, vars_ in seen.items():
        t = fleet.member(name)
        a = t.cloud["alibaba"]
        assert vars_["nodes"] == sorted(node_names(t))
        assert (vars_["ack_cluster_id"], vars_["ack_region"], vars_["ack_cs_endpoint"], vars_["ack_ecs_endpoint"]) == \
            (a["cluster_id"], a["region"], a["cs_endpoint"], a["ecs_endpoint"])
        assert vars_["credential_vars"] == []  # the keys come through the environment (DIR/env), not the inventory
        # one account and one ONTAP credential for the fleet: every member's env file is the fleet's, and it opens
        # this member's ACK account and ONTAP
        assert t.credentials == fleet.front.credentials
        assert (t.credentials["ALIBABA_CLOUD_ACCESS_KEY_ID"], t.credentials["ALIBABA_CLOUD_ACCESS_KEY_SECRET"]) == \
            (a["access_key_id"], a["access_key_secret"])
        assert (t.credentials["ONTAP_USERNAME"], t.credentials["ONTAP_PASSWORD"]) == \
            (t.cloud["ontap"]["username"], t.cloud["ontap"]["password"])
        assert vars_["ontap_hostname"] == t.cloud["ontap"]["management_lif"]
        assert str(vars_["bench_fio_runtime"]) == "5"
    assert len({v["ack_cluster_id"] for v in seen.values()}) == 3


def test_settings_and_faults_reach_only_the_named_cluster_and_refusals_come_back(fleet):
    from tests.twin.storage_helpers import storage

    fleet.twin_cmd("settings", "--cluster", "twin-3", "--set", '{"ontap_serial": true}')
    assert [storage(m, "trident")["ontap_serial"] for m in fleet.members] == [False, False, True]
    fleet.twin_cmd("settings", "--cluster", "twin-3", "--set", '{"ontap_serial": false}')
    assert storage(fleet.member("twin-3"), "trident")["ontap_serial"] is False
    # the member's 400 through the front: the message names the field and the accepted values
    refused = fleet.twin_cmd("fault", "--cluster", "twin-2", "--name", "attach", "--rule",
                             '{"fraction": 1.0, "while": "parallel-attach"}', check=False)
    assert refused.returncode != 0
    assert "rule.while: 'parallel-attach' is not a change the twin knows; use one of trident_concurrency, " \
           "parallel_attach" in refused.stderr, refused.stderr
    fleet.twin_cmd("fault", "--cluster", "twin-2", "--name", "attach", "--rule",
                   '{"fraction": 1.0, "while": "parallel_attach", "count": 6}')
    rules = [storage(m, "faults")["rules"] for m in fleet.members]
    assert rules[1] == {"attach": {"fraction": 1.0, "while": "parallel_attach", "count": 6}}
    assert rules[0] == rules[2] == {}
    fleet.twin_cmd("fault", "--cluster", "twin-2", "--clear")


def test_down_one_cluster_leaves_the_others_serving(fleet):
    """Last in this module: twin-2 stays unreachable afterwards."""
    t1, t2, t3 = fleet.members
    fleet.down("twin-2")
    refused = t2.kubectl("get", "nodes", "--request-timeout=10s", check=False)
    assert refused.returncode != 0 and "refused" in refused.stderr
    assert len(node_names(t1)) == 2 and len(node_names(t3)) == 2
    status = fleet.status()["clusters"]
    expected = {"twin-1": "serving", "twin-2": "stopped", "twin-3": "serving"}
    assert {n: s["apiserver"] for n, s in status.items()} == expected
    # the cloud still knows the cluster: its API server is unreachable, not deleted
    names = [c["name"] for c in cs(t1.cloud, "/api/v1/clusters", {"name": "twin-"})["clusters"]]
    assert names == ["twin-1", "twin-2", "twin-3"]


def test_down_stops_every_process(tmp_path):
    f = Fleet(tmp_path / "f", clusters=2, nodes=1).up()
    pids = [int((f.dir / "twin.pid").read_text())] + [int((m.dir / "twin.pid").read_text()) for m in f.members]
    f.down()
    from twin.__main__ import _alive

    assert not any(_alive(p) for p in pids)
    assert not (f.dir / "ready").exists()
