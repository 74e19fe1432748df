"""/openapi/v2: the Swagger 2.0 document kube-apiserver serves, built from the same schemas as the
OpenAPI v3 documents (discovery.py): the kubernetes-validate definitions and the CRDs' openAPIV3Schema.

kubectl 1.32 asks for it as protobuf (the gnostic openapi_v2.Document, see openapi_v2_pb.py) whenever it
validates on the client: for a `kind: List`, whose items the server cannot check in one request, and for
kinds whose paths lack the fieldValidation parameter. The handler negotiates as kube-openapi's does: the
first Accept clause that matches JSON or one of the two protobuf names wins, otherwise 406 with an empty
body; the ETag is the quoted uppercase hex SHA-512 of the JSON and If-None-Match answers 304.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from aiohttp import web

from . import discovery, openapi_v2_pb
from .resources import Registry, ResourceType

REF = "#/definitions/"
PROTOBUF = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
PROTOBUF_DEPRECATED = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
_ACTIONS = {"create": "post", "list": "list", "read": "get", "replace": "put", "patch": "patch", "delete": "delete"}
_DESCRIPTIONS = {"post": "create a {}", "list": "list or watch objects of kind {}", "get": "read the specified {}",
                 "put": "replace the specified {}", "patch": "partially update the specified {}",
                 "delete": "delete a {}"}
_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"]
_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


def _query(name: str, description: str) -> dict:
    return {"uniqueItems": True, "type": "string", "description": description, "name": name, "in": "query"}


_QUERY = {
    "dryRun": _query("dryRun", "When present, indicates that modifications should not be persisted."),
    "fieldManager": _query("fieldManager", "fieldManager is a name associated with the actor or entity that is making "
                                           "these changes."),
    "fieldValidation": _query("fieldValidation", "fieldValidation instructs the server on how to handle objects in the "
                                                 "request (POST/PUT/PATCH) containing unknown or duplicate fields."),
    "pretty": _query("pretty", "If 'true', then the output is pretty printed."),
}
_WRITES = [_QUERY["dryRun"], _QUERY["fieldManager"], _QUERY["fieldValidation"]]


def _path_param(name: str) -> dict:
    return {"uniqueItems": True, "type": "string", "description": f"name of the {name}" if name == "name"
            else "object name and auth scope, such as for teams and projects", "name": name, "in": "path",
            "required": True}


def crd_v2_schema(s: Any) -> Any:
    """A CRD's structural schema as kube-apiserver publishes it in v2 (apiextensions ToStructuralOpenAPIV2):
    no oneOf/anyOf/not/allOf, a nullable or x-kubernetes-preserve-unknown-fields node loses what kubectl's
    v2 validator cannot cope with, and only Swagger 2.0 keywords and x- extensions remain."""
    if isinstance(s, list):
        return [crd_v2_schema(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {k: v for k, v in s.items() if k in openapi_v2_pb.SCHEMA_KEYS or k.startswith("x-")}
    for k in ("oneOf", "anyOf", "not", "allOf"):
        out.pop(k, None)
    if s.get("nullable"):
        for k in ("type", "items", "properties"):
            out.pop(k, None)
    if s.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("type") == "array" and "items" not in out:
        out.pop("type")
    if "properties" in out:
        props = s["properties"]
        out["properties"] = {k: crd_v2_schema(v) for k, v in props.items()}
        if "required" in out:
            out["required"] = [f for f in out["required"] if not (props.get(f) or {}).get("nullable")]
            if not out["required"]:
                out.pop("required")
    if isinstance(out.get("items"), dict):
        out["items"] = crd_v2_schema(out["items"])
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = crd_v2_schema(out["additionalProperties"])
    return out


def _crd_list(r: ResourceType, name: str) -> dict:
    return {"description": f"{r.kind}List is a list of {r.kind}", "type": "object", "required": ["items"],
            "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                           "items": {"type": "array", "items": {"$ref": REF + name}},
                           "metadata": {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}},
            "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": f"{r.kind}List"}]}


def _paths(reg: Registry, definitions: dict[str, dict]) -> dict[str, dict]:
    from . import validation

    paths: dict[str, dict] = {}
    gvk_names = validation._gvk_index()
    for r in sorted(reg.all(), key=lambda x: (x.group, x.version, x.plural)):
        gv = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
        tag = f"{(r.group.split('.')[0] if r.group else 'core')}_{r.version}"
        if r.crd:
            name = discovery.crd_definition_name(r)
            list_name = name + "List"
        else:
            name = gvk_names.get((r.group, r.version, r.kind), "")
            list_name = gvk_names.get((r.group, r.version, r.kind + "List"), "")
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        for sub, method, op_id, body in discovery.resource_operations(r):
            action = _ACTIONS[next(p for p in _ACTIONS if op_id.startswith(p))]
            schema_name = list_name if action == "list" else name
            op: dict[str, Any] = {"description": _DESCRIPTIONS[action].format(r.kind),
                                  "consumes": _PATCH_TYPES if method == "patch" else ["*/*"], "produces": _PRODUCES,
                                  "schemes": ["https"], "tags": [tag], "operationId": op_id}
            params = list(_WRITES) if method in ("post", "put", "patch", "delete") else []
            if body and name:
                params.insert(0, {"name": "body", "in": "body", "required": True, "schema": {"$ref": REF + name}})
            if params:
                op["parameters"] = params
            ok: dict[str, Any] = {"description": "OK"}
            if schema_name in definitions:
                ok["schema"] = {"$ref": REF + schema_name}
            op["responses"] = {"200": ok, "401": {"description": "Unauthorized"}}
            op["x-kubernetes-action"] = action
            op["x-kubernetes-group-version-kind"] = gvk
            item = paths.setdefault(gv + sub, {})
            item[method] = op
            if "parameters" not in item:
                item["parameters"] = ([_path_param("name")] if "{name}" in sub else []) + \
                    ([_path_param("namespace")] if r.namespaced else []) + [_QUERY["pretty"]]
    return {k: paths[k] for k in sorted(paths)}


def document(reg: Registry) -> dict:
    """The Swagger 2.0 document: every built-in definition, each served CRD version's, and the paths."""
    definitions = dict(discovery.builtin_definitions(REF))
    for r in reg.all():
        if r.crd:
            name = discovery.crd_definition_name(r)
            v3 = reg.crd_openapi.get((r.group, r.version, r.plural)) or {"type": "object"}
            if v3.get("x-kubernetes-preserve-unknown-fields"):
                # as apiextensions' buildKubeNative: not even apiVersion/kind/metadata, or kubectl's v2
                # validator would refuse every other field
                definitions[name] = {"type": "object", "x-kubernetes-group-version-kind": [
                    {"group": r.group, "version": r.version, "kind": r.kind}]}
            else:
                definitions[name] = discovery.crd_definition(reg, r, REF, crd_v2_schema(v3))
            definitions[name + "List"] = _crd_list(r, name)
    return {"swagger": "2.0",
            "info": {"title": "Kubernetes", "version": discovery.VERSION_INFO["gitVersion"]},
            "paths": _paths(reg, definitions),
            "definitions": {k: definitions[k] for k in sorted(definitions)},
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                    "name": "authorization", "in": "header"}},
            "security": [{"BearerToken": []}]}


@dataclass
class _Served:
    generation: int
    json: bytes
    etag: str
    last_modified: str
    protobuf: bytes | None = None
    gzipped: dict[str, bytes] = field(default_factory=dict)  # per representation, compressed once (kubectl asks gzip)

    def body(self, offer: str) -> bytes:
        if offer == "json":
            return self.json
        if self.protobuf is None:
            self.protobuf = openapi_v2_pb.encode_document(json.loads(self.json))
        return self.protobuf

    def gzip(self, offer: str) -> bytes:
        if offer not in self.gzipped:
            self.gzipped[offer] = gzip.compress(self.body(offer), compresslevel=6, mtime=0)
        return self.gzipped[offer]


_CACHE: dict[int, _Served] = {}


def served(reg: Registry) -> _Served:
    cur = _CACHE.get(id(reg))
    if cur is None or cur.generation != reg.generation:
        body = json.dumps(document(reg), separators=(",", ":")).encode()
        cur = _Served(reg.generation, body, hashlib.sha512(body).hexdigest().upper(), formatdate(usegmt=True))
        _CACHE[id(reg)] = cur
    return cur


def _clauses(accept: str) -> list[tuple[str, str]]:
    """The Accept header's media ranges, best first (goautoneg: by q, then by specificity)."""
    out = []
    for i, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        q = 1.0
        for f in fields[1:]:
            if f.startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        typ, _, sub = fields[0].partition("/")
        out.append((-q, typ == "*", sub == "*", i, typ, sub or "*"))
    return [(t, s) for *_, t, s in sorted(out)]


def respond(request: web.Request, reg: Registry) -> web.Response:
    offered = [("json", "application/json"), (PROTOBUF_DEPRECATED, "application/" + PROTOBUF),
               (PROTOBUF, "application/" + PROTOBUF)]
    for typ, sub in _clauses(request.headers.get("Accept") or "*/*"):
        for offer, content_type in offered:
            if typ not in ("application", "*") or sub not in (offer, "*"):
                continue
            doc = served(reg)
            headers = {"Vary": "Accept", "Etag": f'"{doc.etag}"', "Last-Modified": doc.last_modified}
            if request.headers.get("If-None-Match") in (f'"{doc.etag}"', "*"):
                return web.Response(status=304, headers=headers)
            headers["Content-Type"] = content_type
            if "gzip" in request.headers.get("Accept-Encoding", ""):  # kube-openapi's handler is gzip-wrapped
                return web.Response(body=doc.gzip(offer), headers=dict(headers, **{"Content-Encoding": "gzip"}))
            return web.Response(body=doc.body(offer), headers=headers)
    return web.Response(status=406, headers={"Vary": "Accept"})
