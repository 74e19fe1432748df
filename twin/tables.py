"""meta.k8s.io/v1 Table responses, so `kubectl get` prints real columns (and -o wide)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable


def _age(obj: dict) -> str:
    ts = obj.get("metadata", {}).get("creationTimestamp")
    if not ts:
        return "<unknown>"
    secs = int((datetime.now(timezone.utc) - datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)).total_seconds())
    if secs < 120:
        return f"{secs}s"
    if secs < 7200:
        return f"{secs // 60}m"
    return f"{secs // 3600}h"


def _pod(o: dict) -> list[Any]:
    st = o.get("status", {})
    cs = st.get("containerStatuses") or []
    ready = sum(1 for c in cs if c.get("ready"))
    total = len(o.get("spec", {}).get("containers", []))
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "Pending")
    for c in cs:
        waiting = (c.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            phase = waiting["reason"]
    restarts = sum(c.get("restartCount", 0) for c in cs)
    return [o["metadata"]["name"], f"{ready}/{total}", phase, restarts, _age(o), st.get("podIP", "<none>"),
            o.get("spec", {}).get("nodeName", "<none>")]


def _pvc(o: dict) -> list[Any]:
    sp, st = o.get("spec", {}), o.get("status", {})
    return [o["metadata"]["name"], st.get("phase", ""), sp.get("volumeName", ""),
            (st.get("capacity") or {}).get("storage", ""), ",".join(_modes(st.get("accessModes") or [])),
            sp.get("storageClassName", ""), _age(o)]


def _modes(modes: list[str]) -> list[str]:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return [short.get(m, m) for m in modes]


def _pv(o: dict) -> list[Any]:
    sp, st = o.get("spec", {}), o.get("status", {})
    claim = sp.get("claimRef") or {}
    return [o["metadata"]["name"], (sp.get("capacity") or {}).get("storage", ""), ",".join(_modes(sp.get("accessModes") or [])),
            sp.get("persistentVolumeReclaimPolicy", ""), st.get("phase", ""),
            f"{claim.get('namespace')}/{claim.get('name')}" if claim else "", sp.get("storageClassName", ""), _age(o)]


def _sts(o: dict) -> list[Any]:
    return [o["metadata"]["name"], f"{o.get('status', {}).get('readyReplicas', 0)}/{o.get('spec', {}).get('replicas', 0)}", _age(o)]


def _deploy(o: dict) -> list[Any]:
    st = o.get("status", {})
    return [o["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{o.get('spec', {}).get('replicas', 0)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), _age(o)]


def _node(o: dict) -> list[Any]:
    conds = {c["type"]: c["status"] for c in o.get("status", {}).get("conditions", [])}
    roles = [k.split("/", 1)[1] for k in o["metadata"].get("labels", {}) if k.startswith("node-role.kubernetes.io/")]
    return [o["metadata"]["name"], "Ready" if conds.get("Ready") == "True" else "NotReady", ",".join(roles) or "<none>",
            _age(o), o.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", "")]


def _va(o: dict) -> list[Any]:
    sp = o.get("spec", {})
    return [o["metadata"]["name"], sp.get("attacher", ""), sp.get("source", {}).get("persistentVolumeName", ""),
            sp.get("nodeName", ""), str(o.get("status", {}).get("attached", False)).lower(), _age(o)]


def _sc(o: dict) -> list[Any]:
    default = o["metadata"].get("annotations", {}).get("storageclass.kubernetes.io/is-default-class") == "true"
    return [o["metadata"]["name"] + (" (default)" if default else ""), o.get("provisioner", ""), o.get("reclaimPolicy", ""),
            o.get("volumeBindingMode", ""), str(o.get("allowVolumeExpansion", False)).lower(), _age(o)]


def _job(o: dict) -> list[Any]:
    st = o.get("status", {})
    return [o["metadata"]["name"], f"{st.get('succeeded', 0)}/{o.get('spec', {}).get('completions', 1)}", _age(o)]


COLUMNS: dict[str, tuple[list[tuple[str, str, int]], Callable[[dict], list[Any]]]] = {
    "Pod": ([("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "integer", 0),
             ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1)], _pod),
    "PersistentVolumeClaim": ([("Name", "string", 0), ("Status", "string", 0), ("Volume", "string", 0),
                               ("Capacity", "string", 0), ("Access Modes", "string", 0), ("StorageClass", "string", 0),
                               ("Age", "string", 0)], _pvc),
    "PersistentVolume": ([("Name", "string", 0), ("Capacity", "string", 0), ("Access Modes", "string", 0),
                          ("Reclaim Policy", "string", 0), ("Status", "string", 0), ("Claim", "string", 0),
                          ("StorageClass", "string", 0), ("Age", "string", 0)], _pv),
    "StatefulSet": ([("Name", "string", 0), ("Ready", "string", 0), ("Age", "string", 0)], _sts),
    "Deployment": ([("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "integer", 0),
                    ("Available", "integer", 0), ("Age", "string", 0)], _deploy),
    "Node": ([("Name", "string", 0), ("Status", "string", 0), ("Roles", "string", 0), ("Age", "string", 0),
              ("Version", "string", 0)], _node),
    "VolumeAttachment": ([("Name", "string", 0), ("Attacher", "string", 0), ("PV", "string", 0), ("Node", "string", 0),
                          ("Attached", "string", 0), ("Age", "string", 0)], _va),
    "StorageClass": ([("Name", "string", 0), ("Provisioner", "string", 0), ("ReclaimPolicy", "string", 0),
                      ("VolumeBindingMode", "string", 0), ("AllowVolumeExpansion", "string", 0), ("Age", "string", 0)], _sc),
    "Job": ([("Name", "string", 0), ("Completions", "string", 0), ("Age", "string", 0)], _job),
}


def table(kind: str, objs: list[dict], list_meta: dict) -> dict:
    cols, row = COLUMNS.get(kind, ([("Name", "string", 0), ("Age", "string", 0)], lambda o: [o["metadata"]["name"], _age(o)]))
    defs = [{"name": n, "type": t, "format": "name" if n == "Name" else "", "description": n, "priority": p} for n, t, p in cols]
    rows = []
    for o in objs:
        md = o.get("metadata", {})
        rows.append({"cells": row(o), "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                                  "metadata": md}})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": defs, "rows": rows}
