"""Discovery documents (/api, /apis, group versions) and the OpenAPI v3 documents kubectl reads."""
from __future__ import annotations

import functools
import hashlib
import json
import re
import weakref
from typing import Any

from ...registry.resources import Registry, ResourceType

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
    if not r.stored:  # as kube-apiserver lists the reviews: verbs [create], no storageVersionHash
        return {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                "verbs": list(r.verbs)}
    return {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
            "verbs": list(r.verbs), "shortNames": list(r.short_names), "categories": list(r.categories),
            "storageVersionHash": hashlib.sha256(f"{r.group}/{r.version}/{r.kind}".encode()).hexdigest()[:12]}


_CONNECT_KINDS = {"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}


def _sub(r: ResourceType, sub: str) -> dict:
    if sub == "scale":
        return {"name": f"{r.plural}/scale", "singularName": "", "namespaced": r.namespaced, "group": "autoscaling",
                "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
    if sub == "log":
        return {"name": f"{r.plural}/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]}
    if sub in _CONNECT_KINDS:  # get and create (WebSocket and SPDY upgrades), as kube-apiserver lists them
        return {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": True, "kind": _CONNECT_KINDS[sub],
                "verbs": ["create", "get"]}
    if sub == "token":
        return {"name": f"{r.plural}/token", "singularName": "", "namespaced": True, "group": "authentication.k8s.io",
                "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}
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


# keyed by the registry itself, weakly: an id() would be reused by a later registry and serve it a stale document
_ROOT_CACHE: weakref.WeakKeyDictionary[Registry, tuple[int, dict]] = weakref.WeakKeyDictionary()
_GV_CACHE: weakref.WeakKeyDictionary[Registry, dict[tuple[str, str], tuple[int, dict]]] = weakref.WeakKeyDictionary()


def openapi_root(reg: Registry) -> dict:
    """The /openapi/v3 index: one serverRelativeURL per group version, with a hash kubectl caches by."""
    cached = _ROOT_CACHE.get(reg)
    if cached and cached[0] == reg.generation:
        return cached[1]
    paths = {}
    for g, vs in reg.group_versions().items():
        for v in vs:
            p = _gv_path(g, v)
            names = sorted(f"{r.plural}:{r.kind}:{r.crd}:{len(json.dumps(reg.crd_openapi.get((g, v, r.plural)), sort_keys=True))}"
                           for r in reg.in_group_version(g, v))
            h = hashlib.sha512(json.dumps([VERSION_INFO["gitVersion"], p, names]).encode()).hexdigest()[:32].upper()
            paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={h}"}
    doc = {"paths": paths}
    _ROOT_CACHE[reg] = (reg.generation, doc)
    return doc


_PARAMS = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
           for n in ("dryRun", "fieldManager", "fieldValidation", "pretty")]
_REF = "#/components/schemas/"


def _convert(schema: Any, ref: str = _REF) -> Any:
    """A kubernetes-validate JSON Schema node as the real server publishes it: OpenAPI v3 wraps a
    reference in allOf (ref "#/components/schemas/"), Swagger 2.0 keeps a bare $ref ("#/definitions/")."""
    if isinstance(schema, list):
        return [_convert(x, ref) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "$ref":
            target = ref + v.rsplit("/", 1)[-1]
            if ref == _REF:
                out["allOf"] = [{"$ref": target}]
            else:
                out["$ref"] = target
        elif k == "type" and isinstance(v, list):
            types = [t for t in v if t != "null"]
            out["type"] = types[0] if len(types) == 1 else types
        elif k == "additionalProperties" and v is False:
            continue
        elif k in ("properties",):
            out[k] = {pk: _convert(pv, ref) for pk, pv in v.items()}
        else:
            out[k] = _convert(v, ref)
    return out


@functools.lru_cache(maxsize=2)
def builtin_definitions(ref: str = _REF) -> dict[str, dict]:
    """Every built-in type's schema (one per Go type, named like io.k8s.api.core.v1.Pod), from the
    kubernetes-validate schemas the twin validates with, with references in the document's style."""
    from ... import validation

    out: dict[str, dict] = {}
    for name, s in validation._defs().items():
        if name.endswith("util.intstr.IntOrString"):
            out[name] = {"description": s.get("description", ""), "type": "string", "format": "int-or-string"}
        elif name.endswith("api.resource.Quantity"):
            out[name] = {"description": s.get("description", ""), "type": "string"}
        else:
            out[name] = _convert(s, ref)
    return out


def crd_definition_name(r: ResourceType) -> str:
    return f"{'.'.join(reversed(r.group.split('.')))}.{r.version}.{r.kind}"


def crd_definition(r: ResourceType, schema: dict, ref: str = _REF) -> dict:
    """A custom resource's published schema: its openAPIV3Schema with the GVK extension and ObjectMeta."""
    body = _convert(schema, ref)
    body = dict(body, **{"x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": r.kind}]})
    props = dict(body.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    meta = ref + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    props["metadata"] = {"allOf": [{"$ref": meta}]} if ref == _REF else {"$ref": meta}
    body["properties"] = props
    return body


def resource_operations(r: ResourceType) -> list[tuple[str, str, str, bool]]:
    """(path under the group version, HTTP method, operationId, takes a body) of one resource, as
    both OpenAPI documents list them."""
    base = "/namespaces/{namespace}" if r.namespaced else ""
    ops = [(f"{base}/{r.plural}", "post", f"create{r.kind}", True)]
    if r.stored:
        item = f"{base}/{r.plural}/{{name}}"
        ops += [(f"{base}/{r.plural}", "get", f"list{r.kind}", False), (item, "get", f"read{r.kind}", False),
                (item, "put", f"replace{r.kind}", True), (item, "patch", f"patch{r.kind}", False),
                (item, "delete", f"delete{r.kind}", False)]
    return ops


def _closure(root: str, comps: dict[str, dict], into: dict[str, dict]) -> None:
    stack = [root]
    while stack:
        name = stack.pop()
        if name in into or name not in comps:
            continue
        into[name] = comps[name]
        text = json.dumps(comps[name])
        for ref in set(re.findall(r'"#/components/schemas/([^"]+)"', text)):
            if ref not in into:
                stack.append(ref)


def openapi_gv(reg: Registry, group: str, version: str) -> dict:
    """The OpenAPI v3 document of one group version: its paths (with the fieldValidation parameter
    that makes kubectl validate on the server) and the schemas of its kinds (kubectl explain)."""
    by_gv = _GV_CACHE.setdefault(reg, {})
    cached = by_gv.get((group, version))
    if cached and cached[0] == reg.generation:
        return cached[1]
    from ... import validation

    paths: dict[str, dict] = {}
    schemas: dict[str, dict] = {}
    comps = builtin_definitions()
    for r in sorted(reg.in_group_version(group, version), key=lambda x: x.plural):
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        if r.crd:
            name = crd_definition_name(r)
            schemas[name] = crd_definition(r, reg.crd_openapi.get((r.group, r.version, r.plural)) or {"type": "object"})
            _closure("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", comps, schemas)
        else:
            name = validation._gvk_index().get((r.group, r.version, r.kind), "")
            if name:
                _closure(name, comps, schemas)
        ref = {"content": {"application/json": {"schema": {"$ref": _REF + name}}}} if name else {}
        op = {"x-kubernetes-group-version-kind": gvk, "parameters": _PARAMS,
              "responses": {"200": dict({"description": "OK"}, **ref)}}
        body_op = dict(op, requestBody=dict({"required": True}, **ref)) if ref else op
        for sub, method, op_id, body in resource_operations(r):
            paths.setdefault(f"/{_gv_path(group, version)}{sub}", {})[method] = dict(body_op if body else op,
                                                                                     operationId=op_id)
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
           "paths": paths, "components": {"schemas": schemas}}
    by_gv[(group, version)] = (reg.generation, doc)
    return doc
