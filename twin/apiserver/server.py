"""The twin's Kubernetes API server: HTTP routing onto the store, as real clients expect it.

Serves legacy discovery and OpenAPI v3 (discovery/documents.py), aggregated discovery (discovery/aggregated.py), OpenAPI
v2 (openapi/v2.py), CRUD on every registered resource, list with label/field selectors and limit/continue, watch
(chunked JSON lines, replay from a resourceVersion, 410 Expired, bookmarks, sendInitialEvents), merge/JSON/strategic merge patch and
server-side apply, the status, scale, log, binding, eviction and finalize subresources, Table and
PartialObjectMetadata output, dry-run, fieldValidation (Strict/Warn/Ignore with Warning headers),
and metav1.Status errors. See docs/twin.md for what it serves and where it deviates.
"""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import time
import types
from datetime import datetime, timedelta, UTC
from typing import Any
from urllib.parse import unquote

import yaml
from aiohttp import web

from .auth import authorization, escalation, impersonation
from .discovery import documents as discovery, aggregated as discovery_aggregated
from ..apimachinery import errors
from . import protobuf
from ..registry import tables
from .openapi import v2 as openapi_v2
from ..streams import podlogs, portforward, remotecommand as streaming
from .auth.authentication import Authenticator, self_subject_review
from ..apimachinery.queryflags import flag
from .http.requestinfo import request_info
from ..registry.resources import ResourceType
from ..store import RETURNS_DELETED_OBJECT, WATCH_BACKLOG, Store, dumps

log = logging.getLogger("twin")
IDENTITY = web.RequestKey("identity", authorization.Identity)  # who sent the request, once authenticated

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}
ANONYMOUS = ("/version", "/healthz", "/readyz", "/livez")
# Seconds between watch BOOKMARK events (real servers send one about every minute).
BOOKMARK_EVERY = float(os.environ.get("TWIN_BOOKMARK_SECONDS", "5"))
WATCH_DEFAULT_TIMEOUT = 1800.0
WATCH_BATCH = 512
# A watch stream that wrote less than `watch_coalesce` wall seconds ago waits out the rest of it before its next
# write, and sends what gathered meanwhile in one write: a burst of events costs the twin one TLS record and one
# send per window instead of one per loop turn, and a quiet stream still sends its first event at once. The window
# is WATCH_COALESCE cluster seconds (the twin's time scale applied), at most WATCH_COALESCE_WALL wall seconds.
WATCH_COALESCE = 0.1
WATCH_COALESCE_WALL = 0.005
_STOP = "__STOP__"
_TICK = "__TICK__"
TICK = 1.0
NOT_FOUND = "the server could not find the requested resource"
# pods' streaming subresources, each served by the pod's kubelet (handler(request, kubelet, namespace, name))
_STREAMING = {"exec": streaming.exec_stream, "attach": streaming.attach_stream, "portforward": portforward.port_forward}
_TOKEN_REQUEST = ResourceType("authentication.k8s.io", "v1", "tokenrequests", "TokenRequest", True)


def _json(data: Any, status: int = 200, headers: dict | None = None) -> web.Response:
    body = data if isinstance(data, (bytes, bytearray)) else dumps(data)
    return web.Response(body=body, status=status, content_type="application/json", headers=headers)


def _status_response(err: errors.ApiError) -> web.Response:
    return _json(err.status(), err.code, err.headers or None)


def _success(details: dict | None = None, code: int | None = None) -> dict:
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        out["details"] = details
    if code:
        out["code"] = code
    return out


def _wants(request: web.Request, what: str) -> str | None:
    """The meta.k8s.io version of `what` (Table, PartialObjectMetadata[List]) the Accept header asks for."""
    accept = request.headers.get("Accept", "")
    if f"as={what}" not in accept:
        return None
    for part in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("as") == what and params.get("g", "meta.k8s.io") == "meta.k8s.io":
            return params.get("v", "v1")
    return None


def _client_certificate(request: web.Request) -> bytes | None:
    """The DER client certificate the TLS handshake received (any: the x509 authenticator verifies it)."""
    transport = request.transport
    tls = transport.get_extra_info("ssl_object") if transport is not None else None
    return tls.getpeercert(binary_form=True) if tls is not None else None


class ApiServer:
    def __init__(self, store: Store, token: str, faults: Any = None, extra_routes: tuple = (), super_token: str = "",
                 time_scale: float = 1.0, client_ca: Any = None):
        self.store = store
        self.watch_coalesce = min(WATCH_COALESCE_WALL, WATCH_COALESCE * time_scale)
        self.token = token
        self.faults = faults
        self.authn = Authenticator(store, token, super_token, client_ca)  # client_ca: --client-ca-file
        self.authz = authorization.Authorizer(store)
        escalation.install(store, self.authz)
        self.app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        for method, path, handler in extra_routes:
            self.app.router.add_route(method, path, handler)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.app.on_shutdown.append(self._end_watches)
        self.requests = 0
        self.watches = 0
        self._streams: set = set()
        self._ticker: asyncio.Future | None = None

    async def _end_watches(self, _app: web.Application) -> None:
        """On shutdown, end every watch stream at once (the server waits for open handlers)."""
        for w in list(self._streams):
            w.queue.put_nowait((_STOP, b""))

    # plumbing -------------------------------------------------------------------------------
    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        self.requests += 1
        self.store.request_count += 1
        try:
            if request.path not in ANONYMOUS and not request.path.startswith("/_twin/"):
                request[IDENTITY] = self._authorize(request)
                if self.faults is not None:
                    injected = self.faults.api_error(request.method, request.path)
                    if injected:
                        raise injected
            return await handler(request)
        except errors.ApiError as e:
            return _status_response(e)
        except (json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as e:
            return _status_response(errors.bad_request(f"the body of the request could not be decoded: {e}"))
        except web.HTTPException:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug in the twin: answer like the real server does, and log it
            log.exception("internal error serving %s %s", request.method, request.path)
            return _status_response(errors.internal(f"{type(e).__name__}: {e}"))

    def _authorize(self, request: web.Request) -> authorization.Identity:
        """Authentication, impersonation and RBAC, in kube-apiserver's filter order: 401, then 403."""
        who = self.authn.authenticate(request.headers.get("Authorization", ""), _client_certificate(request))
        if impersonation.requested(request.headers):
            who = impersonation.impersonate(self.authz, who, request.headers, request.path_qs)
        attrs, resource_request = request_info(request.method, request.path, request.query)
        self.authz.check(who, attrs, resource_request)
        # WebSocket upgrades are GETs; kube-apiserver 1.32 (AuthorizePodWebsocketUpgradeCreatePermission) also asks for create
        if request.method == "GET" and attrs.get("subresource") in _STREAMING and attrs["resource"] == "pods":
            self.authz.check(who, {**attrs, "verb": "create"})
        # the only place it is set: aiohttp serves each request in a task of its own (a copy of the connection
        # task's context), so it starts unset on every request, keep-alive or not, and stays so on the paths
        # that skip this method (anonymous, /_twin/) and on a 401 or 403
        escalation.REQUEST.set((who, attrs))
        return who

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        if not raw:
            return {}
        if request.content_type == "application/vnd.kubernetes.protobuf":
            try:
                return protobuf.decode(raw)
            except (protobuf.ProtobufError, IndexError, UnicodeDecodeError, KeyError) as e:
                raise errors.bad_request(f"the body of the request could not be decoded as protobuf: {e}") from e
        if "yaml" in (request.content_type or ""):
            return yaml.safe_load(raw)
        return json.loads(raw)

    def _warned(self, resp: web.Response, q) -> web.Response:
        if q.get("fieldValidation") != "Ignore":
            for w in self.store.last_warnings:
                resp.headers.add("Warning", '299 - ' + json.dumps(w))
        self.store.last_warnings = []
        return resp

    # routing --------------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        segs = [unquote(s) for s in path.strip("/").split("/") if s]
        reg = self.store.registry
        if path == "/version":
            return _json(discovery.VERSION_INFO)
        if path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        if path in ("/api", "/apis"):
            aggregated = discovery_aggregated.respond(request, reg, core=path == "/api")
            if aggregated is not None:
                return aggregated
            return _json(discovery.api_versions() if path == "/api" else discovery.api_groups(reg))
        if path == "/openapi/v3":
            return _json(discovery.openapi_root(reg))
        if segs[:2] == ["openapi", "v3"]:
            rest = segs[2:]
            doc = None
            if rest[:1] == ["api"] and len(rest) == 2:
                doc = discovery.openapi_gv(reg, "", rest[1])
            elif rest[:1] == ["apis"] and len(rest) == 3:
                doc = discovery.openapi_gv(reg, rest[1], rest[2])
            if doc is None:
                raise errors.ApiError(404, "NotFound", "openapi document not found")
            return _json(doc)
        if path == "/openapi/v2":
            return await openapi_v2.respond(request, reg)
        if segs and segs[0] == "openapi":
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        if segs[:1] == ["api"]:
            if len(segs) == 1:
                raise errors.ApiError(404, "NotFound", NOT_FOUND)
            if len(segs) == 2:
                doc = discovery.resource_list(reg, "", segs[1])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", NOT_FOUND)
                return _json(doc)
            group, version, rest = "", segs[1], segs[2:]
        elif segs[:1] == ["apis"]:
            if len(segs) == 2:
                doc = discovery.api_group(reg, segs[1])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", NOT_FOUND)
                return _json(doc)
            if len(segs) == 3:
                doc = discovery.resource_list(reg, segs[1], segs[2])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", NOT_FOUND)
                return _json(doc)
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        watch_prefix = False
        if rest[:1] == ["watch"]:
            watch_prefix, rest = True, rest[1:]
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            ns, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        rtype = self.store.rt(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if rtype.namespaced and ns is None and name is not None:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        if not rtype.namespaced and ns is not None:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        if sub and sub not in rtype.subresources:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        if not rtype.stored:
            return await self._review(request, rtype, ns, name)
        q = request.query
        _check_query(q)
        if name is None:
            if request.method == "GET":
                if watch_prefix or flag(q, "watch"):
                    return await self._watch(request, rtype, ns)
                return self._list(request, rtype, ns)
            if request.method == "POST":
                _check_manager(q, _CREATE_OPTIONS)
                body = await self._body(request)
                raw = self.store.create(rtype, ns, body, dry_run=_dry(q), strict=_strict(q), raw=True,
                                        field_manager=_manager(request))
                return self._warned(self._object(request, rtype, raw, 201), q)
            if request.method == "DELETE":
                opts = await self._delete_options(request)
                deleted = self.store.delete_collection(rtype, ns, q.get("labelSelector"), q.get("fieldSelector"), **opts)
                body = {"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version,
                        "metadata": {"resourceVersion": str(self.store.rv)}, "items": deleted}
                return _json(body)
            raise errors.method_not_allowed(f"{request.method} is not supported on a collection")
        if watch_prefix:
            return await self._watch(request, rtype, ns, name)
        if sub == "scale":
            return await self._scale(request, rtype, ns, name)
        if sub == "log":
            return await self._log(request, ns, name)
        if sub in _STREAMING:
            if request.method not in ("GET", "POST"):
                raise errors.method_not_allowed(f"{request.method} is not supported on pods/{sub}")
            return await _STREAMING[sub](request, self.store.kubelet, ns or "", name)
        if sub == "binding":
            return await self._binding(request, rtype, ns, name)
        if sub == "token":
            return await self._token(request, ns or "", name)
        if sub == "eviction":
            return await self._eviction(request, rtype, ns, name)
        if request.method == "GET":
            if flag(q, "watch"):
                return await self._watch(request, rtype, ns, name)
            return self._object(request, rtype, self.store.get_raw(rtype, ns, name))
        if request.method == "PUT":
            _check_manager(q, _UPDATE_OPTIONS)
            body = await self._body(request)
            if sub == "finalize":
                return self._finalize_namespace(rtype, name, body)
            raw = self.store.update(rtype, ns, name, body, subresource=sub, dry_run=_dry(q), strict=_strict(q), raw=True,
                                    field_manager=_manager(request))
            return self._warned(self._object(request, rtype, raw), q)
        if request.method == "PATCH":
            ptype = PATCH_TYPES.get((request.content_type or "").split(";")[0].strip())
            if ptype is None:
                raise errors.unsupported_media(f"the body of the request was in an unknown format - accepted media types "
                                               f"include: {', '.join(PATCH_TYPES)}")
            body = await self._body(request)
            manager = q.get("fieldManager")
            _check_manager(q, _PATCH_OPTIONS)
            if ptype == "apply" and not manager:
                raise errors.invalid(_PATCH_OPTIONS, "", [{"reason": "FieldValueRequired", "field": "fieldManager",
                                                           "message": "Required value: is required for apply patch"}])
            if ptype != "apply" and "force" in q:
                raise errors.invalid(_PATCH_OPTIONS, "", [{"reason": "FieldValueForbidden", "field": "force",
                                                           "message": "Forbidden: may not be specified for non-apply "
                                                                      "patch"}])
            if ptype == "apply" and not self.store.exists(rtype, ns, name):
                if sub:
                    raise errors.not_found(rtype, name)
                raw = self.store.apply_create(rtype, ns, name, body, field_manager=manager, dry_run=_dry(q),
                                              strict=_strict(q), raw=True)
                return self._warned(self._object(request, rtype, raw, 201), q)
            raw = self.store.patch(rtype, ns, name, ptype, body, subresource=sub, dry_run=_dry(q), strict=_strict(q),
                                   field_manager=manager or _manager(request), force=flag(q, "force"), raw=True)
            return self._warned(self._object(request, rtype, raw), q)
        if request.method == "DELETE":
            return await self._delete(request, rtype, ns, name)
        raise errors.method_not_allowed(f"{request.method} is not supported")

    def _object(self, request: web.Request, rtype: ResourceType, raw: bytes, status: int = 200) -> web.Response:
        """One object, as JSON or as the Table / PartialObjectMetadata the client asked for."""
        tv = _wants(request, "Table")
        if tv:
            obj = json.loads(raw)
            t = tables.table(rtype, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                             request.query.get("includeObject", "Metadata"))
            t["apiVersion"] = f"meta.k8s.io/{tv}"
            return _json(t, status)
        pv = _wants(request, "PartialObjectMetadata")
        if pv:
            obj = json.loads(raw)
            return _json({"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{pv}",
                          "metadata": obj["metadata"]}, status)
        return _json(raw, status)

    # delete ---------------------------------------------------------------------------------
    async def _delete_options(self, request: web.Request) -> dict:
        q = request.query
        body = await self._body(request) if request.can_read_body else {}
        body = body if isinstance(body, dict) else {}
        grace = body.get("gracePeriodSeconds", q.get("gracePeriodSeconds"))
        policy = body.get("propagationPolicy") or q.get("propagationPolicy")
        orphan = body.get("orphanDependents", q.get("orphanDependents"))
        if policy is None and orphan is not None:
            policy = "Orphan" if str(orphan).lower() == "true" else "Background"
        try:
            grace_i = int(grace) if grace is not None else None
        except (TypeError, ValueError) as e:
            raise errors.bad_request(f"invalid gracePeriodSeconds {grace!r}") from e
        dry = body.get("dryRun") or q.getall("dryRun", [])
        if dry and dry != ["All"]:
            raise errors.bad_request(f"Invalid dry run value: {dry}")
        return {"propagation": policy, "grace_seconds": grace_i, "preconditions": body.get("preconditions"),
                "dry_run": bool(dry)}

    async def _delete(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str) -> web.Response:
        opts = await self._delete_options(request)
        uid = self.store.get(rtype, ns, name)["metadata"]["uid"]
        raw = self.store.delete(rtype, ns, name, raw=True, **opts)
        obj = json.loads(raw)
        md = obj["metadata"]
        gone = self.store.deleted_immediately(rtype, ns, name, uid) if not opts["dry_run"] else \
            not (md.get("finalizers") or (rtype.kind == "Pod" and self.store.graceful_pods and obj["spec"].get("nodeName")))
        if gone and (rtype.group, rtype.kind) not in RETURNS_DELETED_OBJECT:
            return _json(_success(errors._details(name, rtype.group, rtype.plural, uid=uid)))
        return _json(raw)

    def _finalize_namespace(self, rtype: ResourceType, name: str, body: Any) -> web.Response:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        obj = self.store.get(rtype, None, name)
        obj.setdefault("spec", {})["finalizers"] = (body.get("spec") or {}).get("finalizers") or []
        raw = self.store.update(rtype, None, name, obj, _internal=True, raw=True)
        if obj["metadata"].get("deletionTimestamp") and not obj["spec"]["finalizers"]:
            raw = self.store.delete(rtype, None, name, raw=True)
        return _json(raw)

    # list / table ---------------------------------------------------------------------------
    def _list(self, request: web.Request, rtype: ResourceType, ns: str | None) -> web.Response:
        q = request.query
        try:
            limit = int(q.get("limit") or 0)
        except ValueError as e:
            raise errors.bad_request(f"invalid limit {q.get('limit')!r}") from e
        rv = str(self.store.rv)
        after = None
        if q.get("continue"):
            try:
                tok = json.loads(base64.urlsafe_b64decode(q["continue"].encode() + b"=" * (-len(q["continue"]) % 4)))
                after, rv = tuple(tok["start"]), str(tok["rv"])
                if len(after) != 2:
                    raise ValueError("bad start")
            except (ValueError, KeyError, TypeError) as e:
                raise errors.bad_request("continue key is not valid: " + str(e)) from e
        ls, fs = q.get("labelSelector"), q.get("fieldSelector")
        entries = self.store.list_entries(rtype, ns, ls, fs, after=after, limit=limit if limit > 0 else 0)
        meta: dict[str, Any] = {"resourceVersion": rv}
        if limit > 0 and len(entries) > limit:
            entries = entries[:limit]
            md = entries[-1].obj["metadata"]
            last = [md.get("namespace", ""), md["name"]]
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last},
                                                                   separators=(",", ":")).encode()).decode().rstrip("=")
            if not ls and not fs:
                meta["remainingItemCount"] = len(self.store.list_entries(rtype, ns, after=tuple(last)))
        tv = _wants(request, "Table")
        if tv:
            t = tables.table(rtype, [e.obj for e in entries], meta, q.get("includeObject", "Metadata"))
            t["apiVersion"] = f"meta.k8s.io/{tv}"
            return _json(t)
        pv = _wants(request, "PartialObjectMetadataList")
        if pv:
            partial = [{"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{pv}", "metadata": e.obj["metadata"]}
                       for e in entries]
            return _json({"kind": "PartialObjectMetadataList", "apiVersion": f"meta.k8s.io/{pv}", "metadata": meta,
                          "items": partial})
        if rtype.crd:  # custom resources are unstructured: their items keep kind and apiVersion
            items = b",".join(self.store._raw_for(rtype, e) for e in entries)
        else:  # typed lists carry no kind/apiVersion on their items, as the real server encodes them
            prefix = b'{"kind":"' + rtype.kind.encode() + b'","apiVersion":"' + rtype.api_version.encode() + b'",'
            n = len(prefix)
            items = b",".join(b"{" + e.raw[n:] if e.raw.startswith(prefix) else _untyped(e.raw) for e in entries)
        head = dumps({"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version, "metadata": meta})
        return _json(head[:-1] + b',"items":[' + items + b"]}")

    # watch ----------------------------------------------------------------------------------
    async def _watch(self, request: web.Request, rtype: ResourceType, ns: str | None,
                     name: str | None = None) -> web.StreamResponse:
        q = request.query
        fs = q.get("fieldSelector")
        if name:
            fs = f"metadata.name={name}" + (f",{fs}" if fs else "")
        initial = flag(q, "sendInitialEvents")
        if initial and q.get("resourceVersionMatch") != "NotOlderThan":
            raise errors.invalid(rtype, "", [{"reason": "FieldValueForbidden", "field": "resourceVersionMatch",
                                              "message": "Forbidden: sendInitialEvents requires setting "
                                                         "resourceVersionMatch to NotOlderThan"}])
        try:
            timeout = float(q.get("timeoutSeconds") or WATCH_DEFAULT_TIMEOUT)
        except ValueError as e:
            raise errors.bad_request(f"invalid timeoutSeconds {q.get('timeoutSeconds')!r}") from e
        w = self.store.watch(rtype, ns, q.get("resourceVersion"), q.get("labelSelector"), fs, send_initial_events=initial)
        w.backlog = WATCH_BACKLOG
        bookmarks = flag(q, "allowWatchBookmarks")
        table_v = _wants(request, "Table")
        include = q.get("includeObject", "Metadata")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        self.watches += 1
        self._streams.add(w)
        self._start_ticker()
        loop = asyncio.get_running_loop()
        # the stream ends at its deadline; the ticker wakes idle streams for bookmarks and closed clients,
        # so waiting for events needs no timer of its own
        ender = loop.call_later(timeout, w.queue.put_nowait, (_STOP, b""))
        headers_sent = False
        try:
            await resp.prepare(request)
            next_bookmark = time.monotonic() + BOOKMARK_EVERY
            queue = w.queue
            last_write = 0.0
            while True:
                item = await queue.get()
                wait = last_write + self.watch_coalesce - time.monotonic()
                if wait > 0 and item[0] != _STOP:
                    await asyncio.sleep(wait)
                batch = [item]
                while len(batch) < WATCH_BATCH and not queue.empty():
                    batch.append(queue.get_nowait())
                chunks: list[bytes] = []
                stop = False
                for etype, raw in batch:
                    if etype == _TICK:
                        if w.overflowed or request.transport is None or request.transport.is_closing():
                            stop = True
                            break
                        now = time.monotonic()
                        if bookmarks and now >= next_bookmark and queue.empty() and not chunks:
                            bm = {"kind": rtype.kind, "apiVersion": rtype.api_version,
                                  "metadata": {"resourceVersion": str(self.store.rv)}}
                            chunks.append(b'{"type":"BOOKMARK","object":' + dumps(bm) + b"}\n")
                            next_bookmark = now + BOOKMARK_EVERY
                        continue
                    if etype == _STOP:
                        stop = True
                        break
                    if table_v and etype not in ("ERROR", "BOOKMARK"):
                        obj = json.loads(raw)
                        t = tables.table(rtype, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                                         include, headers=not headers_sent)
                        t["apiVersion"] = f"meta.k8s.io/{table_v}"
                        headers_sent = True
                        raw = dumps(t)
                    chunks.append(b'{"type":"' + etype.encode() + b'","object":' + raw + b"}\n")
                    if etype == "ERROR":
                        stop = True
                        break
                if chunks:
                    await resp.write(b"".join(chunks))
                    last_write = time.monotonic()
                if stop or w.overflowed:
                    break
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            ender.cancel()
            self.store.unwatch(w)
            self._streams.discard(w)
            self.watches -= 1
        try:
            await resp.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    def _start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        """Wake idle watch streams every TICK seconds (bookmarks, clients that went away)."""
        while self._streams:
            await asyncio.sleep(min(TICK, BOOKMARK_EVERY))
            for w in list(self._streams):
                if w.queue.empty():
                    w.queue.put_nowait((_TICK, b""))

    # subresources ---------------------------------------------------------------------------
    def _scale_paths(self, rtype: ResourceType) -> tuple[list[str], list[str], list[str] | None]:
        if rtype.crd and rtype.scale:
            s = rtype.scale
            sel = s.get("labelSelectorPath")
            return (s.get("specReplicasPath", ".spec.replicas").strip(".").split("."),
                    s.get("statusReplicasPath", ".status.replicas").strip(".").split("."),
                    sel.strip(".").split(".") if sel else None)
        return ["spec", "replicas"], ["status", "replicas"], None

    def _scale_obj(self, rtype: ResourceType, obj: dict) -> dict:
        md = obj["metadata"]
        spec_p, status_p, sel_p = self._scale_paths(rtype)
        if sel_p is not None:
            selector = _dig(obj, sel_p) or ""
        else:
            sel = (obj.get("spec") or {}).get("selector")
            # a ReplicationController's selector is a plain label map
            selector = tables._selector({"matchLabels": sel} if rtype.kind == "ReplicationController" else sel)
            selector = "" if selector == "<none>" else selector
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": md["name"], "namespace": md.get("namespace"), "uid": md["uid"],
                             "resourceVersion": md["resourceVersion"], "creationTimestamp": md["creationTimestamp"]},
                "spec": {"replicas": _dig(obj, spec_p) or 0},
                "status": {"replicas": _dig(obj, status_p) or 0, "selector": selector}}

    async def _scale(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str) -> web.Response:
        from ..apimachinery.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

        obj = self.store.get(rtype, ns, name)
        scale = self._scale_obj(rtype, obj)
        if request.method == "GET":
            return _json(scale)
        body = await self._body(request)
        q = request.query
        if request.method == "PUT":
            new = body
            if not isinstance(new, dict):
                raise errors.bad_request("the body of the request was not a JSON object")
            want_rv = (new.get("metadata") or {}).get("resourceVersion")
        elif request.method == "PATCH":
            ptype = PATCH_TYPES.get((request.content_type or "").split(";")[0].strip())
            if ptype is None:
                raise errors.unsupported_media("the body of the request was in an unknown format")
            try:
                new = {"json": json_patch, "merge": merge_patch, "strategic": strategic_merge_patch,
                       "apply": merge_patch}[ptype](scale, body)
            except PatchError as e:
                raise errors.ApiError(422, "Invalid", str(e)) from e
            want_rv = (body.get("metadata") or {}).get("resourceVersion") if isinstance(body, dict) else None
        else:
            raise errors.method_not_allowed("scale supports get, update and patch")
        if want_rv and want_rv != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(rtype, name)
        replicas = (new.get("spec") or {}).get("replicas")
        if replicas is None:
            replicas = 0
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise errors.ApiError(422, "Invalid", f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                                                  f'{json.dumps(replicas)}: must be greater than or equal to 0',
                                  {"name": name, "group": "autoscaling", "kind": "Scale", "causes": [
                                      {"reason": "FieldValueInvalid", "field": "spec.replicas",
                                       "message": f"Invalid value: {json.dumps(replicas)}: must be greater than or equal to 0"}]})
        spec_p, _, _ = self._scale_paths(rtype)
        _put(obj, spec_p, replicas)
        obj["metadata"].pop("resourceVersion", None)
        updated = self.store.update(rtype, ns, name, obj, dry_run=_dry(q), subresource="scale",
                                    field_manager=_manager(request))
        return _json(self._scale_obj(rtype, updated))

    async def _binding(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str) -> web.Response:
        if request.method != "POST":
            raise errors.method_not_allowed("binding supports create only")
        body = await self._body(request)
        target = (body.get("target") or {}) if isinstance(body, dict) else {}
        if not target.get("name"):
            raise errors.invalid(rtype, name, [{"reason": "FieldValueRequired", "field": "target.name",
                                                "message": "Required value"}])
        pod = self.store.get(rtype, ns, name)
        if pod["metadata"].get("deletionTimestamp"):
            raise errors.conflict(rtype, name, f"pod {name} is being deleted, cannot be assigned to a host")
        if pod["spec"].get("nodeName"):
            raise errors.conflict(rtype, name, f"pod {name} is already assigned to node \"{pod['spec']['nodeName']}\"")
        pod["spec"]["nodeName"] = target["name"]
        ann = ((body.get("metadata") or {}).get("annotations") or {})
        if ann:
            pod["metadata"].setdefault("annotations", {}).update(ann)
        self.store.update(rtype, ns, name, pod, _internal=True)
        return _json(_success(code=201), 201)

    async def _eviction(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str) -> web.Response:
        if request.method != "POST":
            raise errors.method_not_allowed("eviction supports create only")
        body = await self._body(request)
        opts = (body.get("deleteOptions") or {}) if isinstance(body, dict) else {}
        grace = opts.get("gracePeriodSeconds")
        self.store.delete(rtype, ns, name, grace_seconds=int(grace) if grace is not None else None,
                          preconditions=opts.get("preconditions"), dry_run=bool(opts.get("dryRun")))
        return _json(_success(code=201), 201)

    async def _review(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str | None) -> web.Response:
        """The authorization.k8s.io and authentication.k8s.io reviews: create-only, answered and never stored
        (twin/apiserver/auth/authorization.py, twin/apiserver/auth/authentication.py)."""
        if name is not None:
            raise errors.ApiError(404, "NotFound", NOT_FOUND)
        if request.method != "POST":
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        body = await self._body(request)
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request was not a {rtype.kind} object")
        who = request[IDENTITY]
        if rtype.plural == "selfsubjectaccessreviews":
            return _json(authorization.access_review(self.authz, who, rtype, body), 201)
        if rtype.plural == "subjectaccessreviews":
            return _json(authorization.subject_access_review(self.authz, rtype, body), 201)
        if rtype.plural == "localsubjectaccessreviews":
            return _json(authorization.local_subject_access_review(self.authz, rtype, ns or "", body), 201)
        if rtype.plural == "selfsubjectreviews":
            return _json(self_subject_review(who), 201)
        if rtype.plural == "tokenreviews":
            return _json(self.authn.token_review(rtype, ns or "", body), 201)
        return _json(authorization.rules_review(self.store, who, body), 201)

    async def _token(self, request: web.Request, ns: str, name: str) -> web.Response:
        """serviceaccounts/<name>/token (`kubectl create token`): create-only, answered and never stored."""
        if request.method != "POST":
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        body = await self._body(request)
        return _json(self.authn.token_request(_TOKEN_REQUEST, ns, name, body), 201)

    async def _log(self, request: web.Request, ns: str | None, name: str) -> web.StreamResponse:
        pod = self.store.get(self.store.rt("", "v1", "pods"), ns, name)
        names = [c["name"] for c in pod["spec"].get("containers", [])]
        q = request.query
        container = q.get("container")
        if not container:
            if len(names) > 1:
                raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                         f"[{' '.join(names)}]")
            container = names[0] if names else ""
        elif container not in names + [c["name"] for c in pod["spec"].get("initContainers", [])]:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        clog = self.store.pod_logs.get((ns or "", name, container))
        if flag(q, "previous"):
            clog = _previous_log(pod, name, container, clog)
        elif clog is None:
            statuses = (pod.get("status") or {}).get("containerStatuses", []) + \
                (pod.get("status") or {}).get("initContainerStatuses", [])
            waiting = next((s["state"]["waiting"] for s in statuses
                            if s.get("name") == container and "waiting" in (s.get("state") or {})), None)
            if waiting is not None:
                reason = waiting.get("reason", "")
                why = {"ErrImagePull": ": trying and failing to pull image",
                       "ImagePullBackOff": ": trying and failing to pull image"}.get(reason, "")
                raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start{why}')
            clog = podlogs.ContainerLog()
            clog.ended = True
        try:
            tail = int(q["tailLines"]) if q.get("tailLines") else None
            since = None
            if q.get("sinceSeconds"):
                since = datetime.now(UTC) - timedelta(seconds=int(q["sinceSeconds"]))
            elif q.get("sinceTime"):
                since = datetime.fromisoformat(q["sinceTime"].replace("Z", "+00:00"))
            limit = int(q["limitBytes"]) if q.get("limitBytes") else None
        except ValueError as e:
            raise errors.bad_request(f"invalid log options: {e}") from e
        stamps = flag(q, "timestamps")
        lines = clog.select(since, tail)
        text = clog.render(lines, stamps)
        if not flag(q, "follow"):
            return web.Response(text=text[:limit] if limit else text, content_type="text/plain")
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        sent = len(text.encode())
        seq = clog.next_seq
        try:
            await resp.write(text.encode())
            while not clog.ended and (limit is None or sent < limit):
                await clog.changed(TICK)
                if request.transport is None or request.transport.is_closing():
                    break
                new = clog.select(start_seq=seq)
                seq = clog.next_seq
                if new:
                    chunk = clog.render(new, stamps).encode()
                    sent += len(chunk)
                    await resp.write(chunk)
            await resp.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        return resp


def _previous_log(pod: dict, name: str, container: str, clog: podlogs.ContainerLog | None) -> podlogs.ContainerLog:
    """The log of the container's last terminated instance, found as the kubelet does: by the containerID in
    lastState.terminated (during a back-off that is still the current log, after the restart its previous)."""
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses", []) + status.get("initContainerStatuses", [])
    st: dict = next((s for s in statuses if s.get("name") == container), {})
    last = ((st.get("lastState") or {}).get("terminated") or {}).get("containerID")
    if not last:
        raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    for instance in (clog, clog.previous if clog is not None else None):
        if instance is not None and instance.container_id == last:
            return instance
    lost = podlogs.ContainerLog(last)  # rotated away (the kubelet's log files are gone too): nothing to show
    lost.ended = True
    return lost


def _untyped(raw: bytes) -> bytes:
    obj = json.loads(raw)
    obj.pop("kind", None)
    obj.pop("apiVersion", None)
    return dumps(obj)


def _dig(obj: Any, path: list[str]) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _put(obj: dict, path: list[str], value: Any) -> None:
    for p in path[:-1]:
        obj = obj.setdefault(p, {})
    obj[path[-1]] = value


def _check_query(q) -> None:
    dry = q.getall("dryRun", [])
    if dry and any(d != "All" for d in dry):
        raise errors.bad_request(f"Invalid dry run value: {dry}")
    fv = q.get("fieldValidation")
    if fv and fv not in ("Ignore", "Warn", "Strict"):
        raise errors.bad_request(f"fieldValidation: Unsupported value: \"{fv}\": supported values: \"Ignore\", "
                                 f"\"Warn\", \"Strict\"")


# the options a write is validated as (ValidateCreateOptions/UpdateOptions/PatchOptions: 422 <kind>.meta.k8s.io)
_CREATE_OPTIONS, _UPDATE_OPTIONS, _PATCH_OPTIONS = (types.SimpleNamespace(kind=k, group="meta.k8s.io") for k in (
    "CreateOptions", "UpdateOptions", "PatchOptions"))


def _check_manager(q, options: Any) -> None:
    """ValidateFieldManager: at most 128 bytes, printable characters only."""
    fm = q.get("fieldManager") or ""
    causes = []
    if len(fm.encode()) > 128:
        causes.append({"reason": "FieldValueTooLong", "field": "fieldManager",
                       "message": "Too long: may not be more than 128 bytes"})
    causes += [{"reason": "FieldValueInvalid", "field": "fieldManager",
                "message": f"Invalid value: {json.dumps(fm)}: invalid character U+{ord(ch):04X} (at position {i})"}
               for i, ch in enumerate(fm) if not ch.isprintable()]
    if causes:
        raise errors.invalid(options, "", causes)


def _manager(request: web.Request) -> str:
    """The field manager of a write: fieldManager, else the User-Agent up to its first "/" without unprintable
    characters, at most 128 bytes (managerOrUserAgent in the real server's handlers)."""
    fm = request.query.get("fieldManager")
    if fm:
        return fm
    out = ""
    for ch in request.headers.get("User-Agent", "").split("/")[0]:
        if not ch.isprintable():
            continue
        if len((out + ch).encode()) > 128:
            break
        out += ch
    return out


def _dry(q) -> bool:
    return "All" in q.getall("dryRun", [])


def _strict(q) -> bool:
    return q.get("fieldValidation") == "Strict"
