"""The object store behind the twin's API server: CRUD, resourceVersions, watches, deletion.

All mutations run on the event loop's thread, so the store needs no locks. Each object is kept
as a dict (for selectors) and as its JSON bytes (served as is), and every change is appended
to a bounded per-resource event log that watches replay from.
"""
from __future__ import annotations

import asyncio
import collections
import copy
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from . import defaults, errors, validation
from .patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from .resources import Registry, ResourceType
from .selectors import SelectorError, parse_field_selector, parse_label_selector

EVENT_LOG_SIZE = 50_000
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


@dataclass
class Entry:
    obj: dict
    raw: bytes


@dataclass
class Event:
    rv: int
    type: str
    obj: dict
    raw: bytes
    old: dict | None


@dataclass(eq=False)
class Watcher:
    rtype: ResourceType
    namespace: str | None
    label_pred: Callable[[dict], bool]
    field_pred: Callable[[dict], bool]
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)

    def matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        md = obj.get("metadata", {})
        if self.namespace and md.get("namespace") != self.namespace:
            return False
        return self.label_pred(md.get("labels") or {}) and self.field_pred(obj)

    def offer(self, ev: Event) -> None:
        now, before = self.matches(ev.obj), self.matches(ev.old)
        if ev.type == "MODIFIED":
            if now and not before:
                self.queue.put_nowait(("ADDED", ev.raw))
            elif before and not now:
                self.queue.put_nowait(("DELETED", ev.raw))
            elif now:
                self.queue.put_nowait(("MODIFIED", ev.raw))
        elif now:
            self.queue.put_nowait((ev.type, ev.raw))


def _generation_relevant(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def parse_selectors(rtype: ResourceType, label_selector: str | None, field_selector: str | None):
    try:
        return (parse_label_selector(label_selector),
                parse_field_selector(field_selector, rtype.kind, rtype.crd))
    except SelectorError as e:
        raise errors.bad_request(str(e)) from e


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
        self.pod_logs: dict[tuple[str, str, str], str] = {}
        # set by the kubelet: pods on a node are deleted gracefully (the kubelet finishes them)
        self.graceful_pods = False
        self.request_count = 0
        for ns in SYSTEM_NAMESPACES:
            self.create(self.rt("", "v1", "namespaces"), None, {"metadata": {"name": ns}})

    # lookups --------------------------------------------------------------------------------
    def rt(self, group: str, version: str, plural: str) -> ResourceType:
        r = self.registry.get(group, version, plural)
        if r is None:
            raise errors.ApiError(404, "NotFound", f"the server could not find the requested resource ({plural}.{group})")
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

    def get(self, rtype: ResourceType, ns: str | None, name: str) -> dict:
        return json.loads(self._entry(rtype, ns, name).raw)

    def get_raw(self, rtype: ResourceType, ns: str | None, name: str) -> bytes:
        e = self._entry(rtype, ns, name)
        if rtype.crd and e.obj.get("apiVersion") != rtype.api_version:
            return dumps(self._as_version(rtype, e.obj))
        return e.raw

    def exists(self, rtype: ResourceType, ns: str | None, name: str) -> bool:
        return (ns or "", name) in self.objects[rtype.key]

    def list_entries(self, rtype: ResourceType, ns: str | None = None, label_selector: str | None = None,
                     field_selector: str | None = None) -> list[Entry]:
        lp, fp = parse_selectors(rtype, label_selector, field_selector)
        out = []
        for (ons, _), e in sorted(self.objects[rtype.key].items()):
            if ns and ons != ns:
                continue
            md = e.obj["metadata"]
            if lp(md.get("labels") or {}) and fp(e.obj):
                out.append(e)
        return out

    def list(self, rtype: ResourceType, ns: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict]:
        return [json.loads(e.raw) for e in self.list_entries(rtype, ns, label_selector, field_selector)]

    def count(self, rtype: ResourceType) -> int:
        return len(self.objects[rtype.key])

    # writes ---------------------------------------------------------------------------------
    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _emit(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        raw = dumps(self._as_version(rtype, obj))
        ev = Event(int(obj["metadata"]["resourceVersion"]), etype, obj, raw, old)
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
        e = Entry(obj, dumps(obj))
        self.objects[rtype.key][(md.get("namespace", ""), md["name"])] = e
        self.by_uid[md["uid"]] = (rtype.key, md.get("namespace", ""), md["name"])
        return e

    def _index_owners(self, rtype: ResourceType, obj: dict, add: bool) -> None:
        md = obj["metadata"]
        ref = (rtype.key, md.get("namespace", ""), md["name"])
        for o in md.get("ownerReferences") or []:
            if add:
                self.dependents[o["uid"]].add(ref)
            else:
                self.dependents[o["uid"]].discard(ref)

    def _validate(self, rtype: ResourceType, obj: dict, strict: bool) -> None:
        if rtype.crd:
            return
        try:
            validation.validate(obj, strict=strict)
        except validation.Invalid as e:
            name = obj.get("metadata", {}).get("name", "")
            if e.strict_unknown:
                raise errors.bad_request("strict decoding error: " + ", ".join(c["message"] for c in e.causes)) from e
            raise errors.invalid(rtype, name, e.causes) from e

    def create(self, rtype: ResourceType, ns: str | None, body: dict, *, dry_run: bool = False,
               strict: bool = False) -> dict:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        obj = copy.deepcopy(body)
        obj["apiVersion"], obj["kind"] = rtype.api_version, rtype.kind
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise errors.invalid(rtype, "", [{"reason": "FieldValueInvalid", "message": "must be an object", "field": "metadata"}])
        if rtype.namespaced:
            if md.get("namespace") and ns and md["namespace"] != ns:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
            md["namespace"] = ns or md.get("namespace") or "default"
            nse = self.objects[("", "namespaces")].get(("", md["namespace"]))
            if nse is None:
                raise errors.ApiError(404, "NotFound", f'namespaces "{md["namespace"]}" not found',
                                      {"name": md["namespace"], "kind": "namespaces"})
            if nse.obj["metadata"].get("deletionTimestamp"):
                raise errors.forbidden(f'{rtype.plural} "{md.get("name", "")}" is forbidden: unable to create new content in '
                                       f'namespace {md["namespace"]} because it is being terminated')
        else:
            md.pop("namespace", None)
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise errors.invalid(rtype, "", [{"reason": "FieldValueRequired", "message": "name or generateName is required",
                                                  "field": "metadata.name"}])
        self._validate(rtype, obj, strict)
        if self.exists(rtype, md.get("namespace"), md["name"]):
            raise errors.already_exists(rtype, md["name"])
        for k in ("resourceVersion", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            md.pop(k, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_iso()
        if rtype.has_generation:
            md["generation"] = 1
        defaults.apply(rtype.kind, obj)
        if dry_run:
            md["resourceVersion"] = str(self.rv)
            return obj
        md["resourceVersion"] = str(self._next_rv())
        self._store(rtype, obj)
        self._index_owners(rtype, obj, True)
        if rtype.kind == "CustomResourceDefinition" and rtype.group == "apiextensions.k8s.io":
            self.registry.register_crd(obj)
        self._emit(rtype, "ADDED", obj, None)
        return copy.deepcopy(obj)

    def update(self, rtype: ResourceType, ns: str | None, name: str, body: dict, *, subresource: str | None = None,
               dry_run: bool = False, strict: bool = False, _internal: bool = False) -> dict:
        """PUT semantics: optimistic concurrency on metadata.resourceVersion when the body has one."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        cur = self._entry(rtype, ns, name)
        old = cur.obj
        new = copy.deepcopy(body)
        md = new.setdefault("metadata", {})
        if md.get("name") and md["name"] != name:
            raise errors.bad_request(f'the name of the object ({md["name"]}) does not match the name on the URL ({name})')
        want_rv = md.get("resourceVersion")
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rtype, name)
        new["apiVersion"], new["kind"] = rtype.api_version, rtype.kind
        if subresource == "status":
            merged = copy.deepcopy(old)
            merged["status"] = new.get("status", {})
            new = merged
        elif "status" in rtype.subresources and not _internal:
            new["status"] = copy.deepcopy(old.get("status", {}))
        omd = old["metadata"]
        md = new["metadata"]
        for k in ("uid", "creationTimestamp", "name", "namespace", "generation", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
            if k in omd:
                md[k] = omd[k]
            else:
                md.pop(k, None)
        if not rtype.namespaced:
            md.pop("namespace", None)
        if subresource is None:
            self._validate(rtype, new, strict)
        if rtype.has_generation and _generation_relevant(new) != _generation_relevant(old):
            md["generation"] = omd.get("generation", 1) + 1
        md["resourceVersion"] = omd["resourceVersion"]
        if new == old:
            return copy.deepcopy(old)  # a no-op write does not bump resourceVersion
        if omd.get("deletionTimestamp") and not md.get("finalizers") and omd.get("finalizers"):
            if dry_run:
                return new
            return self._remove(rtype, new)
        if dry_run:
            return new
        md["resourceVersion"] = str(self._next_rv())
        self._index_owners(rtype, old, False)
        self._store(rtype, new)
        self._index_owners(rtype, new, True)
        if rtype.kind == "CustomResourceDefinition" and rtype.group == "apiextensions.k8s.io":
            self.registry.register_crd(new)
        self._emit(rtype, "MODIFIED", new, old)
        return copy.deepcopy(new)

    def patch(self, rtype: ResourceType, ns: str | None, name: str, patch_type: str, patch: Any, *,
              subresource: str | None = None, dry_run: bool = False, strict: bool = False) -> dict:
        cur = self.get(rtype, ns, name)
        base = cur
        if subresource == "status":
            base = {"status": cur.get("status", {}), "metadata": cur["metadata"]}
        try:
            if patch_type == "json":
                patched = json_patch(base, patch)
            elif patch_type == "merge":
                patched = merge_patch(base, patch)
            elif patch_type == "strategic":
                if rtype.crd:
                    raise errors.unsupported_media("the body of the request was in an unknown format - accepted media types include: "
                                                   "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
                patched = strategic_merge_patch(base, patch)
            elif patch_type == "apply":
                patched = merge_patch(base, patch)
            else:
                raise errors.unsupported_media(f"unsupported patch type {patch_type}")
        except PatchError as e:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {e}") from e
        if not isinstance(patched, dict):
            raise errors.bad_request("patch result is not an object")
        # a patch carries a resourceVersion precondition only when the client put one in the patch
        pmd = patch.get("metadata", {}) if isinstance(patch, dict) else {}
        if not (isinstance(pmd, dict) and pmd.get("resourceVersion")):
            patched.setdefault("metadata", {})["resourceVersion"] = cur["metadata"]["resourceVersion"]
        if subresource == "status":
            body = dict(cur, status=patched.get("status", {}))
            body["metadata"] = dict(cur["metadata"], resourceVersion=patched["metadata"].get("resourceVersion"))
            return self.update(rtype, ns, name, body, subresource="status", dry_run=dry_run)
        return self.update(rtype, ns, name, patched, dry_run=dry_run, strict=strict)

    def apply_create(self, rtype: ResourceType, ns: str | None, name: str, patch: dict, **kw: Any) -> dict:
        """Server-side apply of an object that does not exist yet: create it from the patch."""
        body = copy.deepcopy(patch)
        body.setdefault("metadata", {})["name"] = name
        return self.create(rtype, ns, body, **kw)

    # deletion ------------------------------------------------------------------------------
    def delete(self, rtype: ResourceType, ns: str | None, name: str, *, propagation: str | None = None,
               grace_seconds: int | None = None, preconditions: dict | None = None, dry_run: bool = False) -> dict:
        cur = self._entry(rtype, ns, name)
        obj = copy.deepcopy(cur.obj)
        md = obj["metadata"]
        pre = preconditions or {}
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise errors.conflict(rtype, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {md['uid']}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md["resourceVersion"]:
            raise errors.conflict(rtype, name, "Precondition failed: ResourceVersion in precondition does not match")
        if dry_run:
            return obj
        finalizers = list(md.get("finalizers") or [])
        if propagation == "Foreground" and "foregroundDeletion" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("foregroundDeletion")
        elif propagation == "Orphan" and "orphan" not in finalizers and self.dependents.get(md["uid"]):
            finalizers.append("orphan")
        if rtype.kind == "Namespace" and rtype.group == "":
            if md.get("name") in SYSTEM_NAMESPACES:
                raise errors.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
            if not md.get("deletionTimestamp"):
                md["deletionTimestamp"] = now_iso()
                obj["status"] = {"phase": "Terminating"}
                return self._write_marked(rtype, cur.obj, obj)
            if not obj.get("spec", {}).get("finalizers") and not md.get("finalizers"):
                return self._remove(rtype, obj)
            return obj
        graceful = (rtype.kind == "Pod" and rtype.group == "" and self.graceful_pods and obj["spec"].get("nodeName")
                    and grace_seconds != 0 and obj.get("status", {}).get("phase") not in ("Succeeded", "Failed"))
        if finalizers or graceful:
            if md.get("deletionTimestamp") and md.get("finalizers") == (finalizers or None):
                return obj
            md.setdefault("deletionTimestamp", now_iso())
            if graceful:
                md["deletionGracePeriodSeconds"] = obj["spec"].get("terminationGracePeriodSeconds", 30) if grace_seconds is None else grace_seconds
            if finalizers:
                md["finalizers"] = finalizers
            marked = self._write_marked(rtype, cur.obj, obj)
            if {"foregroundDeletion", "orphan"} & set(finalizers):
                for cb in self.on_marked:
                    cb(rtype, marked)
            return marked
        return self._remove(rtype, obj)

    def _write_marked(self, rtype: ResourceType, old: dict, obj: dict) -> dict:
        obj["metadata"]["resourceVersion"] = str(self._next_rv())
        self._store(rtype, obj)
        self._emit(rtype, "MODIFIED", obj, old)
        return copy.deepcopy(obj)

    def _remove(self, rtype: ResourceType, obj: dict) -> dict:
        md = obj["metadata"]
        self.objects[rtype.key].pop((md.get("namespace", ""), md["name"]), None)
        self.by_uid.pop(md["uid"], None)
        self._index_owners(rtype, obj, False)
        md["resourceVersion"] = str(self._next_rv())
        if rtype.kind == "CustomResourceDefinition" and rtype.group == "apiextensions.k8s.io":
            self.registry.unregister_crd(md["name"])
        if rtype.kind == "Pod":
            for k in [k for k in self.pod_logs if k[0] == md.get("namespace") and k[1] == md["name"]]:
                self.pod_logs.pop(k, None)
        self._emit(rtype, "DELETED", obj, None)
        for cb in self.on_removed:
            cb(rtype, obj)
        return copy.deepcopy(obj)

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
                          field_selector: str | None, **kw: Any) -> list[dict]:
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
              label_selector: str | None = None, field_selector: str | None = None) -> Watcher:
        """Register a watcher. With no resourceVersion (or "0") it first gets synthetic ADDED events."""
        lp, fp = parse_selectors(rtype, label_selector, field_selector)
        w = Watcher(rtype, ns, lp, fp)
        if not resource_version or resource_version == "0":
            for e in self.list_entries(rtype, ns, label_selector, field_selector):
                w.queue.put_nowait(("ADDED", e.raw))
        else:
            try:
                since = int(resource_version)
            except ValueError as ex:
                raise errors.bad_request(f"invalid resourceVersion {resource_version!r}") from ex
            if since < self.compacted[rtype.key]:
                w.queue.put_nowait(("ERROR", dumps(errors.gone(
                    f"too old resource version: {since} ({self.compacted[rtype.key]})").status())))
                return w
            for ev in self.events[rtype.key]:
                if ev.rv > since:
                    w.offer(ev)
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
