"""The ECS lists and ACK's addon list through the official Tea SDKs (alibabacloud_ecs20140526,
alibabacloud_cs20151215) against the twin: DescribeInstances and DescribeDisks filtered by Tag.N and read page by
page with NextToken/MaxResults, the legacy PageNumber/PageSize with TotalCount, the refusals of what ECS does not
take, a throttled call's x-acs-retry-after as the SDK reads it, and ListClusterAddonInstances."""
from __future__ import annotations

import pytest
from alibabacloud_ecs20140526 import models as ecs
from alibabacloud_tea_openapi.exceptions import ClientException, ThrottlingException

from tests.support.alibaba import admin, cloud_state
from tests.support.alibaba_sdk import cs_client, ecs_client
from tests.support.twin import Twin

TEAM = ecs.DescribeInstancesRequestTag(key="team", value="storage")
DISKS = 23  # more than two pages of MaxResults=10


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("official-sdk-lists") / "twin", nodes=3, time_scale=0.01) as t:
        ids = sorted(cloud_state(t)["instances"])
        admin(t, "cloud", {"instance": ids[0], "tags": {"team": "storage", "env": "prod"}})
        admin(t, "cloud", {"instance": ids[1], "tags": {"team": "storage", "env": "dev"}})
        admin(t, "cloud", {"instance": ids[2], "tags": {"team": "web"}})
        for n in range(DISKS):
            admin(t, "cloud", {"disk": {"id": f"d-lists{n:04d}", "size_gib": 40, "category": "cloud_essd",
                                        "tags": {"bench": "lists" if n % 2 == 0 else "other"}}})
        yield t


def test_describe_instances_by_tags_and_next_token(twin):
    region = twin.cloud["alibaba"]["region"]
    ids = sorted(cloud_state(twin)["instances"])
    client = ecs_client(twin)
    body = client.describe_instances(ecs.DescribeInstancesRequest(region_id=region, tag=[TEAM])).body
    assert sorted(i.instance_id for i in body.instances.instance) == ids[:2]
    prod = client.describe_instances(ecs.DescribeInstancesRequest(region_id=region, tag=[
        TEAM, ecs.DescribeInstancesRequestTag(key="env", value="prod")])).body.instances.instance
    assert [(i.instance_id, {t.tag_key: t.tag_value for t in i.tags.tag}) for i in prod] == \
        [(ids[0], {"env": "prod", "team": "storage"})]
    any_env = client.describe_instances(ecs.DescribeInstancesRequest(
        region_id=region, tag=[ecs.DescribeInstancesRequestTag(key="env")])).body.instances.instance
    assert sorted(i.instance_id for i in any_env) == ids[:2]  # a key without a value matches any value

    seen, token, pages = [], None, 0
    while True:  # MaxResults below 10 is read as 10, as ECS documents; a page of 1 needs InstanceIds
        body = client.describe_instances(ecs.DescribeInstancesRequest(
            region_id=region, max_results=10, next_token=token)).body
        seen += [i.instance_id for i in body.instances.instance]
        pages += 1
        token = body.next_token
        if not token:
            break
    assert (sorted(seen), pages) == (ids, 1)


def test_describe_disks_by_tag_over_pages_of_next_token(twin):
    region = twin.cloud["alibaba"]["region"]
    client = ecs_client(twin)
    tag = ecs.DescribeDisksRequestTag(key="bench", value="lists")
    seen, token, pages = [], None, 0
    while True:
        body = client.describe_disks(ecs.DescribeDisksRequest(region_id=region, tag=[tag], max_results=10,
                                                              next_token=token)).body
        seen += [(d.disk_id, {t.tag_key: t.tag_value for t in d.tags.tag}) for d in body.disks.disk]
        pages += 1
        token = body.next_token
        if not token:
            break
    wanted = [f"d-lists{n:04d}" for n in range(0, DISKS, 2)]  # 12 disks: pages of 10 and 2
    assert sorted(d for d, _t in seen) == wanted and pages == 2
    assert all(tags == {"bench": "lists"} for _d, tags in seen)

    legacy = client.describe_disks(ecs.DescribeDisksRequest(region_id=region, tag=[tag], page_size=5,
                                                            page_number=3)).body
    assert (legacy.total_count, legacy.page_number, legacy.next_token) == (12, 3, "")
    assert [d.disk_id for d in legacy.disks.disk] == wanted[10:]


def test_what_ecs_does_not_take_is_refused_naming_the_field(twin):
    region = twin.cloud["alibaba"]["region"]
    client = ecs_client(twin)
    with pytest.raises(ClientException) as bad_status:
        client.describe_disks(ecs.DescribeDisksRequest(region_id=region, status="Broken"))
    assert bad_status.value.code == "InvalidParameter" and "Status" in bad_status.value.message
    with pytest.raises(ClientException) as bad_token:
        client.describe_instances(ecs.DescribeInstancesRequest(region_id=region, next_token="not-a-token"))
    assert bad_token.value.code == "InvalidParameter" and "NextToken" in bad_token.value.message


def test_a_throttled_call_carries_the_code_and_x_acs_retry_after(twin):
    region = twin.cloud["alibaba"]["region"]
    admin(twin, "alibaba", {"throttle": {"rate": 0.5, "burst": 1, "actions": ["ecs:DescribeInstances"]}})
    try:
        client = ecs_client(twin)
        client.describe_instances(ecs.DescribeInstancesRequest(region_id=region))
        with pytest.raises(ThrottlingException) as throttled:
            client.describe_instances(ecs.DescribeInstancesRequest(region_id=region))
    finally:
        admin(twin, "alibaba", {"throttle": None})
    assert throttled.value.code == "Throttling.User"
    assert 0 < throttled.value.retry_after <= 2000  # milliseconds until the bucket refills (rate 0.5/s)


def test_list_cluster_addon_instances(twin):
    cid = twin.cloud["alibaba"]["cluster_id"]
    addons = cs_client(twin).list_cluster_addon_instances(cid).body.addons
    state = cloud_state(twin)["addons"]
    assert {a.name: (a.version, a.state) for a in addons} == {n: (a["version"], a["state"]) for n, a in state.items()}
    assert "csi-plugin" in {a.name for a in addons}
