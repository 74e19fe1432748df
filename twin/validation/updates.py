"""What an update may change: the immutability rules of the real server's ValidateXUpdate functions.

Runs after the create-time rules, on user writes only (controllers' internal writes and status
updates skip it), with the stored object and the new one.
"""
from __future__ import annotations

from collections.abc import Iterable

from .. import kinds
from ..apimachinery import admission, fieldrules

from .causes import _forbidden, _invalid

_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _without(d: dict | None, keys: Iterable[str]) -> dict:
    return {k: v for k, v in (d or {}).items() if k not in keys}


def _strip_images(spec: dict) -> dict:
    spec = dict(spec or {})
    for f in ("containers", "initContainers"):
        spec[f] = [_without(c, ("image",)) for c in spec.get(f) or []]
    return _without(spec, ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates"))


def update_causes(old: dict, new: dict) -> list[dict]:
    """Immutability rules of the real server's ValidateXUpdate functions."""
    kind = new.get("kind")
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    out: list[dict] = []
    if kind in ("StatefulSet", "Deployment", "ReplicaSet", "DaemonSet", "Job"):
        if kind != "Job" and os_.get("selector") != ns_.get("selector"):
            out.append(_invalid("spec.selector", ns_.get("selector"), "field is immutable"))
        if kind == "StatefulSet" and _without(os_, _STS_MUTABLE) != _without(ns_, _STS_MUTABLE):
            out.append(_forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                          "'template', 'updateStrategy', 'revisionHistoryLimit', "
                                          "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
    elif kind == "Pod":
        if _strip_images(os_) != _strip_images(ns_):
            out.append(_forbidden("spec", "pod updates may not change fields other than `spec.containers[*].image`,"
                                          "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                                          "`spec.tolerations` (only additions to existing tolerations),"
                                          "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                                          "previously negative)"))
    elif kind == "StorageClass":
        for f, msg in (("parameters", "updates to parameters are forbidden."),
                       ("provisioner", "updates to provisioner are forbidden."),
                       ("reclaimPolicy", "updates to reclaimPolicy are forbidden.")):
            if old.get(f) != new.get(f):
                out.append(_forbidden(f, msg))
        if old.get("volumeBindingMode") != new.get("volumeBindingMode"):
            out.append(_invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
    elif kind == "VolumeAttachment":
        if os_ != ns_:
            out.append(_invalid("spec", ns_, "field is immutable"))
    elif kind in ("ConfigMap", "Secret"):
        if old.get("immutable"):
            for f in ("data", "binaryData", "stringData"):
                if old.get(f) != new.get(f):
                    out.append(_forbidden(f, "field is immutable when `immutable` is set"))
            if not new.get("immutable"):
                out.append(_forbidden("immutable", "field is immutable when `immutable` is set"))
    elif kind == "CustomResourceDefinition":
        if os_.get("group") != ns_.get("group"):
            out.append(_invalid("spec.group", ns_.get("group"), "field is immutable"))
        if (os_.get("names") or {}).get("plural") != (ns_.get("names") or {}).get("plural"):
            out.append(_invalid("status.acceptedNames.plural", (ns_.get("names") or {}).get("plural"), "field is immutable"))
    k = kinds.BY_KIND.get(kind or "")
    if k is not None and k.validate_update:
        out += k.validate_update(old, new)
    out += fieldrules.update_causes(old, new)
    if not out:  # validating admission (403) runs once validation passed
        admission.validate_update(old, new)
    return out
