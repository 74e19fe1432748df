"""The twin's Kubernetes API server: HTTP routing onto the store, as real clients expect it."""
from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any
from urllib.parse import unquote

import yaml
from aiohttp import web

from . import discovery, errors, tables
from .resources import ResourceType
from .store import Store, dumps

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}
ANONYMOUS = ("/version", "/healthz", "/readyz", "/livez")
BOOKMARK_EVERY = 5.0


def _json(data: Any, status: int = 200) -> web.Response:
    body = data if isinstance(data, (bytes, bytearray)) else dumps(data)
    return web.Response(body=body, status=status, content_type="application/json")


def _status_response(err: errors.ApiError) -> web.Response:
    return _json(err.status(), err.code)


class ApiServer:
    def __init__(self, store: Store, token: str, faults: Any = None, extra_routes: tuple = ()):
        self.store = store
        self.token = token
        self.faults = faults
        self.app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        for method, path, handler in extra_routes:
            self.app.router.add_route(method, path, handler)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self.requests = 0

    # plumbing -------------------------------------------------------------------------------
    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        self.requests += 1
        self.store.request_count += 1
        try:
            if request.path not in ANONYMOUS and not request.path.startswith("/_twin/"):
                auth = request.headers.get("Authorization", "")
                if auth != f"Bearer {self.token}":
                    raise errors.unauthorized()
                if self.faults is not None:
                    injected = self.faults.api_error(request.method, request.path)
                    if injected:
                        raise injected
            return await handler(request)
        except errors.ApiError as e:
            return _status_response(e)
        except (json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as e:
            return _status_response(errors.bad_request(f"the body of the request could not be decoded: {e}"))

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        if not raw:
            return {}
        if "yaml" in (request.content_type or ""):
            return yaml.safe_load(raw)
        return json.loads(raw)

    # routing --------------------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        segs = [unquote(s) for s in path.strip("/").split("/") if s]
        reg = self.store.registry
        if path == "/version":
            return _json(discovery.VERSION_INFO)
        if path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        if path == "/api":
            return _json(discovery.api_versions())
        if path == "/apis":
            return _json(discovery.api_groups(reg))
        if path == "/openapi/v3":
            return _json(discovery.openapi_root(reg))
        if segs[:2] == ["openapi", "v3"]:
            rest = segs[2:]
            if rest[:1] == ["api"] and len(rest) == 2:
                return _json(discovery.openapi_gv(reg, "", rest[1]))
            if rest[:1] == ["apis"] and len(rest) == 3:
                return _json(discovery.openapi_gv(reg, rest[1], rest[2]))
            raise errors.ApiError(404, "NotFound", "openapi document not found")
        if segs and segs[0] == "openapi":
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        if segs[:1] == ["api"]:
            if len(segs) == 2:
                doc = discovery.resource_list(reg, "", segs[1])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
                return _json(doc)
            group, version, rest = "", segs[1] if len(segs) > 1 else "", segs[2:]
        elif segs[:1] == ["apis"]:
            if len(segs) == 2:
                doc = discovery.api_group(reg, segs[1])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
                return _json(doc)
            if len(segs) == 3:
                doc = discovery.resource_list(reg, segs[1], segs[2])
                if doc is None:
                    raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
                return _json(doc)
            if len(segs) < 3:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        watch_prefix = False
        if rest[:1] == ["watch"]:
            watch_prefix, rest = True, rest[1:]
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            ns, rest = rest[1], rest[2:]
        if not rest:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        rtype = self.store.rt(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if rtype.namespaced and ns is None and name is not None:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub and sub not in rtype.subresources:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        q = request.query
        if name is None:
            if request.method == "GET":
                if watch_prefix or q.get("watch") in ("true", "1"):
                    return await self._watch(request, rtype, ns)
                return self._list(request, rtype, ns)
            if request.method == "POST":
                body = await self._body(request)
                obj = self.store.create(rtype, ns, body, dry_run=_dry(q), strict=_strict(q))
                return _json(obj, 201)
            if request.method == "DELETE":
                opts = await self._delete_options(request)
                self.store.delete_collection(rtype, ns, q.get("labelSelector"), q.get("fieldSelector"), **opts)
                return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
            raise errors.method_not_allowed(f"{request.method} is not supported on a collection")
        if watch_prefix:
            return await self._watch(request, rtype, ns, name)
        if sub == "scale":
            return await self._scale(request, rtype, ns, name)
        if sub == "log":
            return self._log(request, ns, name)
        if sub == "binding" and request.method == "POST":
            body = await self._body(request)
            pod = self.store.get(rtype, ns, name)
            if pod["spec"].get("nodeName"):
                raise errors.conflict(rtype, name, f"pod {name} is already assigned to node \"{pod['spec']['nodeName']}\"")
            pod["spec"]["nodeName"] = body.get("target", {}).get("name")
            self.store.update(rtype, ns, name, pod, _internal=True)
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201)
        if request.method == "GET":
            if q.get("watch") in ("true", "1"):
                return await self._watch(request, rtype, ns, name)
            return _json(self.store.get_raw(rtype, ns, name))
        if request.method == "PUT":
            body = await self._body(request)
            if sub == "finalize":
                obj = self.store.get(rtype, ns, name)
                obj["spec"] = body.get("spec", {})
                return _json(self.store.update(rtype, ns, name, obj, _internal=True))
            return _json(self.store.update(rtype, ns, name, body, subresource=sub, dry_run=_dry(q), strict=_strict(q)))
        if request.method == "PATCH":
            ptype = PATCH_TYPES.get((request.content_type or "").split(";")[0].strip())
            if ptype is None:
                raise errors.unsupported_media(f"the body of the request was in an unknown format - accepted media types "
                                               f"include: {', '.join(PATCH_TYPES)}")
            body = await self._body(request)
            if ptype == "apply" and not self.store.exists(rtype, ns, name):
                return _json(self.store.apply_create(rtype, ns, name, body, dry_run=_dry(q)), 201)
            return _json(self.store.patch(rtype, ns, name, ptype, body, subresource=sub, dry_run=_dry(q), strict=_strict(q)))
        if request.method == "DELETE":
            opts = await self._delete_options(request)
            return _json(self.store.delete(rtype, ns, name, **opts))
        raise errors.method_not_allowed(f"{request.method} is not supported")

    async def _delete_options(self, request: web.Request) -> dict:
        q = request.query
        body = await self._body(request) if request.can_read_body else {}
        body = body if isinstance(body, dict) else {}
        grace = body.get("gracePeriodSeconds", q.get("gracePeriodSeconds"))
        return {"propagation": body.get("propagationPolicy") or q.get("propagationPolicy"),
                "grace_seconds": int(grace) if grace is not None else None,
                "preconditions": body.get("preconditions"), "dry_run": _dry(q) or bool(body.get("dryRun"))}

    # list / table ---------------------------------------------------------------------------
    def _list(self, request: web.Request, rtype: ResourceType, ns: str | None) -> web.Response:
        q = request.query
        entries = self.store.list_entries(rtype, ns, q.get("labelSelector"), q.get("fieldSelector"))
        rv = str(self.store.rv)
        start = 0
        if q.get("continue"):
            try:
                tok = json.loads(base64.urlsafe_b64decode(q["continue"].encode()))
                start, rv = int(tok["start"]), tok["rv"]
            except (ValueError, KeyError, TypeError) as e:
                raise errors.bad_request("continue key is not valid") from e
        meta: dict[str, Any] = {"resourceVersion": rv}
        limit = int(q.get("limit") or 0)
        page = entries[start:start + limit] if limit else entries[start:]
        if limit and start + limit < len(entries):
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"start": start + limit, "rv": rv}).encode()).decode()
            meta["remainingItemCount"] = len(entries) - start - limit
        if "as=Table" in request.headers.get("Accept", ""):
            return _json(tables.table(rtype.kind, [e.obj for e in page], meta))
        items = b",".join(e.raw if not rtype.crd else dumps(dict(e.obj, apiVersion=rtype.api_version)) for e in page)
        head = dumps({"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version, "metadata": meta})
        return _json(head[:-1] + b',"items":[' + items + b"]}")

    # watch ----------------------------------------------------------------------------------
    async def _watch(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str | None = None) -> web.StreamResponse:
        q = request.query
        fs = q.get("fieldSelector")
        if name:
            fs = f"metadata.name={name}" + (f",{fs}" if fs else "")
        w = self.store.watch(rtype, ns, q.get("resourceVersion"), q.get("labelSelector"), fs)
        timeout = float(q.get("timeoutSeconds") or 1800)
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    etype, raw = await asyncio.wait_for(w.queue.get(), timeout=min(left, BOOKMARK_EVERY))
                except asyncio.TimeoutError:
                    if bookmarks and time.monotonic() < deadline:
                        bm = {"kind": rtype.kind, "apiVersion": rtype.api_version,
                              "metadata": {"resourceVersion": str(self.store.rv)}}
                        await resp.write(b'{"type":"BOOKMARK","object":' + dumps(bm) + b"}\n")
                    continue
                chunks = [b'{"type":"' + etype.encode() + b'","object":' + raw + b"}\n"]
                while not w.queue.empty() and len(chunks) < 256:
                    et, r = w.queue.get_nowait()
                    chunks.append(b'{"type":"' + et.encode() + b'","object":' + r + b"}\n")
                await resp.write(b"".join(chunks))
                if etype == "ERROR":
                    break
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unwatch(w)
        try:
            await resp.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    # subresources ---------------------------------------------------------------------------
    def _scale_obj(self, rtype: ResourceType, obj: dict) -> dict:
        md = obj["metadata"]
        sel = obj.get("spec", {}).get("selector", {}).get("matchLabels", {})
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": md["name"], "namespace": md.get("namespace"), "uid": md["uid"],
                             "resourceVersion": md["resourceVersion"], "creationTimestamp": md["creationTimestamp"]},
                "spec": {"replicas": obj.get("spec", {}).get("replicas", 0)},
                "status": {"replicas": obj.get("status", {}).get("replicas", 0),
                           "selector": ",".join(f"{k}={v}" for k, v in sorted(sel.items()))}}

    async def _scale(self, request: web.Request, rtype: ResourceType, ns: str | None, name: str) -> web.Response:
        from .patch import json_patch, merge_patch, strategic_merge_patch

        obj = self.store.get(rtype, ns, name)
        scale = self._scale_obj(rtype, obj)
        if request.method == "GET":
            return _json(scale)
        body = await self._body(request)
        if request.method == "PUT":
            new = body
        elif request.method == "PATCH":
            ptype = PATCH_TYPES.get((request.content_type or "").split(";")[0].strip())
            new = {"json": json_patch, "merge": merge_patch, "strategic": strategic_merge_patch,
                   "apply": merge_patch}[ptype or "merge"](scale, body)
        else:
            raise errors.method_not_allowed("scale supports get, update and patch")
        want_rv = (new.get("metadata") or {}).get("resourceVersion")
        if request.method == "PUT" and want_rv and want_rv != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(rtype, name)
        replicas = (new.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid(rtype, name, [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                                "message": f"Invalid value: {replicas!r}: must be greater than or equal to 0"}])
        obj["spec"]["replicas"] = replicas
        obj["metadata"].pop("resourceVersion", None)
        updated = self.store.update(rtype, ns, name, obj, dry_run=_dry(request.query))
        return _json(self._scale_obj(rtype, updated))

    def _log(self, request: web.Request, ns: str | None, name: str) -> web.Response:
        pod = self.store.get(self.store.rt("", "v1", "pods"), ns, name)
        container = request.query.get("container") or pod["spec"]["containers"][0]["name"]
        text = self.store.pod_logs.get((ns or "", name, container), "")
        tail = request.query.get("tailLines")
        if tail:
            text = "\n".join(text.splitlines()[-int(tail):]) + ("\n" if text else "")
        return web.Response(text=text, content_type="text/plain")


def _dry(q) -> bool:
    return q.get("dryRun") == "All"


def _strict(q) -> bool:
    return q.get("fieldValidation") == "Strict"
