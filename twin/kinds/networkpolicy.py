"""networking.k8s.io/v1 NetworkPolicy: defaults (SetDefaults_NetworkPolicy: policyTypes, port protocol TCP),
validation (ValidateNetworkPolicySpec), `kubectl get` columns (printNetworkPolicy).

spec.podSelector is a struct, not a pointer, in the Go type: a body without it decodes to {} (every pod of the
namespace), which the real server accepts; the twin does the same (the OpenAPI schema still lists it as required,
which is what client-side validation reads)."""
from __future__ import annotations

import ipaddress
from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.printing import _age, _c, _name, _selector
from .base import Causes, Kind

_PROTOCOLS = ("TCP", "UDP", "SCTP")


def default(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("podSelector", {})
    for rules in (spec.get("ingress") or [], spec.get("egress") or []):
        for r in rules:
            for p in (r or {}).get("ports") or []:
                if isinstance(p, dict):
                    p.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])


def _port(p: dict, f: str) -> Causes:
    out: Causes = []
    if p.get("protocol") not in (None, *_PROTOCOLS):
        out.append(fr.not_supported(f"{f}.protocol", p["protocol"], _PROTOCOLS))
    port, end = p.get("port"), p.get("endPort")
    if isinstance(port, int):
        if not 1 <= port <= 65535:
            out.append(fr.invalid(f"{f}.port", port, "must be between 1 and 65535, inclusive"))
        if isinstance(end, int) and end < port:
            out.append(fr.invalid(f"{f}.endPort", end, "must be greater than or equal to `port`"))
    elif port is None and end is not None:
        out.append(fr.invalid(f"{f}.endPort", end, "may not be specified when `port` is not specified"))
    elif isinstance(port, str) and end is not None:
        out.append(fr.invalid(f"{f}.endPort", end, "may not be specified when `port` is non-numeric"))
    return out


def _peer(peer: dict, f: str) -> Causes:
    out: Causes = []
    n = 0
    for k in ("podSelector", "namespaceSelector"):
        if peer.get(k) is not None:
            n += 1
            out += fr.label_selector(peer[k], f"{f}.{k}")
    ipb = peer.get("ipBlock")
    if ipb is not None:
        n += 1
        cidr = (ipb or {}).get("cidr")
        if not cidr:
            out.append(fr.required(f"{f}.ipBlock.cidr"))
        else:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                out.append(fr.invalid(f"{f}.ipBlock.cidr", cidr,
                                      "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
    if n == 0:
        out.append(fr.required(f, "must specify a peer"))
    elif n > 1 and ipb is not None:
        out.append(fr.forbidden(f, "may not specify both ipBlock and another peer"))
    return out


def validate(obj: dict) -> Causes:
    spec = obj.get("spec") or {}
    out = fr.label_selector(spec.get("podSelector"), "spec.podSelector")
    for part, peers in (("ingress", "from"), ("egress", "to")):
        for i, r in enumerate(spec.get(part) or []):
            r = r or {}
            for j, p in enumerate(r.get("ports") or []):
                out += _port(p or {}, f"spec.{part}[{i}].ports[{j}]")
            for j, peer in enumerate(r.get(peers) or []):
                out += _peer(peer or {}, f"spec.{part}[{i}].{peers}[{j}]")
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        out.append(fr.invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    else:
        for i, t in enumerate(types):
            if t not in ("Ingress", "Egress"):
                out.append(fr.not_supported(f"spec.policyTypes[{i}]", t, ("Ingress", "Egress")))
    return out


def row(o: dict) -> list[Any]:
    return [_name(o), _selector((o.get("spec") or {}).get("podSelector")), _age(o)]


KIND = Kind("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",), generation=True,
            default=default, validate=validate,
            columns=(_c("Name"), _c("Pod-Selector"), _c("Age")), row=row)
