"""The twin's ACK and ECS endpoints as aliyun-python-sdk-core sees them: signatures checked like the real
gateway (and the SDK's own reading of its answers), limits and flow control with the real codes."""
from __future__ import annotations

import json

import pytest
from aliyunsdkcore.acs_exception.exceptions import ServerException
from aliyunsdkcore.client import AcsClient
from aliyunsdkcore.request import CommonRequest

from tests.support.alibaba import admin
from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("ack-endpoints") / "twin", nodes=3, time_scale=0.01) as t:
        yield t


def client(twin, secret=None, key=None):
    c = twin.cloud["alibaba"]
    return AcsClient(key or c["access_key_id"], secret or c["access_key_secret"], c["region"], auto_retry=False)


def roa(twin, cl, method, path, query=None, body=None):
    c = twin.cloud["alibaba"]
    r = CommonRequest(domain=c["cs_endpoint"].split("//", 1)[1], version="2015-12-15", uri_pattern=path)
    r.set_method(method)
    for k, v in (query or {}).items():
        r.add_query_param(k, v)
    if body is not None:
        r.add_header("Content-Type", "application/json")
        r.set_content(json.dumps(body).encode())
    return json.loads(cl.do_action_with_exception(r) or b"{}")


def rpc(twin, cl, action, **params):
    c = twin.cloud["alibaba"]
    r = CommonRequest(domain=c["ecs_endpoint"].split("//", 1)[1], version="2014-05-26", action_name=action)
    for k, v in params.items():
        r.add_query_param(k, v)
    return json.loads(cl.do_action_with_exception(r))


def test_signed_roa_and_rpc_calls_are_served(twin):
    cl = client(twin)
    cid = twin.cloud["alibaba"]["cluster_id"]
    assert roa(twin, cl, "GET", f"/clusters/{cid}")["current_version"] == "1.32.4-aliyun.1"
    page = roa(twin, cl, "GET", f"/clusters/{cid}/nodes", query={"pageSize": "2", "pageNumber": "2"})
    assert page["page"] == {"page_number": 2, "page_size": 2, "total_count": 3} and len(page["nodes"]) == 1
    types = rpc(twin, cl, "DescribeInstanceTypes", RegionId="cn-hangzhou", **{"InstanceTypes.1": "ecs.g7se.16xlarge"})
    assert types["InstanceTypes"]["InstanceType"][0]["DiskQuantity"] == 56


def test_wrong_secret_is_rejected_with_the_gateway_codes(twin):
    cl = client(twin, secret="not-the-secret")
    cid = twin.cloud["alibaba"]["cluster_id"]
    with pytest.raises(ServerException) as e:
        roa(twin, cl, "GET", f"/clusters/{cid}")
    assert (e.value.get_http_status(), e.value.get_error_code()) == (400, "SignatureDoesNotMatch")
    assert "server string to sign is:GET\napplication/json" in e.value.get_error_msg()
    with pytest.raises(ServerException) as e:
        rpc(twin, cl, "DescribeInstanceTypes", RegionId="cn-hangzhou")
    # the RPC string to sign: sorted, percent-encoded parameters (the SDK compares it with its own only for
    # typed requests, not CommonRequest, so the code stays SignatureDoesNotMatch here)
    assert (e.value.get_http_status(), e.value.get_error_code()) == (400, "SignatureDoesNotMatch")
    assert "server string to sign is:GET&%2F&AccessKeyId%3D" in e.value.get_error_msg()
    with pytest.raises(ServerException) as e:
        rpc(twin, client(twin, key="LTAInobody"), "DescribeInstanceTypes", RegionId="cn-hangzhou")
    assert (e.value.get_http_status(), e.value.get_error_code()) == (404, "InvalidAccessKeyId.NotFound")


def test_tag_limits_and_flow_control(twin):
    cl = client(twin)
    too_many = {f"ResourceId.{i}": f"i-{i}" for i in range(1, 52)}
    with pytest.raises(ServerException) as e:
        rpc(twin, cl, "TagResources", RegionId="cn-hangzhou", ResourceType="instance", **too_many,
            **{"Tag.1.Key": "k", "Tag.1.Value": "v"})
    assert e.value.get_error_code() == "NumberExceed.ResourceIds"
    with pytest.raises(ServerException) as e:
        rpc(twin, cl, "TagResources", RegionId="cn-hangzhou", ResourceType="instance", **{"ResourceId.1": "i-none"},
            **{"Tag.1.Key": "k", "Tag.1.Value": "v"})
    assert (e.value.get_http_status(), e.value.get_error_code()) == (404, "InvalidResourceId.NotFound")
    admin(twin, "alibaba", {"throttle": {"rate": 0.001, "burst": 1, "actions": ["ecs:DescribeDisks"]}})
    try:
        rpc(twin, cl, "DescribeDisks", RegionId="cn-hangzhou")
        with pytest.raises(ServerException) as e:
            rpc(twin, cl, "DescribeDisks", RegionId="cn-hangzhou")
        assert (e.value.get_http_status(), e.value.get_error_code()) == (400, "Throttling.User")
    finally:
        admin(twin, "alibaba", {"throttle": None})
