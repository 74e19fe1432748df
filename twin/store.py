"""The object store behind the twin's API server: CRUD, resourceVersions, watches, deletion.

All mutations run on the event loop's thread, so the store needs no locks. Each object is kept
as a dict (for selectors and controllers; treat it as read-only) and as its JSON bytes (served
as is), and every change is appended to a bounded per-resource event log that watches replay
from. Writes go through the same stages as in the real API server: decode (unknown fields
dropped or, under fieldValidation=Strict, rejected), defaulting, validation, admission
(namespace lifecycle), then storage with a new resourceVersion and a watch event.

Python API used by the controllers (kept stable): create, get, get_raw, exists, list,
list_entries, count, update(_internal=True), patch, delete, finalize, delete_collection, watch,
unwatch, rt, rt_for; hooks on_change, on_removed, on_marked; indexes objects, dependents, by_uid.
"""
from __future__ import annotations

import asyncio
import bisect
import builtins
import collections
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any
from collections.abc import Callable, Iterable

from . import defaulters, errors, names, validation
from .patch import (PatchError, apply_merge, field_set, fields_minus, json_patch, merge_patch, remove_fields,
                    strategic_merge_patch)
from .podlogs import ContainerLog
from .resources import Registry, ResourceType
from .selectors import _PER_KIND, SelectorError, field_equalities, parse_field_selector, parse_label_selector

# Events kept per resource type for watches to replay from; a watch from an older resourceVersion
# gets 410 Expired. TWIN_EVENT_LOG_SIZE (read at start) makes compaction easy to reach in tests.
EVENT_LOG_SIZE = int(os.environ.get("TWIN_EVENT_LOG_SIZE", "50000"))
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
# Stores whose DELETE answers with the deleted object (genericregistry ReturnDeletedObject);
# the others answer with a Status once the object is gone.
RETURNS_DELETED_OBJECT = {("", "Pod"), ("", "PersistentVolumeClaim"), ("", "PersistentVolume"), ("", "Service"),
                          ("", "ServiceAccount"), ("", "PodTemplate"), ("", "ResourceQuota"),
                          ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
                          ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "VolumeAttachment")}


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


@dataclass
class Event:
    """One change in a resource type's event log. obj/old are selector views of the object after and
    before the change (metadata name, namespace, labels and the kind's selectable fields), not whole
    objects: the log keeps the JSON bytes for replay and stays small."""
    rv: int
    type: str
    obj: dict | None
    raw: bytes
    old: dict | None


def _view(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    md = obj.get("metadata") or {}
    out: dict = {"metadata": {"name": md.get("name"), "namespace": md.get("namespace"), "labels": md.get("labels")}}
    for path in _SELECTABLE.get(obj.get("kind", ""), ()):
        cur: Any = obj
        for part in path:
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is not None:
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = cur
    return out


_SELECTABLE = {kind: tuple(tuple(p.split(".")) for p in paths if not p.startswith("metadata."))
               for kind, paths in _PER_KIND.items()}
# a watch stream whose client stops reading is closed after this many undelivered events
# (the real server closes watches of unresponsive consumers too; clients re-watch)
WATCH_BACKLOG = 100_000


@dataclass(eq=False)
class Watcher:
    rtype: ResourceType
    namespace: str | None
    label_pred: Callable[[dict], bool]
    field_pred: Callable[[dict], bool]
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue())
    backlog: int | None = None     # set for HTTP watches: past it the watcher overflows
    overflowed: bool = False
    unfiltered: bool = False       # no namespace, label or field selector: every event matches

    def matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        md = obj["metadata"]
        if self.namespace and md.get("namespace") != self.namespace:
            return False
        return self.label_pred(md.get("labels") or {}) and self.field_pred(obj)

    def _put(self, item: tuple[str, bytes]) -> None:
        if self.backlog is not None and self.queue.qsize() >= self.backlog:
            self.overflowed = True
            return
        self.queue.put_nowait(item)

    def offer(self, ev: Event) -> None:
        if self.overflowed:
            return
        if self.unfiltered:
            self._put((ev.type, ev.raw))
            return
        now = self.matches(ev.obj)
        if ev.type == "MODIFIED":
            before = self.matches(ev.old)
            if now and not before:
                self._put(("ADDED", ev.raw))
            elif before and not now:
                self._put(("DELETED", ev.raw))
            elif now:
                self._put(("MODIFIED", ev.raw))
        elif now:
            self._put((ev.type, ev.raw))


def parse_selectors(rtype: ResourceType, label_selector: str | None, field_selector: str | None):
    try:
        return (parse_label_selector(label_selector),
                parse_field_selector(field_selector, rtype.kind, rtype.crd))
    except SelectorError as e:
        raise errors.bad_request(str(e)) from e


def _typed(rtype: ResourceType, obj: dict) -> dict:
    """obj with kind and apiVersion first, as the real server writes objects (lists strip that prefix)."""
    out = {"kind": rtype.kind, "apiVersion": rtype.api_version}
    for k, v in obj.items():
        if k != "kind" and k != "apiVersion":
            out[k] = v
    return out


def _is_crd_type(rtype: ResourceType) -> bool:
    return rtype.kind == "CustomResourceDefinition" and rtype.group == "apiextensions.k8s.io"


_IDENTITY = ("apiVersion", "kind")
_META_IDENTITY = ("name", "namespace", "resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
                  "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


class Store:
    def __init__(self, registry: Registry | None = None):
        self.registry = registry or Registry()
        self.rv = 1
        self.objects: dict[tuple[str, str], dict[tuple[str, str], Entry]] = collections.defaultdict(dict)
        self.events: dict[tuple[str, str], collections.deque[Event]] = collections.defaultdict(
            lambda: collections.deque(maxlen=EVENT_LOG_SIZE))
        self.compacted: dict[tuple[str, str], int] = collections.defaultdict(int)
        self.watchers: dict[tuple[str, str], set[Watcher]] = collections.defaultdict(set)
        self.dependents: dict[str, set[tuple[tuple[str, str], str, str]]] = collections.defaultdict(set)
        self.on_removed: list[Callable[[ResourceType, dict], None]] = []
        self.on_marked: list[Callable[[ResourceType, dict], None]] = []
        # synchronous observers of every write: (rtype, event type, stored object (read-only), old object).
        # They run after the watchers got the event and before the writer returns, so a controller can act
        # before the API response goes out (StatefulSet pods must exist when `kubectl scale` returns).
        self.on_change: list[Callable[[ResourceType, str, dict, dict | None], None]] = []
        self.by_uid: dict[str, tuple[tuple[str, str], str, str]] = {}
        self.pod_logs: dict[tuple[str, str, str], ContainerLog] = {}  # the kubelet's container logs
        # set by the kubelet: pods on a node are deleted gracefully (the kubelet finishes them)
        self.graceful_pods = False
        self.request_count = 0
        # warnings of the last write (unknown fields dropped without fieldValidation=Strict)
        self.last_warnings: list[str] = []
        # metadata.generateName -> name; tests replace it to force collisions
        self.generate_name: Callable[[str], str] = names.simple_name
        self._sorted: dict[tuple[str, str], list[tuple[str, str]] | None] = {}
        for ns in SYSTEM_NAMESPACES:
            self.create(self.rt("", "v1", "namespaces"), None, {"metadata": {"name": ns}})

    # lookups --------------------------------------------------------------------------------
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

    # writes: plumbing -------------------------------------------------------------------------
    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _emit(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None, raw: bytes | None = None) -> None:
        if raw is None or (rtype.crd and obj.get("apiVersion") != rtype.api_version):
            raw = dumps(self._as_version(rtype, obj))
        ev = Event(int(obj["metadata"]["resourceVersion"]), etype, _view(obj), raw, _view(old))
        log = self.events[rtype.key]
        if len(log) == log.maxlen:
            self.compacted[rtype.key] = log[0].rv
        log.append(ev)
        for w in list(self.watchers[rtype.key]):
            w.offer(ev)
        for cb in list(self.on_change):
            cb(rtype, etype, obj, old)

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

    def _admit(self, rtype: ResourceType, obj: dict, strict: bool, old: dict | None = None,
               internal: bool = False) -> builtins.list[str]:
        """Decode-check, default and validate obj in place, as the real server's write path does."""
        if not rtype.crd:
            defaulters.apply(rtype.kind, obj)
        try:
            if rtype.crd:
                warnings = validation.check(obj, strict=strict, schema=self.registry.schema(rtype), crd=True)
            else:
                warnings = validation.check(obj, strict=strict)
            if old is not None and not internal and not rtype.crd:
                causes = validation.update_causes(old, obj)
                if causes:
                    raise validation.Invalid(causes)
        except validation.DecodeError as e:
            raise errors.bad_request(f'{rtype.kind} in version "{rtype.version}" cannot be handled as a '
                                     f'{rtype.kind}: {e}') from e
        except validation.Invalid as e:
            raise errors.invalid(rtype, (obj.get("metadata") or {}).get("name", ""), e.causes) from e
        return warnings

    def _check_kind(self, rtype: ResourceType, obj: dict) -> None:
        kind = obj.get("kind")
        if kind and kind != rtype.kind:
            raise errors.bad_request(f"the kind of the object in the request ({kind}) does not match the kind of "
                                     f"the resource ({rtype.kind})")
        av = obj.get("apiVersion")
        if av and av != rtype.api_version and not (rtype.crd and av.split("/")[0] == rtype.group):
            group = av.rpartition("/")[0]
            if group != rtype.group:
                raise errors.bad_request(f"the API version in the data ({av}) does not match the expected API "
                                         f"version ({rtype.api_version})")

    def _result(self, rtype: ResourceType, obj: dict, raw: bytes | None, as_raw: bool) -> Any:
        if raw is None or (rtype.crd and obj.get("apiVersion") != rtype.api_version):
            raw = dumps(self._as_version(rtype, obj))
        return raw if as_raw else json.loads(raw)

    # writes ---------------------------------------------------------------------------------
    def create(self, rtype: ResourceType, ns: str | None, body: dict, *, dry_run: bool = False,
               strict: bool = False, raw: bool = False) -> Any:
        """Create an object; returns it as stored (raw=True: its JSON bytes)."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        self.last_warnings = []
        obj = _clone(body)
        self._check_kind(rtype, obj)
        obj = _typed(rtype, obj)
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        if not isinstance(md, dict):
            raise errors.bad_request(f'{rtype.kind} in version "{rtype.version}" cannot be handled as a {rtype.kind}: '
                                     f"json: cannot unmarshal {type(md).__name__} into Go struct field "
                                     f"{rtype.kind}.metadata of type v1.ObjectMeta")
        if rtype.namespaced:
            if md.get("namespace") and ns and md["namespace"] != ns:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                         "the request")
            md["namespace"] = ns or md.get("namespace") or "default"
        else:
            md.pop("namespace", None)
        for k in ("name", "generateName", "namespace"):
            if md.get(k) is not None and not isinstance(md[k], str):
                raise errors.bad_request(f'{rtype.kind} in version "{rtype.version}" cannot be handled as a {rtype.kind}: '
                                         f"json: cannot unmarshal {type(md[k]).__name__} into Go struct field "
                                         f"ObjectMeta.metadata.{k} of type string")
        generated = not md.get("name") and bool(md.get("generateName"))
        if not md.get("name"):
            if generated:
                md["name"] = self.generate_name(md["generateName"])
            else:
                raise errors.invalid(rtype, "", [{"reason": "FieldValueRequired", "message": "Required value: name or "
                                                  "generateName is required", "field": "metadata.name"}])
        for k in ("resourceVersion", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            md.pop(k, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_iso()
        if rtype.has_generation:
            md["generation"] = 1
        warnings = self._admit(rtype, obj, strict)
        if rtype.namespaced:
            nse = self.objects[("", "namespaces")].get(("", md["namespace"]))
            if nse is None:
                raise errors.ApiError(404, "NotFound", f'namespaces "{md["namespace"]}" not found',
                                      {"name": md["namespace"], "kind": "namespaces"})
            if nse.obj["metadata"].get("deletionTimestamp"):
                raise errors.forbidden(f'{rtype.plural} "{md["name"]}" is forbidden: unable to create new content in '
                                       f'namespace {md["namespace"]} because it is being terminated',
                                       {"name": md["name"], "kind": rtype.plural, "causes": [{
                                           "reason": "NamespaceTerminating", "field": "metadata.namespace",
                                           "message": f'namespace {md["namespace"]} is being terminated'}]})
        if rtype.crd:
            crd = self._crd_of(rtype)
            if crd is not None and crd.obj["metadata"].get("deletionTimestamp"):
                raise errors.ApiError(405, "MethodNotAllowed",
                                      'create not allowed while custom resource definition is terminating')
        if self.exists(rtype, md.get("namespace"), md["name"]):
            if not generated:
                raise errors.already_exists(rtype, md["name"])
            # RetryGenerateName: draw again; the first draw already passed validation, and every draw has
            # the same length and alphabet
            free = names.pick_free(md["generateName"], lambda n: self.exists(rtype, md.get("namespace"), n),
                                   self.generate_name, names.MAX_ATTEMPTS - 1)
            if free is None:
                raise errors.generate_name_conflict(rtype, md["name"])
            md["name"] = free
        if dry_run:
            self.last_warnings = warnings
            return self._result(rtype, obj, None, raw)
        md["resourceVersion"] = str(self._next_rv())
        e = self._store(rtype, obj)
        self._index_owners(rtype, obj, True)
        if _is_crd_type(rtype):
            self.registry.register_crd(obj)
        out = self._result(rtype, obj, e.raw, raw)
        self._emit(rtype, "ADDED", obj, None, e.raw)
        self.last_warnings = warnings  # after the hooks' own writes
        return out

    def update(self, rtype: ResourceType, ns: str | None, name: str, body: dict, *, subresource: str | None = None,
               dry_run: bool = False, strict: bool = False, _internal: bool = False, raw: bool = False) -> Any:
        """PUT semantics: optimistic concurrency on metadata.resourceVersion when the body has one.

        subresource="status" changes only status; a main update keeps status when the type has a
        status subresource (unless _internal: controllers write both). A write that changes nothing
        keeps the resourceVersion and sends no event.
        """
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        self.last_warnings = []
        cur = self._entry(rtype, ns, name)
        old = cur.obj
        new = _clone(body)
        self._check_kind(rtype, new)
        md = new.get("metadata")
        if md is None:
            md = new["metadata"] = {}
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        if md.get("name") and md["name"] != name:
            raise errors.bad_request(f'the name of the object ({md["name"]}) does not match the name on the URL ({name})')
        if md.get("namespace") and rtype.namespaced and ns and md["namespace"] != ns:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        want_rv = md.get("resourceVersion")
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rtype, name)
        new = _typed(rtype, new)
        if subresource == "status":
            merged = _clone(old)
            merged["apiVersion"] = rtype.api_version
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
            md = new["metadata"]
        elif "status" in rtype.subresources and not _internal:
            if "status" in old:
                new["status"] = _clone(old["status"])
            else:
                new.pop("status", None)
        omd = old["metadata"]
        for k in ("uid", "creationTimestamp", "name", "namespace", "generation", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
            if k in omd:
                md[k] = omd[k]
            else:
                md.pop(k, None)
        if "managedFields" not in md and "managedFields" in omd:
            md["managedFields"] = omd["managedFields"]
        if not rtype.namespaced:
            md.pop("namespace", None)
        md["resourceVersion"] = omd["resourceVersion"]
        if rtype.kind == "Service" and not rtype.crd and isinstance(new.get("spec"), dict):
            # allocated values survive an update that leaves them out (the real strategy copies them)
            ospec = old.get("spec") or {}
            for k in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort"):
                if k in ospec and not new["spec"].get(k):
                    new["spec"][k] = _clone(ospec[k])
            oports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort") for p in ospec.get("ports") or []}
            for p in new["spec"].get("ports") or []:
                if isinstance(p, dict) and not p.get("nodePort") and oports.get((p.get("port"), p.get("protocol", "TCP"))):
                    p["nodePort"] = oports[(p.get("port"), p.get("protocol", "TCP"))]
        warnings = self._admit(rtype, new, strict, old, _internal or subresource == "status")
        self.last_warnings = warnings
        if omd.get("deletionTimestamp") and not _internal:
            added = set(md.get("finalizers") or []) - set(omd.get("finalizers") or [])
            if added:
                raise errors.invalid(rtype, name, [{"reason": "FieldValueForbidden", "field": "metadata.finalizers",
                                                    "message": "Forbidden: no new finalizers can be added if the object "
                                                               "is being deleted, found new finalizers " +
                                                               json.dumps(sorted(added))}])
        if rtype.has_generation:
            skip = (("metadata", "status", "apiVersion", "kind") if "status" in rtype.subresources or not rtype.crd
                    else ("metadata", "apiVersion", "kind"))
            if any(new.get(k) != old.get(k) for k in set(new) | set(old) if k not in skip):
                md["generation"] = omd.get("generation", 1) + 1
        if new == old:
            return self._result(rtype, old, cur.raw, raw)  # a no-op write does not bump resourceVersion
        if omd.get("deletionTimestamp") and not md.get("finalizers") and omd.get("finalizers"):
            md.pop("finalizers", None)
            if dry_run:
                return self._result(rtype, new, None, raw)
            return self._remove(rtype, new, raw=raw)
        if dry_run:
            return self._result(rtype, new, None, raw)
        md["resourceVersion"] = str(self._next_rv())
        self._index_owners(rtype, old, False)
        e = self._store(rtype, new)
        self._index_owners(rtype, new, True)
        if _is_crd_type(rtype):
            self.registry.register_crd(new)
        out = self._result(rtype, new, e.raw, raw)
        self._emit(rtype, "MODIFIED", new, old, e.raw)
        self.last_warnings = warnings
        return out

    def patch(self, rtype: ResourceType, ns: str | None, name: str, patch_type: str, patch: Any, *,
              subresource: str | None = None, dry_run: bool = False, strict: bool = False,
              field_manager: str | None = None, force: bool = False, raw: bool = False) -> Any:
        """PATCH: json | merge | strategic | apply (server-side apply), on the object or its status."""
        cur = self.get(rtype, ns, name)
        schema = self.registry.schema(rtype) if rtype.crd else validation.schema_for(rtype.api_version, rtype.kind)
        try:
            if patch_type == "json":
                patched = json_patch(cur, patch)
            elif patch_type == "merge":
                if not isinstance(patch, dict):
                    raise PatchError("merge patch must be an object")
                patched = merge_patch(cur, patch)
            elif patch_type == "strategic":
                if rtype.crd:
                    raise errors.unsupported_media(
                        "the body of the request was in an unknown format - accepted media types include: "
                        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
                patched = strategic_merge_patch(cur, patch, schema)
            elif patch_type == "apply":
                patched = self._apply(rtype, cur, patch, schema, field_manager or "unknown", subresource)
                if patched is cur:
                    return self._result(rtype, cur, None, raw)
            else:
                raise errors.unsupported_media(f"unsupported patch type {patch_type}")
        except PatchError as e:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {e}",
                                  errors._details(name, rtype.group, rtype.kind)) from e
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata", {}), dict):
            raise errors.ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                                                  "the patched object is not valid (metadata must be an object)",
                                  errors._details(name, rtype.group, rtype.kind))
        # a patch carries a resourceVersion precondition only when the client put one in the patch
        pmd = patch.get("metadata", {}) if isinstance(patch, dict) else {}
        pmd_rv = pmd.get("resourceVersion") if isinstance(pmd, dict) else None
        if patch_type == "json" or not pmd_rv:
            rv_after = (patched.get("metadata") or {}).get("resourceVersion")
            if patch_type != "json" or rv_after == cur["metadata"]["resourceVersion"] or rv_after is None:
                patched.setdefault("metadata", {})["resourceVersion"] = cur["metadata"]["resourceVersion"]
        return self.update(rtype, ns, name, patched, subresource=subresource, dry_run=dry_run, strict=strict, raw=raw)

    def _apply(self, rtype: ResourceType, cur: dict, applied: Any, schema: Any, manager: str,
               subresource: str | None) -> dict:
        if not isinstance(applied, dict):
            raise PatchError("apply patch must be an object")
        if applied.get("kind") and applied["kind"] != rtype.kind:
            raise errors.bad_request(f"the kind in the apply configuration ({applied['kind']}) does not match "
                                     f"the resource ({rtype.kind})")
        config = {k: v for k, v in applied.items() if k not in _IDENTITY}
        cmd = config.get("metadata")
        if isinstance(cmd, dict):
            config["metadata"] = {k: v for k, v in cmd.items() if k not in _META_IDENTITY}
            if not config["metadata"]:
                config.pop("metadata")
        elif "metadata" in config:
            if cmd is not None:
                raise errors.bad_request("metadata in the apply configuration must be an object")
            config.pop("metadata")
        entries = [m for m in (cur["metadata"].get("managedFields") or []) if isinstance(m, dict)]
        mine = next((m for m in entries if m.get("manager") == manager and m.get("operation") == "Apply"
                     and (m.get("subresource") or None) == subresource), None)
        prev = (mine or {}).get("fieldsV1") or {}
        new_set = field_set(config, schema)
        removed = fields_minus(prev, new_set)
        others = [m.get("fieldsV1") or {} for m in entries if m is not mine and m.get("operation") == "Apply"]
        for o in others:
            removed = _keep_owned(removed, o)
        obj = remove_fields(cur, removed, schema) if removed else cur
        obj = apply_merge(obj, config, schema)
        if obj == cur and new_set == prev and mine is not None:
            return cur
        entry = {"manager": manager, "operation": "Apply", "apiVersion": rtype.api_version, "time": now_iso(),
                 "fieldsType": "FieldsV1", "fieldsV1": new_set}
        if subresource:
            entry["subresource"] = subresource
        mf = [m for m in entries if m is not mine] + [entry]
        obj = dict(obj)
        obj["metadata"] = dict(obj["metadata"], managedFields=mf)
        return obj

    def apply_create(self, rtype: ResourceType, ns: str | None, name: str, patch: dict, *,
                     field_manager: str | None = None, **kw: Any) -> Any:
        """Server-side apply of an object that does not exist yet: create it from the applied configuration."""
        if not isinstance(patch, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        body = _clone(patch)
        body.setdefault("metadata", {})["name"] = name
        config = {k: v for k, v in patch.items() if k not in _IDENTITY}
        if isinstance(config.get("metadata"), dict):
            config["metadata"] = {k: v for k, v in config["metadata"].items() if k not in _META_IDENTITY}
        schema = self.registry.schema(rtype) if rtype.crd else validation.schema_for(rtype.api_version, rtype.kind)
        body["metadata"]["managedFields"] = [{"manager": field_manager or "unknown", "operation": "Apply",
                                              "apiVersion": rtype.api_version, "time": now_iso(),
                                              "fieldsType": "FieldsV1", "fieldsV1": field_set(config, schema)}]
        return self.create(rtype, ns, body, **kw)

    # deletion ------------------------------------------------------------------------------
    def delete(self, rtype: ResourceType, ns: str | None, name: str, *, propagation: str | None = None,
               grace_seconds: int | None = None, preconditions: dict | None = None, dry_run: bool = False,
               raw: bool = False) -> Any:
        """DELETE: removes the object, or marks it (deletionTimestamp) while finalizers or a graceful
        pod termination hold it. Returns the object as it is after the call."""
        cur = self._entry(rtype, ns, name)
        obj = _clone(cur.obj)
        md = obj["metadata"]
        pre = preconditions or {}
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise errors.conflict(rtype, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object "
                                               f"meta: {md['uid']}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
            raise errors.conflict(rtype, name, f"Precondition failed: ResourceVersion in precondition: "
                                               f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                               f"{md['resourceVersion']}")
        if propagation not in (None, "", "Foreground", "Background", "Orphan"):
            raise errors.invalid(rtype, name, [{"reason": "FieldValueNotSupported", "field": "propagationPolicy",
                                                "message": f'Unsupported value: "{propagation}": supported values: '
                                                           f'"Foreground", "Background", "Orphan", "nil"'}])
        if dry_run:
            return self._result(rtype, obj, None, raw)
        finalizers = list(md.get("finalizers") or [])
        if propagation == "Foreground" and "foregroundDeletion" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("foregroundDeletion")
        elif propagation == "Orphan" and "orphan" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("orphan")
        if rtype.kind == "Namespace" and rtype.group == "":
            if md.get("name") in SYSTEM_NAMESPACES:
                raise errors.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                                       {"name": name, "kind": "namespaces"})
            if not md.get("deletionTimestamp"):
                md["deletionTimestamp"] = now_iso()
                md["deletionGracePeriodSeconds"] = 0
                obj.setdefault("status", {})["phase"] = "Terminating"
                return self._write_marked(rtype, cur.obj, obj, raw)
            if not (obj.get("spec") or {}).get("finalizers") and not md.get("finalizers"):
                return self._remove(rtype, obj, raw=raw)
            return self._result(rtype, cur.obj, cur.raw, raw)
        if _is_crd_type(rtype) and not md.get("deletionTimestamp"):
            served = self.registry.crd_types(md["name"])
            if served and any(self.objects[served[0].key]):
                finalizers.append(CRD_CLEANUP_FINALIZER)
        graceful = (rtype.kind == "Pod" and rtype.group == "" and self.graceful_pods and obj["spec"].get("nodeName")
                    and grace_seconds != 0 and (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        if finalizers or graceful:
            if md.get("deletionTimestamp") and md.get("finalizers") == (finalizers or None) and not graceful:
                return self._result(rtype, cur.obj, cur.raw, raw)
            md.setdefault("deletionTimestamp", now_iso())
            if graceful:
                md["deletionGracePeriodSeconds"] = (obj["spec"].get("terminationGracePeriodSeconds", 30)
                                                    if grace_seconds is None else grace_seconds)
            else:
                md.setdefault("deletionGracePeriodSeconds", 0)
            if finalizers:
                md["finalizers"] = finalizers
            if rtype.has_generation and not cur.obj["metadata"].get("deletionTimestamp"):
                md["generation"] = md.get("generation", 1) + 1
            if obj == cur.obj:
                return self._result(rtype, cur.obj, cur.raw, raw)
            marked = self._write_marked(rtype, cur.obj, obj, raw)
            if {"foregroundDeletion", "orphan"} & set(finalizers):
                for cb in self.on_marked:
                    cb(rtype, obj)
            if CRD_CLEANUP_FINALIZER in finalizers:
                self._cleanup_crd(obj)
            return marked
        return self._remove(rtype, obj, raw=raw)

    def deleted_immediately(self, rtype: ResourceType, ns: str | None, name: str, uid: str) -> bool:
        """After a delete: is the object (this uid) gone?"""
        e = self.objects[rtype.key].get((ns or "", name))
        return e is None or e.obj["metadata"]["uid"] != uid

    def _write_marked(self, rtype: ResourceType, old: dict, obj: dict, raw: bool = False) -> Any:
        obj["metadata"]["resourceVersion"] = str(self._next_rv())
        e = self._store(rtype, obj)
        out = self._result(rtype, obj, e.raw, raw)
        self._emit(rtype, "MODIFIED", obj, old, e.raw)
        return out

    def _remove(self, rtype: ResourceType, obj: dict, raw: bool = False) -> Any:
        md = obj["metadata"]
        self._unstore(rtype, md)
        self._index_owners(rtype, obj, False)
        md["resourceVersion"] = str(self._next_rv())
        if _is_crd_type(rtype):
            for rt in self.registry.crd_types(md["name"]):
                for e in list(self.objects[rt.key].values()):
                    self._remove(rt, _clone(e.obj))
                break
            self.registry.unregister_crd(md["name"])
        if rtype.kind == "Pod" and rtype.group == "":
            for k in [k for k in self.pod_logs if k[0] == md.get("namespace") and k[1] == md["name"]]:
                self.pod_logs.pop(k, None)
        out = self._result(rtype, obj, None, raw)
        self._emit(rtype, "DELETED", obj, None)
        for cb in list(self.on_removed):
            cb(rtype, obj)
        if rtype.crd:
            self._crd_instance_gone(rtype)
        return out

    # CRD deletion: instances first, then the CRD (customresourcecleanup finalizer) --------------
    def _crd_of(self, rtype: ResourceType) -> Entry | None:
        return self.objects[("apiextensions.k8s.io", "customresourcedefinitions")].get(("", f"{rtype.plural}.{rtype.group}"))

    def _cleanup_crd(self, crd: dict) -> None:
        for rt in self.registry.crd_types(crd["metadata"]["name"]):
            for e in list(self.objects[rt.key].values()):
                emd = e.obj["metadata"]
                if not emd.get("deletionTimestamp"):
                    try:
                        self.delete(rt, emd.get("namespace"), emd["name"])
                    except errors.ApiError:
                        pass
            break
        self._crd_instance_gone(None, crd["metadata"]["name"])

    def _crd_instance_gone(self, rtype: ResourceType | None, crd_name: str | None = None) -> None:
        crd_rt = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if crd_rt is None:
            return
        if crd_name:
            name = crd_name
        elif rtype is not None:
            name = f"{rtype.plural}.{rtype.group}"
        else:
            raise ValueError("_crd_instance_gone needs the CRD's resource type or its name")
        e = self.objects[crd_rt.key].get(("", name))
        if e is None or CRD_CLEANUP_FINALIZER not in (e.obj["metadata"].get("finalizers") or []):
            return
        key = rtype.key if rtype is not None else (e.obj["spec"]["group"], e.obj["spec"]["names"]["plural"])
        if not self.objects[key]:
            self.finalize(crd_rt, None, name, CRD_CLEANUP_FINALIZER)

    def finalize(self, rtype: ResourceType, ns: str | None, name: str, finalizer: str) -> None:
        """Drop one finalizer (controllers' side of deletion)."""
        if not self.exists(rtype, ns, name):
            return
        obj = self.get(rtype, ns, name)
        fins = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        obj["metadata"]["finalizers"] = fins
        if not fins:
            obj["metadata"].pop("finalizers")
        self.update(rtype, ns, name, obj, _internal=True)

    def delete_collection(self, rtype: ResourceType, ns: str | None, label_selector: str | None,
                          field_selector: str | None, **kw: Any) -> builtins.list[dict]:
        out = []
        for e in self.list_entries(rtype, ns, label_selector, field_selector):
            md = e.obj["metadata"]
            try:
                out.append(self.delete(rtype, md.get("namespace"), md["name"], **kw))
            except errors.ApiError:
                pass
        return out

    # watch ---------------------------------------------------------------------------------
    def watch(self, rtype: ResourceType, ns: str | None = None, resource_version: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              send_initial_events: bool = False) -> Watcher:
        """Register a watcher. With no resourceVersion (or "0") it first gets synthetic ADDED events
        of the current objects; from a resourceVersion it replays the log after it, or gets an ERROR
        410 Expired event when the log no longer reaches back that far. send_initial_events adds the
        watch-list BOOKMARK (annotation k8s.io/initial-events-end) after the synthetic events."""
        lp, fp = parse_selectors(rtype, label_selector, field_selector)
        w = Watcher(rtype, ns, lp, fp, unfiltered=not (ns or label_selector or field_selector))
        if not resource_version or resource_version == "0" or send_initial_events:
            for e in self.list_entries(rtype, ns, label_selector, field_selector):
                w.queue.put_nowait(("ADDED", self._raw_for(rtype, e)))
            if send_initial_events:
                bm = {"kind": rtype.kind, "apiVersion": rtype.api_version,
                      "metadata": {"resourceVersion": str(self.rv),
                                   "annotations": {"k8s.io/initial-events-end": "true"}}}
                w.queue.put_nowait(("BOOKMARK", dumps(bm)))
        else:
            try:
                since = int(resource_version)
            except ValueError as ex:
                raise errors.bad_request(f"invalid resourceVersion {resource_version!r}") from ex
            if since < self.compacted[rtype.key]:
                w.queue.put_nowait(("ERROR", dumps(errors.gone(
                    f"too old resource version: {since} ({self.compacted[rtype.key]})").status())))
                return w
            log = self.events[rtype.key]
            if log and log[-1].rv > since:
                # the log is in rv order: skip what is older than `since`
                start = len(log)
                while start > 0 and log[start - 1].rv > since:
                    start -= 1
                for i in range(start, len(log)):
                    w.offer(log[i])
        self.watchers[rtype.key].add(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        self.watchers[w.rtype.key].discard(w)

    def iter_all(self) -> Iterable[tuple[ResourceType, Entry]]:
        for key, objs in self.objects.items():
            rt = self.registry.by_key(key)
            if rt is None:
                continue
            for e in list(objs.values()):
                yield rt, e

    def monotonic(self) -> float:
        return time.monotonic()


def _keep_owned(removed: dict, owned: dict) -> dict:
    """Drop from `removed` what another manager still owns."""
    out: dict = {}
    for k, sub in removed.items():
        if k not in owned:
            out[k] = sub
        elif sub:
            rest = _keep_owned(sub, owned[k])
            if rest:
                out[k] = rest
    return out
