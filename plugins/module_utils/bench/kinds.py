# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource kinds the engine watches: API version, scope, object key and secondary indexes.

An object's key is "namespace/name" for namespaced kinds and "name" for cluster-scoped ones.
Indexes map a value read from the object (a VolumeAttachment's PersistentVolume name, an
Event's involved object) to the keys holding it, so a terminal-state predicate can ask
"which VolumeAttachments are there for PV x" without scanning every object.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping


class Kind:
    def __init__(self, name: str, api_version: str, namespaced: bool,
                 indexes: dict[str, Callable[[dict[str, Any]], str | None]] | None = None) -> None:
        self.name = name
        self.api_version = api_version
        self.namespaced = namespaced
        self.indexes = indexes or {}

    def key(self, obj: Mapping[str, Any]) -> str:
        md = obj.get("metadata") or {}
        if self.namespaced:
            return "%s/%s" % (md.get("namespace") or "", md.get("name"))
        return md.get("name")  # type: ignore[return-value]  # an API object always has a name

    def __repr__(self) -> str:
        return "Kind(%s)" % self.name


def _va_pv(obj: Mapping[str, Any]) -> str | None:
    return ((obj.get("spec") or {}).get("source") or {}).get("persistentVolumeName")


def _event_subject(obj: Mapping[str, Any]) -> str | None:
    io = obj.get("involvedObject") or obj.get("regarding") or {}
    if not io.get("name"):
        return None
    if io.get("namespace"):
        return "%s/%s/%s" % (io.get("kind"), io["namespace"], io["name"])
    return "%s/%s" % (io.get("kind"), io["name"])


def _pv_claim(obj: Mapping[str, Any]) -> str | None:
    ref = (obj.get("spec") or {}).get("claimRef") or {}
    return "%s/%s" % (ref["namespace"], ref["name"]) if ref.get("name") else None


def _pod_node(obj: Mapping[str, Any]) -> str | None:
    return (obj.get("spec") or {}).get("nodeName")


PVC = Kind("PersistentVolumeClaim", "v1", True)
PV = Kind("PersistentVolume", "v1", False, {"claim": _pv_claim})
POD = Kind("Pod", "v1", True, {"node": _pod_node})
EVENT = Kind("Event", "v1", True, {"subject": _event_subject})
VA = Kind("VolumeAttachment", "storage.k8s.io/v1", False, {"pv": _va_pv})
VS = Kind("VolumeSnapshot", "snapshot.storage.k8s.io/v1", True)
VSC = Kind("VolumeSnapshotContent", "snapshot.storage.k8s.io/v1", False)
STS = Kind("StatefulSet", "apps/v1", True)
JOB = Kind("Job", "batch/v1", True)  # a tool run to its end (job_run.py: fio, sysbench)

BY_NAME = {k.name: k for k in (PVC, PV, POD, EVENT, VA, VS, VSC, STS, JOB)}


def subject_key(kind_name: str, key: str) -> str:
    """The Event index value of an object: "Kind/namespace/name" or "Kind/name"."""
    return "%s/%s" % (kind_name, key)
