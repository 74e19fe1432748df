# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects the benchmarks create. Every one carries the run's labels (labels.run_labels)."""


import copy

SNAPSHOT_GROUP = "snapshot.storage.k8s.io"
# seed 000: the attach-stress StatefulSet's image and command
SEED_BUSYBOX = "registry-cn-hangzhou.ack.aliyuncs.com/acs/busybox"
SEED_COMMAND = ["/bin/sh", "-c", "trap exit TERM; while true; do date > /mnt/0/data; sleep 1; done"]
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def _meta(name, namespace, labels):
    md = {"name": name, "labels": dict(labels)}
    if namespace:
        md["namespace"] = namespace
    return md


def namespace(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)}


def pvc(name, ns, storage_class, size, labels, access_modes=("ReadWriteOnce",), snapshot=None):
    spec = {"accessModes": list(access_modes), "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}}}
    if snapshot:
        spec["dataSource"] = {"apiGroup": SNAPSHOT_GROUP, "kind": "VolumeSnapshot", "name": snapshot}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(name, ns, labels), "spec": spec}


def pod(name, ns, claims, labels, image=PAUSE_IMAGE, node=None):
    """A pod mounting every claim at /mnt/<i>; it exits at once on SIGTERM (no 30 s grace wait): pause handles
    TERM, and another image runs a shell that traps it (a shell as PID 1 would ignore TERM and be killed only
    after terminationGracePeriodSeconds, which the unpublish step would then time). The seed's StatefulSet
    (attach_stress_statefulset) keeps the seed's own `trap exit TERM` loop and the default grace, as the seed has."""
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


def volume_snapshot(name, ns, source_pvc, snapshot_class, labels):
    return {"apiVersion": SNAPSHOT_GROUP + "/v1", "kind": "VolumeSnapshot", "metadata": _meta(name, ns, labels),
            "spec": {"volumeSnapshotClassName": snapshot_class,
                     "source": {"persistentVolumeClaimName": source_pvc}}}


def attach_stress_storage_class(name, provisioner, disk_type, labels):
    """Seed 000's StorageClass: WaitForFirstConsumer, reclaim Delete, expansion allowed."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": _meta(name, None, labels),
            "provisioner": provisioner, "parameters": {"type": disk_type},
            "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete", "allowVolumeExpansion": True}


def attach_stress_statefulset(name, ns, node, storage_class, labels, replicas=1, volumes=2, size="1Gi",
                              image=SEED_BUSYBOX):
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
