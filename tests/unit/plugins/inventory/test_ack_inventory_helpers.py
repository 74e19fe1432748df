"""The pure parts of the ack inventory plugin: filters, host names, addon versions, cache validity."""
from __future__ import annotations

from datetime import datetime, timedelta, UTC

import pytest

from ansible_collections.storageperf.k8s.plugins.inventory import ack as I
from ansible_collections.storageperf.k8s.plugins.plugin_utils.cluster_inventory import host_name

CLUSTER = {"cluster_id": "c1", "name": "prod-hz", "state": "running", "cluster_type": "ManagedKubernetes",
           "cluster_spec": "ack.pro.small", "tags": [{"key": "env", "value": "prod"}, {"key": "team", "value": "a"}]}


@pytest.mark.parametrize("filters,expected", [
    ({}, True),
    ({"name": "prod-*"}, True),
    ({"name": "prod"}, False),  # the whole name, not the API's substring
    ({"tags": {"env": "prod"}}, True),
    ({"tags": {"env": "prod", "team": "b"}}, False),
    ({"tags": {"team": None}}, True),
    ({"tags": {"owner": None}}, False),
    ({"state": "failed"}, False),
    ({"state": []}, True),
    ({"cluster_type": "Kubernetes"}, False),
])
def test_matches(filters, expected):
    assert I.matches(CLUSTER, filters) is expected


def test_a_stopped_cluster_is_left_out_by_default():
    assert not I.matches(dict(CLUSTER, state="stopped"), {})


@pytest.mark.parametrize("pattern,literal", [("prod-*", "prod-"), ("*-hz-[0-9]", "-hz-"), ("exact", "exact"), ("*", "")])
def test_longest_literal(pattern, literal):
    assert I.longest_literal(pattern) == literal


def test_host_names_are_pattern_safe_and_shared_names_take_the_id():
    records = [{"cluster": {"cluster_id": "c1", "name": "a@b:c"}}, {"cluster": {"cluster_id": "c2", "name": "x"}},
               {"cluster": {"cluster_id": "c3", "name": "x"}}]
    assert I.unique_names(records, "name") == ["a_b_c", "x_c2", "x_c3"]
    assert I.unique_names(records, "cluster_id") == ["c1", "c2", "c3"]
    assert host_name("arn:aws:eks:eu-west-1:1:cluster/x") == "arn_aws_eks_eu-west-1_1_cluster_x"


def test_addon_versions_keep_installed_ones():
    # ListClusterAddonInstances' addons as api.list_addons gives them (was DescribeClusterAddonsVersion's map)
    doc = {"csi-plugin": {"version": "v1.30", "state": "active"}, "absent": {"version": ""}}
    assert I.addon_versions(doc) == {"csi-plugin": "v1.30"}


def test_cached_kubeconfigs_must_exist_and_not_expire_soon(tmp_path):
    f = tmp_path / "c1.kubeconfig"
    f.write_text("x")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    later = (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    soon = (now + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert I.kubeconfigs_usable([{"kubeconfig": str(f), "expiration": later}], now)
    assert not I.kubeconfigs_usable([{"kubeconfig": str(f), "expiration": soon}], now)
    assert not I.kubeconfigs_usable([{"kubeconfig": str(tmp_path / "gone"), "expiration": later}], now)
    assert I.kubeconfigs_usable([{}], now)  # no kubeconfig asked for


def test_a_kubeconfig_dir_others_can_write_is_refused_with_the_chmod_that_fixes_it(tmp_path):
    d = tmp_path / "kc"
    d.mkdir(mode=0o700)
    I.refuse_shared(str(d))  # private: fine
    I.refuse_shared(str(tmp_path / "not-yet"))  # created 0700 later
    for mode, who in ((0o777, "others"), (0o1777, "others"), (0o770, "its group")):
        d.chmod(mode)
        with pytest.raises(I.AnsibleError) as e:
            I.refuse_shared(str(d))
        assert f"kubeconfig_dir {d} is writable by {who}" in str(e.value) and f"chmod 700 {d}" in str(e.value)


def test_a_kubeconfig_others_can_read_is_refused(tmp_path):
    d = tmp_path / "kc"
    d.mkdir(mode=0o700)
    f = d / "c0123.kubeconfig"
    f.write_text("apiVersion: v1\n")
    f.chmod(0o600)
    I.refuse_shared(str(d))
    f.chmod(0o644)
    with pytest.raises(I.AnsibleError) as e:
        I.refuse_shared(str(d))
    assert f"kubeconfig {f} holds a cluster's credentials and is open to others (mode 0644)" in str(e.value)
    assert f"chmod 600 {f}" in str(e.value)
