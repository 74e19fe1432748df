"""Discovery documents (/api, /apis, group versions) and the OpenAPI v3 documents kubectl reads."""
from __future__ import annotations

import hashlib
import json

from .resources import Registry, ResourceType

VERSION_INFO = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.4", "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335",
    "gitTreeState": "clean", "buildDate": "2025-04-22T16:02:27Z", "goVersion": "go1.23.6", "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}


def _group(group: str, versions: list[str]) -> dict:
    vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs, "preferredVersion": vs[0]}


def api_groups(reg: Registry) -> dict:
    groups = [_group(g, vs) for g, vs in sorted(reg.group_versions().items()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(reg: Registry, group: str) -> dict | None:
    vs = reg.group_versions().get(group)
    return _group(group, vs) if vs and group else None


def _entry(r: ResourceType) -> dict:
    return {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
            "verbs": list(_verbs(r)), "shortNames": list(r.short_names), "categories": list(r.categories),
            "storageVersionHash": hashlib.sha256(f"{r.group}/{r.version}/{r.kind}".encode()).hexdigest()[:12]}


def _verbs(r: ResourceType):
    if r.kind == "Event":
        return ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    return ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _sub(r: ResourceType, sub: str) -> dict:
    if sub == "scale":
        return {"name": f"{r.plural}/scale", "singularName": "", "namespaced": r.namespaced, "group": "autoscaling",
                "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
    if sub == "log":
        return {"name": f"{r.plural}/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]}
    if sub == "binding":
        return {"name": f"{r.plural}/binding", "singularName": "", "namespaced": True, "kind": "Binding", "verbs": ["create"]}
    if sub == "eviction":
        return {"name": f"{r.plural}/eviction", "singularName": "", "namespaced": True, "group": "policy",
                "version": "v1", "kind": "Eviction", "verbs": ["create"]}
    if sub == "finalize":
        return {"name": f"{r.plural}/finalize", "singularName": "", "namespaced": False, "kind": r.kind, "verbs": ["update"]}
    return {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced, "kind": r.kind,
            "verbs": ["get", "patch", "update"]}


def resource_list(reg: Registry, group: str, version: str) -> dict | None:
    rs = reg.in_group_version(group, version)
    if not rs and not (group == "autoscaling" and version == "v1"):
        return None
    resources = []
    for r in sorted(rs, key=lambda x: x.plural):
        resources.append(_entry(r))
        resources.extend(_sub(r, s) for s in r.subresources)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


# OpenAPI v3 -------------------------------------------------------------------------------------
def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


_ROOT_CACHE: dict[int, tuple[int, dict]] = {}


def openapi_root(reg: Registry) -> dict:
    cached = _ROOT_CACHE.get(id(reg))
    if cached and cached[0] == reg.generation:
        return cached[1]
    paths = {}
    for g, vs in reg.group_versions().items():
        for v in vs:
            p = _gv_path(g, v)
            doc = openapi_gv(reg, g, v)
            h = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()
            paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={h}"}
    doc = {"paths": paths}
    _ROOT_CACHE[id(reg)] = (reg.generation, doc)
    return doc


_PARAMS = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
           for n in ("dryRun", "fieldManager", "fieldValidation", "pretty")]


def openapi_gv(reg: Registry, group: str, version: str) -> dict:
    paths: dict[str, dict] = {}
    schemas: dict[str, dict] = {}
    for r in reg.in_group_version(group, version):
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        base = f"/{_gv_path(group, version)}" + ("/namespaces/{namespace}" if r.namespaced else "")
        op = {"x-kubernetes-group-version-kind": gvk, "parameters": _PARAMS,
              "responses": {"200": {"description": "OK"}}}
        paths[f"{base}/{r.plural}"] = {"post": dict(op, operationId=f"create{r.kind}"),
                                       "get": dict(op, operationId=f"list{r.kind}")}
        paths[f"{base}/{r.plural}/{{name}}"] = {
            "get": dict(op, operationId=f"read{r.kind}"), "put": dict(op, operationId=f"replace{r.kind}"),
            "patch": dict(op, operationId=f"patch{r.kind}"), "delete": dict(op, operationId=f"delete{r.kind}")}
        pkg = f"io.k8s.api.{(r.group.split('.')[0] or 'core')}.{r.version}.{r.kind}"
        schemas[pkg] = {"type": "object", "x-kubernetes-group-version-kind": [gvk],
                        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                       "metadata": {"type": "object"}, "spec": {"type": "object"},
                                       "status": {"type": "object"}}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
            "paths": paths, "components": {"schemas": schemas}}
