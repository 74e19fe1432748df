"""The ACK cluster directory: listing (DescribeClustersV1), kubeconfigs (DescribeClusterUserKubeconfig), addon
versions (DescribeClusterAddonsVersion), and synthetic clusters for listing-at-scale tests.

Shapes follow the alibabacloud_cs20151215 models: DescribeClustersV1ResponseBody {clusters[], page_info
{page_number, page_size, total_count}} whose items are the DescribeClusterDetail fields in LIST_FIELDS;
DescribeClusterUserKubeconfigResponseBody {config, expiration}; DescribeClusterAddonsVersion's body is a map
from addon name to {component_name, version, next_version, can_upgrade, changed, ...}.

Synthetic clusters (`up --ack-extra-clusters N`) exist only on the cloud side: listed, described, tagged,
spread over regions, versions, types and specs, with no Kubernetes API server behind them. Their
user_config points at 127.0.0.1:9 (nothing listens there: connection refused).
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, UTC
from typing import Any
from collections.abc import Iterable

from .errors import CsError

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 10
CREATED = "2025-01-06T10:21:33+08:00"
KUBECONFIG_HOURS = 3 * 24  # a temporary kubeconfig's default lifetime when TemporaryDurationMinutes is not given
UNREACHABLE_SERVER = "https://127.0.0.1:9"

# DescribeClustersV1ResponseBodyClusters fields (the list item is a subset of DescribeClusterDetail)
LIST_FIELDS = (
    "cluster_domain", "cluster_id", "cluster_spec", "cluster_type", "container_cidr", "created", "current_version",
    "deletion_protection", "docker_version", "external_loadbalancer_id", "init_version", "ip_stack",
    "maintenance_window", "master_url", "meta_data", "name", "network_mode", "next_version", "operation_policy",
    "private_zone", "profile", "proxy_mode", "region_id", "resource_group_id", "security_group_id", "service_cidr",
    "size", "state", "subnet_cidr", "tags", "timezone", "updated", "vpc_id", "vswitch_id", "vswitch_ids",
    "worker_ram_role_name", "zone_id",
)

SYNTHETIC_REGIONS = ("cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-shenzhen", "ap-southeast-1", "eu-central-1")
SYNTHETIC_VERSIONS = ("1.32.4-aliyun.1", "1.31.9-aliyun.1", "1.30.7-aliyun.1", "1.28.15-aliyun.1")
SYNTHETIC_KINDS = (("ManagedKubernetes", "ack.pro.small"), ("ManagedKubernetes", "ack.standard"),
                   ("Kubernetes", ""), ("ExternalKubernetes", ""))
SYNTHETIC_ENVS = ("prod", "staging", "dev")
SYNTHETIC_ADDONS = (("csi-plugin", "v1.30.4-8c2e0b1-aliyun"), ("managed-csiprovisioner", "v1.30.4-8c2e0b1-aliyun"),
                    ("coredns", "v1.11.3.2-f57ea7ed6-aliyun"))


def detail_doc(*, cluster_id: str, name: str, region_id: str, cluster_type: str, cluster_spec: str, version: str,
               size: int, zone_id: str, tags: list[dict[str, str]], state: str = "running") -> dict[str, Any]:
    """A DescribeClusterDetail answer with every field of the SDK's response model. control_plane_config is
    there for dedicated clusters (cluster_type Kubernetes) only: managed ones have no user-visible masters."""
    doc: dict[str, Any] = {
        "cluster_id": cluster_id, "name": name, "region_id": region_id, "state": state,
        "cluster_type": cluster_type, "profile": "Default", "cluster_spec": cluster_spec,
        "current_version": version, "init_version": version, "next_version": "", "zone_id": zone_id,
        "vpc_id": "vpc-twin", "vswitch_id": "vsw-twin", "vswitch_ids": ["vsw-twin"], "security_group_id": "sg-twin",
        "network_mode": "vpc", "subnet_cidr": "172.20.0.0/16", "container_cidr": "172.20.0.0/16",
        "service_cidr": "192.168.0.0/16", "node_cidr_mask": "26", "ip_stack": "ipv4", "proxy_mode": "ipvs",
        "cluster_domain": "cluster.local", "timezone": "Asia/Shanghai", "size": size, "resource_group_id": "rg-twin",
        "created": CREATED, "updated": CREATED, "deletion_protection": False, "private_zone": False,
        "docker_version": "", "external_loadbalancer_id": "", "master_url": "", "extra_sans": [],
        "worker_ram_role_name": f"KubernetesWorkerRole-{cluster_id[:12]}",
        "maintenance_window": {"enable": False, "maintenance_time": "", "duration": "", "weekly_period": "",
                               "recurrence": "", "exclusions": []},
        "operation_policy": {"cluster_auto_upgrade": {"enabled": False, "channel": ""}},
        "auto_mode": {"enable": False},
        "control_plane_endpoints_config": {"internal_dns_config": {"enabled": False, "bind_vpcs": []},
                                           "load_balancers_config": []},
        "rrsa_config": {"enabled": False, "audience": "", "issuer": "", "jwks_url": "", "oidc_arn": "",
                        "oidc_name": "", "open_api_configuration_url": "", "max_oidc_token_expiration": ""},
        "parameters": {}, "tags": [dict(t) for t in tags], "meta_data": json.dumps({"Addons": []}),
    }
    if cluster_type == "Kubernetes":
        doc["control_plane_config"] = {
            "instance_types": ["ecs.g7.xlarge"], "size": 3, "image_type": "AliyunLinux3", "image_id": "",
            "runtime": "containerd", "system_disk_category": "cloud_essd", "system_disk_size": 120,
            "system_disk_performance_level": "PL1", "system_disk_provisioned_iops": 0,
            "system_disk_bursting_enabled": False, "system_disk_snapshot_policy_id": "", "charge_type": "PostPaid",
            "period": 0, "period_unit": "", "auto_renew": False, "auto_renew_period": 0, "key_pair": "",
            "cpu_policy": "none", "node_port_range": "30000-32767", "cloud_monitor_flags": False,
            "deploymentset_id": "", "security_hardening_os": False, "soc_enabled": False,
            "instance_metadata_options": {"http_tokens": "optional"}}
    return doc


def synthetic_clusters(count: int, seed: str = "") -> dict[str, dict[str, Any]]:
    """`count` cloud-only clusters by id, in DescribeClusterDetail shape, varied deterministically."""
    out: dict[str, dict[str, Any]] = {}
    for i in range(count):
        cid = "c" + hashlib.sha1(f"{seed}extra{i}".encode()).hexdigest()[:32]
        region = SYNTHETIC_REGIONS[i % len(SYNTHETIC_REGIONS)]
        ctype, spec = SYNTHETIC_KINDS[i % len(SYNTHETIC_KINDS)]
        env = SYNTHETIC_ENVS[i % len(SYNTHETIC_ENVS)]
        out[cid] = detail_doc(cluster_id=cid, name=f"extra-{i + 1:04d}", region_id=region, cluster_type=ctype,
                              cluster_spec=spec, version=SYNTHETIC_VERSIONS[i % len(SYNTHETIC_VERSIONS)],
                              size=1 + i % 7, zone_id=f"{region}-a",
                              tags=[{"key": "env", "value": env}, {"key": "team", "value": f"team-{i % 10}"},
                                    {"key": "ack.aliyun.com", "value": cid}])
    return out


def synthetic_addons() -> dict[str, dict[str, Any]]:
    return {name: {"name": name, "version": version, "state": "active", "config": "{}"}
            for name, version in SYNTHETIC_ADDONS}


# DescribeClustersV1 --------------------------------------------------------------------------------
def _int(query: Any, key: str, default: int) -> int:
    raw = query.get(key)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise CsError(400, "ErrorParamsInvalid", f"{key} must be an integer, got {raw!r}") from None


def list_clusters(details: Iterable[dict[str, Any]], query: Any) -> dict[str, Any]:
    """DescribeClustersV1 over the given DescribeClusterDetail docs, filtered and paged as `query` asks.

    name is a fuzzy (substring) match, as the API documents; cluster_type, cluster_spec, region_id and
    profile are exact."""
    size = _int(query, "page_size", DEFAULT_PAGE_SIZE)
    number = _int(query, "page_number", 1)
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise CsError(400, "ErrorParamsInvalid", f"page_size must be between 1 and {MAX_PAGE_SIZE}, got {size}")
    if number < 1:
        raise CsError(400, "ErrorParamsInvalid", f"page_number must be >= 1, got {number}")
    items = list(details)
    if query.get("name"):
        items = [d for d in items if query["name"] in d.get("name", "")]
    for key in ("cluster_type", "cluster_spec", "region_id", "profile"):
        if query.get(key):
            items = [d for d in items if d.get(key) == query[key]]
    if query.get("cluster_id"):
        items = [d for d in items if d.get("cluster_id") == query["cluster_id"]]
    page = items[(number - 1) * size: number * size]
    return {"clusters": [{k: d[k] for k in LIST_FIELDS if k in d} for d in page],
            "page_info": {"page_number": number, "page_size": size, "total_count": len(items)}}


# DescribeClusterUserKubeconfig -----------------------------------------------------------------------
def user_config(kubeconfig_text: str, query: Any) -> dict[str, Any]:
    minutes = _int(query, "TemporaryDurationMinutes", 0)
    if minutes and not 15 <= minutes <= 4320:
        raise CsError(400, "ErrorParamsInvalid", "TemporaryDurationMinutes must be between 15 and 4320")
    delta = timedelta(minutes=minutes) if minutes else timedelta(hours=KUBECONFIG_HOURS)
    expiration = (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"config": kubeconfig_text, "expiration": expiration}


def unreachable_kubeconfig(cluster_id: str) -> str:
    """What user_config returns for a synthetic cluster: a well-formed kubeconfig whose server refuses."""
    import yaml

    user = f"{cluster_id[:12]}-user"
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kubernetes", "cluster": {"server": UNREACHABLE_SERVER, "insecure-skip-tls-verify": True}}],
        "users": [{"name": user, "user": {"token": hashlib.sha1(cluster_id.encode()).hexdigest()}}],
        "contexts": [{"name": f"{user}-{cluster_id}", "context": {"cluster": "kubernetes", "user": user}}],
        "current-context": f"{user}-{cluster_id}", "preferences": {}}, sort_keys=False)


# DescribeClusterAddonsVersion ----------------------------------------------------------------------
def addons_version(addons: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """{name: version} pairs -> the map DescribeClusterAddonsVersion answers (nothing to upgrade)."""
    return {name: {"component_name": name, "version": version, "next_version": version, "can_upgrade": False,
                   "changed": "false", "force": False, "policy": "", "ready_to_upgrade": "", "required": False,
                   "exist": True, "message": "", "template": ""}
            for name, version in addons}


# DescribeClusterAddonUpgradeStatus / DescribeClusterAddonsUpgradeStatus ----------------------------------
NO_TASK_TIME = "0001-01-01T00:00:00Z"  # what ACK shows for an addon that has never been upgraded
BUSY_STATES = ("updating", "upgrading", "deleting")


def component_ids(query: Any) -> set[str] | None:
    """componentIds is a JSON array in the query (the SDK's 'json' array style); None: every addon."""
    raw = query.get("componentIds")
    if not raw:
        return None
    try:
        ids = json.loads(raw)
    except ValueError:
        raise CsError(400, "ErrorParamsInvalid", f'componentIds must be a JSON array of names, e.g. ["csi-plugin"], got {raw!r}') from None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise CsError(400, "ErrorParamsInvalid", f'componentIds must be a JSON array of names, got {raw!r}')
    return set(ids)


def upgrade_status(addons: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """(name, version, state) triples -> {name: {addon_info, tasks}}. The twin never upgrades an addon's version,
    so the task is the never-run one unless the addon is `upgrading`."""
    out = {}
    for name, version, state in addons:
        upgrading = state == "upgrading"
        out[name] = {"addon_info": {"component_name": name, "version": version,
                                    "ready_to_upgrade": "false" if state in BUSY_STATES else "true"},
                     "tasks": {"created_at": NO_TASK_TIME, "finished_at": NO_TASK_TIME,
                               "status": "Upgrading" if upgrading else "Success", "is_canceled": False}}
    return out
