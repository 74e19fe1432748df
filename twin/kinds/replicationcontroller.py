"""core/v1 ReplicationController: defaults (SetDefaults_ReplicationController: selector and labels from the
template's labels, replicas 1), validation (ValidateReplicationControllerSpec: a non-empty map selector that
matches the template's labels), `kubectl get` columns (printReplicationController). controllers/replicationcontroller.py
runs them."""
from __future__ import annotations

from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.podspec import template
from ..apimachinery.printing import _age, _c, _containers, _join, _name
from .base import Causes, Kind


def default(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not spec.get("selector") and tlabels:
        spec["selector"] = dict(tlabels)
    md = obj.setdefault("metadata", {})
    if not md.get("labels") and tlabels:
        md["labels"] = dict(tlabels)
    spec.setdefault("replicas", 1)
    if "template" in spec:
        template(obj)
    obj.setdefault("status", {}).setdefault("replicas", 0)


def validate(obj: dict) -> Causes:
    spec = obj.get("spec") or {}
    out: Causes = []
    sel = spec.get("selector")
    if not sel:
        out.append(fr.required("spec.selector"))
    else:
        out += fr.labels(sel, "spec.selector")
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        return out + [fr.required("spec.template")]
    tlabels = (tpl.get("metadata") or {}).get("labels") or {}
    if sel and any(tlabels.get(k) != v for k, v in sel.items()):
        out.append(fr.invalid("spec.template.metadata.labels", tlabels, "`selector` does not match template `labels`"))
    spec_ = tpl.get("spec") or {}
    if spec_.get("activeDeadlineSeconds") is not None:
        out.append(fr.forbidden("spec.template.spec.activeDeadlineSeconds",
                                "activeDeadlineSeconds in ReplicationController is not Supported"))
    out += fr.pod_spec(spec_, "spec.template.spec")
    return out


def row(o: dict) -> list[Any]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    c, i = _containers(o)
    return [_name(o), sp.get("replicas", 0), st.get("replicas", 0), st.get("readyReplicas", 0), _age(o), c, i,
            _join([f"{k}={v}" for k, v in sorted((sp.get("selector") or {}).items())])]


KIND = Kind("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",), ("status", "scale"), True,
            ("all",), default=default, validate=validate, workload=("spec", "ReplicationController"),
            columns=(_c("Name"), _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"), _c("Age"),
                     _c("Containers", priority=1), _c("Images", priority=1), _c("Selector", priority=1)),
            row=row, field_selectors=frozenset({"status.replicas"}))
