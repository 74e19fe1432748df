"""The twin's Alibaba Cloud gateway refuses what the real one refuses: timestamps more than 15 minutes off
(RPC Timestamp, ROA Date, V3 x-acs-date), ROA requests without a Date, and signature nonces used twice.
Requests are signed by the real SDKs (aliyun-python-sdk-core for signature 1.0, the alibabacloud_* Tea SDKs for
V3); replays are the same signed bytes sent again with urllib."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from aliyunsdkcore.acs_exception.exceptions import ServerException
from aliyunsdkcore.client import AcsClient
from aliyunsdkcore.request import CommonRequest
from aliyunsdkcore.utils import parameter_helper
from alibabacloud_cs20151215 import models as cs_models
from alibabacloud_ecs20140526 import models as ecs_models
from alibabacloud_tea_openapi.exceptions import ClientException
from alibabacloud_tea_openapi.utils import Utils as TeaUtils
from darabonba.core import DaraCore

from tests.support.alibaba import cloud_calls
from tests.support.alibaba_sdk import cs_client, ecs_client
from tests.support.twin import Twin

SKEW = 20 * 60  # past the gateway's 15-minute window


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("cloud-gateway") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def sdk_core(twin):
    c = twin.cloud["alibaba"]
    return AcsClient(c["access_key_id"], c["access_key_secret"], c["region"], auto_retry=False)


def roa_request(twin, path):
    c = twin.cloud["alibaba"]
    r = CommonRequest(domain=c["cs_endpoint"].split("//", 1)[1], version="2015-12-15", uri_pattern=path)
    r.set_method("GET")
    return r


def rpc_request(twin, action, **params):
    c = twin.cloud["alibaba"]
    r = CommonRequest(domain=c["ecs_endpoint"].split("//", 1)[1], version="2014-05-26", action_name=action)
    for k, v in params.items():
        r.add_query_param(k, v)
    return r


def raw(url, headers=None):
    """Send a request as is; (status, JSON body)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def shifted(fmt, seconds):
    return lambda: time.strftime(fmt, time.gmtime(time.time() + seconds))


@pytest.mark.parametrize("seconds", [-SKEW, SKEW], ids=["stale", "future"])
def test_rpc_timestamp_off_by_more_than_15_minutes_is_refused(twin, monkeypatch, seconds):
    monkeypatch.setattr(parameter_helper, "get_iso_8061_date", shifted("%Y-%m-%dT%H:%M:%SZ", seconds))
    with pytest.raises(ServerException) as e:
        sdk_core(twin).do_action_with_exception(rpc_request(twin, "DescribeInstanceTypes"))
    assert (e.value.get_http_status(), e.value.get_error_code()) == (400, "InvalidTimeStamp.Expired")


@pytest.mark.parametrize("seconds", [-SKEW, SKEW, -(20 * 365 * 86400)], ids=["stale", "future", "dated-2006"])
def test_roa_date_off_by_more_than_15_minutes_is_refused(twin, monkeypatch, seconds):
    monkeypatch.setattr(parameter_helper, "get_rfc_2616_date", shifted("%a, %d %b %Y %H:%M:%S GMT", seconds))
    cid = twin.cloud["alibaba"]["cluster_id"]
    with pytest.raises(ServerException) as e:
        sdk_core(twin).do_action_with_exception(roa_request(twin, f"/clusters/{cid}"))
    assert (e.value.get_http_status(), e.value.get_error_code()) == (400, "InvalidTimeStamp.Expired")


def test_a_timestamp_within_the_window_is_accepted(twin, monkeypatch):
    """A client clock a few minutes off still works, as on the real gateway."""
    monkeypatch.setattr(parameter_helper, "get_iso_8061_date", shifted("%Y-%m-%dT%H:%M:%SZ", -5 * 60))
    doc = json.loads(sdk_core(twin).do_action_with_exception(rpc_request(twin, "DescribeInstanceTypes")))
    assert doc["InstanceTypes"]["InstanceType"]


def signed_roa(twin, path):
    """The URL and headers aliyun-python-sdk-core would send for a GET of `path` (signature 1.0)."""
    c = twin.cloud["alibaba"]
    common = roa_request(twin, path)
    common.trans_to_acs_request()
    acs = common.request
    headers = acs.get_signed_header(c["region"], c["access_key_id"], c["access_key_secret"])
    return c["cs_endpoint"] + acs.get_url(c["region"]), headers


def test_roa_without_date_is_refused(twin):
    cid = twin.cloud["alibaba"]["cluster_id"]
    url, headers = signed_roa(twin, f"/clusters/{cid}")
    assert raw(url, headers)[0] == 200  # the same request with its Date is served
    undated = {k: v for k, v in headers.items() if k.lower() != "date"}
    status, body = raw(url, undated)
    assert (status, body["Code"]) == (400, "MissingDate")


def test_replayed_rpc_nonce_is_refused(twin):
    c = twin.cloud["alibaba"]
    common = rpc_request(twin, "DescribeInstanceTypes")
    common.trans_to_acs_request()
    acs = common.request
    url = c["ecs_endpoint"] + acs.get_url(c["region"], c["access_key_id"], c["access_key_secret"])
    assert raw(url)[0] == 200
    before = cloud_calls(twin)["rejected"].get("SignatureNonceUsed", 0)
    status, body = raw(url)
    assert (status, body["Code"]) == (400, "SignatureNonceUsed")
    assert cloud_calls(twin)["rejected"]["SignatureNonceUsed"] == before + 1


@pytest.fixture
def captured(monkeypatch):
    """Every request the Tea SDKs send, as (method, url, headers, body)."""
    seen = []
    real = DaraCore.do_action

    def spy(request, runtime_option=None):
        query = "&".join(f"{k}={urllib.parse.quote(str(v), safe='~')}" for k, v in (request.query or {}).items())
        seen.append((request.method, f"{request.protocol}://{request.headers['host']}{request.pathname}"
                     + (f"?{query}" if query else ""), dict(request.headers), request.body))
        return real(request, runtime_option)

    monkeypatch.setattr(DaraCore, "do_action", staticmethod(spy))
    return seen


def test_v3_requests_are_accepted_and_their_replays_refused(twin, captured):
    cid = twin.cloud["alibaba"]["cluster_id"]
    detail = cs_client(twin).describe_cluster_detail(cid)
    assert detail.status_code == 200 and detail.body.cluster_id == cid
    types = ecs_client(twin).describe_instance_types(ecs_models.DescribeInstanceTypesRequest())
    assert types.body.instance_types.instance_type
    assert [h["Authorization"].split(" ", 1)[0] for _, _, h, _ in captured] == ["ACS3-HMAC-SHA256"] * 2
    for method, url, headers, _ in captured:
        status, body = send(method, url, headers)
        assert (status, body.get("Code")) == (400, "SignatureNonceUsed"), url


@pytest.mark.parametrize("seconds", [-SKEW, SKEW], ids=["stale", "future"])
def test_v3_date_off_by_more_than_15_minutes_is_refused(twin, monkeypatch, seconds):
    monkeypatch.setattr(TeaUtils, "get_timestamp", staticmethod(shifted("%Y-%m-%dT%H:%M:%SZ", seconds)))
    with pytest.raises(ClientException) as e:
        cs_client(twin).describe_clusters_v1(cs_models.DescribeClustersV1Request())
    assert (e.value.status_code, e.value.code) == (400, "InvalidTimeStamp.Expired")


def test_v3_with_the_wrong_secret_does_not_match(twin):
    with pytest.raises(ClientException) as e:
        cs_client(twin, access_key_secret="not-the-secret").describe_clusters_v1(cs_models.DescribeClustersV1Request())
    assert (e.value.status_code, e.value.code) == (400, "SignatureDoesNotMatch")
    assert "ACS3-HMAC-SHA256\n" in e.value.message  # the gateway's string to sign, for the client to compare


def send(method, url, headers):
    req = urllib.request.Request(url.replace("HTTP://", "http://"), headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_v3_requests_changed_after_signing_are_refused(twin, captured):
    """What the V3 signature covers: the query, the x-acs-* headers (all must be signed) and the signing date."""
    cs_client(twin).describe_clusters_v1(cs_models.DescribeClustersV1Request(page_size=5))
    method, url, headers, _ = captured[0]
    assert "page_size=5" in url
    assert send(method, url.replace("page_size=5", "page_size=6"), headers)[1]["Code"] == "SignatureDoesNotMatch"
    assert send(method, url, dict(headers, **{"x-acs-extra": "1"}))[1]["Code"] == "IncompleteSignature"
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
    assert send(method, url, dict(headers, **{"x-acs-date": later}))[1]["Code"] == "SignatureDoesNotMatch"
    status, body = send(method, url, {k: v for k, v in headers.items() if k != "x-acs-signature-nonce"})
    assert (status, body["Code"]) == (400, "IncompleteSignature")
