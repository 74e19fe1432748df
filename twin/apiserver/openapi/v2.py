"""/openapi/v2: the Swagger 2.0 document kube-apiserver serves, built from the same schemas as the
OpenAPI v3 documents (twin/apiserver/discovery/documents.py): the kubernetes-validate definitions and the CRDs' openAPIV3Schema.

kubectl 1.32 asks for it as protobuf (the gnostic openapi_v2.Document, see v2_protobuf.py) whenever it
validates on the client: for a `kind: List`, whose items the server cannot check in one request, and for
kinds whose paths lack the fieldValidation parameter. The handler negotiates as kube-openapi's does: the
first Accept clause that matches JSON or one of the two protobuf names wins, otherwise 406 with an empty
body; the ETag is the quoted uppercase hex SHA-512 of the JSON and If-None-Match answers 304.

The document is built once per registry generation (any CRD change) in a worker thread, not on the event loop:
the build takes 0.1-0.3 s, and kubectl asks for it right after applying a CRD, while other clients wait.
"""
from __future__ import annotations

import asyncio
import copy
import gzip
import hashlib
import json
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any, TypeVar

from aiohttp import web

from ..discovery import documents as discovery
from . import v2_protobuf as openapi_v2_pb
from ..http.accept import media_ranges
from ...registry.resources import Registry, ResourceType

T = TypeVar("T")
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


def _paths(types: list[ResourceType], definitions: dict[str, dict]) -> dict[str, dict]:
    from ... import validation

    paths: dict[str, dict] = {}
    gvk_names = validation._gvk_index()
    for r in sorted(types, key=lambda x: (x.group, x.version, x.plural)):
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


def document(types: list[ResourceType], crd_openapi: dict[tuple[str, str, str], dict]) -> dict:
    """The Swagger 2.0 document of the served types (a Registry's all() and crd_openapi): every built-in
    definition, each served CRD version's, and the paths."""
    definitions = dict(discovery.builtin_definitions(REF))
    for r in types:
        if r.crd:
            name = discovery.crd_definition_name(r)
            v3 = crd_openapi.get((r.group, r.version, r.plural)) or {"type": "object"}
            if v3.get("x-kubernetes-preserve-unknown-fields"):
                # as apiextensions' buildKubeNative: not even apiVersion/kind/metadata, or kubectl's v2
                # validator would refuse every other field
                definitions[name] = {"type": "object", "x-kubernetes-group-version-kind": [
                    {"group": r.group, "version": r.version, "kind": r.kind}]}
            else:
                definitions[name] = discovery.crd_definition(r, crd_v2_schema(v3), REF)
            definitions[name + "List"] = _crd_list(r, name)
    return {"swagger": "2.0",
            "info": {"title": "Kubernetes", "version": discovery.VERSION_INFO["gitVersion"]},
            "paths": _paths(types, definitions),
            "definitions": {k: definitions[k] for k in sorted(definitions)},
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                    "name": "authorization", "in": "header"}},
            "security": [{"BearerToken": []}]}


def _once(runs: dict[Any, asyncio.Future[T]], key: Hashable, start: Callable[[], Coroutine[Any, Any, T]]) -> Awaitable[T]:
    """The run of `key`, started with start() unless one is going on or has succeeded (a failed or cancelled one
    starts again); shielded, so a client that goes away does not cancel it for the others waiting on it."""
    fut = runs.get(key)
    if fut is None or (fut.done() and (fut.cancelled() or fut.exception() is not None)):
        fut = runs[key] = asyncio.ensure_future(start())
    return asyncio.shield(fut)


@dataclass
class _Served:
    """One registry generation's document, as JSON and as protobuf (what kubectl asks for); each gzipped on first
    demand, once, in a worker thread (gzip of ~1 MB takes tens of ms, which on the event loop would stall all)."""
    generation: int
    json: bytes
    protobuf: bytes
    etag: str
    last_modified: str
    _gzipped: dict[str, asyncio.Future[bytes]] = field(default_factory=dict)  # per offer

    async def body(self, offer: str, gzipped: bool) -> bytes:
        raw = self.json if offer == "json" else self.protobuf
        if not gzipped:
            return raw
        return await _once(self._gzipped, offer, lambda: asyncio.to_thread(gzip.compress, raw, compresslevel=6, mtime=0))


def _build(generation: int, types: list[ResourceType], crd_openapi: dict) -> _Served:
    """In a worker thread: it takes 0.1-0.3 s (most of it the protobuf encoding), which on the event loop would
    stall every other request."""
    doc = document(types, crd_openapi)
    body = json.dumps(doc, separators=(",", ":")).encode()
    return _Served(generation, body, openapi_v2_pb.encode_document(doc), hashlib.sha512(body).hexdigest().upper(),
                   formatdate(usegmt=True))


# registry -> {generation: the build of that generation's document}; a CRD change makes a new generation. Keyed by
# the registry itself, weakly: an id() would be reused by a later registry, which would then be served a stale build.
_CACHE: weakref.WeakKeyDictionary[Registry, dict[int, asyncio.Future[_Served]]] = weakref.WeakKeyDictionary()


async def served(reg: Registry) -> _Served:
    """The document of the registry's generation, built once in a worker thread: requests that come while it is
    built wait for that build (the event loop goes on serving the others)."""
    runs = _CACHE.setdefault(reg, {})
    for old in [g for g in runs if g != reg.generation]:
        del runs[old]  # a build still running for it ends for those waiting on it, and is then dropped
    # what the thread reads is copied now, on the loop: the registry may change while the thread builds
    return await _once(runs, reg.generation, lambda: asyncio.to_thread(
        _build, reg.generation, reg.all(), copy.deepcopy(reg.crd_openapi)))


async def respond(request: web.Request, reg: Registry) -> web.Response:
    offered = [("json", "application/json"), (PROTOBUF_DEPRECATED, "application/" + PROTOBUF),
               (PROTOBUF, "application/" + PROTOBUF)]
    for clause in media_ranges(request.headers.get("Accept") or "*/*"):
        for offer, content_type in offered:
            if not clause.matches("application", offer):
                continue
            doc = await served(reg)
            headers = {"Vary": "Accept", "Etag": f'"{doc.etag}"', "Last-Modified": doc.last_modified}
            if request.headers.get("If-None-Match") in (f'"{doc.etag}"', "*"):
                return web.Response(status=304, headers=headers)
            headers["Content-Type"] = content_type
            gzipped = "gzip" in request.headers.get("Accept-Encoding", "")  # kube-openapi's handler is gzip-wrapped
            if gzipped:
                headers["Content-Encoding"] = "gzip"
            return web.Response(body=await doc.body(offer, gzipped), headers=headers)
    return web.Response(status=406, headers={"Vary": "Accept"})
