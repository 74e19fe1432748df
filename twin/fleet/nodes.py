"""Register the twin's nodes: Ready, labelled, with ECS instance ids as providerID and CSINodes."""
from __future__ import annotations

import hashlib

from ..store import Store, now_iso

REGION = "cn-hangzhou"
ZONE = "cn-hangzhou-k"
INSTANCE_TYPE = "ecs.g7se.16xlarge"
DISK_LIMIT = 56  # DescribeInstanceTypes DiskQuantity of ecs.g7se.16xlarge (seed 000)


def instance_id(i: int, seed: str = "") -> str:
    return "i-" + hashlib.sha1(f"{seed}{i}".encode()).hexdigest()[:20]


def node_name(i: int) -> str:
    return f"{REGION}.192.168.{i // 250}.{i % 250 + 1}"


def node_object(i: int, pool: str, instance: str) -> dict:
    name = node_name(i)
    ts = now_iso()

    def cond(kind: str, status: str, reason: str) -> dict:
        return {"type": kind, "status": status, "reason": reason, "message": reason, "lastHeartbeatTime": ts,
                "lastTransitionTime": ts}

    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": INSTANCE_TYPE, "topology.kubernetes.io/region": REGION,
            "topology.kubernetes.io/zone": ZONE, "topology.diskplugin.csi.alibabacloud.com/zone": ZONE,
            "alibabacloud.com/nodepool-id": pool, "node-role.kubernetes.io/worker": ""}},
        "spec": {"providerID": f"{REGION}.{instance}", "podCIDR": f"10.{100 + i // 250}.{i % 250}.0/24"},
        "status": {
            "capacity": {"cpu": "64", "memory": "256Gi", "pods": "256", "ephemeral-storage": "200Gi"},
            "allocatable": {"cpu": "63", "memory": "250Gi", "pods": "256", "ephemeral-storage": "180Gi"},
            "conditions": [cond("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                           cond("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                           cond("PIDPressure", "False", "KubeletHasSufficientPID"),
                           cond("Ready", "True", "KubeletReady")],
            "addresses": [{"type": "InternalIP", "address": f"192.168.{i // 250}.{i % 250 + 1}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.32.4-aliyun.1", "kubeProxyVersion": "v1.32.4-aliyun.1",
                         "containerRuntimeVersion": "containerd://1.6.36", "osImage": "Alibaba Cloud Linux 3",
                         "kernelVersion": "5.10.134-18.al8.x86_64", "operatingSystem": "linux", "architecture": "amd64",
                         "machineID": instance, "systemUUID": instance, "bootID": instance},
        },
    }


def register(store: Store, count: int, pools: int = 1, seed: str = "", offset: int = 0) -> list[dict]:
    """Create `count` nodes spread over `pools` node pools; returns [{name, instance_id, nodepool_id}].

    offset: the first node's number (a fleet's clusters get distinct node names and addresses)."""
    nodes_rt = store.rt("", "v1", "nodes")
    csinode_rt = store.rt("storage.k8s.io", "v1", "csinodes")
    out = []
    for i in range(offset, offset + count):
        pool = f"np{hashlib.sha1(f'{seed}pool{(i - offset) % pools}'.encode()).hexdigest()[:24]}"
        inst = instance_id(i, seed)
        node = node_object(i, pool, inst)
        created = store.create(nodes_rt, None, node)
        store.update(nodes_rt, None, created["metadata"]["name"], dict(created, status=node["status"]), subresource="status")
        store.create(csinode_rt, None, {"metadata": {"name": node["metadata"]["name"], "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": node["metadata"]["name"], "uid": created["metadata"]["uid"]}]},
            "spec": {"drivers": []}})
        out.append({"name": node["metadata"]["name"], "instance_id": inst, "nodepool_id": pool})
    return out
