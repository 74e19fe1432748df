"""Deletion: finalizers, graceful pod termination, propagation policies, namespaces and CRDs.

DELETE removes an object, or marks it (deletionTimestamp) while finalizers or a graceful pod
termination hold it; controllers drop finalizers with `finalize`. A CRD's instances go first
(the customresourcecleanup finalizer), then the CRD.
"""
from __future__ import annotations

import builtins
from datetime import UTC, datetime, timedelta
from typing import Any
from collections.abc import Callable

from ..apimachinery import errors
from ..registry.resources import Registry, ResourceType
from .objects import _clone, _is_crd_type, dumps, now_iso
from .writes import Writes

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
# Stores whose DELETE answers with the deleted object (genericregistry ReturnDeletedObject);
# the others answer with a Status once the object is gone.
RETURNS_DELETED_OBJECT = {("", "Pod"), ("", "PersistentVolumeClaim"), ("", "PersistentVolume"), ("", "Service"),
                          ("", "ServiceAccount"), ("", "PodTemplate"), ("", "ResourceQuota"),
                          ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
                          ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "VolumeAttachment")}


def _after(iso: str, seconds: float) -> str:
    """An RFC 3339 timestamp moved by whole seconds (the API server's timestamps have no fraction)."""
    t = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) + timedelta(seconds=round(seconds))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Deletion(Writes):
    """Writes plus delete, finalize and removal, with the hooks the garbage collector and kubelet use."""

    def __init__(self, registry: Registry | None = None):
        super().__init__(registry)
        self.on_removed: list[Callable[[ResourceType, dict], None]] = []
        self.on_marked: list[Callable[[ResourceType, dict], None]] = []
        # set by the kubelet: pods on a node are deleted gracefully (the kubelet finishes them); the cluster's
        # time scale, for the deletionTimestamp a grace period puts in the future (cluster seconds)
        self.graceful_pods = False
        self.time_scale = 1.0

    def delete(self, rtype: ResourceType, ns: str | None, name: str, *, propagation: str | None = None,
               grace_seconds: int | None = None, preconditions: dict | None = None, dry_run: bool = False,
               raw: bool = False) -> Any:
        """DELETE: removes the object, or marks it (deletionTimestamp) while finalizers or a graceful
        pod termination hold it. Returns the object as it is after the call."""
        cur = self._entry(rtype, ns, name)
        obj = _clone(cur.obj)
        md = obj["metadata"]
        pre = preconditions or {}
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise errors.conflict(rtype, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object "
                                               f"meta: {md['uid']}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
            raise errors.conflict(rtype, name, f"Precondition failed: ResourceVersion in precondition: "
                                               f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                               f"{md['resourceVersion']}")
        if propagation not in (None, "", "Foreground", "Background", "Orphan"):
            raise errors.invalid(rtype, name, [{"reason": "FieldValueNotSupported", "field": "propagationPolicy",
                                                "message": f'Unsupported value: "{propagation}": supported values: '
                                                           f'"Foreground", "Background", "Orphan", "nil"'}])
        if dry_run:
            return self._result(rtype, obj, None, raw)
        finalizers = list(md.get("finalizers") or [])
        if propagation == "Foreground" and "foregroundDeletion" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("foregroundDeletion")
        elif propagation == "Orphan" and "orphan" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("orphan")
        if rtype.kind == "Namespace" and rtype.group == "":
            if md.get("name") in SYSTEM_NAMESPACES:
                raise errors.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                                       {"name": name, "kind": "namespaces"})
            if not md.get("deletionTimestamp"):
                md["deletionTimestamp"] = now_iso()
                md["deletionGracePeriodSeconds"] = 0
                obj.setdefault("status", {})["phase"] = "Terminating"
                return self._write_marked(rtype, cur.obj, obj, raw)
            if not (obj.get("spec") or {}).get("finalizers") and not md.get("finalizers"):
                return self._remove(rtype, obj, raw=raw)
            return self._result(rtype, cur.obj, cur.raw, raw)
        if _is_crd_type(rtype) and not md.get("deletionTimestamp"):
            served = self.registry.crd_types(md["name"])
            if served and any(self.objects[served[0].key]):
                finalizers.append(CRD_CLEANUP_FINALIZER)
        # the pod strategy's CheckGracefulDelete: the DELETE's grace, else the pod's; 0 (as asked, or for a pod not
        # on a node or already finished) removes it at once, as `--grace-period=0 --force` does
        spec = obj.get("spec") or {}
        grace = spec.get("terminationGracePeriodSeconds", 30) if grace_seconds is None else grace_seconds
        graceful = (rtype.kind == "Pod" and rtype.group == "" and self.graceful_pods and spec.get("nodeName")
                    and grace != 0 and (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        if finalizers or graceful:
            if md.get("deletionTimestamp") and md.get("finalizers") == (finalizers or None) and not graceful:
                return self._result(rtype, cur.obj, cur.raw, raw)
            if graceful:
                self._grace(md, grace)
            else:
                md.setdefault("deletionTimestamp", now_iso())
                md.setdefault("deletionGracePeriodSeconds", 0)
            if finalizers:
                md["finalizers"] = finalizers
            if rtype.has_generation and not cur.obj["metadata"].get("deletionTimestamp"):
                md["generation"] = md.get("generation", 1) + 1
            if obj == cur.obj:
                return self._result(rtype, cur.obj, cur.raw, raw)
            marked = self._write_marked(rtype, cur.obj, obj, raw)
            if {"foregroundDeletion", "orphan"} & set(finalizers):
                for cb in self.on_marked:
                    cb(rtype, obj)
            if CRD_CLEANUP_FINALIZER in finalizers:
                self._cleanup_crd(obj)
            return marked
        return self._remove(rtype, obj, raw=raw)

    def _grace(self, md: dict, grace: int) -> None:
        """rest.BeforeDelete for a graceful pod: deletionTimestamp = now + grace; a later DELETE may only shorten
        the grace period (the timestamp moves earlier by the difference), a longer one changes nothing."""
        current = md.get("deletionGracePeriodSeconds")
        if not md.get("deletionTimestamp"):
            md["deletionTimestamp"] = _after(now_iso(), grace * self.time_scale)
            md["deletionGracePeriodSeconds"] = grace
        elif current is None or grace < current:
            md["deletionTimestamp"] = _after(md["deletionTimestamp"], -((current or 0) - grace) * self.time_scale)
            md["deletionGracePeriodSeconds"] = grace

    def deleted_immediately(self, rtype: ResourceType, ns: str | None, name: str, uid: str) -> bool:
        """After a delete: is the object (this uid) gone?"""
        e = self.objects[rtype.key].get((ns or "", name))
        return e is None or e.obj["metadata"]["uid"] != uid

    def _write_marked(self, rtype: ResourceType, old: dict, obj: dict, raw: bool = False) -> Any:
        obj["metadata"]["resourceVersion"] = str(self._next_rv())
        e = self._store(rtype, obj)
        out = self._result(rtype, obj, e.raw, raw)
        self._emit(rtype, "MODIFIED", obj, old, e.raw)
        return out

    def _remove(self, rtype: ResourceType, obj: dict, raw: bool = False) -> Any:
        md = obj["metadata"]
        self._unstore(rtype, md)
        self._index_owners(rtype, obj, False)
        md["resourceVersion"] = str(self._next_rv())
        if _is_crd_type(rtype):
            for rt in self.registry.crd_types(md["name"]):
                for e in list(self.objects[rt.key].values()):
                    self._remove(rt, _clone(e.obj))
                break
            self.registry.unregister_crd(md["name"])
        if rtype.kind == "Pod" and rtype.group == "":
            for k in [k for k in self.pod_logs if k[0] == md.get("namespace") and k[1] == md["name"]]:
                self.pod_logs.pop(k, None)
        encoded = dumps(self._as_version(rtype, obj))  # once, for the caller and the watch event
        out = self._result(rtype, obj, encoded, raw)
        self._emit(rtype, "DELETED", obj, None, encoded)
        for cb in list(self.on_removed):
            cb(rtype, obj)
        if rtype.crd:
            self._crd_instance_gone(rtype)
        return out

    # CRD deletion: instances first, then the CRD (customresourcecleanup finalizer) --------------
    def _cleanup_crd(self, crd: dict) -> None:
        for rt in self.registry.crd_types(crd["metadata"]["name"]):
            for e in list(self.objects[rt.key].values()):
                emd = e.obj["metadata"]
                if not emd.get("deletionTimestamp"):
                    try:
                        self.delete(rt, emd.get("namespace"), emd["name"])
                    except errors.ApiError:
                        pass
            break
        self._crd_instance_gone(None, crd["metadata"]["name"])

    def _crd_instance_gone(self, rtype: ResourceType | None, crd_name: str | None = None) -> None:
        crd_rt = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if crd_rt is None:
            return
        if crd_name:
            name = crd_name
        elif rtype is not None:
            name = f"{rtype.plural}.{rtype.group}"
        else:
            raise ValueError("_crd_instance_gone needs the CRD's resource type or its name")
        e = self.objects[crd_rt.key].get(("", name))
        if e is None or CRD_CLEANUP_FINALIZER not in (e.obj["metadata"].get("finalizers") or []):
            return
        key = rtype.key if rtype is not None else (e.obj["spec"]["group"], e.obj["spec"]["names"]["plural"])
        if not self.objects[key]:
            self.finalize(crd_rt, None, name, CRD_CLEANUP_FINALIZER)

    def finalize(self, rtype: ResourceType, ns: str | None, name: str, finalizer: str) -> None:
        """Drop one finalizer (controllers' side of deletion)."""
        if not self.exists(rtype, ns, name):
            return
        obj = self.get(rtype, ns, name)
        fins = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        obj["metadata"]["finalizers"] = fins
        if not fins:
            obj["metadata"].pop("finalizers")
        self.update(rtype, ns, name, obj, _internal=True, raw=True)  # raw: nobody reads the result

    def delete_collection(self, rtype: ResourceType, ns: str | None, label_selector: str | None,
                          field_selector: str | None, **kw: Any) -> builtins.list[dict]:
        out = []
        for e in self.list_entries(rtype, ns, label_selector, field_selector):
            md = e.obj["metadata"]
            try:
                out.append(self.delete(rtype, md.get("namespace"), md["name"], **kw))
            except errors.ApiError:
                pass
        return out
