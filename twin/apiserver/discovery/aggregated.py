"""Aggregated discovery (apidiscovery.k8s.io, KEP-3352, GA in 1.30): one APIGroupDiscoveryList for /api (the
core group) and one for /apis (every other group), each holding every version and resource, so that kubectl and
client-go discover in 2 requests instead of one per group version.

A client asks for it in the Accept header of GET /api or /apis (client-go sends
`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...;v=v2beta1;...,application/json`).
Negotiation is kube-apiserver's (aggregated/wrapper.go, negotiation.NegotiateMediaTypeOptions): the ranges best
first, each against the serializers in order (JSON, YAML, protobuf); the first range naming
apidiscovery.k8s.io v2 or v2beta1 APIGroupDiscoveryList wins, wherever it stands after plain ranges, and the
Content-Type names exactly what was chosen. A header with no such range is a legacy request, answered as before.
The twin has no protobuf encoding of these documents, so a protobuf range is passed over (where the real server
would answer protobuf): then a plain JSON range in the header gets the legacy document, and without one the
answer is 406. Responses are not gzipped (kube-apiserver compresses those over 128 KiB for gzip clients).

The resources are the legacy lists (discovery.resource_list) converted as the real server converts them
(endpoints ConvertGroupVersionIntoToDiscovery): a built-in resource's responseKind carries the group and version
of its legacy entry (empty unless they differ from the group version's, as for statefulsets/scale), a custom
resource's the CRD's own (apiextensions' discovery controller). The ETag is the uppercase hex SHA-512 of the v2 JSON
(the same for v2beta1: Vary: Accept keeps the two apart in caches), and If-None-Match with it answers 304.
"""
from __future__ import annotations

import hashlib
import json
import weakref
from dataclasses import dataclass, field

import yaml
from aiohttp import web

from . import documents as discovery
from ...apimachinery import errors
from ..http.accept import media_ranges
from ...registry.resources import Registry

GROUP = "apidiscovery.k8s.io"
KIND = "APIGroupDiscoveryList"
VERSIONS = ("v2", "v2beta1")  # 1.32 serves both (v2beta1 goes in 1.33)
# the discovery endpoints' serializers, in kube-apiserver's order; the twin encodes the first two
_SERIALIZERS = (("application", "json"), ("application", "yaml"), ("application", "vnd.kubernetes.protobuf"))


def _kind(entry: dict, default_group: str, default_version: str) -> dict:
    return {"group": entry.get("group", default_group), "version": entry.get("version", default_version),
            "kind": entry["kind"]}


def _resources(reg: Registry, group: str, version: str) -> list[dict]:
    """The group version's legacy list, as APIResourceDiscovery entries with their subresources nested."""
    legacy = discovery.resource_list(reg, group, version)
    crds = {r.plural for r in reg.in_group_version(group, version) if r.crd}
    out: dict[str, dict] = {}
    for e in (legacy or {}).get("resources", []):
        parent, _, sub = e["name"].partition("/")
        gv = (group, version) if parent in crds else ("", "")
        if not sub:
            res = {"resource": parent, "responseKind": _kind(e, *gv),
                   "scope": "Namespaced" if e["namespaced"] else "Cluster",
                   "singularResource": e["singularName"], "verbs": e["verbs"]}
            for legacy_key, key in (("shortNames", "shortNames"), ("categories", "categories")):
                if e.get(legacy_key):
                    res[key] = e[legacy_key]
            out[parent] = res
        else:  # the legacy list puts each subresource right after its parent
            out[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": _kind(e, *gv), "verbs": e["verbs"]})
    return list(out.values())


def _items(reg: Registry, core: bool) -> list[dict]:
    items = []
    for group, versions in sorted(reg.group_versions().items()):
        if (group == "") != core:
            continue
        vs = []
        for v in versions:
            resources = _resources(reg, group, v)  # omitted when empty, as Go's omitempty does
            vs.append({"version": v, **({"resources": resources} if resources else {}), "freshness": "Current"})
        meta = {"name": group, "creationTimestamp": None} if group else {"creationTimestamp": None}
        items.append({"metadata": meta, "versions": vs})
    return items


@dataclass
class _Document:
    """One registry generation's list, and its encodings as served (kubectl asks on every run without a cache)."""
    generation: int
    items: list[dict]
    etag: str
    bodies: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (subtype, version) -> body

    def body(self, sub: str, version: str) -> bytes:
        if (sub, version) not in self.bodies:
            data = _list(self.items, version)
            text = json.dumps(data, separators=(",", ":")) if sub == "json" else yaml.safe_dump(data, sort_keys=False)
            self.bodies[(sub, version)] = text.encode()
        return self.bodies[(sub, version)]


# keyed by the registry itself, weakly: an id() would be reused by a later registry and serve it a stale list
_CACHE: weakref.WeakKeyDictionary[Registry, dict[bool, _Document]] = weakref.WeakKeyDictionary()


def document(reg: Registry, core: bool) -> _Document:
    """The registry generation's list for /api (core) or /apis, built once per generation (a CRD change)."""
    by_core = _CACHE.setdefault(reg, {})
    cached = by_core.get(core)
    if cached is None or cached.generation != reg.generation:
        items = _items(reg, core)
        v2 = json.dumps(_list(items, "v2"), separators=(",", ":")).encode()
        cached = by_core[core] = _Document(reg.generation, items, hashlib.sha512(v2).hexdigest().upper(), {("json", "v2"): v2})
    return cached


def _list(items: list[dict], version: str) -> dict:
    return {"kind": KIND, "apiVersion": f"{GROUP}/{version}", "metadata": {}, "items": items}


def negotiate(accept: str | None) -> tuple[str, str] | None:
    """(serializer subtype, apidiscovery version) of the best Accept range asking for aggregated discovery that the
    twin can encode; None: a legacy request (no range asks for it). Raises 406 when every such range names protobuf
    only."""
    if not accept:
        return None
    passed_over = plain_json = False
    for clause in media_ranges(accept):
        params = clause.params
        for typ, sub in _SERIALIZERS:
            if not clause.matches(typ, sub):
                continue
            if params.get("stream") not in (None, "", "watch") or params.get("sv"):
                continue  # kube rejects the range for this serializer (no server version, watch streams only)
            if params.get("g") != GROUP or params.get("v") not in VERSIONS or params.get("as") != KIND:
                # the wrapper refuses a plain range too: any aggregated range, even a later one, wins
                plain_json = plain_json or (sub == "json" and not {"g", "v", "as"} & params.keys())
                continue
            if sub == "vnd.kubernetes.protobuf":
                passed_over = True
                continue
            return sub, params["v"]
    if passed_over and not plain_json:  # with a plain JSON range the client takes the legacy lists instead
        raise errors.ApiError(406, "NotAcceptable", "only the following media types are accepted: "
                              "application/json, application/yaml (the twin encodes no protobuf discovery)")
    return None


def respond(request: web.Request, reg: Registry, core: bool) -> web.Response | None:
    """The aggregated answer to GET /api (core) or /apis, or None when the request is a legacy one."""
    chosen = negotiate(request.headers.get("Accept"))
    if chosen is None:
        return None
    sub, version = chosen
    doc = document(reg, core)
    headers = {"ETag": f'"{doc.etag}"', "Vary": "Accept", "Cache-Control": "public"}
    if request.headers.get("If-None-Match") == headers["ETag"]:
        return web.Response(status=304, headers=headers)
    headers["Content-Type"] = f"application/{sub};g={GROUP};v={version};as={KIND}"
    return web.Response(body=doc.body(sub, version), headers=headers)
