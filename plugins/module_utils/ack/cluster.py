# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an ACK cluster looks like from the ACK and ECS APIs (and, optionally, its Kubernetes API).

Reads only: ack_cluster_info reports it (describe_ack_cluster, report_ack_cluster); the calls themselves are
api.py's AckCluster, which ack_parallel_attach plans from too. Not to be confused with k8s/storage_facts.py, the
Kubernetes-only storage facts of the cluster_info module.
Large clusters are read in as few calls as the APIs allow: nodes 100 per page with the pages after the first
fetched in parallel, instance tags 50 instances per ListTagResources call, instance types 10 per call, disks
100 ids per DescribeDisks call.
"""
from __future__ import annotations


import os
from typing import Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import featuregates
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.api import (  # noqa: F401 (AckCluster: callers')
    CSI_PLUGIN, PROVISIONER_ADDONS, AckCluster, cluster_id_problem)
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

CSI_ADDONS = (CSI_PLUGIN,) + PROVISIONER_ADDONS
DISK_DRIVER = "diskplugin.csi.alibabacloud.com"
CSI_NAMESPACE = "kube-system"
CSI_WORKLOADS = {CSI_PLUGIN: ("DaemonSet", "csi-plugin"), "csi-provisioner": ("Deployment", "csi-provisioner")}


# Kubernetes side -------------------------------------------------------------------------------------
def disk_users(k8s: Any) -> dict[str, dict[str, Any]]:
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


def _pod_gates(pod: dict[str, Any], container: str) -> str | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") != container:
            continue
        for arg in list(c.get("args") or []) + list(c.get("command") or []):
            if str(arg).startswith("--feature-gates="):
                return str(arg).split("=", 1)[1]
        return ""
    return None


def _ready(pod: dict[str, Any]) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def csi_workloads(k8s: Any) -> dict[str, dict[str, Any] | None]:
    """What the CSI components run with: per workload its pods, their readiness and their --feature-gates."""
    out: dict[str, dict[str, Any] | None] = {}
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


def _on(gates: Mapping[str, bool | None], name: str) -> bool:
    return gates.get(name) is True


def describe_ack_cluster(client: AliyunClient, cluster_id: str, k8s: Any = None) -> dict[str, Any]:
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

    prov_gates = (addons.get(provisioner) or {}).get("feature_gates") or {}  # type: ignore[arg-type]
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


def wants_kubernetes(params: Mapping[str, Any]) -> bool:
    """Whether the play gave a Kubernetes API to read too (options or the K8S_AUTH_* environment)."""
    return bool(params.get("kubeconfig") or params.get("host") or os.environ.get("K8S_AUTH_KUBECONFIG")
                or os.environ.get("K8S_AUTH_HOST"))


def report_ack_cluster(params: Mapping[str, Any], client_of: Callable[[str], Any]) -> dict[str, Any]:
    """The ack_cluster_info module: check the options, read, and report the API call counts (also on failure).

    client_of(system) builds the module's client of "alibaba" or "k8s" (the module base's client()); Kubernetes is
    asked only when the play gave an API to read."""
    problem = cluster_id_problem(params["cluster_id"])
    if problem:
        raise StoragePerfError(problem)
    if not 1 <= params["concurrency"] <= 64:
        raise StoragePerfError("concurrency must be between 1 and 64, got %d" % params["concurrency"])
    client = client_of("alibaba")
    k8s = client_of("k8s") if wants_kubernetes(params) else None
    try:
        info = describe_ack_cluster(client, params["cluster_id"], k8s)
    except StoragePerfError as e:
        e.result = dict(e.result, api_calls=client.stats())
        raise
    return dict(info, changed=False, api_calls=client.stats())
