"""networking.k8s.io/v1 Ingress and IngressClass: validation (ValidateIngressCreate, ValidateIngressClass),
`kubectl get` columns (printIngress, printIngressClass). Neither has defaults beyond the status the server keeps
(`status.loadBalancer: {}`); no ingress controller runs in the twin, so ADDRESS stays empty."""
from __future__ import annotations

import ipaddress
import re
from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.printing import _age, _c, _name
from .base import Causes, Kind

_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_WILDCARD = re.compile(r"^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def default(obj: dict) -> None:
    obj.setdefault("spec", {})
    obj.setdefault("status", {}).setdefault("loadBalancer", {})


def _is_ip(s: str) -> bool:
    try:
        ipaddress.ip_address(s)
        return True
    except ValueError:
        return False


def _backend(b: dict, f: str) -> Causes:
    svc, res = b.get("service"), b.get("resource")
    if svc is not None and res is not None:
        return [fr.invalid(f, "", "cannot set both resource and service backends")]
    if res is not None:
        return [fr.required(f"{f}.resource.{k}") for k in ("kind", "name") if not (res or {}).get(k)]
    if svc is None:
        return [fr.invalid(f, "", "resource or service backend is required")]
    out: Causes = []
    name = svc.get("name")
    if not name:
        out.append(fr.required(f"{f}.service.name"))
    else:
        out += [fr.invalid(f"{f}.service.name", name, m) for m in fr.is_dns1035_label(name)]
    port = svc.get("port") or {}
    pname, pnum = port.get("name"), port.get("number")
    if pname and pnum:
        out.append(fr.invalid(f, "", "cannot set both port name & port number"))
    elif pname:
        if len(pname) > 15 or not _PORT_NAME.match(pname) or not re.search("[a-z]", pname) or "--" in pname:
            out.append(fr.invalid(f"{f}.service.port.name", pname, "must contain only alpha-numeric characters (a-z, "
                                                                   "0-9), and hyphens (-)"))
    elif pnum:
        if not 1 <= pnum <= 65535:
            out.append(fr.invalid(f"{f}.service.port.number", pnum, "must be between 1 and 65535, inclusive"))
    else:
        out.append(fr.required(f, "port name or number is required"))
    return out


def _path(p: dict, f: str) -> Causes:
    pt, path = p.get("pathType"), p.get("path", "")
    out: Causes = []
    if pt is None:
        return [fr.required(f"{f}.pathType", "pathType must be specified")]
    if pt in ("Exact", "Prefix"):
        if not str(path).startswith("/"):
            out.append(fr.invalid(f"{f}.path", path, "must be an absolute path"))
        for seq in ("//", "/./", "/../", "%2f", "%2F"):
            if seq in str(path):
                out.append(fr.invalid(f"{f}.path", path, f"must not contain '{seq}'"))
        for suf in ("/..", "/."):
            if str(path).endswith(suf):
                out.append(fr.invalid(f"{f}.path", path, f"cannot end with '{suf}'"))
    elif pt == "ImplementationSpecific":
        if path and not str(path).startswith("/"):
            out.append(fr.invalid(f"{f}.path", path, "must be an absolute path"))
    else:
        out.append(fr.not_supported(f"{f}.pathType", pt, _PATH_TYPES))
    return out + _backend(p.get("backend") or {}, f"{f}.backend")


def _host(host: str, f: str) -> Causes:
    out: Causes = []
    if _is_ip(host):
        out.append(fr.invalid(f, host, "must be a DNS name, not an IP address"))
    if "*" in host:
        if not _WILDCARD.match(host):
            out.append(fr.invalid(f, host, "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid "
                                           "DNS subdomain, which must consist of lower case alphanumeric characters, "
                                           "'-' or '.' and end with an alphanumeric character (e.g. '*.example.com', "
                                           "regex used for validation is "
                                           "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
    else:
        out += [fr.invalid(f, host, m) for m in fr.is_dns1123_subdomain(host)]
    return out


def validate(obj: dict) -> Causes:
    spec = obj.get("spec") or {}
    rules = spec.get("rules") or []
    out: Causes = []
    if not rules and spec.get("defaultBackend") is None:
        out.append(fr.invalid("spec", rules or None, "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        out += _backend(spec["defaultBackend"] or {}, "spec.defaultBackend")
    for i, r in enumerate(rules):
        r = r or {}
        if r.get("host"):
            out += _host(r["host"], f"spec.rules[{i}].host")
        http = r.get("http")
        if http is not None:
            paths = (http or {}).get("paths") or []
            if not paths:
                out.append(fr.required(f"spec.rules[{i}].http.paths"))
            for j, p in enumerate(paths):
                out += _path(p or {}, f"spec.rules[{i}].http.paths[{j}]")
    for i, t in enumerate(spec.get("tls") or []):
        for j, h in enumerate((t or {}).get("hosts") or []):
            if "*" not in h:
                out += [fr.invalid(f"spec.tls[{i}].hosts[{j}]", h, m) for m in fr.is_dns1123_subdomain(h)]
        sn = (t or {}).get("secretName")
        if sn:
            out += [fr.invalid(f"spec.tls[{i}].secretName", sn, m) for m in fr.is_dns1123_subdomain(sn)]
    cls = spec.get("ingressClassName")
    if cls is not None:
        out += [fr.invalid("spec.ingressClassName", cls, m) for m in fr.is_dns1123_subdomain(cls)]
    ann = ((obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/ingress.class")
    if ann is not None and cls is not None and ann != cls:
        out.append(fr.invalid("annotations.kubernetes.io/ingress.class", ann,
                              "must match `ingressClassName` when both are specified"))
    return out


def _hosts(rules: list) -> str:
    hosts: list[str] = []
    more = False
    for r in rules:
        if len(hosts) == 3:
            more = True
        if not more and (r or {}).get("host"):
            hosts.append(r["host"])
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - 3} more..." if more else "")


def row(o: dict) -> list[Any]:
    sp = o.get("spec") or {}
    lb = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    addr = ",".join(i.get("ip") or i.get("hostname", "") for i in lb if i.get("ip") or i.get("hostname"))
    if len(addr) > 16:  # kubectl without -o wide: ingressLoadBalancerStatusStringer cuts at 16
        addr = addr[:13] + "..."
    return [_name(o), sp.get("ingressClassName") or "<none>", _hosts(sp.get("rules") or []), addr,
            "80, 443" if sp.get("tls") else "80", _age(o)]


def validate_class(obj: dict) -> Causes:
    spec = obj.get("spec") or {}
    out: Causes = []
    ctrl = spec.get("controller")
    if not ctrl:
        out.append(fr.required("spec.controller"))
    elif len(ctrl) > 250:
        out.append(fr.too_long("spec.controller", 250))
    elif "/" not in ctrl:
        out.append(fr.invalid("spec.controller", ctrl, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
    params = spec.get("parameters")
    if params is not None:
        params = params or {}
        for k in ("kind", "name"):
            if not params.get(k):
                out.append(fr.required(f"spec.parameters.{k}"))
        scope = params.get("scope")
        if scope is None:
            out.append(fr.required("spec.parameters.scope"))
        elif scope not in ("Cluster", "Namespace"):
            out.append(fr.not_supported("spec.parameters.scope", scope, ("Cluster", "Namespace")))
        elif scope == "Namespace" and params.get("namespace") is None:
            out.append(fr.required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"))
        elif scope == "Cluster" and params.get("namespace") is not None:
            out.append(fr.forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"))
    return out


def validate_class_update(old: dict, new: dict) -> Causes:
    o, n = (old.get("spec") or {}).get("controller"), (new.get("spec") or {}).get("controller")
    return [fr.invalid("spec.controller", n, "field is immutable")] if o != n else []


def class_row(o: dict) -> list[Any]:
    sp = o.get("spec") or {}
    p = sp.get("parameters")
    params = "<none>"
    if p:
        params = p.get("kind", "") + (f".{p['apiGroup']}" if p.get("apiGroup") else "") + "/" + p.get("name", "")
    return [_name(o), sp.get("controller", ""), params, _age(o)]


KIND = Kind("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), ("status",), True,
            default=default, validate=validate,
            columns=(_c("Name"), _c("Class"), _c("Hosts"), _c("Address"), _c("Ports"), _c("Age")), row=row)
CLASS = Kind("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, generation=True,
             validate=validate_class, validate_update=validate_class_update,
             columns=(_c("Name"), _c("Controller"), _c("Parameters"), _c("Age")), row=class_row)
