"""Create-time field rules of the built-in kinds (what the real server's validation.go files check).

Runs on an object that decoded and was defaulted; every rule returns 422 causes naming the field.
Kind-specific rules live here, keyed by kind in `semantic`; rules every object shares (names,
labels, selectors) live in metadata.py.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from .. import kinds
from ..apimachinery import fieldrules

from .causes import _duplicate, _forbidden, _invalid, _not_found, _required, _unsupported
from .metadata import _check_labels, _check_name, _meta_causes, _selector_causes, _selector_matches

_RESTART = ("Always", "OnFailure", "Never")
_PULL = ("Always", "IfNotPresent", "Never")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_DNS = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def _container_causes(cs: list, field: str, volumes: set[str], seen: set[str]) -> list[dict]:
    out: list[dict] = []
    for i, c in enumerate(cs):
        if not isinstance(c, dict):
            continue
        f = f"{field}[{i}]"
        name = c.get("name")
        if not name:
            out.append(_required(f"{f}.name"))
        else:
            out += _check_name(name, f"{f}.name", True)
            if name in seen:
                out.append(_duplicate(f"{f}.name", name))
            seen.add(name)
        if not c.get("image"):
            out.append(_required(f"{f}.image"))
        if c.get("imagePullPolicy") and c["imagePullPolicy"] not in _PULL:
            out.append(_unsupported(f"{f}.imagePullPolicy", c["imagePullPolicy"], _PULL))
        ports = set()
        for j, p in enumerate(c.get("ports") or []):
            cp = p.get("containerPort")
            if not cp:
                out.append(_required(f"{f}.ports[{j}].containerPort"))
            elif not 1 <= cp <= 65535:
                out.append(_invalid(f"{f}.ports[{j}].containerPort", cp, "must be between 1 and 65535, inclusive"))
            if p.get("protocol") and p["protocol"] not in _PROTOCOLS:
                out.append(_unsupported(f"{f}.ports[{j}].protocol", p["protocol"], _PROTOCOLS))
            if (cp, p.get("protocol", "TCP")) in ports:
                out.append(_duplicate(f"{f}.ports[{j}]", {"containerPort": cp, "protocol": p.get("protocol", "TCP")}))
            ports.add((cp, p.get("protocol", "TCP")))
        for j, e in enumerate(c.get("env") or []):
            if not e.get("name"):
                out.append(_required(f"{f}.env[{j}].name"))
        mounts = set()
        for j, m in enumerate(c.get("volumeMounts") or []):
            if not m.get("name"):
                out.append(_required(f"{f}.volumeMounts[{j}].name"))
            elif m["name"] not in volumes:
                out.append(_not_found(f"{f}.volumeMounts[{j}].name", m["name"]))
            if not m.get("mountPath"):
                out.append(_required(f"{f}.volumeMounts[{j}].mountPath"))
            elif m["mountPath"] in mounts:
                out.append(_invalid(f"{f}.volumeMounts[{j}].mountPath", m["mountPath"], "must be unique"))
            mounts.add(m.get("mountPath"))
    return out


def _pod_spec_causes(spec: Any, field: str, extra_volumes: Iterable[str] = (),
                     restart: tuple[str, ...] | None = None) -> list[dict]:
    if not isinstance(spec, dict):
        return []
    out: list[dict] = []
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        name = v.get("name") if isinstance(v, dict) else None
        if not name:
            out.append(_required(f"{field}.volumes[{i}].name"))
            continue
        out += _check_name(name, f"{field}.volumes[{i}].name", True)
        if name in volumes:
            out.append(_duplicate(f"{field}.volumes[{i}].name", name))
        volumes.add(name)
    volumes.update(extra_volumes)
    if not spec.get("containers"):
        out.append(_required(f"{field}.containers"))
    seen: set[str] = set()
    out += _container_causes(spec.get("initContainers") or [], f"{field}.initContainers", volumes, seen)
    out += _container_causes(spec.get("containers") or [], f"{field}.containers", volumes, seen)
    rp = spec.get("restartPolicy")
    if rp is not None:
        allowed = restart or _RESTART
        if rp not in allowed:
            out.append(_unsupported(f"{field}.restartPolicy", rp, allowed))
    if spec.get("dnsPolicy") and spec["dnsPolicy"] not in _DNS:
        out.append(_unsupported(f"{field}.dnsPolicy", spec["dnsPolicy"], _DNS))
    tgp = spec.get("terminationGracePeriodSeconds")
    if isinstance(tgp, int) and tgp < 0:
        out.append(_invalid(f"{field}.terminationGracePeriodSeconds", tgp, "must be greater than or equal to 0"))
    return out


def _workload_causes(obj: dict, kind: str, prefix: str = "spec") -> list[dict]:
    """A workload's spec (at `prefix`: a CronJob's is spec.jobTemplate.spec): selector, template, pod spec."""
    spec = obj.get("spec") or {}
    p = prefix
    out: list[dict] = []
    r = spec.get("replicas")
    if isinstance(r, int) and r < 0:
        out.append(_invalid(f"{p}.replicas", r, "must be greater than or equal to 0"))
    sel = spec.get("selector")
    tpl = spec.get("template") or {}
    tlabels = (tpl.get("metadata") or {}).get("labels") or {}
    if kind not in ("Job", "ReplicationController") or spec.get("manualSelector"):
        if not sel or not (sel.get("matchLabels") or sel.get("matchExpressions")):
            out.append(_invalid(f"{p}.selector", sel or {}, f"empty selector is invalid for {kind.lower()}")
                       if sel is not None else _required(f"{p}.selector"))
        else:
            out += _selector_causes(sel, f"{p}.selector")
            if not _selector_matches(sel, tlabels):
                out.append(_invalid(f"{p}.template.metadata.labels", tlabels, "`selector` does not match template `labels`"))
    out += _check_labels(tlabels, f"{p}.template.metadata.labels")
    extra = [t.get("metadata", {}).get("name") for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    restart: tuple[str, ...] = ("Always",)
    tspec = tpl.get("spec")
    if kind == "Job":
        restart = ("OnFailure", "Never")
        if isinstance(tspec, dict) and tspec.get("restartPolicy") not in restart:
            out.append(_required(f"{p}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
            restart = _RESTART
    out += _pod_spec_causes(tspec, f"{p}.template.spec", [e for e in extra if e], restart)
    if kind == "StatefulSet":
        pmp = spec.get("podManagementPolicy")
        if pmp and pmp not in ("OrderedReady", "Parallel"):
            out.append(_unsupported(f"{p}.podManagementPolicy", pmp, ("OrderedReady", "Parallel")))
        us = (spec.get("updateStrategy") or {}).get("type")
        if us and us not in ("RollingUpdate", "OnDelete"):
            out.append(_unsupported(f"{p}.updateStrategy.type", us, ("OnDelete", "RollingUpdate")))
        for i, t in enumerate(spec.get("volumeClaimTemplates") or []):
            out += _pvc_spec_causes((t or {}).get("spec") or {}, f"{p}.volumeClaimTemplates[{i}].spec")
    if kind == "Deployment":
        st = (spec.get("strategy") or {}).get("type")
        if st and st not in ("Recreate", "RollingUpdate"):
            out.append(_unsupported(f"{p}.strategy.type", st, ("Recreate", "RollingUpdate")))
    return out


_ACCESS = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")


def _pvc_spec_causes(spec: dict, field: str) -> list[dict]:
    out: list[dict] = []
    modes = spec.get("accessModes")
    if not modes:
        out.append(_required(f"{field}.accessModes", "at least 1 access mode is required"))
    for m in modes or []:
        if m not in _ACCESS:
            out.append(_unsupported(f"{field}.accessModes", m, _ACCESS))
    if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
        out.append(_required(f"{field}.resources[storage]"))
    vm = spec.get("volumeMode")
    if vm and vm not in _VOLUME_MODES:
        out.append(_unsupported(f"{field}.volumeMode", vm, _VOLUME_MODES))
    return out


_PV_SOURCES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker",
               "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk",
               "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")


def _pv_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    if not (spec.get("capacity") or {}).get("storage"):
        out.append(_required("spec.capacity[storage]"))
    if not spec.get("accessModes"):
        out.append(_required("spec.accessModes"))
    for m in spec.get("accessModes") or []:
        if m not in _ACCESS:
            out.append(_unsupported("spec.accessModes", m, _ACCESS))
    n = sum(1 for s in _PV_SOURCES if spec.get(s))
    if n == 0:
        out.append(_required("spec", "must specify a volume type"))
    elif n > 1:
        out.append(_forbidden("spec", "may not specify more than 1 volume type"))
    rp = spec.get("persistentVolumeReclaimPolicy")
    if rp and rp not in ("Delete", "Recycle", "Retain"):
        out.append(_unsupported("spec.persistentVolumeReclaimPolicy", rp, ("Delete", "Recycle", "Retain")))
    return out


def _sc_causes(obj: dict) -> list[dict]:
    out: list[dict] = []
    if not obj.get("provisioner"):
        out.append(_required("provisioner"))
    rp = obj.get("reclaimPolicy")
    if rp and rp not in ("Delete", "Retain"):
        out.append(_unsupported("reclaimPolicy", rp, ("Delete", "Retain")))
    vbm = obj.get("volumeBindingMode")
    if vbm and vbm not in ("Immediate", "WaitForFirstConsumer"):
        out.append(_unsupported("volumeBindingMode", vbm, ("Immediate", "WaitForFirstConsumer")))
    return out


def _va_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    if not spec.get("attacher"):
        out.append(_required("spec.attacher"))
    if not spec.get("nodeName"):
        out.append(_required("spec.nodeName"))
    src = spec.get("source") or {}
    n = sum(1 for k in ("persistentVolumeName", "inlineVolumeSpec") if src.get(k))
    if n != 1:
        why = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        out.append(_required("spec.source", why) if n == 0 else _forbidden("spec.source", why))
    return out


def _service_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    t = spec.get("type", "ClusterIP")
    if t not in ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"):
        out.append(_unsupported("spec.type", t, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")))
    if t != "ExternalName" and spec.get("clusterIP") != "None" and not spec.get("ports"):
        out.append(_required("spec.ports"))
    ports = spec.get("ports") or []
    for i, p in enumerate(ports):
        port = p.get("port")
        if not port:
            out.append(_required(f"spec.ports[{i}].port"))
        elif not 1 <= port <= 65535:
            out.append(_invalid(f"spec.ports[{i}].port", port, "must be between 1 and 65535, inclusive"))
        if len(ports) > 1 and not p.get("name"):
            out.append(_required(f"spec.ports[{i}].name"))
    return out


def _crd_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    out: list[dict] = []
    name = (obj.get("metadata") or {}).get("name")
    want = f"{names.get('plural')}.{spec.get('group')}"
    if name and name != want:
        out.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in ("Cluster", "Namespaced"):
        out.append(_unsupported("spec.scope", spec.get("scope"), ("Cluster", "Namespaced")))
    versions = spec.get("versions") or []
    if not versions:
        out.append(_invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    elif sum(1 for v in versions if v.get("storage")) != 1:
        out.append(_invalid("spec.versions", [v.get("name") for v in versions],
                            "must have exactly one version marked as storage version"))
    for f in ("plural", "kind"):
        if not names.get(f):
            out.append(_required(f"spec.names.{f}"))
    return out


def _embedded_workload(obj: dict, path: str, kind: str) -> list[dict]:
    """The workload rules on a spec inside obj (`path`), e.g. a CronJob's spec.jobTemplate.spec as a Job's."""
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return _workload_causes({"spec": cur}, kind, path) if isinstance(cur, dict) else []


_SEMANTIC = {
    "StatefulSet": _workload_causes, "Deployment": _workload_causes, "ReplicaSet": _workload_causes,
    "DaemonSet": _workload_causes, "Job": _workload_causes,
}


def semantic(obj: dict) -> list[dict]:
    """The kind-specific validation of a decoded, defaulted built-in object."""
    kind = obj.get("kind") or ""
    out = _meta_causes(obj, kind)
    k = kinds.BY_KIND.get(kind)
    if k is not None:
        if k.validate:
            out += k.validate(obj)
        if k.workload:
            out += _embedded_workload(obj, *k.workload)
    elif kind in _SEMANTIC:
        out += _SEMANTIC[kind](obj, kind)
    elif kind == "Pod":
        out += _pod_spec_causes(obj.get("spec"), "spec")
    elif kind == "PodTemplate":
        out += _pod_spec_causes((obj.get("template") or {}).get("spec"), "template.spec")
    elif kind == "PersistentVolumeClaim":
        out += _pvc_spec_causes(obj.get("spec") or {}, "spec")
    elif kind == "PersistentVolume":
        out += _pv_causes(obj)
    elif kind == "StorageClass":
        out += _sc_causes(obj)
    elif kind == "VolumeAttachment":
        out += _va_causes(obj)
    elif kind == "Service":
        out += _service_causes(obj)
    elif kind == "CustomResourceDefinition":
        out += _crd_causes(obj)
    out += fieldrules.causes(obj)
    return out
