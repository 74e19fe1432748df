# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection asks of ACK (CS, ROA) and ECS (RPC): every path, parameter and limit in one place.

The account's clusters (DescribeClustersV1), a cluster's kubeconfig and addons, its node pools and nodes, and
the ECS side of its nodes (tags, instance types, disks). Each call goes through the signed client (aliyun.py);
every list is read with its `pages()`. Used by the modules (cluster.py, parallel_attach.py) and by the ack
inventory plugin alike.
"""
from __future__ import annotations


import json
import re
from typing import Any, Iterable, Iterator, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import featuregates
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient, batches, indexed_params, tag_params
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.errors import AliyunError

TAG_RESOURCES_MAX_IDS = 50  # ECS TagResources / UntagResources / ListTagResources: ResourceId.N, N <= 50
TAG_RESOURCES_MAX_TAGS = 20  # Tag.N / TagKey.N, N <= 20
CS_MAX_PAGE_SIZE = 100  # DescribeClusterNodes pageSize / DescribeClustersV1 page_size: 1-100
DISKS_PER_PAGE = 500  # DescribeDisks MaxResults: 10-500
DISK_IDS_PER_CALL = 100  # DescribeDisks DiskIds (a JSON array) takes up to 100 ids
INSTANCE_TYPES_PER_CALL = 10  # DescribeInstanceTypes InstanceTypes.N, N <= 10

CSI_PLUGIN = "csi-plugin"
PROVISIONER_ADDONS = ("managed-csiprovisioner", "csi-provisioner")  # managed clusters have the first


# the account ---------------------------------------------------------------------------------------
def list_clusters(client: AliyunClient, region: str | None = None, name: str | None = None, cluster_type: str | None = None,
                  cluster_spec: str | None = None) -> list[dict[str, Any]]:
    """Every cluster DescribeClustersV1 lists (GET /api/v1/clusters), its filters as the API takes them (name: a
    substring). Page 1 tells the total; the other pages are fetched in parallel."""
    base = {"page_size": CS_MAX_PAGE_SIZE, "region_id": region, "name": name, "cluster_type": cluster_type,
            "cluster_spec": cluster_spec}

    def page(number: int) -> dict[str, Any]:
        return client.cs("DescribeClustersV1", "GET", "/api/v1/clusters", query=dict(base, page_number=number))

    def total(doc: dict[str, Any]) -> int | None:
        count = (doc.get("page_info") or {}).get("total_count")
        return None if count is None else int(count)

    return [c for doc in client.pages(page, total=total, per_page=CS_MAX_PAGE_SIZE,
                                      items=lambda d: d.get("clusters"))
            for c in doc.get("clusters") or []]


def user_kubeconfig(client: AliyunClient, cluster_id: str, private_ip: bool = False, minutes: int | None = None) -> dict[str, Any]:
    """DescribeClusterUserKubeconfig (GET /k8s/{ClusterId}/user_config): {"config", "expiration"}."""
    query = {"PrivateIpAddress": "true" if private_ip else "false", "TemporaryDurationMinutes": minutes}
    doc = client.cs("DescribeClusterUserKubeconfig", "GET", "/k8s/%s/user_config" % cluster_id, query=query)
    if not doc.get("config"):
        raise AliyunError("DescribeClusterUserKubeconfig returned no config for cluster %s" % cluster_id,
                          action="cs:DescribeClusterUserKubeconfig")
    return doc


def list_addons(client: AliyunClient, cluster_id: str) -> dict[str, dict[str, Any]]:
    """{name: {version, state}} of every installed addon: ListClusterAddonInstances
    (GET /clusters/{ClusterId}/addon_instances, answering {"addons": [{name, version, state, config}]})."""
    doc = client.cs("ListClusterAddonInstances", "GET", "/clusters/%s/addon_instances" % cluster_id)
    return {a["name"]: {"version": a.get("version"), "state": a.get("state")}
            for a in doc.get("addons") or [] if a.get("name")}


# ACK cluster ids are "c" and 32 lowercase hex digits; the id becomes a URL path segment (/clusters/<id>), so
# anything else (../, ;, spaces) is refused before a request is built
_CLUSTER_ID = re.compile(r"^c[0-9a-f]{32}$")


def cluster_id_problem(cluster_id: str | None) -> str | None:
    """None when cluster_id has the ACK format, else what is wrong and how to find the right one."""
    if _CLUSTER_ID.match(cluster_id or ""):
        return None
    return ("cluster_id %r is not an ACK cluster id: the format is 'c' followed by 32 lowercase hex digits "
            "(e.g. c0123456789abcdef0123456789abcdef); copy it from the ACK console or `aliyun cs GET /clusters`"
            % (cluster_id,))


def _first_error(results: Iterable[tuple[Any, Any, AliyunError | None]]) -> None:
    for _item, _res, err in results:
        if err is not None:
            raise err


class AckCluster:
    """Reads of one cluster through an AliyunClient."""

    def __init__(self, client: AliyunClient, cluster_id: str) -> None:
        problem = cluster_id_problem(cluster_id)
        if problem:
            raise AliyunError(problem, code="InvalidClusterId")
        self.client = client
        self.cluster_id = cluster_id
        self.base = "/clusters/%s" % cluster_id

    # cluster and addons -------------------------------------------------------------------------
    def detail(self) -> dict[str, Any]:
        """DescribeClusterDetail; fixes the client's region to the cluster's (the ECS endpoint depends on it)."""
        doc = self.client.cs("DescribeClusterDetail", "GET", self.base)
        region = doc.get("region_id")
        if self.client.region and region and self.client.region != region:
            raise AliyunError("cluster %s is in region %s, not %s: fix region (or leave it unset)"
                              % (self.cluster_id, region, self.client.region), code="RegionMismatch")
        if region:
            self.client.region = region
        return {"cluster_id": doc.get("cluster_id", self.cluster_id), "name": doc.get("name"),
                "region": region, "version": doc.get("current_version"), "type": doc.get("cluster_type"),
                "spec": doc.get("cluster_spec"), "state": doc.get("state")}

    def addons(self) -> dict[str, dict[str, Any]]:
        """{name: {version, state}} of every installed addon (ListClusterAddonInstances)."""
        return list_addons(self.client, self.cluster_id)

    def addon(self, name: str) -> dict[str, Any]:
        """GetClusterAddonInstance with its config decoded; FeatureGate is the config's gate string."""
        doc = self.client.cs("GetClusterAddonInstance", "GET", "%s/addon_instances/%s" % (self.base, name))
        raw = doc.get("config") or "{}"
        try:
            config = json.loads(raw) if isinstance(raw, str) else dict(raw)
        except ValueError:
            raise AliyunError("addon %s has a config that is not JSON; fix it in the ACK console first" % name,
                              code="InvalidAddonConfig") from None
        gate = str(config.get("FeatureGate") or "")
        return {"name": name, "version": doc.get("version"), "state": doc.get("state"), "config": config,
                "feature_gate": gate, "feature_gates": featuregates.parse(gate)}

    @staticmethod
    def provisioner(addons: Mapping[str, Any]) -> str | None:
        for name in PROVISIONER_ADDONS:
            if name in addons:
                return name
        return None

    def modify_addon(self, name: str, config: Mapping[str, Any]) -> dict[str, Any]:
        return self.client.cs("ModifyClusterAddon", "POST", "%s/components/%s/config" % (self.base, name),
                              body={"config": json.dumps(config, sort_keys=False)})

    # node pools and nodes ---------------------------------------------------------------------------
    def node_pools(self) -> list[dict[str, Any]]:
        doc = self.client.cs("DescribeClusterNodePools", "GET", self.base + "/nodepools")
        out = []
        for p in doc.get("nodepools") or []:
            info, sg = p.get("nodepool_info") or {}, p.get("scaling_group") or {}
            out.append({"nodepool_id": info.get("nodepool_id"), "name": info.get("name"),
                        "instance_types": list(sg.get("instance_types") or []),
                        "tags": [{"key": t.get("key"), "value": t.get("value")} for t in sg.get("tags") or []],
                        "state": (p.get("status") or {}).get("state")})
        return out

    def node_pool_state(self, nodepool_id: str) -> str | None:
        doc = self.client.cs("DescribeClusterNodePoolDetail", "GET", "%s/nodepools/%s" % (self.base, nodepool_id))
        return (doc.get("status") or {}).get("state")

    def modify_node_pool_tags(self, nodepool_id: str, tags: list[dict[str, str]]) -> dict[str, Any]:
        """ModifyClusterNodePool replaces scaling_group.tags: send the whole list."""
        return self.client.cs("ModifyClusterNodePool", "PUT", "%s/nodepools/%s" % (self.base, nodepool_id),
                              body={"scaling_group": {"tags": tags}})

    def nodes(self) -> list[dict[str, Any]]:
        """Every node of the cluster: page 1 tells the total, the other pages are fetched in parallel."""
        def page(n: int) -> dict[str, Any]:
            return self.client.cs("DescribeClusterNodes", "GET", self.base + "/nodes",
                                  query={"pageSize": CS_MAX_PAGE_SIZE, "pageNumber": n})

        out, seen = [], set()
        for d in self.client.pages(page, total=lambda d: int((d.get("page") or {}).get("total_count") or 0),
                                   per_page=CS_MAX_PAGE_SIZE):
            for n in d.get("nodes") or []:
                if n.get("instance_id") in seen:
                    continue
                seen.add(n.get("instance_id"))
                out.append({"node_name": n.get("node_name"), "instance_id": n.get("instance_id"),
                            "nodepool_id": n.get("nodepool_id"), "instance_type": n.get("instance_type"),
                            "is_aliyun_node": bool(n.get("is_aliyun_node", True)), "state": n.get("state")})
        return out

    # ECS ------------------------------------------------------------------------------------------
    def _ecs_pages(self, action: str, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Every page of an ECS list call, by NextToken (the paging ECS recommends; PageNumber is going away)."""
        return self.client.pages(lambda token: self.client.ecs(action, dict(params, NextToken=token)),
                                 next_token=lambda doc: doc.get("NextToken"))

    def instance_tags(self, instance_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """{instance_id: {key: value}} from ListTagResources, 50 instances per call, in parallel."""
        def one(ids: list[str]) -> dict[str, dict[str, str]]:
            tags: dict[str, dict[str, str]] = {i: {} for i in ids}
            for doc in self._ecs_pages("ListTagResources", dict(indexed_params("ResourceId", ids),
                                                                ResourceType="instance")):
                for row in (doc.get("TagResources") or {}).get("TagResource") or []:
                    tags.setdefault(row.get("ResourceId"), {})[row.get("TagKey")] = row.get("TagValue")
            return tags

        results = self.client.parallel(one, batches(instance_ids, TAG_RESOURCES_MAX_IDS))
        _first_error(results)
        out: dict[str, dict[str, str]] = {}
        for _ids, tags, _e in results:
            out.update(tags)  # type: ignore[arg-type]  # _first_error raised if a call failed
        return out

    def tag_instances(self, instance_ids: Iterable[str], tags: Mapping[str, str]) -> dict[str, Any]:
        """TagResources: {key: value} onto at most TAG_RESOURCES_MAX_IDS instances."""
        params = dict(indexed_params("ResourceId", instance_ids), ResourceType="instance")
        params.update(tag_params(tags))
        return self.client.ecs("TagResources", params)

    def untag_instances(self, instance_ids: Iterable[str], keys: Iterable[str]) -> dict[str, Any]:
        """UntagResources: the tag keys off at most TAG_RESOURCES_MAX_IDS instances."""
        params = dict(indexed_params("ResourceId", instance_ids), ResourceType="instance")
        params.update(indexed_params("TagKey", keys))
        return self.client.ecs("UntagResources", params)

    def instance_types(self, names: Iterable[str | None]) -> dict[str, dict[str, Any]]:
        """{type: {disk_quantity, cpu, memory_gib}} from DescribeInstanceTypes, 10 types per call."""
        def one(chunk: list[str]) -> list[dict[str, Any]]:
            return [t for doc in self._ecs_pages("DescribeInstanceTypes", indexed_params("InstanceTypes", chunk))
                    for t in (doc.get("InstanceTypes") or {}).get("InstanceType") or []]

        results = self.client.parallel(one, batches(sorted({n for n in names if n}), INSTANCE_TYPES_PER_CALL))
        _first_error(results)
        out: dict[str, dict[str, Any]] = {}
        for _c, types, _e in results:
            for t in types:  # type: ignore[union-attr]  # _first_error raised if a call failed
                out[t.get("InstanceTypeId")] = {"disk_quantity": t.get("DiskQuantity"),  # type: ignore[index]
                                                "cpu": t.get("CpuCoreCount"), "memory_gib": t.get("MemorySize")}
        return out

    def disks(self, disk_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """DescribeDisks: the named disks (100 ids per call, in parallel), else every disk of the region
        (DISKS_PER_PAGE a page, by NextToken)."""
        def listed(params: Mapping[str, Any]) -> list[dict[str, Any]]:
            return [d for doc in self._ecs_pages("DescribeDisks", params)
                    for d in (doc.get("Disks") or {}).get("Disk") or []]

        if disk_ids is not None:
            chunks = [{"DiskIds": json.dumps(c), "MaxResults": DISK_IDS_PER_CALL}
                      for c in batches(sorted(set(disk_ids)), DISK_IDS_PER_CALL)]
            results = self.client.parallel(listed, chunks)
            _first_error(results)
            found = [d for _c, disks, _e in results for d in disks]  # type: ignore[union-attr]  # as above
        else:
            found = listed({"MaxResults": DISKS_PER_PAGE})
        return [{"disk_id": d.get("DiskId"), "serial_number": d.get("SerialNumber") or None,
                 "instance_id": d.get("InstanceId") or None, "status": d.get("Status"),
                 "category": d.get("Category"), "size_gib": d.get("Size"), "device": d.get("Device")}
                for d in found]
