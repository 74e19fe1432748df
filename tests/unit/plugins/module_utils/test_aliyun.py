"""Pure parts of the Alibaba Cloud client and of the parallel-attach planner: batching, paging, parameters,
credentials, and what a plan changes (and leaves alone)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import parallel_attach as P
from ansible_collections.storageperf.k8s.plugins.module_utils.ack import aliyun as A


@given(st.lists(st.integers(), max_size=400), st.integers(min_value=1, max_value=120))
def test_batches_cover_every_item_once_in_order_within_the_limit(items, size):
    out = A.batches(items, size)
    assert [x for b in out for x in b] == items
    assert all(1 <= len(b) <= size for b in out)
    assert len(out) == math.ceil(len(items) / size)


@pytest.mark.parametrize("total, size, pages", [(0, 100, 1), (1, 100, 1), (100, 100, 1), (101, 100, 2), (500, 100, 5)])
def test_pages_needed(total, size, pages):
    assert A.pages_needed(total, size) == pages


def test_rpc_repeated_parameters():
    assert A.indexed_params("ResourceId", ["i-1", "i-2"]) == {"ResourceId.1": "i-1", "ResourceId.2": "i-2"}
    assert A.tag_params({"supportConcurrencyDetach": "true", "supportConcurrencyAttach": "true"}) == {
        "Tag.1.Key": "supportConcurrencyAttach", "Tag.1.Value": "true",
        "Tag.2.Key": "supportConcurrencyDetach", "Tag.2.Value": "true"}


@pytest.mark.parametrize("text, parsed", [
    ("http://127.0.0.1:8080", ("127.0.0.1:8080", "http")),
    ("https://cs.cn-hangzhou.aliyuncs.com/", ("cs.cn-hangzhou.aliyuncs.com", "https")),
    ("cs.aliyuncs.com", ("cs.aliyuncs.com", "https")),  # a bare host is HTTPS
    ("HTTP://10.0.0.1", ("10.0.0.1", "http")),
])
def test_split_endpoint(text, parsed):
    assert A.split_endpoint(text) == parsed


def test_credentials_options_win_over_environment():
    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIenv", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "envsecret",
           "ALIBABA_CLOUD_SECURITY_TOKEN": "tok"}
    assert A.credentials_from({"access_key_id": "LTAIopt", "access_key_secret": "optsecret"}, env) == \
        ("LTAIopt", "optsecret", "tok")
    assert A.credentials_from({}, env) == ("LTAIenv", "envsecret", "tok")


def test_missing_credentials_name_both_fields_and_variables():
    with pytest.raises(A.AliyunError) as e:
        A.credentials_from({"access_key_id": "LTAIx"}, {})
    assert "access_key_secret" in e.value.msg and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in e.value.msg
    assert "access_key_id" not in e.value.msg.replace("access_key_secret", "")


def test_errors_never_carry_the_secret_and_mask_the_key_id():
    client = A.AliyunClient({"access_key_id": "LTAI1234567890abcd", "access_key_secret": "s3cr3t-value"}, environ={})
    err = client._explain("cs:DescribeClusterDetail", "SignatureDoesNotMatch",
                          "server string to sign is: ... s3cr3t-value", 400, "RID")
    assert "s3cr3t-value" not in err.msg and "access_key_secret" in err.msg and "LTAI****abcd" in err.msg
    other = client._explain("ecs:TagResources", "Weird", "echo s3cr3t-value", 400, None)
    assert "s3cr3t-value" not in other.msg


@pytest.mark.parametrize("code, status, retry", [
    ("Throttling.User", 400, True), ("Throttling", 503, True), ("ServiceUnavailable", 503, True),
    ("InternalError", 500, True), ("SDK.HttpError", None, True), ("Forbidden.RAM", 403, False),
    ("SignatureDoesNotMatch", 400, False), ("InvalidResourceId.NotFound", 404, False), (None, 429, True),
])
def test_what_is_retried(code, status, retry):
    assert A.AliyunError("x", code=code, status=status).retryable is retry


# planning ---------------------------------------------------------------------------------------------
def test_pool_tags_keep_other_tags_and_fix_wrong_values():
    tags = [{"key": "team", "value": "db"}, {"key": "supportConcurrencyAttach", "value": "false"}]
    assert P.pool_tags_after(tags, "present", False) == [{"key": "team", "value": "db"},
                                                         {"key": "supportConcurrencyAttach", "value": "true"}]
    assert P.pool_tags_after([{"key": "team", "value": "db"}], "present", True) == [
        {"key": "team", "value": "db"}, {"key": "supportConcurrencyAttach", "value": "true"},
        {"key": "supportConcurrencyDetach", "value": "true"}]
    assert P.pool_tags_after(P.pool_tags_after(tags, "present", True), "absent", False) == [{"key": "team", "value": "db"}]


def test_instance_groups_only_what_is_missing_and_skip_non_ecs_nodes():
    nodes = [{"instance_id": i, "is_aliyun_node": i != "idc-1"} for i in ("i-1", "i-2", "i-3", "idc-1")]
    tags = {"i-1": {"supportConcurrencyAttach": "true"}, "i-2": {"supportConcurrencyAttach": "true",
                                                                 "supportConcurrencyDetach": "true", "x": "y"}}
    assert P.instance_groups(nodes, tags, "present", False) == {(("supportConcurrencyAttach", "true"),): ["i-3"]}
    assert P.instance_groups(nodes, tags, "present", True) == {
        (("supportConcurrencyDetach", "true"),): ["i-1"],
        (("supportConcurrencyAttach", "true"), ("supportConcurrencyDetach", "true")): ["i-3"]}
    assert P.instance_groups(nodes, tags, "absent", False) == {
        ("supportConcurrencyAttach",): ["i-1"], ("supportConcurrencyAttach", "supportConcurrencyDetach"): ["i-2"]}


def test_controller_first_when_enabling_node_first_when_disabling():
    assert [r for _n, r in P.addon_order("present", "csi-provisioner")] == ["controller", "node"]
    assert P.addon_order("absent", "managed-csiprovisioner") == [("csi-plugin", "node"),
                                                                 ("managed-csiprovisioner", "controller")]


def test_gates_after_keep_every_other_gate():
    assert P.gate_after("EnableVolumeGroupSnapshots=true", "controller", "present", True) == \
        "EnableVolumeGroupSnapshots=true,DiskADController=true,DiskParallelAttach=true,DiskParallelDetach=true"
    assert P.gate_after("X=false", "node", "present", False) == "X=false,DiskADController=true"
    assert P.gate_after("X=false,DiskADController=true,DiskParallelDetach=true", "controller", "absent", False) == "X=false"


def test_version_problems_check_cluster_plugin_and_provisioner():
    ok = {"csi-plugin": {"version": "v1.30.4-8c2e0b1-aliyun"}, "csi-provisioner": {"version": "v1.31.2-aa-aliyun"}}
    assert P.version_problems({"version": "1.26.3-aliyun.1"}, ok, "csi-provisioner") == []
    old = dict(ok, **{"csi-provisioner": {"version": "v1.28.3-aliyun"}})
    problems = P.version_problems({"version": "1.24.6-aliyun.1"}, old, "csi-provisioner")
    assert len(problems) == 2 and "1.24.6" in problems[0] and "csi-provisioner" in problems[1]
    assert "neither" in P.version_problems({"version": "1.30.1"}, {"csi-plugin": ok["csi-plugin"]}, None)[0]
