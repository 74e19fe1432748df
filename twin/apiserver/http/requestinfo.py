"""The authorization attributes of a request, as apiserver's RequestInfoFactory derives them from the URL.

/api/<v>/... and /apis/<g>/<v>/... are resource requests (verb from the method: get, list, watch, create,
update, patch, delete, deletecollection); anything else, and the discovery documents themselves, are
non-resource requests whose verb is the method in lower case.
"""
from __future__ import annotations

from typing import Any

from ...apimachinery.queryflags import flag

_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def request_info(method: str, path: str, query: Any) -> tuple[dict, bool]:
    """(attributes, is a resource request) of one request."""
    parts = [p for p in path.strip("/").split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return {"verb": method.lower(), "path": path}, False
    verb = _VERBS.get(method, method.lower())
    if rest[0] == "watch":
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    attrs = {"verb": verb, "group": group, "resource": rest[0] if rest else "", "namespace": namespace,
             "name": rest[1] if len(rest) > 1 else "", "subresource": rest[2] if len(rest) > 2 else ""}
    if not attrs["name"] and verb == "get":
        attrs["verb"] = "watch" if flag(query, "watch") else "list"
        for term in (query.get("fieldSelector") or "").split(","):
            key, _, value = term.partition("=")
            value = value[1:] if value.startswith("=") else value  # "==" is "=" too
            if key == "metadata.name" and value:
                attrs["name"] = value
    elif not attrs["name"] and verb == "delete":
        attrs["verb"] = "deletecollection"
    return attrs, True
