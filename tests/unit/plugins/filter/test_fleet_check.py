"""fleet_check: a run touches only clusters somebody named (the inventory and limit rules of playbooks/clusters.yml)."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.fleet_check import FilterModule

fleet_check = FilterModule().filters()["fleet_check"]


def inventory(tmp_path, hosts: dict[str, dict], groups: dict[str, list[str]], name="fleet.yml"):
    """groups/hostvars as Ansible gives them for hosts parsed from one source file."""
    src = tmp_path / name
    src.write_text("all: {}\n")
    hostvars = {h: {"inventory_file": str(src), **v} for h, v in hosts.items()}
    return {"all": list(hosts), "ungrouped": [], **groups}, hostvars, str(src)


def test_named_clusters_with_their_own_kubeconfig_pass(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}, "b": {"k8s_context": "b"}},
                                      {"k8s_clusters": ["a", "b"]})
    assert fleet_check(groups, hostvars, [src]) == {"problems": [], "fallback": False}


def test_a_source_that_failed_to_parse_is_refused_not_replaced_by_localhost(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("all: {hosts: [x\n")
    out = fleet_check({"all": [], "ungrouped": []}, {}, [str(broken)])
    assert out["fallback"] is False
    [problem] = out["problems"]
    assert str(broken) in problem and "failed to parse" in problem and "without -i" in problem


def test_one_broken_source_of_two_is_refused(tmp_path):
    groups, hostvars, good = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}}, {"k8s_clusters": ["a"]})
    out = fleet_check(groups, hostvars, [good, str(tmp_path / "missing.yml")])
    assert len(out["problems"]) == 1 and "missing.yml" in out["problems"][0]


def test_a_directory_source_counts_the_hosts_of_its_files(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}}, {"k8s_clusters": ["a"]})
    assert fleet_check(groups, hostvars, [str(tmp_path)])["problems"] == []
    assert fleet_check(groups, hostvars, [str(tmp_path) + "-other"])["problems"]


def test_a_constructed_source_adds_no_host_and_is_not_refused(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}}, {"k8s_clusters": ["a"]})
    constructed = tmp_path.parent / "groups.constructed.yml"
    constructed.write_text("plugin: ansible.builtin.constructed\ngroups: {}\n")
    assert fleet_check(groups, hostvars, [src, str(constructed)])["problems"] == []


def test_a_source_of_variables_only_is_layered_not_broken(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}}, {"k8s_clusters": ["a"]})
    keys = tmp_path.parent / "vault.yml"
    keys.write_text("all:\n  vars:\n    alibaba_access_key_id: x\n")
    assert fleet_check(groups, hostvars, [src, str(keys)])["problems"] == []
    keys.write_text("all:\n  hosts:\n    b:\n")  # a host that did not arrive: that source did not parse as written
    assert fleet_check(groups, hostvars, [src, str(keys)])["problems"]


def test_an_empty_cluster_group_is_refused_when_the_inventory_lists_other_hosts(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"web1": {}, "db1": {}}, {"webservers": ["web1"]})
    [problem] = fleet_check(groups, hostvars, [src])["problems"]
    assert "'k8s_clusters'" in problem and "cluster_group" in problem
    groups["prod"] = ["web1"]
    hostvars["web1"]["k8s_kubeconfig"] = "/k/web1"
    assert fleet_check(groups, hostvars, [src], "prod")["problems"] == []


def test_no_inventory_or_localhost_only_is_the_fleet_of_one(tmp_path):
    assert fleet_check({"all": [], "ungrouped": []}, {}, ["/etc/ansible/hosts"]) == {"problems": [], "fallback": True}
    groups, hostvars, src = inventory(tmp_path, {"localhost": {}}, {})
    assert fleet_check(groups, hostvars, [src]) == {"problems": [], "fallback": True}


def test_a_cluster_without_a_connection_of_its_own_is_named(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}, "b": {"k8s_kubeconfig": " "},
                                                 "localhost": {}}, {"k8s_clusters": ["a", "b", "localhost"]})
    [problem] = fleet_check(groups, hostvars, [src])["problems"]
    assert problem.startswith("The cluster host b has no connection of its own") and "k8s_kubeconfig" in problem


def test_an_ack_playbook_accepts_the_cluster_id(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"c1": {"ack_cluster_id": "c0123"}}, {"k8s_clusters": ["c1"]})
    assert fleet_check(groups, hostvars, [src])["problems"]
    assert fleet_check(groups, hostvars, [src], needs="ack")["problems"] == []
    with pytest.raises(AnsibleFilterError, match="needs must be one of k8s, ack"):
        fleet_check(groups, hostvars, [src], needs="gluster")


def test_a_limit_that_leaves_a_cluster_passes(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}, "b": {"k8s_kubeconfig": "/k/b"},
                                                 "web": {}}, {"k8s_clusters": ["a", "b"]})
    assert fleet_check(groups, hostvars, [src], limit="b", play_hosts=["b"]) == {"problems": [], "fallback": False}
    assert fleet_check(groups, hostvars, [src], limit="b,web", play_hosts=["b", "web"])["problems"] == []


def test_a_limit_that_leaves_only_hosts_outside_the_cluster_group_is_refused_naming_it(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"a": {"k8s_kubeconfig": "/k/a"}, "web": {}},
                                      {"k8s_clusters": ["a"], "webservers": ["web"]})
    out = fleet_check(groups, hostvars, [src], limit="webservers", play_hosts=["web"])
    [problem] = out["problems"]
    assert problem.startswith("The limit 'webservers' names no cluster of the group 'k8s_clusters' (a): it leaves "
                              "only web.") and "-e cluster_group=NAME" in problem
    # without a limit the same inventory is fine: the play's hosts are then localhost and the clusters
    assert fleet_check(groups, hostvars, [src], limit="", play_hosts=["localhost", "a"])["problems"] == []


def test_a_limit_of_localhost_is_a_cluster_only_where_localhost_is_the_one_cluster(tmp_path):
    assert fleet_check({"all": [], "ungrouped": []}, {}, [], limit="localhost", play_hosts=["localhost"]) == {
        "problems": [], "fallback": True}
    groups, hostvars, src = inventory(tmp_path, {f"c{i}": {"k8s_kubeconfig": "/k"} for i in range(7)},
                                      {"k8s_clusters": [f"c{i}" for i in range(7)]})
    [problem] = fleet_check(groups, hostvars, [src], limit="localhost", play_hosts=["localhost"])["problems"]
    assert "(c0, c1, c2, c3, c4, ...)" in problem and "leaves only localhost" in problem


def test_an_inventory_problem_is_told_before_the_limit(tmp_path):
    groups, hostvars, src = inventory(tmp_path, {"web": {}}, {"webservers": ["web"]})
    [problem] = fleet_check(groups, hostvars, [src], limit="web", play_hosts=["web"])["problems"]
    assert "names no host in the group 'k8s_clusters'" in problem
