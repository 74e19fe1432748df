# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an ACK cluster looks like from the ACK and ECS APIs (and, optionally, its Kubernetes API).

Reads only. Shared by ack_cluster_info (which reports it: describe_ack_cluster, report_ack_cluster) and
ack_parallel_attach (which plans from AckCluster). Not to be confused with k8s/storage_facts.py, the
Kubernetes-only storage facts of the cluster_info module.
Large clusters are read in as few calls as the APIs allow: nodes 100 per page with the pages after the first
fetched in parallel, instance tags 50 instances per ListTagResources call, instance types 10 per call, disks
100 ids per DescribeDisks call.
"""


import json
import os
import re

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import featuregates
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import (
    CS_MAX_PAGE_SIZE, DISK_IDS_PER_CALL, ECS_MAX_PAGE_SIZE, INSTANCE_TYPES_PER_CALL, TAG_RESOURCES_MAX_IDS,
    AliyunError, batches, indexed_params, pages_needed)

CSI_PLUGIN = "csi-plugin"
PROVISIONER_ADDONS = ("managed-csiprovisioner", "csi-provisioner")  # managed clusters have the first
CSI_ADDONS = (CSI_PLUGIN,) + PROVISIONER_ADDONS
DISK_DRIVER = "diskplugin.csi.alibabacloud.com"
CSI_NAMESPACE = "kube-system"
CSI_WORKLOADS = {CSI_PLUGIN: ("DaemonSet", "csi-plugin"), "csi-provisioner": ("Deployment", "csi-provisioner")}


# ACK cluster ids are "c" and 32 lowercase hex digits; the id becomes a URL path segment (/clusters/<id>), so
# anything else (../, ;, spaces) is refused before a request is built
_CLUSTER_ID = re.compile(r"^c[0-9a-f]{32}$")


def cluster_id_problem(cluster_id):
    """None when cluster_id has the ACK format, else what is wrong and how to find the right one."""
    if _CLUSTER_ID.match(cluster_id or ""):
        return None
    return ("cluster_id %r is not an ACK cluster id: the format is 'c' followed by 32 lowercase hex digits "
            "(e.g. c0123456789abcdef0123456789abcdef); copy it from the ACK console or `aliyun cs GET /clusters`"
            % (cluster_id,))


def _first_error(results):
    for _item, _res, err in results:
        if err is not None:
            raise err


class AckCluster:
    """Reads of one cluster through an AliyunClient."""

    def __init__(self, client, cluster_id):
        problem = cluster_id_problem(cluster_id)
        if problem:
            raise AliyunError(problem, code="InvalidClusterId")
        self.client = client
        self.cluster_id = cluster_id
        self.base = "/clusters/%s" % cluster_id

    # cluster and addons -------------------------------------------------------------------------
    def detail(self):
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

    def addons(self):
        """{name: {version, state}} of every installed addon."""
        doc = self.client.cs("ListClusterAddonInstances", "GET", self.base + "/addon_instances")
        return {a["name"]: {"version": a.get("version"), "state": a.get("state")}
                for a in doc.get("addons") or [] if a.get("name")}

    def addon(self, name):
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
    def provisioner(addons):
        for name in PROVISIONER_ADDONS:
            if name in addons:
                return name
        return None

    def modify_addon(self, name, config):
        return self.client.cs("ModifyClusterAddon", "POST", "%s/components/%s/config" % (self.base, name),
                              body={"config": json.dumps(config, sort_keys=False)})

    # node pools and nodes ---------------------------------------------------------------------------
    def node_pools(self):
        doc = self.client.cs("DescribeClusterNodePools", "GET", self.base + "/nodepools")
        out = []
        for p in doc.get("nodepools") or []:
            info, sg = p.get("nodepool_info") or {}, p.get("scaling_group") or {}
            out.append({"nodepool_id": info.get("nodepool_id"), "name": info.get("name"),
                        "instance_types": list(sg.get("instance_types") or []),
                        "tags": [{"key": t.get("key"), "value": t.get("value")} for t in sg.get("tags") or []],
                        "state": (p.get("status") or {}).get("state")})
        return out

    def node_pool_state(self, nodepool_id):
        doc = self.client.cs("DescribeClusterNodePoolDetail", "GET", "%s/nodepools/%s" % (self.base, nodepool_id))
        return (doc.get("status") or {}).get("state")

    def modify_node_pool_tags(self, nodepool_id, tags):
        """ModifyClusterNodePool replaces scaling_group.tags: send the whole list."""
        return self.client.cs("ModifyClusterNodePool", "PUT", "%s/nodepools/%s" % (self.base, nodepool_id),
                              body={"scaling_group": {"tags": tags}})

    def nodes(self):
        """Every node of the cluster: page 1 tells the total, the other pages are fetched in parallel."""
        def page(n):
            return self.client.cs("DescribeClusterNodes", "GET", self.base + "/nodes",
                                  query={"pageSize": CS_MAX_PAGE_SIZE, "pageNumber": n})

        first = page(1)
        total = int((first.get("page") or {}).get("total_count") or 0)
        docs = [first]
        rest = self.client.parallel(page, range(2, pages_needed(total, CS_MAX_PAGE_SIZE) + 1))
        _first_error(rest)
        docs += [r for _i, r, _e in rest]
        out, seen = [], set()
        for d in docs:
            for n in d.get("nodes") or []:
                if n.get("instance_id") in seen:
                    continue
                seen.add(n.get("instance_id"))
                out.append({"node_name": n.get("node_name"), "instance_id": n.get("instance_id"),
                            "nodepool_id": n.get("nodepool_id"), "instance_type": n.get("instance_type"),
                            "is_aliyun_node": bool(n.get("is_aliyun_node", True)), "state": n.get("state")})
        return out

    # ECS ------------------------------------------------------------------------------------------
    def instance_tags(self, instance_ids):
        """{instance_id: {key: value}} from ListTagResources, 50 instances per call, in parallel."""
        def one(ids):
            tags, token = {i: {} for i in ids}, None
            while True:
                params = dict(indexed_params("ResourceId", ids), ResourceType="instance", NextToken=token)
                doc = self.client.ecs("ListTagResources", params)
                for row in (doc.get("TagResources") or {}).get("TagResource") or []:
                    tags.setdefault(row.get("ResourceId"), {})[row.get("TagKey")] = row.get("TagValue")
                token = doc.get("NextToken")
                if not token:
                    return tags

        results = self.client.parallel(one, batches(instance_ids, TAG_RESOURCES_MAX_IDS))
        _first_error(results)
        out = {}
        for _ids, tags, _e in results:
            out.update(tags)
        return out

    def instance_types(self, names):
        """{type: {disk_quantity, cpu, memory_gib}} from DescribeInstanceTypes, 10 types per call."""
        def one(chunk):
            return self.client.ecs("DescribeInstanceTypes", indexed_params("InstanceTypes", chunk))

        results = self.client.parallel(one, batches(sorted({n for n in names if n}), INSTANCE_TYPES_PER_CALL))
        _first_error(results)
        out = {}
        for _c, doc, _e in results:
            for t in (doc.get("InstanceTypes") or {}).get("InstanceType") or []:
                out[t.get("InstanceTypeId")] = {"disk_quantity": t.get("DiskQuantity"),
                                                "cpu": t.get("CpuCoreCount"), "memory_gib": t.get("MemorySize")}
        return out

    def disks(self, disk_ids=None):
        """DescribeDisks: the named disks (100 ids per call), else every disk of the region (100 per page)."""
        def page(params):
            return self.client.ecs("DescribeDisks", params)

        if disk_ids is not None:
            chunks = [{"DiskIds": json.dumps(c), "PageSize": ECS_MAX_PAGE_SIZE}
                      for c in batches(sorted(set(disk_ids)), DISK_IDS_PER_CALL)]
            results = self.client.parallel(page, chunks)
        else:
            first = page({"PageSize": ECS_MAX_PAGE_SIZE, "PageNumber": 1})
            total = int(first.get("TotalCount") or 0)
            more = [{"PageSize": ECS_MAX_PAGE_SIZE, "PageNumber": n}
                    for n in range(2, pages_needed(total, ECS_MAX_PAGE_SIZE) + 1)]
            results = [(None, first, None)] + self.client.parallel(page, more)
        _first_error(results)
        out = []
        for _p, doc, _e in results:
            for d in (doc.get("Disks") or {}).get("Disk") or []:
                out.append({"disk_id": d.get("DiskId"), "serial_number": d.get("SerialNumber") or None,
                            "instance_id": d.get("InstanceId") or None, "status": d.get("Status"),
                            "category": d.get("Category"), "size_gib": d.get("Size"), "device": d.get("Device")})
        return out


# Kubernetes side -------------------------------------------------------------------------------------
def disk_users(k8s):
    """{disk_id: {"pv", "pvc", "namespace", "pods"}} for the CSI disk volumes the cluster knows."""
    pvs, _rv = k8s.list("v1", "PersistentVolume")
    users = {}
    for pv in pvs:
        csi = (pv.get("spec") or {}).get("csi") or {}
        if csi.get("driver") != DISK_DRIVER or not csi.get("volumeHandle"):
            continue
        claim = (pv.get("spec") or {}).get("claimRef") or {}
        users[csi["volumeHandle"]] = {"pv": pv["metadata"]["name"], "pvc": claim.get("name"),
                                      "namespace": claim.get("namespace"), "pods": []}
    if users:
        by_claim = {(u["namespace"], u["pvc"]): u for u in users.values() if u["pvc"]}
        pods, _rv = k8s.list("v1", "Pod")
        for pod in pods:
            ns = pod["metadata"].get("namespace")
            for vol in (pod.get("spec") or {}).get("volumes") or []:
                claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
                if claim and (ns, claim) in by_claim:
                    by_claim[(ns, claim)]["pods"].append({"name": pod["metadata"]["name"], "namespace": ns,
                                                          "node": (pod.get("spec") or {}).get("nodeName")})
    return users


def _pod_gates(pod, container):
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") != container:
            continue
        for arg in list(c.get("args") or []) + list(c.get("command") or []):
            if str(arg).startswith("--feature-gates="):
                return str(arg).split("=", 1)[1]
        return ""
    return None


def _ready(pod):
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def csi_workloads(k8s):
    """What the CSI components run with: per workload its pods, their readiness and their --feature-gates."""
    out = {}
    for addon, (kind, name) in CSI_WORKLOADS.items():
        obj = k8s.get("apps/v1", kind, name, namespace=CSI_NAMESPACE, missing_ok=True)
        if obj is None:
            out[addon] = None
            continue
        labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        selector = ",".join("%s=%s" % kv for kv in sorted(labels.items()))
        pods, _rv = k8s.list("v1", "Pod", namespace=CSI_NAMESPACE, label_selector=selector or None)
        pods = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        status = obj.get("status") or {}
        desired = status.get("desiredNumberScheduled") if kind == "DaemonSet" else (obj.get("spec") or {}).get("replicas")
        gate_sets = [featuregates.parse(_pod_gates(p, name) or "") for p in pods]
        common = {}
        if gate_sets:
            common = {g: v for g, v in gate_sets[0].items() if all(s.get(g) is v for s in gate_sets[1:])}
        out[addon] = {
            "kind": kind, "name": name, "desired": desired, "pods": len(pods),
            "ready": sum(1 for p in pods if _ready(p)),
            "generation": obj["metadata"].get("generation"), "observed_generation": status.get("observedGeneration"),
            "feature_gates_on_all_pods": common,
            "pod_feature_gates": {p["metadata"]["name"]: _pod_gates(p, name) for p in pods},
        }
    return out


# the whole picture (ack_cluster_info) -------------------------------------------------------------
ATTACH_TAG = "supportConcurrencyAttach"
DETACH_TAG = "supportConcurrencyDetach"


def _on(gates, name):
    return gates.get(name) is True


def describe_ack_cluster(client, cluster_id, k8s=None):
    """Everything ack_cluster_info reports. k8s: a module_utils.k8s.client Client, or None to skip the Kubernetes side."""
    ack = AckCluster(client, cluster_id)
    cluster = ack.detail()
    addons = ack.addons()
    provisioner = AckCluster.provisioner(addons)
    for name in CSI_ADDONS:
        if name in addons:
            cfg = ack.addon(name)
            addons[name].update(feature_gate=cfg["feature_gate"], feature_gates=cfg["feature_gates"])
    pools = ack.node_pools()
    for p in pools:
        p["tags"] = {t["key"]: t["value"] for t in p["tags"]}
    nodes = ack.nodes()
    tags = ack.instance_tags([n["instance_id"] for n in nodes if n["is_aliyun_node"]])
    types = ack.instance_types([n["instance_type"] for n in nodes])
    for n in nodes:
        n["tags"] = tags.get(n["instance_id"], {})
        n["disk_quantity"] = (types.get(n["instance_type"]) or {}).get("disk_quantity")
    by_instance = {n["instance_id"]: n for n in nodes}

    kubernetes = None
    if k8s is not None:
        users = disk_users(k8s)
        disks = ack.disks(disk_ids=list(users)) if users else []
        kubernetes = {"csi": csi_workloads(k8s), "disk_volumes": len(users)}
    else:
        users = {}
        disks = [d for d in ack.disks() if d["instance_id"] in by_instance]
    legacy = []
    for d in disks:
        if d["serial_number"]:
            continue
        user = users.get(d["disk_id"]) or {}
        legacy.append(dict(d, node_name=(by_instance.get(d["instance_id"]) or {}).get("node_name"),
                           pv=user.get("pv"), pvc=user.get("pvc"), namespace=user.get("namespace"),
                           pods=user.get("pods", [])))

    prov_gates = (addons.get(provisioner) or {}).get("feature_gates") or {}
    node_gates = (addons.get(CSI_PLUGIN) or {}).get("feature_gates") or {}
    ecs_nodes = [n for n in nodes if n["is_aliyun_node"]]
    summary = {
        "controller_gates": _on(prov_gates, "DiskADController") and _on(prov_gates, "DiskParallelAttach"),
        "node_gates": _on(node_gates, "DiskADController"),
        "detach_gate": _on(prov_gates, "DiskParallelDetach"),
        "node_pools_tagged": sum(1 for p in pools if p["tags"].get(ATTACH_TAG) == "true"),
        "node_pools_total": len(pools),
        "instances_tagged": sum(1 for n in ecs_nodes if n["tags"].get(ATTACH_TAG) == "true"),
        "instances_detach_tagged": sum(1 for n in ecs_nodes if n["tags"].get(DETACH_TAG) == "true"),
        "instances_total": len(ecs_nodes),
    }
    summary["enabled"] = bool(summary["controller_gates"] and summary["node_gates"]
                              and summary["node_pools_tagged"] == len(pools)
                              and summary["instances_tagged"] == len(ecs_nodes))
    return {"cluster": cluster, "addons": addons, "provisioner": provisioner, "node_pools": pools, "nodes": nodes,
            "instance_types": types, "disks_without_serial": legacy, "parallel_attach": summary,
            "kubernetes": kubernetes}


def wants_kubernetes(params):
    """Whether the play gave a Kubernetes API to read too (options or the K8S_AUTH_* environment)."""
    return bool(params.get("kubeconfig") or params.get("host") or os.environ.get("K8S_AUTH_KUBECONFIG")
                or os.environ.get("K8S_AUTH_HOST"))


def report_ack_cluster(module):
    """The ack_cluster_info module: check the options, read, and report the API call counts (also on failure)."""
    problem = cluster_id_problem(module.params["cluster_id"])
    if problem:
        raise StoragePerfError(problem)
    if not 1 <= module.params["concurrency"] <= 64:
        raise StoragePerfError("concurrency must be between 1 and 64, got %d" % module.params["concurrency"])
    client = module.alibaba
    k8s = module.k8s if wants_kubernetes(module.params) else None
    try:
        info = describe_ack_cluster(client, module.params["cluster_id"], k8s)
    except StoragePerfError as e:
        e.result = dict(e.result, api_calls=client.stats())
        raise
    return dict(info, changed=False, api_calls=client.stats())
