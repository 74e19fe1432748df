# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects the benchmarks create. Every one carries the run's labels (labels.run_labels)."""
from __future__ import annotations

import copy
from typing import Any, Iterable, Mapping, Sequence

SNAPSHOT_GROUP = "snapshot.storage.k8s.io"
# seed 000: the attach-stress StatefulSet's image and command
SEED_BUSYBOX = "registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox"
SEED_COMMAND = ["/bin/sh", "-c", "trap exit TERM; while true; do date > /mnt/0/data; sleep 1; done"]
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def _meta(name: str, namespace: str | None, labels: Mapping[str, str]) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if namespace:
        md["namespace"] = namespace
    return md


def namespace(name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)}


def pvc(name: str, ns: str, storage_class: str, size: str, labels: Mapping[str, str], access_modes: Iterable[str] = ("ReadWriteOnce",),
        snapshot: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any]
    spec = {"accessModes": list(access_modes), "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}}}
    if snapshot:
        spec["dataSource"] = {"apiGroup": SNAPSHOT_GROUP, "kind": "VolumeSnapshot", "name": snapshot}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(name, ns, labels), "spec": spec}


def pod(name: str, ns: str, claims: Sequence[str], labels: Mapping[str, str], image: str = PAUSE_IMAGE,
        node: str | None = None) -> dict[str, Any]:
    """A pod mounting every claim at /mnt/<i>; it exits at once on SIGTERM (no 30 s grace wait): pause handles
    TERM, and another image runs a shell that traps it (a shell as PID 1 would ignore TERM and be killed only
    after terminationGracePeriodSeconds, which the unpublish step would then time). The seed's StatefulSet
    (attach_stress_statefulset) keeps the seed's own `trap exit TERM` loop and the default grace, as the seed has."""
    spec: dict[str, Any]
    spec = {
        "containers": [{
            "name": "app", "image": image,
            "volumeMounts": [{"name": "v%d" % i, "mountPath": "/mnt/%d" % i} for i in range(len(claims))],
        }],
        "volumes": [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)],
        "terminationGracePeriodSeconds": 30,
    }
    if image != PAUSE_IMAGE:
        spec["containers"][0]["command"] = ["/bin/sh", "-c", "trap exit TERM; while true; do sleep 1; done"]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(name, ns, labels), "spec": spec}


def volume_snapshot(name: str, ns: str, source_pvc: str, snapshot_class: str, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"apiVersion": SNAPSHOT_GROUP + "/v1", "kind": "VolumeSnapshot", "metadata": _meta(name, ns, labels),
            "spec": {"volumeSnapshotClassName": snapshot_class,
                     "source": {"persistentVolumeClaimName": source_pvc}}}


def attach_stress_storage_class(name: str, provisioner: str, disk_type: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """Seed 000's StorageClass: WaitForFirstConsumer, reclaim Delete, expansion allowed."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": _meta(name, None, labels),
            "provisioner": provisioner, "parameters": {"type": disk_type},
            "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete", "allowVolumeExpansion": True}


def attach_stress_statefulset(name: str, ns: str, node: str, storage_class: str, labels: Mapping[str, str], replicas: int = 1,
                              volumes: int = 2, size: str = "1Gi", image: str = SEED_BUSYBOX) -> dict[str, Any]:
    """Seed 000's StatefulSet: Parallel pods pinned to one node, `volumes` claim templates each.

    The run labels go on the pods and the claim templates too, so every object it spawns is
    found by the cleanup's label selector.
    """
    match = {"app": name}
    pod_labels = dict(labels, app=name)
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta(name, ns, labels),
        "spec": {
            "selector": {"matchLabels": match},
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Retain", "whenDeleted": "Delete"},
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}},
                    "hostNetwork": True,
                    "containers": [{
                        "name": name, "image": image, "command": list(SEED_COMMAND),
                        "volumeMounts": [{"name": "volume-%d" % i, "mountPath": "/mnt/%d" % i} for i in range(volumes)],
                    }],
                },
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "volume-%d" % i, "labels": copy.deepcopy(labels)},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                         "resources": {"requests": {"storage": size}}},
            } for i in range(volumes)],
        },
    }
