"""meta.k8s.io/v1 Table responses, so `kubectl get` prints real columns (and -o wide).

Columns follow the real server's printers (pkg/printers/internalversion/printers.go) for the kinds
the collection works with; priority 1 columns are the ones `-o wide` adds. Custom resources get
their CRD's additionalPrinterColumns (or NAME and AGE). Ages are formatted as
k8s.io/apimachinery/pkg/util/duration.HumanDuration formats them.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, UTC
from typing import Any

from .. import kinds
from ..apimachinery.printing import Row, _age, _c, _containers, _join, _name, _parse_ts, _selector, _since, human_duration


def _pod(o: dict) -> list[Any]:
    st = o.get("status") or {}
    spec = o.get("spec") or {}
    cs = st.get("containerStatuses") or []
    ready = sum(1 for c in cs if c.get("ready"))
    total = len(spec.get("containers") or [])
    reason = st.get("reason") or st.get("phase") or "Pending"
    restarts = 0
    for c in cs:
        restarts += c.get("restartCount", 0)
        state = c.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if o["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    rg = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}" if gates else "<none>"
    return [_name(o), f"{ready}/{total}", reason, str(restarts), _age(o), st.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>", rg]


_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def _modes(modes: list[str] | None) -> str:
    return ",".join(_MODES.get(m, m) for m in modes or [])


def _pvc(o: dict) -> list[Any]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "")
    return [_name(o), phase, sp.get("volumeName", ""), (st.get("capacity") or {}).get("storage", ""),
            _modes(st.get("accessModes")), sp.get("storageClassName", ""),
            sp.get("volumeAttributesClassName") or "<unset>", _age(o), sp.get("volumeMode", "")]


def _pv(o: dict) -> list[Any]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    claim = sp.get("claimRef") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "")
    return [_name(o), (sp.get("capacity") or {}).get("storage", ""), _modes(sp.get("accessModes")),
            sp.get("persistentVolumeReclaimPolicy", ""), phase,
            f"{claim.get('namespace')}/{claim.get('name')}" if claim else "", sp.get("storageClassName", ""),
            sp.get("volumeAttributesClassName") or "<unset>", st.get("reason", ""), _age(o), sp.get("volumeMode", "")]


def _sts(o: dict) -> list[Any]:
    c, i = _containers(o)
    return [_name(o), f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 0)}",
            _age(o), c, i]


def _deploy(o: dict) -> list[Any]:
    st = o.get("status") or {}
    c, i = _containers(o)
    return [_name(o), f"{st.get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 0)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), _age(o), c, i,
            _selector((o.get("spec") or {}).get("selector"))]


def _rs(o: dict) -> list[Any]:
    st = o.get("status") or {}
    c, i = _containers(o)
    return [_name(o), (o.get("spec") or {}).get("replicas", 0), st.get("replicas", 0), st.get("readyReplicas", 0),
            _age(o), c, i, _selector((o.get("spec") or {}).get("selector"))]


def _ds(o: dict) -> list[Any]:
    st = o.get("status") or {}
    c, i = _containers(o)
    ns = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    return [_name(o), st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0), st.get("numberReady", 0),
            st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            _join([f"{k}={v}" for k, v in sorted(ns.items())]), _age(o), c, i,
            _selector((o.get("spec") or {}).get("selector"))]


def _job(o: dict) -> list[Any]:
    st, sp = o.get("status") or {}, o.get("spec") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    status = ("Complete" if conds.get("Complete") == "True" else "Failed" if conds.get("Failed") == "True"
              else "Suspended" if conds.get("Suspended") == "True" else "Running")
    start, end = _parse_ts(st.get("startTime")), _parse_ts(st.get("completionTime"))
    dur = human_duration(((end or datetime.now(UTC)) - start).total_seconds()) if start else ""
    c, i = _containers(o)
    return [_name(o), status, f"{st.get('succeeded', 0)}/{sp.get('completions', 1)}", dur, _age(o), c, i,
            _selector(sp.get("selector"))]


def _node(o: dict) -> list[Any]:
    st = o.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    status = "Ready" if conds.get("Ready") == "True" else "NotReady" if "Ready" in conds else "Unknown"
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (o["metadata"].get("labels") or {}) if k.startswith("node-role.kubernetes.io/"))
    addrs = {a.get("type"): a.get("address") for a in st.get("addresses") or []}
    info = st.get("nodeInfo") or {}
    return [_name(o), status, ",".join(roles) or "<none>", _age(o), info.get("kubeletVersion", ""),
            addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"), info.get("osImage", ""),
            info.get("kernelVersion", ""), info.get("containerRuntimeVersion", "")]


def _va(o: dict) -> list[Any]:
    sp = o.get("spec") or {}
    return [_name(o), sp.get("attacher", ""), (sp.get("source") or {}).get("persistentVolumeName", ""),
            sp.get("nodeName", ""), str((o.get("status") or {}).get("attached", False)).lower(), _age(o)]


def _sc(o: dict) -> list[Any]:
    default = (o["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"
    return [_name(o) + (" (default)" if default else ""), o.get("provisioner", ""), o.get("reclaimPolicy", ""),
            o.get("volumeBindingMode", ""), str(o.get("allowVolumeExpansion", False)).lower(), _age(o)]


def _csidriver(o: dict) -> list[Any]:
    sp = o.get("spec") or {}
    return [_name(o), str(sp.get("attachRequired", True)).lower(), str(sp.get("podInfoOnMount", False)).lower(),
            str(sp.get("storageCapacity", False)).lower(),
            ",".join(t.get("audience", "") for t in sp.get("tokenRequests") or []) or "<unset>",
            str(sp.get("requiresRepublish", False)).lower(), ",".join(sp.get("volumeLifecycleModes") or []), _age(o)]


def _csinode(o: dict) -> list[Any]:
    return [_name(o), len((o.get("spec") or {}).get("drivers") or []), _age(o)]


def _ns(o: dict) -> list[Any]:
    return [_name(o), (o.get("status") or {}).get("phase", "Active"), _age(o)]


def _cm(o: dict) -> list[Any]:
    return [_name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o)]


def _secret(o: dict) -> list[Any]:
    return [_name(o), o.get("type", "Opaque"), len(o.get("data") or {}), _age(o)]


def _svc(o: dict) -> list[Any]:
    sp = o.get("spec") or {}
    ingress = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    ext = ",".join(i.get("ip") or i.get("hostname", "") for i in ingress)
    if not ext:
        ext = sp.get("externalName") or ",".join(sp.get("externalIPs") or []) or (
            "<pending>" if sp.get("type") == "LoadBalancer" else "<none>")
    ports = ",".join(f"{p.get('port')}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
                     for p in sp.get("ports") or []) or "<none>"
    return [_name(o), sp.get("type", "ClusterIP"), sp.get("clusterIP") or "<none>", ext, ports, _age(o),
            _join([f"{k}={v}" for k, v in sorted((sp.get("selector") or {}).items())])]


def _sa(o: dict) -> list[Any]:
    return [_name(o), len(o.get("secrets") or []), _age(o)]


def _event(o: dict) -> list[Any]:
    io = o.get("involvedObject") or {}
    last = o.get("lastTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp")
    return [_since(last), o.get("type", ""), o.get("reason", ""), f"{(io.get('kind') or '').lower()}/{io.get('name', '')}",
            o.get("message", ""), o.get("source", {}).get("component", ""), io.get("fieldPath", ""),
            _since(o.get("firstTimestamp") or last), o.get("count", 1), _name(o)]


def _lease(o: dict) -> list[Any]:
    return [_name(o), (o.get("spec") or {}).get("holderIdentity") or "", _age(o)]


def _crd(o: dict) -> list[Any]:
    return [_name(o), o["metadata"].get("creationTimestamp", "")]


def _cr(o: dict) -> list[Any]:
    return [_name(o), o.get("revision", 0), _age(o)]


def _ep(o: dict) -> list[Any]:
    eps = []
    for s in o.get("subsets") or []:
        for a in s.get("addresses") or []:
            for p in s.get("ports") or [{}]:
                eps.append(f"{a.get('ip')}:{p.get('port')}" if p else a.get("ip"))
    return [_name(o), ",".join(eps[:3]) + (f" + {len(eps) - 3} more..." if len(eps) > 3 else "") or "<none>", _age(o)]


def _hpa(o: dict) -> list[Any]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    ref = sp.get("scaleTargetRef") or {}
    return [_name(o), f"{ref.get('kind')}/{ref.get('name')}", "<unknown>", sp.get("minReplicas", 1), sp.get("maxReplicas", 0),
            st.get("currentReplicas", 0), _age(o)]


_WORKLOAD_WIDE = [_c("Containers", priority=1), _c("Images", priority=1)]
COLUMNS: dict[str, tuple[list[tuple[str, str, int, str]], Row]] = {
    "Pod": ([_c("Name"), _c("Ready"), _c("Status"), _c("Restarts", "string"), _c("Age"), _c("IP", priority=1),
             _c("Node", priority=1), _c("Nominated Node", priority=1), _c("Readiness Gates", priority=1)], _pod),
    "PersistentVolumeClaim": ([_c("Name"), _c("Status"), _c("Volume"), _c("Capacity"), _c("Access Modes"),
                               _c("StorageClass"), _c("VolumeAttributesClass"), _c("Age"),
                               _c("VolumeMode", priority=1)], _pvc),
    "PersistentVolume": ([_c("Name"), _c("Capacity"), _c("Access Modes"), _c("Reclaim Policy"), _c("Status"),
                          _c("Claim"), _c("StorageClass"), _c("VolumeAttributesClass"), _c("Reason"), _c("Age"),
                          _c("VolumeMode", priority=1)], _pv),
    "StatefulSet": ([_c("Name"), _c("Ready"), _c("Age")] + _WORKLOAD_WIDE, _sts),
    "Deployment": ([_c("Name"), _c("Ready"), _c("Up-to-date", "integer"), _c("Available", "integer"), _c("Age")]
                   + _WORKLOAD_WIDE + [_c("Selector", priority=1)], _deploy),
    "ReplicaSet": ([_c("Name"), _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"), _c("Age")]
                   + _WORKLOAD_WIDE + [_c("Selector", priority=1)], _rs),
    "DaemonSet": ([_c("Name"), _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"),
                   _c("Up-to-date", "integer"), _c("Available", "integer"), _c("Node Selector"), _c("Age")]
                  + _WORKLOAD_WIDE + [_c("Selector", priority=1)], _ds),
    "Job": ([_c("Name"), _c("Status"), _c("Completions"), _c("Duration"), _c("Age")]
            + _WORKLOAD_WIDE + [_c("Selector", priority=1)], _job),
    "Node": ([_c("Name"), _c("Status"), _c("Roles"), _c("Age"), _c("Version"), _c("Internal-IP", priority=1),
              _c("External-IP", priority=1), _c("OS-Image", priority=1), _c("Kernel-Version", priority=1),
              _c("Container-Runtime", priority=1)], _node),
    "VolumeAttachment": ([_c("Name"), _c("Attacher"), _c("PV"), _c("Node"), _c("Attached", "boolean"), _c("Age")], _va),
    "StorageClass": ([_c("Name"), _c("Provisioner"), _c("ReclaimPolicy"), _c("VolumeBindingMode"),
                      _c("AllowVolumeExpansion"), _c("Age")], _sc),
    "CSIDriver": ([_c("Name"), _c("AttachRequired"), _c("PodInfoOnMount"), _c("StorageCapacity"), _c("TokenRequests"),
                   _c("RequiresRepublish"), _c("Modes"), _c("Age")], _csidriver),
    "CSINode": ([_c("Name"), _c("Drivers", "integer"), _c("Age")], _csinode),
    "Namespace": ([_c("Name"), _c("Status"), _c("Age")], _ns),
    "ConfigMap": ([_c("Name"), _c("Data", "integer"), _c("Age")], _cm),
    "Secret": ([_c("Name"), _c("Type"), _c("Data", "integer"), _c("Age")], _secret),
    "Service": ([_c("Name"), _c("Type"), _c("Cluster-IP"), _c("External-IP"), _c("Port(s)"), _c("Age"),
                 _c("Selector", priority=1)], _svc),
    "ServiceAccount": ([_c("Name"), _c("Secrets", "integer"), _c("Age")], _sa),
    "Event": ([_c("Last Seen"), _c("Type"), _c("Reason"), _c("Object"), _c("Message"), _c("Source", priority=1),
               _c("Subobject", priority=1), _c("First Seen", priority=1), _c("Count", "integer", 1),
               _c("Name", priority=1)], _event),
    "Lease": ([_c("Name"), _c("Holder"), _c("Age")], _lease),
    "CustomResourceDefinition": ([_c("Name"), _c("Created At", "date")], _crd),
    "ControllerRevision": ([_c("Name"), _c("Revision", "integer"), _c("Age")], _cr),
    "Endpoints": ([_c("Name"), _c("Endpoints"), _c("Age")], _ep),
    "HorizontalPodAutoscaler": ([_c("Name"), _c("Reference"), _c("Targets"), _c("MinPods", "integer"),
                                 _c("MaxPods", "integer"), _c("Replicas", "integer"), _c("Age")], _hpa),
}
COLUMNS.update({k.kind: (list(k.columns), k.row) for k in kinds.KINDS if k.row})
DEFAULT: tuple[list[tuple[str, str, int, str]], Row] = ([_c("Name"), _c("Age")], lambda o: [_name(o), _age(o)])


# JSONPath subset of additionalPrinterColumns: .a.b, [n], [*], [?(@.k=="v")] ---------------------
_TOKEN = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]")


def jsonpath(obj: Any, path: str) -> list[Any]:
    cur = [obj]
    pos = 0
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            return []
        pos = m.end()
        nxt = []
        for c in cur:
            if m.group(1) is not None:
                if isinstance(c, dict) and m.group(1) in c:
                    nxt.append(c[m.group(1)])
            elif m.group(2) is not None:
                if isinstance(c, list) and int(m.group(2)) < len(c):
                    nxt.append(c[int(m.group(2))])
            elif m.group(3) is not None:
                if isinstance(c, list):
                    for x in c:
                        v = x
                        for part in m.group(3).split("."):
                            v = v.get(part) if isinstance(v, dict) else None
                        if v is not None and str(v) == m.group(4):
                            nxt.append(x)
            elif isinstance(c, list):
                nxt.extend(c)
        cur = nxt
    return cur


def _cell(value: list[Any], type_: str) -> Any:
    if not value:
        return None
    v = value[0] if len(value) == 1 else value
    if type_ == "date":
        return _since(v) if isinstance(v, str) else None
    if type_ == "integer" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v)
    if type_ in ("number",) and isinstance(v, (int, float)):
        return v
    if type_ == "boolean" and isinstance(v, bool):
        return v
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return v if type_ != "string" else str(v) if not isinstance(v, str) else v


def columns_for(rtype: Any) -> tuple[list[dict], Row]:
    """Column definitions and the row function for a resource type."""
    if getattr(rtype, "crd", False):
        cols = list(getattr(rtype, "columns", ()) or ())
        if cols:
            defs = [{"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a "
                     "namespace.", "priority": 0}]
            # the CRD's columns alone: apiextensions serves a default Age column only to a CRD that declares
            # none (apihelpers serveDefaultColumnsIfEmpty), the DEFAULT branch below
            for c in cols:
                defs.append({"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
                             "description": c.get("description", ""), "priority": c.get("priority", 0)})

            def row(o: dict) -> list[Any]:
                return [_name(o)] + [_cell(jsonpath(o, c.get("jsonPath", "")), c.get("type", "string")) for c in cols]
            return defs, row
        cols_t, row_fn = DEFAULT
    else:
        cols_t, row_fn = COLUMNS.get(rtype.kind if not isinstance(rtype, str) else rtype, DEFAULT)
    defs = [{"name": n, "type": t, "format": f, "description": n, "priority": p} for n, t, p, f in cols_t]
    return defs, row_fn


def table(rtype: Any, objs: list[dict], list_meta: dict, include: str = "Metadata", headers: bool = True) -> dict:
    """A Table of objs. rtype: the ResourceType (or a kind name). include: None | Metadata | Object."""
    defs, row = columns_for(rtype)
    rows = []
    for o in objs:
        r: dict[str, Any] = {"cells": row(o)}
        if include == "Object":
            r["object"] = o
        elif include != "None":
            r["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata", {})}
        rows.append(r)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "columnDefinitions": defs if headers else [], "rows": rows}
