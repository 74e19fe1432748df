"""Validating admission of kube-apiserver that needs objects other than the one being written.

PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): growing a claim's
spec.resources.requests.storage is allowed only for a bound claim whose StorageClass (the same before and
after) has allowVolumeExpansion: true. Otherwise 403 Forbidden, after validation passed:
`persistentvolumeclaims "<name>" is forbidden: <why>`.

The ServiceAccount plugin (mutating and validating, on pod creation) is admission_serviceaccount.py, installed
by bind() into the store's write path.

The resize plugin reads StorageClasses from the cluster, so this module is bound to the cluster's store at start
(twin/fleet/cluster.py calls admission.bind), as twin/host/backing.py is.
"""
from __future__ import annotations

from typing import Any

from . import admission_serviceaccount, errors
from . import fieldrules

_store: Any = None

NOT_BOUND = "Only bound persistent volume claims can be expanded"
NO_EXPANSION = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must "
                "support resize")


def bind(cluster: Any) -> None:
    global _store
    _store = cluster.store
    admission_serviceaccount.install(cluster.store)


def _class_name(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = ((pvc.get("metadata") or {}).get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class")
    return ann if ann is not None else ((pvc.get("spec") or {}).get("storageClassName") or "")


def _allows_expansion(name: str) -> bool:
    if _store is None or not name:
        return False
    rt = _store.rt("storage.k8s.io", "v1", "storageclasses")
    return _store.exists(rt, None, name) and _store.get(rt, None, name).get("allowVolumeExpansion") is True


def resize_refusal(old: dict, new: dict) -> str | None:
    """Why PersistentVolumeClaimResize refuses this update of a claim, or None."""
    if new.get("kind") != "PersistentVolumeClaim":
        return None
    size = [fieldrules.storage_request(p) for p in (old, new)]
    if size[0] is None or size[1] is None or size[1] <= size[0]:
        return None
    if (old.get("status") or {}).get("phase") != "Bound":
        return NOT_BOUND
    cls = _class_name(new)
    if cls != _class_name(old) or not _allows_expansion(cls):
        return NO_EXPANSION
    return None


def validate_update(old: dict, new: dict) -> None:
    """Raise the 403 the validating admission chain answers for this update (nothing to say: return)."""
    why = resize_refusal(old, new)
    if why:
        name = (new.get("metadata") or {}).get("name", "")
        raise errors.forbidden(f'persistentvolumeclaims "{name}" is forbidden: {why}',
                               {"name": name, "kind": "persistentvolumeclaims"})
