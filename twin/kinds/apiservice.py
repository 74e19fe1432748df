"""apiregistration.k8s.io/v1 APIService (cluster-scoped): validation (kube-aggregator ValidateAPIService: the
name is spec.version+"."+spec.group, the priorities' ranges, local services carry no CA bundle), `kubectl get`
columns (the aggregator's table convertor), and the local APIServices the real server registers for every group
version it serves itself (autoRegistrationController, crdRegistrationController), each `Available` with reason
Local. controllers/apiservices.py keeps those in step with the served group versions."""
from __future__ import annotations

from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.printing import _age, _c, _name
from .base import Causes, Kind

# kube-apiserver's apiVersionPriorities (group priority minimum, version priority) for the built-in groups
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1), ("apiregistration.k8s.io", "v1"): (18000, 15), ("apps", "v1"): (17800, 15),
    ("authentication.k8s.io", "v1"): (17700, 15), ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15), ("autoscaling", "v2"): (17500, 30), ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15), ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15), ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15), ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15), ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15), ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15), ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
# a CRD's group version (crdregistration_controller: the storage version first, then the others)
CRD_PRIORITY = (1000, 100)
LOCAL_MESSAGE = "Local APIServices are always available"


def local(group: str, version: str, created: str, priority: tuple[int, int] | None = None) -> dict:
    """The local APIService of a group version the twin serves, as `kubectl get apiservice -o yaml` shows it."""
    gp, vp = priority or PRIORITIES.get((group, version), CRD_PRIORITY)
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"{version}.{group}", "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"
                                                                  if (group, version) in PRIORITIES else "true"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": gp, "versionPriority": vp},
            "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": created,
                                       "reason": "Local", "message": LOCAL_MESSAGE}]}}


def validate(obj: dict) -> Causes:
    spec = obj.get("spec") or {}
    group, version = spec.get("group") or "", spec.get("version") or ""
    out: Causes = []
    name = (obj.get("metadata") or {}).get("name")
    want = f"{version}.{group}"
    if isinstance(name, str) and name and "/" not in name and name not in (".", "..") and name != want:
        out.append(fr.invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: "{want}"'))
    if not group and version != "v1":
        out.append(fr.required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        out += [fr.invalid("spec.group", group, m) for m in fr.is_dns1123_subdomain(group)]
    out += [fr.invalid("spec.version", version, m) for m in fr.is_dns1035_label(version)]
    gp, vp = spec.get("groupPriorityMinimum") or 0, spec.get("versionPriority") or 0
    if not 0 < gp <= 20000:
        out.append(fr.invalid("spec.groupPriorityMinimum", gp, "must be positive and less than 20000"))
    if not 0 < vp <= 1000:
        out.append(fr.invalid("spec.versionPriority", vp, "must be positive and less than 1000"))
    svc = spec.get("service")
    if svc is None:
        if spec.get("caBundle"):
            out.append(fr.invalid("spec.caBundle", f"{len(spec['caBundle']) * 3 // 4} bytes",
                                  "local APIServices may not have a caBundle"))
        if spec.get("insecureSkipTLSVerify"):
            out.append(fr.invalid("spec.insecureSkipTLSVerify", True, "local APIServices may not have insecureSkipTLSVerify"))
        return out
    for k in ("namespace", "name"):
        if not (svc or {}).get(k):
            out.append(fr.required(f"spec.service.{k}"))
    if spec.get("insecureSkipTLSVerify") and spec.get("caBundle"):
        out.append(fr.invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return out


def default(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    # the aggregator's availability controller marks a service-backed APIService; nothing answers for one in the
    # twin, so it is what the real one says of a Service it cannot reach
    if spec.get("service") is not None and not (obj.get("status") or {}).get("conditions"):
        obj["status"] = {"conditions": [{"type": "Available", "status": "False",
                                         "lastTransitionTime": obj["metadata"].get("creationTimestamp"),
                                         "reason": "ServiceNotFound",
                                         "message": f"service/{spec['service'].get('name')} in "
                                                    f"\"{spec['service'].get('namespace')}\" is not present"}]}
    elif spec.get("service") is None and not (obj.get("status") or {}).get("conditions"):
        obj["status"] = local(spec.get("group", ""), spec.get("version", ""),
                              obj["metadata"].get("creationTimestamp", ""))["status"]


def row(o: dict) -> list[Any]:
    svc = (o.get("spec") or {}).get("service")
    cond = next((c for c in (o.get("status") or {}).get("conditions") or [] if c.get("type") == "Available"), None)
    avail = "Unknown"
    if cond:
        avail = cond.get("status", "Unknown")
        if avail != "True" and cond.get("reason"):
            avail = f"{avail} ({cond['reason']})"
    return [_name(o), "Local" if svc is None else f"{svc.get('namespace')}/{svc.get('name')}", avail, _age(o)]


KIND = Kind("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, (), ("status",), name_rule="path",
            default=default, validate=validate,
            columns=(_c("Name"), _c("Service"), _c("Available"), _c("Age")), row=row)
