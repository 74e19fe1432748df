# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes storage facts of a cluster (the cluster_info module): what a storage preflight needs to know.

Kubernetes API only; the ACK side of a cluster is ack/cluster.py (ack_cluster_info)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: importing the client pulls in the kubernetes library
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

SNAPSHOT_KINDS = ("VolumeSnapshot", "VolumeSnapshotContent", "VolumeSnapshotClass")
TRIDENT_KINDS = ("TridentOrchestrator", "TridentBackendConfig")


def _node(n: dict[str, Any]) -> dict[str, Any]:
    md, st = n.get("metadata", {}), n.get("status", {})
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])
    return {
        "name": md.get("name"),
        "labels": md.get("labels") or {},
        "provider_id": n.get("spec", {}).get("providerID"),
        "instance_type": (md.get("labels") or {}).get("node.kubernetes.io/instance-type"),
        "ready": ready,
        "unschedulable": bool(n.get("spec", {}).get("unschedulable")),
        "allocatable": st.get("allocatable") or {},
        "kubelet_version": (st.get("nodeInfo") or {}).get("kubeletVersion"),
    }


def _storage_class(sc: dict[str, Any]) -> dict[str, Any]:
    ann = sc.get("metadata", {}).get("annotations") or {}
    return {
        "name": sc["metadata"]["name"],
        "provisioner": sc.get("provisioner"),
        "parameters": sc.get("parameters") or {},
        "reclaim_policy": sc.get("reclaimPolicy"),
        "volume_binding_mode": sc.get("volumeBindingMode"),
        "allow_volume_expansion": bool(sc.get("allowVolumeExpansion")),
        "mount_options": sc.get("mountOptions") or [],
        "default": ann.get("storageclass.kubernetes.io/is-default-class") == "true",
    }


def _csi_driver(d: dict[str, Any]) -> dict[str, Any]:
    spec = d.get("spec", {})
    return {
        "name": d["metadata"]["name"],
        "attach_required": spec.get("attachRequired", True),
        "pod_info_on_mount": spec.get("podInfoOnMount", False),
        "storage_capacity": spec.get("storageCapacity", False),
        "fs_group_policy": spec.get("fsGroupPolicy"),
    }


def _csi_node_limits(csinodes: list[dict[str, Any]]) -> dict[str, dict[str, int | None]]:
    """node -> {driver: allocatable volume count}; a missing count means no limit was published."""
    out = {}
    for cn in csinodes:
        out[cn["metadata"]["name"]] = {d["name"]: (d.get("allocatable") or {}).get("count")
                                       for d in cn.get("spec", {}).get("drivers") or []}
    return out


def _snapshot_class(c: dict[str, Any]) -> dict[str, Any]:
    return {"name": c["metadata"]["name"], "driver": c.get("driver"), "deletion_policy": c.get("deletionPolicy"),
            "parameters": c.get("parameters") or {}}


def gather(client: Client, include_nodes: bool = True) -> dict[str, Any]:
    """The cluster_info result: versions, nodes, storage classes, CSI drivers, snapshot and Trident support."""
    version = client.server_version()
    snapshot_crds = {k: client.has_resource("snapshot.storage.k8s.io/v1", k) for k in SNAPSHOT_KINDS}
    trident_crds = {k: client.has_resource("trident.netapp.io/v1", k) for k in TRIDENT_KINDS}
    nodes = client.list("v1", "Node")[0] if include_nodes else []
    scs = client.list("storage.k8s.io/v1", "StorageClass")[0]
    drivers = client.list("storage.k8s.io/v1", "CSIDriver")[0]
    csinodes = client.list("storage.k8s.io/v1", "CSINode")[0] if include_nodes else []
    vsclasses = client.list("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass")[0] \
        if snapshot_crds["VolumeSnapshotClass"] else []
    return {
        "server_version": {"git_version": version.get("gitVersion"), "major": version.get("major"),
                           "minor": str(version.get("minor", "")).rstrip("+"), "platform": version.get("platform")},
        "api_host": client.host,
        "nodes": [_node(n) for n in nodes],
        "node_count": len(nodes),
        "csi_node_limits": _csi_node_limits(csinodes),
        "storage_classes": [_storage_class(s) for s in scs],
        "default_storage_class": next((s["metadata"]["name"] for s in scs if _storage_class(s)["default"]), None),
        "csi_drivers": [_csi_driver(d) for d in drivers],
        "volume_snapshot_classes": [_snapshot_class(c) for c in vsclasses],
        "snapshot_crds": snapshot_crds,
        "snapshot_crds_installed": all(snapshot_crds.values()),
        "trident_crds": trident_crds,
        "trident_installed": all(trident_crds.values()),
    }
