"""Defaulting on create, as the real API server's defaulters do for the fields clients read back.

kubernetes>=37 validates objects on read, so everything here keeps objects schema-complete.
"""
from __future__ import annotations

import base64
import ipaddress
import itertools
from typing import Any
from collections.abc import Callable

from .. import kinds
from ..apimachinery.podspec import pod_spec, template as _template

_service_ips = (str(ipaddress.IPv4Address("10.96.0.10") + i) for i in itertools.count())


def _qos(spec: dict) -> str:
    requests, limits, guaranteed = False, False, True
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        r = c.get("resources") or {}
        req, lim = r.get("requests") or {}, r.get("limits") or {}
        requests, limits = requests or bool(req), limits or bool(lim)
        for res in ("cpu", "memory"):
            if res not in lim or req.get(res, lim[res]) != lim[res]:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


# The DefaultTolerationSeconds admission plugin's tolerations, on every pod.
_TOLERATIONS = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]


def pod(obj: dict) -> None:
    pod_spec(obj.setdefault("spec", {}))
    spec = obj["spec"]
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tol = spec.setdefault("tolerations", [])
    if isinstance(tol, list):
        for t in _TOLERATIONS:
            if not any(isinstance(x, dict) and x.get("key") == t["key"] and x.get("effect") == t["effect"] for x in tol):
                tol.append(dict(t))
    st = obj.setdefault("status", {})
    st.setdefault("phase", "Pending")
    st.setdefault("qosClass", _qos(spec))


def statefulset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    us = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if us.get("type", "RollingUpdate") == "RollingUpdate":
        us.setdefault("type", "RollingUpdate")
        us.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    for t in spec.get("volumeClaimTemplates", []):
        t.setdefault("apiVersion", "v1")
        t.setdefault("kind", "PersistentVolumeClaim")
        t.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        t.setdefault("status", {"phase": "Pending"})
    _template(obj)
    obj.setdefault("status", {}).setdefault("replicas", 0)
    obj["status"].setdefault("availableReplicas", 0)


def deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strat = spec.setdefault("strategy", {})
    strat.setdefault("type", "RollingUpdate")
    if strat["type"] == "RollingUpdate":
        ru = strat.setdefault("rollingUpdate", {})
        ru.setdefault("maxSurge", "25%")
        ru.setdefault("maxUnavailable", "25%")
    _template(obj)
    obj.setdefault("status", {})


def replicaset(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    _template(obj)
    obj.setdefault("status", {}).setdefault("replicas", 0)


def daemonset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    us = spec.setdefault("updateStrategy", {})
    us.setdefault("type", "RollingUpdate")
    if us["type"] == "RollingUpdate":
        ru = us.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", 1)
        ru.setdefault("maxSurge", 0)
    _template(obj)
    st = obj.setdefault("status", {})
    for k in ("currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled", "numberReady"):
        st.setdefault(k, 0)


def job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    md = obj["metadata"]
    if not spec.get("manualSelector") and md.get("uid"):
        uid = md["uid"]
        spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        labels.setdefault("batch.kubernetes.io/controller-uid", uid)
        labels.setdefault("batch.kubernetes.io/job-name", md.get("name", ""))
        labels.setdefault("controller-uid", uid)
        labels.setdefault("job-name", md.get("name", ""))
    spec.setdefault("completions", 1)
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    _template(obj)
    obj.setdefault("status", {})


def pvc(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Pending")


def pv(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Available" if not spec.get("claimRef") else "Bound")


def storageclass(obj: dict) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def csidriver(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("requiresRepublish", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("seLinuxMount", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    spec.setdefault("volumeLifecycleModes", ["Persistent"])


def namespace(obj: dict) -> None:
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def service(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        if "clusterIP" not in spec:
            spec["clusterIP"] = next(_service_ips)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for p in spec.get("ports") or []:
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p.get("port"))
    obj.setdefault("status", {"loadBalancer": {}})


def secret(obj: dict) -> None:
    obj.setdefault("type", "Opaque")
    # stringData is write-only: the server merges it into data, base64-encoded
    sd = obj.pop("stringData", None)
    if isinstance(sd, dict):
        data = obj.setdefault("data", {})
        for k, v in sd.items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def volumeattachment(obj: dict) -> None:
    obj.setdefault("status", {"attached": False})


def crd(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("scope", "Namespaced")
    names = spec.setdefault("names", {})
    names.setdefault("singular", names.get("kind", "").lower())
    names.setdefault("listKind", names.get("kind", "") + "List")
    obj["status"] = {
        "acceptedNames": dict(names),
        "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
             "lastTransitionTime": obj["metadata"]["creationTimestamp"]},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": obj["metadata"]["creationTimestamp"]},
        ],
    }


BY_KIND: dict[str, Callable[[dict], Any]] = {
    "Pod": pod, "StatefulSet": statefulset, "Deployment": deployment, "ReplicaSet": replicaset,
    "DaemonSet": daemonset, "Job": job, "PersistentVolumeClaim": pvc, "PersistentVolume": pv,
    "StorageClass": storageclass, "CSIDriver": csidriver, "Namespace": namespace, "Service": service,
    "Secret": secret, "VolumeAttachment": volumeattachment, "CustomResourceDefinition": crd,
    **{k.kind: k.default for k in kinds.KINDS if k.default},
}


def apply(kind: str, obj: dict) -> None:
    """Default obj in place (idempotent: the server runs it on every write, as decoding does)."""
    fn = BY_KIND.get(kind)
    if fn:
        try:
            fn(obj)
        except (AttributeError, TypeError, KeyError):
            pass  # a malformed body: validation names the field
