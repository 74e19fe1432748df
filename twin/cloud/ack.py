"""The ACK (Container Service, "CS", API version 2015-12-15) endpoint: ROA-style, JSON, served from CloudState.

Shapes follow the alibabacloud_cs20151215 models (docs/reference/alibaba.md):
DescribeClusterDetail, ListClusterAddonInstances, GetClusterAddonInstance, ModifyClusterAddon,
DescribeClusterNodePools, DescribeClusterNodePoolDetail, ModifyClusterNodePool, DescribeClusterNodes, and the
cluster directory (twin/cloud/ack_clusters.py): DescribeClustersV1, DescribeClusterUserKubeconfig,
DescribeClusterAddonsVersion, and the addon upgrade status (DescribeClusterAddonUpgradeStatus,
DescribeClusterAddonsUpgradeStatus), over this cluster and the synthetic ones (`up --ack-extra-clusters N`).

A fleet (`up --clusters N`) serves one AckApi per cluster process behind twin/fleet/front.py's front, which
subclasses this class: `dispatch`, `all_details` and `kubeconfig_for` are what it overrides.
"""
from __future__ import annotations

import asyncio
import json
import secrets
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from aiohttp import web

from . import ack_clusters
from .addons import AddonUpdates, parse_config
from .errors import CsError, PopError, request_id
from .gateway import Gateway, page_params

if TYPE_CHECKING:
    from ..context import ClusterContext

CREATED = "2025-01-06T10:21:33+08:00"
NODEPOOL_UPDATE_SECONDS = 10.0  # ModifyClusterNodePool keeps the pool `updating` this long (scaled)

Handler = Callable[[web.Request, dict], Awaitable[Any]]


def not_found(cid: str) -> CsError:
    return CsError(404, "ErrorClusterNotFound", f"cluster {cid} not found")


class AckApi:
    def __init__(self, cluster: ClusterContext | None, gateway: Gateway, addons: AddonUpdates | None,
                 extra: dict[str, dict[str, Any]] | None = None, trusted_token: str = "") -> None:
        self.cluster = cluster
        self.gw = gateway
        self.addons = addons
        self.extra = extra or {}  # synthetic clusters by id (DescribeClusterDetail docs)
        self.trusted_token = trusted_token  # a fleet front's calls carry it instead of being signed again
        self.pool_state: dict[str, str] = {}
        self.app = web.Application()
        r = self.app.router
        r.add_get("/api/v1/clusters", self._wrap("DescribeClustersV1", self.list_clusters))
        r.add_get("/k8s/{cid}/user_config", self._wrap("DescribeClusterUserKubeconfig", self.user_config))
        r.add_get("/clusters/{cid}/components/version", self._wrap("DescribeClusterAddonsVersion", self.addons_version))
        r.add_get("/clusters/{cid}/components/upgradestatus",
                  self._wrap("DescribeClusterAddonsUpgradeStatus", self.addons_upgrade_status))
        r.add_get("/clusters/{cid}/components/{name}/upgradestatus",
                  self._wrap("DescribeClusterAddonUpgradeStatus", self.addon_upgrade_status))
        r.add_get("/clusters/{cid}", self._wrap("DescribeClusterDetail", self.cluster_detail))
        r.add_get("/clusters/{cid}/addon_instances", self._wrap("ListClusterAddonInstances", self.list_addons))
        r.add_get("/clusters/{cid}/addon_instances/{name}", self._wrap("GetClusterAddonInstance", self.get_addon))
        r.add_post("/clusters/{cid}/components/{name}/config", self._wrap("ModifyClusterAddon", self.modify_addon))
        r.add_get("/clusters/{cid}/nodepools", self._wrap("DescribeClusterNodePools", self.list_pools))
        r.add_get("/clusters/{cid}/nodepools/{np}", self._wrap("DescribeClusterNodePoolDetail", self.get_pool))
        r.add_put("/clusters/{cid}/nodepools/{np}", self._wrap("ModifyClusterNodePool", self.modify_pool))
        r.add_get("/clusters/{cid}/nodes", self._wrap("DescribeClusterNodes", self.list_nodes))
        r.add_route("*", "/{tail:.*}", self._unknown)

    @property
    def cloud(self) -> Any:
        assert self.cluster is not None
        return self.cluster.cloud

    # plumbing ---------------------------------------------------------------------------------
    def _wrap(self, action: str, fn: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
        name = "cs:" + action

        async def handle(request: web.Request) -> web.Response:
            rid = request_id()
            try:
                body = await self.gw.admit_roa(request, name, self.trusted_token)
            except PopError as e:  # refused or throttled: counted by the gateway, not served
                return e.response(rid)
            try:
                doc = json.loads(body) if body else {}
                result = await self.dispatch(action, fn, request, doc, body)
            except PopError as e:
                self.gw.served(name, error=True)
                return e.response(rid)
            except ValueError:
                self.gw.served(name, error=True)
                return CsError(400, "ErrorInvalidJson", "the request body is not valid JSON").response(rid)
            if isinstance(result, web.Response):  # a fleet front's proxied answer
                self.gw.served(name, error=result.status >= 400,
                               detail=request.match_info.get("name") or request.match_info.get("np") or "")
                return result
            self.gw.served(name, detail=request.match_info.get("name") or request.match_info.get("np") or "")
            resp = web.Response(body=json.dumps(result), content_type="application/json")
            resp.headers["x-acs-request-id"] = rid
            return resp

        return handle

    async def dispatch(self, action: str, fn: Handler, request: web.Request, doc: dict, body: bytes) -> Any:
        """Run the handler for this cluster, answer for a synthetic one, or ErrorClusterNotFound."""
        cid = request.match_info.get("cid")
        if cid is None or cid == self.cloud.cluster_id:
            return await fn(request, doc)
        if cid in self.extra:
            return self.synthetic(action, self.extra[cid], request)
        raise not_found(cid)

    def synthetic(self, action: str, detail: dict[str, Any], request: web.Request) -> Any:
        """What a cloud-only cluster answers: its detail, default addons, no node pools, no nodes."""
        cid = detail["cluster_id"]
        addons = ack_clusters.synthetic_addons()
        if action == "DescribeClusterDetail":
            return detail
        if action == "DescribeClusterUserKubeconfig":
            return ack_clusters.user_config(ack_clusters.unreachable_kubeconfig(cid), request.query)
        if action == "DescribeClusterAddonsVersion":
            return ack_clusters.addons_version((a["name"], a["version"]) for a in addons.values())
        if action == "DescribeClusterAddonUpgradeStatus" and request.match_info["name"] in addons:
            a = addons[request.match_info["name"]]
            return ack_clusters.upgrade_status([(a["name"], a["version"], a["state"])])
        if action == "DescribeClusterAddonsUpgradeStatus":
            wanted = ack_clusters.component_ids(request.query)
            return ack_clusters.upgrade_status((a["name"], a["version"], a["state"]) for a in addons.values()
                                               if wanted is None or a["name"] in wanted)
        if action == "ListClusterAddonInstances":
            return {"addons": [{"name": a["name"], "version": a["version"], "state": a["state"]} for a in addons.values()]}
        if action == "GetClusterAddonInstance" and request.match_info["name"] in addons:
            return dict(addons[request.match_info["name"]],
                        logging={"capable": False, "enabled": False, "log_project": "", "logstore": ""})
        if action == "DescribeClusterNodePools":
            return {"nodepools": []}
        if action == "DescribeClusterNodes":
            return {"nodes": [], "page": {"page_number": 1, "page_size": 10, "total_count": 0}}
        if action in ("GetClusterAddonInstance", "ModifyClusterAddon", "DescribeClusterAddonUpgradeStatus"):
            raise CsError(404, "ErrorAddonNotFound", f"addon {request.match_info['name']} is not installed in cluster {cid}")
        raise CsError(404, "ErrorNodePoolNotFound", f"node pool {request.match_info.get('np', '')} not found in cluster {cid}")

    async def all_details(self) -> list[dict[str, Any]]:
        """DescribeClusterDetail of every cluster this account has: the real ones first, then the synthetic."""
        return [await self.cluster_detail(None, {}), *self.extra.values()]

    def kubeconfig_for(self, cid: str) -> str:
        assert self.cluster is not None
        return (self.cluster.dir / "kubeconfig").read_text()

    async def _unknown(self, request: web.Request) -> web.Response:
        return PopError(404, "InvalidAction.NotFound",
                        f"Specified api is not found, please check your url and method. {request.method} {request.path}"
                        ).response()

    def _addon(self, name: str) -> Any:
        a = self.cloud.addons.get(name)
        if a is None:
            raise CsError(404, "ErrorAddonNotFound", f"addon {name} is not installed in cluster {self.cloud.cluster_id}")
        return a

    def _pool(self, np: str) -> Any:
        p = self.cloud.node_pools.get(np)
        if p is None:
            raise CsError(404, "ErrorNodePoolNotFound", f"node pool {np} not found in cluster {self.cloud.cluster_id}")
        return p

    # cluster ----------------------------------------------------------------------------------
    async def cluster_detail(self, request: web.Request | None, doc: dict) -> dict:
        c = self.cloud
        return ack_clusters.detail_doc(cluster_id=c.cluster_id, name=c.cluster_name, region_id=c.region,
                                       cluster_type=c.cluster_type, cluster_spec="ack.pro.small",
                                       version=c.cluster_version, size=len(c.instances),
                                       zone_id=next(iter(c.instances.values())).zone if c.instances else "",
                                       tags=list(c.cluster_tags))

    # the directory: every cluster of the account -------------------------------------------------
    async def list_clusters(self, request: web.Request, doc: dict) -> dict:
        return ack_clusters.list_clusters(await self.all_details(), request.query)

    async def user_config(self, request: web.Request, doc: dict) -> dict:
        return ack_clusters.user_config(self.kubeconfig_for(request.match_info["cid"]), request.query)

    async def addons_version(self, request: web.Request, doc: dict) -> dict:
        return ack_clusters.addons_version((a.name, a.version) for a in self.cloud.addons.values())

    async def addon_upgrade_status(self, request: web.Request, doc: dict) -> dict:
        a = self._addon(request.match_info["name"])
        return ack_clusters.upgrade_status([(a.name, a.version, a.state)])

    async def addons_upgrade_status(self, request: web.Request, doc: dict) -> dict:
        wanted = ack_clusters.component_ids(request.query)
        return ack_clusters.upgrade_status((a.name, a.version, a.state) for a in self.cloud.addons.values()
                                           if wanted is None or a.name in wanted)

    # addons -----------------------------------------------------------------------------------
    async def list_addons(self, request: web.Request, doc: dict) -> dict:
        return {"addons": [{"name": a.name, "version": a.version, "state": a.state}
                           for a in self.cloud.addons.values()]}

    async def get_addon(self, request: web.Request, doc: dict) -> dict:
        a = self._addon(request.match_info["name"])
        return dict(a.doc(), logging={"capable": False, "enabled": False, "log_project": "", "logstore": ""})

    async def modify_addon(self, request: web.Request, doc: dict) -> dict:
        name = request.match_info["name"]
        self._addon(name)
        config = parse_config(doc.get("config"))
        if config is None:
            raise CsError(400, "ErrorInvalidAddonConfig",
                          'config must be a JSON object serialised as a string, e.g. {"config": "{\\"FeatureGate\\": \\"\\"}"}')
        assert self.addons is not None
        if self.addons.busy(name):
            raise CsError(400, "ErrorAddonStatusConflict",
                          f"addon {name} is {self.cloud.addons[name].state}; retry after it is active or failed")
        self.addons.start(name, config)
        return {}

    # node pools -------------------------------------------------------------------------------
    def _pool_doc(self, p: Any) -> dict:
        """A DescribeClusterNodePoolDetail answer for an ordinary ESS pool. Left out, as ACK leaves them out for
        such a pool: eflo_node_group (Lingjun pools), interconnect_config (edge pools), node_components and the
        kubelet / OS settings under node_config (only what was customised)."""
        n = sum(1 for i in self.cloud.instances.values() if i.nodepool_id == p.id)
        state = self.pool_state.get(p.id, "active")
        return {
            "nodepool_info": {"nodepool_id": p.id, "name": p.name, "type": "ess", "is_default": p.name == "pool-0",
                              "region_id": self.cloud.region, "resource_group_id": "rg-twin",
                              "created": CREATED, "updated": CREATED},
            "scaling_group": {
                "scaling_group_id": "asg-" + p.id[2:22], "instance_types": [p.instance_type],
                "vswitch_ids": ["vsw-twin"], "security_group_id": "sg-twin", "security_group_ids": ["sg-twin"],
                "image_id": "aliyun_3_x64_20G_alibase_20240819.vhd", "image_type": "AliyunLinux3",
                "platform": "AliyunLinux", "system_disk_category": "cloud_essd", "system_disk_categories": ["cloud_essd"],
                "system_disk_size": 120, "system_disk_performance_level": "PL1", "system_disk_provisioned_iops": 0,
                "system_disk_bursting_enabled": False, "system_disk_encrypted": False,
                "system_disk_encrypt_algorithm": "", "system_disk_kms_key_id": "", "system_disk_snapshot_policy_id": "",
                "data_disks": [], "disk_init": [], "instance_patterns": [], "tags": [dict(t) for t in p.scaling_group_tags],
                "instance_charge_type": "PostPaid", "period": 0, "period_unit": "Month", "auto_renew": False,
                "auto_renew_period": 0, "spot_strategy": "NoSpot", "spot_price_limit": [], "spot_instance_pools": 0,
                "spot_instance_remedy": False, "compensate_with_on_demand": False, "on_demand_base_capacity": 0,
                "on_demand_percentage_above_base_capacity": 0, "multi_az_policy": "PRIORITY",
                "scaling_policy": "release", "desired_size": n, "internet_charge_type": "PayByTraffic",
                "internet_max_bandwidth_out": 0, "key_pair": "", "login_password": "", "login_as_non_root": False,
                "ram_policy": "", "ram_role_name": f"KubernetesWorkerRole-{self.cloud.cluster_id[:12]}",
                "rds_instances": [], "deploymentset_id": "", "security_hardening_os": False, "cis_enabled": False,
                "soc_enabled": False, "enable_high_density_mode": False, "cpu_options": {"nested_virtualization": False},
                "private_pool_options": {"id": "", "match_criteria": "Open"},
                "resource_pool_options": {"strategy": "", "private_pool_ids": []},
                "instance_metadata_options": {"http_tokens": "optional"}},
            "kubernetes_config": {"runtime": "containerd", "runtime_version": "1.6.36", "cpu_policy": "none",
                                  "labels": [], "taints": [], "cms_enabled": False, "unschedulable": False,
                                  "node_name_mode": "", "user_data": "", "pre_user_data": ""},
            "status": {"state": state, "total_nodes": n, "healthy_nodes": n, "serving_nodes": n, "failed_nodes": 0,
                       "initial_nodes": 0, "offline_nodes": 0, "removing_nodes": 0, "spot_nodes": 0,
                       "conditions": [{"type": "Ready", "status": "True" if state == "active" else "False",
                                       "reason": "", "message": "", "last_transition_time": CREATED}]},
            "management": {
                "enable": False, "auto_repair": False, "auto_upgrade": False, "auto_vul_fix": False,
                "auto_fault_diagnosis": False, "drift_enabled": False,
                "auto_repair_policy": {"restart_node": False, "approval_required": False, "auto_repair_policy_id": "",
                                       "max_parallel_repairing_nodes": "", "max_unhealthy_nodes_threshold": ""},
                "auto_upgrade_policy": {"auto_upgrade_kubelet": False},
                "auto_vul_fix_policy": {"restart_node": False, "vul_level": "", "exclude_packages": ""},
                "upgrade_config": {"auto_upgrade": False, "surge": 1, "surge_percentage": 0, "max_unavailable": 1}},
            "auto_scaling": {"enable": False, "type": "cpu", "min_instances": 0, "max_instances": 0,
                             "is_bond_eip": False, "eip_bandwidth": 0, "eip_internet_charge_type": ""},
            "auto_mode": {"enable": False}, "tee_config": {"tee_enable": False}, "max_nodes": 0,
            "interconnect_mode": "basic", "host_network": False, "intranet": False, "node_config": {},
        }

    async def list_pools(self, request: web.Request, doc: dict) -> dict:
        return {"nodepools": [self._pool_doc(p) for p in self.cloud.node_pools.values()]}

    async def get_pool(self, request: web.Request, doc: dict) -> dict:
        return self._pool_doc(self._pool(request.match_info["np"]))

    async def modify_pool(self, request: web.Request, doc: dict) -> dict:
        np = request.match_info["np"]
        pool = self._pool(np)
        if self.pool_state.get(np, "active") != "active":
            raise CsError(400, "ErrorNodePoolStatus", f"node pool {np} is {self.pool_state[np]}; retry when it is active")
        tags = (doc.get("scaling_group") or {}).get("tags")
        if tags is not None:
            if not isinstance(tags, list) or not all(isinstance(t, dict) and t.get("key") for t in tags):
                raise CsError(400, "ErrorInvalidParameter", "scaling_group.tags must be a list of {key, value}")
            if len({t["key"] for t in tags}) != len(tags):
                raise CsError(400, "ErrorInvalidParameter", "scaling_group.tags has duplicate keys")
            # scaling_group.tags replaces the pool's list; instances created later get them, existing ones do not
            self.cloud.set_node_pool_tags(pool.id, [{"key": str(t["key"]), "value": str(t.get("value", ""))}
                                                    for t in tags])
        self.pool_state[np] = "updating"
        assert self.cluster is not None
        asyncio.get_running_loop().call_later(NODEPOOL_UPDATE_SECONDS * self.cluster.time_scale,
                                              self.pool_state.pop, np, None)
        return {"nodepool_id": np, "task_id": "T-" + secrets.token_hex(10), "request_id": request_id()}

    # nodes ------------------------------------------------------------------------------------
    async def list_nodes(self, request: web.Request, doc: dict) -> dict:
        q = request.query
        size, number = page_params(q, roa=True)
        items = list(self.cloud.instances.values())
        if q.get("nodepool_id"):
            items = [i for i in items if i.nodepool_id == q["nodepool_id"]]
        if q.get("instanceIds"):
            wanted = set(q["instanceIds"].split(","))
            items = [i for i in items if i.id in wanted]
        if q.get("state") and q["state"] != "all":
            items = [i for i in items if i.state == q["state"]]
        page = items[(number - 1) * size: number * size]
        return {"nodes": [self._node_doc(i) for i in page],
                "page": {"page_number": number, "page_size": size, "total_count": len(items)}}

    def _node_doc(self, i: Any) -> dict:
        ip = i.node_name.split(".", 1)[1] if "." in i.node_name else ""
        family = ".".join(i.instance_type.split(".")[:2])
        return {"instance_id": i.id, "instance_name": f"worker-k8s-for-cs-{self.cloud.cluster_id[:10]}",
                "node_name": i.node_name, "host_name": i.node_name, "nodepool_id": i.nodepool_id,
                "instance_type": i.instance_type, "instance_type_family": family,
                "is_aliyun_node": i.is_aliyun_node, "state": i.state, "node_status": "Ready",
                "instance_status": "Running", "instance_role": "Worker", "instance_charge_type": "PostPaid",
                "ip_address": [ip] if ip else [], "image_id": "aliyun_3_x64_20G_alibase_20240819.vhd",
                "creation_time": CREATED, "expired_time": "", "error_message": "", "source": "ess_attach",
                "spot_strategy": "NoSpot"}
