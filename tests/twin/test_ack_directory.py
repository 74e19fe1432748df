"""The ACK cluster directory of the twin's cloud (DescribeClustersV1, DescribeClusterUserKubeconfig,
DescribeClusterAddonsVersion) through aliyun-python-sdk-core, synthetic clusters at scale, and the request
counter `python -m twin status` shows."""
from __future__ import annotations

import json

import pytest
import yaml
from aliyunsdkcore.acs_exception.exceptions import ServerException

from tests.support.fleet import cs, cs_error, list_all
from tests.support.twin import Twin

EXTRA = 1000


def requests(twin: Twin) -> dict:
    return json.loads(twin.twin_cmd("status").stdout)["cloud_requests"]


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("ack-directory") / "twin", nodes=2,
              extra=["--ack-extra-clusters", str(EXTRA)]) as t:
        yield t


def test_listing_pages_over_every_cluster(twin):
    clusters, infos = list_all(twin.cloud)
    assert len(clusters) == EXTRA + 1 == infos[0]["total_count"]
    assert [i["page_number"] for i in infos] == list(range(1, len(infos) + 1))
    assert all(i["page_size"] == 100 for i in infos)
    ids = [c["cluster_id"] for c in clusters]
    assert len(set(ids)) == len(ids)
    own = twin.cloud["alibaba"]["cluster_id"]
    assert own in ids
    for c in clusters:
        assert {"cluster_id", "name", "region_id", "state", "cluster_type", "cluster_spec", "current_version",
                "size", "tags"} <= set(c)
        assert all(set(t) == {"key", "value"} for t in c["tags"])
    assert len({c["region_id"] for c in clusters}) > 1
    assert len({c["current_version"] for c in clusters}) > 1
    assert len({c["cluster_type"] for c in clusters}) > 1


def test_listing_filters(twin):
    region = cs(twin.cloud, "/api/v1/clusters", {"region_id": "cn-beijing", "page_size": 100})
    assert region["page_info"]["total_count"] > 0
    assert {c["region_id"] for c in region["clusters"]} == {"cn-beijing"}
    typed = cs(twin.cloud, "/api/v1/clusters", {"cluster_type": "ExternalKubernetes", "cluster_spec": ""})
    assert {c["cluster_type"] for c in typed["clusters"]} == {"ExternalKubernetes"}
    named = cs(twin.cloud, "/api/v1/clusters", {"name": "extra-0042"})
    assert [c["name"] for c in named["clusters"]] == ["extra-0042"]
    nothing = cs(twin.cloud, "/api/v1/clusters", {"name": "no-such-cluster"})
    assert nothing == {"clusters": [], "page_info": {"page_number": 1, "page_size": 10, "total_count": 0}}


def test_page_size_above_100_is_refused(twin):
    with pytest.raises(ServerException) as e:
        cs(twin.cloud, "/api/v1/clusters", {"page_size": 101})
    assert e.value.get_http_status() == 400
    assert "page_size" in cs_error(e.value)["message"]


def test_listing_is_signed_like_every_roa_call(twin):
    with pytest.raises(ServerException) as e:
        cs(twin.cloud, "/api/v1/clusters", secret="not-the-secret")
    assert e.value.get_error_code() in ("SignatureDoesNotMatch", "InvalidAccessKeySecret")


def test_user_config_is_the_clusters_kubeconfig(twin):
    own = twin.cloud["alibaba"]["cluster_id"]
    answer = cs(twin.cloud, f"/k8s/{own}/user_config")
    assert answer["expiration"].endswith("Z")
    cfg = yaml.safe_load(answer["config"])
    assert cfg["clusters"][0]["cluster"]["server"] == twin.server
    path = twin.dir / "from-user-config"
    path.write_text(answer["config"])
    nodes = twin.kubectl_json("--kubeconfig", str(path), "get", "nodes")["items"]
    assert len(nodes) == 2


def test_synthetic_cluster_is_detailed_and_has_addons_but_no_api_server(twin):
    extra = cs(twin.cloud, "/api/v1/clusters", {"name": "extra-0007"})["clusters"][0]
    detail = cs(twin.cloud, f"/clusters/{extra['cluster_id']}")
    assert detail["cluster_id"] == extra["cluster_id"] and detail["tags"] == extra["tags"]
    versions = cs(twin.cloud, f"/clusters/{extra['cluster_id']}/components/version")
    assert versions["csi-plugin"]["component_name"] == "csi-plugin"
    cfg = yaml.safe_load(cs(twin.cloud, f"/k8s/{extra['cluster_id']}/user_config")["config"])
    assert cfg["clusters"][0]["cluster"]["server"] != twin.server


def test_addons_version_lists_installed_addons(twin):
    own = twin.cloud["alibaba"]["cluster_id"]
    versions = cs(twin.cloud, f"/clusters/{own}/components/version")
    assert set(versions) == {"csi-plugin", "managed-csiprovisioner"}
    assert versions["csi-plugin"]["version"].startswith("v1.30")


@pytest.mark.parametrize("path", ["/clusters/{cid}", "/k8s/{cid}/user_config", "/clusters/{cid}/components/version"])
def test_unknown_cluster_is_error_cluster_not_found(twin, path):
    with pytest.raises(ServerException) as e:
        cs(twin.cloud, path.format(cid="c0000000000000000000000000000dead"))
    assert e.value.get_http_status() == 404
    assert cs_error(e.value)["code"] == "ErrorClusterNotFound"


def test_request_counter_counts_each_action(twin):
    before = requests(twin)
    cs(twin.cloud, "/api/v1/clusters")
    cs(twin.cloud, "/api/v1/clusters", {"page_number": 2})
    after = requests(twin)
    assert after.get("cs:DescribeClustersV1", 0) - before.get("cs:DescribeClustersV1", 0) == 2
    assert after.get("cs:DescribeClusterDetail", 0) == before.get("cs:DescribeClusterDetail", 0)
    # reading the counter is not a cloud call
    assert requests(twin) == after
