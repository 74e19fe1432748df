"""discovery.k8s.io/v1 EndpointSlice: defaults (SetDefaults_EndpointPort: name "", protocol TCP), validation
(ValidateEndpointSliceCreate: addressType, each endpoint's addresses of that type, ports; addressType is
immutable), `kubectl get` columns (printEndpointSlice). The twin's Endpoints are not mirrored into slices."""
from __future__ import annotations

import ipaddress
from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.printing import _age, _c, _name
from .base import Causes, Kind

_TYPES = ("FQDN", "IPv4", "IPv6")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def default(obj: dict) -> None:
    for p in obj.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("name", "")
            p.setdefault("protocol", "TCP")


def _address(kind: str, a: Any, f: str) -> Causes:
    if kind in ("IPv4", "IPv6"):
        try:
            ip = ipaddress.ip_address(a)
            if ip.version == (4 if kind == "IPv4" else 6):
                return []
        except ValueError:
            pass
        return [fr.invalid(f, a, f"must be a valid {kind} address")]
    if kind == "FQDN":
        msgs = fr.is_dns1123_subdomain(a) if isinstance(a, str) and "." in a else \
            ["should be a domain with at least two segments separated by dots"]
        return [fr.invalid(f, a, m) for m in msgs]
    return []


def validate(obj: dict) -> Causes:
    out: Causes = []
    kind = obj.get("addressType")
    if not kind:
        out.append(fr.required("addressType"))
    elif kind not in _TYPES:
        out.append(fr.not_supported("addressType", kind, _TYPES))
    eps = obj.get("endpoints") or []
    if len(eps) > 1000:
        out.append({"reason": "FieldValueTooMany", "field": "endpoints",
                    "message": f"Too many: {len(eps)}: must have at most 1000 items"})
    for i, e in enumerate(eps):
        e = e or {}
        f = f"endpoints[{i}]"
        addrs = e.get("addresses") or []
        if not addrs:
            out.append(fr.required(f"{f}.addresses", "must contain at least 1 address"))
        elif len(addrs) > 100:
            out.append({"reason": "FieldValueTooMany", "field": f"{f}.addresses",
                        "message": f"Too many: {len(addrs)}: must have at most 100 items"})
        for j, a in enumerate(addrs):
            out += _address(kind or "", a, f"{f}.addresses[{j}]")
        if e.get("hostname"):
            out += [fr.invalid(f"{f}.hostname", e["hostname"], m) for m in fr.is_dns1035_label(e["hostname"])]
        if e.get("nodeName"):
            out += [fr.invalid(f"{f}.nodeName", e["nodeName"], m) for m in fr.is_dns1123_subdomain(e["nodeName"])]
    seen: set[str] = set()
    for i, p in enumerate(obj.get("ports") or []):
        p = p or {}
        f = f"ports[{i}]"
        name = p.get("name") or ""
        if name:
            out += [fr.invalid(f"{f}.name", name, m) for m in fr.is_dns1035_label(name)]
        if name in seen:
            out.append({"reason": "FieldValueDuplicate", "field": f"{f}.name", "message": f'Duplicate value: "{name}"'})
        seen.add(name)
        if p.get("protocol") not in _PROTOCOLS:
            out.append(fr.not_supported(f"{f}.protocol", p.get("protocol"), _PROTOCOLS))
        port = p.get("port")
        if isinstance(port, int) and not 1 <= port <= 65535:
            out.append(fr.invalid(f"{f}.port", port, "must be between 1 and 65535, inclusive"))
    return out


def validate_update(old: dict, new: dict) -> Causes:
    if old.get("addressType") != new.get("addressType"):
        return [fr.invalid("addressType", new.get("addressType"), "field is immutable")]
    return []


def _more(items: list[str], count: int) -> str:
    if count > 3:
        return ",".join(items) + f" + {count - 3} more..."
    return ",".join(items) or "<unset>"


def row(o: dict) -> list[Any]:
    ports = o.get("ports") or []
    pl = [str(p["port"]) if p.get("port") is not None else p.get("name") or "*" for p in ports[:3]]
    addrs = [a for e in o.get("endpoints") or [] for a in (e or {}).get("addresses") or []]
    return [_name(o), o.get("addressType", ""), _more(pl, len(ports)), _more(addrs[:3], len(addrs)), _age(o)]


KIND = Kind("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True,
            default=default, validate=validate, validate_update=validate_update,
            columns=(_c("Name"), _c("AddressType"), _c("Ports"), _c("Endpoints"), _c("Age")), row=row)
