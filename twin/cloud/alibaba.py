"""Start the Alibaba Cloud side of the twin: the ACK and ECS endpoints, their credentials and admin door.

cloud.json gets {"alibaba": {region, cluster_id, cs_endpoint, ecs_endpoint, access_key_id, access_key_secret,
sts: {...}, sts_endpoint, rrsa: {role_arn, oidc_provider_arn, oidc_token_file}}} (STS AssumeRoleWithOIDC,
sts.py). The endpoints are plain HTTP on loopback (aliyun-python-sdk-core's default protocol), written with
their scheme so that a client defaulting bare hosts to HTTPS still reaches them.

`--ack-extra-clusters N` adds N synthetic clusters to the ACK account (twin/cloud/ack_clusters.py).

Admin door, POST /_twin/alibaba (the twin's bearer token):
  {}                                   -> call counts per "product:Action" (calls, ok, throttled, failed,
                                          rejected, writes, max_in_flight), resource_types_seen
  {"reset_calls": true}                -> zero the counters
  {"throttle": {"rate": 5, "burst": 5, "status": 400, "actions": ["ecs:TagResources"]}} / {"throttle": null}
  {"latency": 0.05}                    -> real seconds added to every call
  {"fault": {"action": "ecs:TagResources", "after": 2, "times": null, "status": 403, "code": "Forbidden.RAM"}}
  {"clear_faults": true}
  {"fail_addon": "csi-plugin"}         -> that addon's next config change ends `failed`
  {"cluster_version": "1.24.6-aliyun.1"} -> what DescribeClusterDetail reports as current_version
  {"legacy_disk": {"node": .., "name": .., "namespace": ..}} -> a disk without serial number in use by a pod
Addon versions and states, and instance tags, are set through the "cloud" verb (twin/cloud_state.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .ack import AckApi
from .ack_clusters import synthetic_clusters
from .addons import AddonUpdates
from .csi_workloads import CsiWorkloads
from .ecs import EcsApi
from .gateway import Gateway
from .legacy_disks import seed_legacy_disk
from .sts import StsApi

if TYPE_CHECKING:
    from ..context import ClusterContext


async def start(cluster: ClusterContext) -> dict[str, Any]:
    gw = Gateway()
    key = gw.credentials.new_access_key()
    sts = gw.credentials.new_sts()
    workloads = CsiWorkloads(cluster)
    workloads.ensure()
    cluster.cloud.subscribe(workloads.on_change)
    addons = AddonUpdates(cluster, roll=workloads.roll)
    extra = synthetic_clusters(cluster.extra_clusters, cluster.seed)
    ack = AckApi(cluster, gw, addons, extra=extra, trusted_token=cluster.fleet_token)
    ecs = EcsApi(cluster, gw, trusted_token=cluster.fleet_token)
    cs_url = await cluster.serve_app(ack.app, tls=False)
    ecs_url = await cluster.serve_app(ecs.app, tls=False)
    sts_api = StsApi(gw, cluster.dir, cluster.cloud.cluster_id, cluster.seed)
    sts_url = await cluster.serve_app(sts_api.app, tls=False)

    async def admin(body: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        gw.configure(body)
        if body.get("cluster_version"):
            cluster.cloud.cluster_version = body["cluster_version"]
        if body.get("fail_addon"):
            addons.fail_next.add(body["fail_addon"])
        if body.get("legacy_disk") is not None:
            out["legacy_disk"] = seed_legacy_disk(cluster, body["legacy_disk"])
        out.update(gw.stats())
        out["resource_types_seen"] = dict(ecs.resource_types_seen)
        return out

    cluster.admin_handlers["alibaba"] = admin
    cluster.alibaba = {"gateway": gw, "addons": addons, "workloads": workloads}  # for in-process tests
    cluster.cloud_requests = lambda: dict(gw.calls)  # `python -m twin status` shows them
    return {"alibaba": {
        "region": cluster.cloud.region, "cluster_id": cluster.cloud.cluster_id,
        "cs_endpoint": cs_url, "ecs_endpoint": ecs_url,
        "access_key_id": key.access_key_id, "access_key_secret": key.access_key_secret,
        "sts": {"access_key_id": sts.access_key_id, "access_key_secret": sts.access_key_secret,
                "security_token": sts.security_token},
        "sts_endpoint": sts_url, "rrsa": sts_api.describe(),
    }}
