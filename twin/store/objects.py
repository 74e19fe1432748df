"""The object map: each object as a dict and as its JSON bytes, its indexes, and resourceVersions.

All mutations run on the event loop's thread, so nothing here needs locks. The dict is for
selectors and controllers (treat it as read-only); the bytes are served as they are. Keys are
kept sorted per resource type for paged lists; uids and ownerReferences are indexed for the
garbage collector.
"""
from __future__ import annotations

import bisect
import collections
import json
import sys
import time
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Any
from collections.abc import Iterable

from ..apimachinery import errors
from ..streams.podlogs import ContainerLog
from ..registry.resources import Registry, ResourceType
from ..registry.selectors import SelectorError, field_equalities, parse_field_selector, parse_label_selector

_NOW: list = [0, ""]


def now_iso() -> str:
    """The current time as the API server writes timestamps (RFC 3339, whole seconds, UTC)."""
    sec = int(time.time())
    if _NOW[0] != sec:
        _NOW[0], _NOW[1] = sec, datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _NOW[1]


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


_intern = sys.intern


def _clone(obj: Any) -> Any:
    """A deep copy of a JSON value whose keys and short strings are interned: faster than
    copy.deepcopy, and it halves the memory of stored objects (every pod repeats the same keys)."""
    if isinstance(obj, dict):
        return {_intern(k) if type(k) is str else k:
                (_clone(v) if isinstance(v, (dict, list)) else _intern(v) if type(v) is str and len(v) < 48 else v)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clone(v) if isinstance(v, (dict, list)) else _intern(v) if type(v) is str and len(v) < 48 else v
                for v in obj]
    return obj


@dataclass
class Entry:
    obj: dict
    raw: bytes


def parse_selectors(rtype: ResourceType, label_selector: str | None, field_selector: str | None):
    try:
        return (parse_label_selector(label_selector),
                parse_field_selector(field_selector, rtype.kind, rtype.crd))
    except SelectorError as e:
        raise errors.bad_request(str(e)) from e


def _is_crd_type(rtype: ResourceType) -> bool:
    return rtype.kind == "CustomResourceDefinition" and rtype.group == "apiextensions.k8s.io"


class ObjectMap:
    """The stored objects of every resource type and the lookups on them."""

    def __init__(self, registry: Registry | None = None):
        self.registry = registry or Registry()
        self.rv = 1
        self.objects: dict[tuple[str, str], dict[tuple[str, str], Entry]] = collections.defaultdict(dict)
        self.dependents: dict[str, set[tuple[tuple[str, str], str, str]]] = collections.defaultdict(set)
        self.by_uid: dict[str, tuple[tuple[str, str], str, str]] = {}
        self.pod_logs: dict[tuple[str, str, str], ContainerLog] = {}  # the kubelet's container logs
        # set by the kubelet: the API server's exec, attach and port-forward go through it (a real API server dials
        # the node's kubelet), so apiserver/ never imports the controllers
        self.kubelet: Any = None
        self._sorted: dict[tuple[str, str], list[tuple[str, str]] | None] = {}

    def rt(self, group: str, version: str, plural: str) -> ResourceType:
        r = self.registry.get(group, version, plural)
        if r is None:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource",
                                  {"group": group, "kind": plural})
        return r

    def rt_for(self, api_version: str, kind: str) -> ResourceType:
        r = self.registry.by_kind(api_version, kind)
        if r is None:
            raise errors.ApiError(404, "NotFound", f'no matches for kind "{kind}" in version "{api_version}"')
        return r

    def _entry(self, rtype: ResourceType, ns: str | None, name: str) -> Entry:
        e = self.objects[rtype.key].get((ns or "", name))
        if e is None:
            raise errors.not_found(rtype, name)
        return e

    def _as_version(self, rtype: ResourceType, obj: dict) -> dict:
        if obj.get("apiVersion") != rtype.api_version:
            obj = dict(obj, apiVersion=rtype.api_version)
        return obj

    def _raw_for(self, rtype: ResourceType, e: Entry) -> bytes:
        if rtype.crd and e.obj.get("apiVersion") != rtype.api_version:
            return dumps(self._as_version(rtype, e.obj))
        return e.raw

    def get(self, rtype: ResourceType, ns: str | None, name: str) -> dict:
        return json.loads(self._raw_for(rtype, self._entry(rtype, ns, name)))

    def peek(self, rtype: ResourceType, ns: str | None, name: str) -> dict | None:
        """The stored object itself, or None: for a reader that does not change it (no JSON decode). Writes
        replace a stored object, never change it, so what a reader holds stays as it was when read."""
        e = self.objects[rtype.key].get((ns or "", name))
        return None if e is None else self._as_version(rtype, e.obj)

    def get_raw(self, rtype: ResourceType, ns: str | None, name: str) -> bytes:
        return self._raw_for(rtype, self._entry(rtype, ns, name))

    def exists(self, rtype: ResourceType, ns: str | None, name: str) -> bool:
        return (ns or "", name) in self.objects[rtype.key]

    def _keys(self, rtype: ResourceType) -> list[tuple[str, str]]:
        keys = self._sorted.get(rtype.key)
        if keys is None:
            keys = self._sorted[rtype.key] = sorted(self.objects[rtype.key])
        return keys

    def list_entries(self, rtype: ResourceType, ns: str | None = None, label_selector: str | None = None,
                     field_selector: str | None = None, after: tuple[str, str] | None = None,
                     limit: int = 0) -> list[Entry]:
        """Matching entries in (namespace, name) order; `after`/`limit` page through them."""
        lp, fp = parse_selectors(rtype, label_selector, field_selector)
        objs = self.objects[rtype.key]
        eq = field_equalities(field_selector) if field_selector else {}
        if "metadata.name" in eq:
            wanted_ns = ns or eq.get("metadata.namespace")
            if wanted_ns is not None or not rtype.namespaced:
                keys = [(wanted_ns or "", eq["metadata.name"])]
            else:
                keys = [k for k in self._keys(rtype) if k[1] == eq["metadata.name"]]
        else:
            keys = self._keys(rtype)
            ns = ns or eq.get("metadata.namespace")
            if ns:
                lo, hi = bisect.bisect_left(keys, (ns, "")), bisect.bisect_left(keys, (ns + "\x00", ""))
                keys = keys[lo:hi]
        if after is not None:
            keys = keys[bisect.bisect_right(keys, after):]
        out = []
        all_labels = not label_selector
        all_fields = not field_selector
        for k in keys:
            e = objs.get(k)
            if e is None or (ns and k[0] != ns):
                continue
            if (all_labels or lp(e.obj["metadata"].get("labels") or {})) and (all_fields or fp(e.obj)):
                out.append(e)
                if limit and len(out) > limit:
                    break
        return out

    def list(self, rtype: ResourceType, ns: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict]:
        return [json.loads(self._raw_for(rtype, e)) for e in self.list_entries(rtype, ns, label_selector, field_selector)]

    def count(self, rtype: ResourceType) -> int:
        return len(self.objects[rtype.key])

    def _result(self, rtype: ResourceType, obj: dict, raw: bytes | None, as_raw: bool) -> Any:
        if raw is None or (rtype.crd and obj.get("apiVersion") != rtype.api_version):
            raw = dumps(self._as_version(rtype, obj))
        return raw if as_raw else json.loads(raw)

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _store(self, rtype: ResourceType, obj: dict) -> Entry:
        md = obj["metadata"]
        key = (md.get("namespace", ""), md["name"])
        objs = self.objects[rtype.key]
        if key not in objs:
            keys = self._sorted.get(rtype.key)
            if keys is not None:
                bisect.insort(keys, key)
        e = Entry(obj, dumps(obj))
        objs[key] = e
        self.by_uid[md["uid"]] = (rtype.key, md.get("namespace", ""), md["name"])
        return e

    def _unstore(self, rtype: ResourceType, md: dict) -> None:
        key = (md.get("namespace", ""), md["name"])
        if self.objects[rtype.key].pop(key, None) is not None:
            keys = self._sorted.get(rtype.key)
            if keys is not None:
                i = bisect.bisect_left(keys, key)
                if i < len(keys) and keys[i] == key:
                    del keys[i]
        self.by_uid.pop(md["uid"], None)

    def _index_owners(self, rtype: ResourceType, obj: dict, add: bool) -> None:
        md = obj["metadata"]
        ref = (rtype.key, md.get("namespace", ""), md["name"])
        for o in md.get("ownerReferences") or []:
            uid = o.get("uid") if isinstance(o, dict) else None
            if not uid:
                continue
            if add:
                self.dependents[uid].add(ref)
            else:
                deps = self.dependents.get(uid)
                if deps is not None:
                    deps.discard(ref)

    def _crd_of(self, rtype: ResourceType) -> Entry | None:
        return self.objects[("apiextensions.k8s.io", "customresourcedefinitions")].get(("", f"{rtype.plural}.{rtype.group}"))

    def iter_all(self) -> Iterable[tuple[ResourceType, Entry]]:
        for key, objs in self.objects.items():
            rt = self.registry.by_key(key)
            if rt is None:
                continue
            for e in list(objs.values()):
                yield rt, e

    def monotonic(self) -> float:
        return time.monotonic()
