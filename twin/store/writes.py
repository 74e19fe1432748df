"""Create and update (PUT): the write path from request body to stored object and watch event.

create allocates the name (generateName with RetryGenerateName, twin/apimachinery/names.py), uid and
timestamps; update applies optimistic concurrency on metadata.resourceVersion, keeps what a PUT
may not change, and hands an object whose last finalizer went to deletion.py for removal.
"""
from __future__ import annotations

import json
import uuid
from typing import Any
from collections.abc import Callable

from ..apimachinery import errors, names
from .. import validation
from ..registry.resources import Registry, ResourceType
from . import managedfields
from .admission import admit, check_kind, typed
from .objects import _clone, _is_crd_type, now_iso
from .watch import WatchLog


class Writes(WatchLog):
    """The object map and its watches plus create and update."""

    def __init__(self, registry: Registry | None = None):
        super().__init__(registry)
        # warnings of the last write (unknown fields dropped without fieldValidation=Strict)
        self.last_warnings: list[str] = []
        # metadata.generateName -> name; tests replace it to force collisions
        self.generate_name: Callable[[str], str] = names.simple_name
        # checks of a client's write before admission, (rtype, new object, old object or None); they raise to
        # refuse it (RBAC escalation prevention, twin/apiserver/auth/escalation.py). Controllers' internal writes skip them.
        self.before_write: list[Callable[[ResourceType, dict, dict | None], None]] = []

    # update removes an object whose last finalizer it drops: removal belongs to deletion.py, the
    # layer above this one (which also writes through update), so it is only declared here
    _remove: Callable[..., Any]

    def schema(self, rtype: ResourceType) -> Any:
        """The compiled schema of a kind (None: none known)."""
        return self.registry.schema(rtype) if rtype.crd else validation.schema_for(rtype.api_version, rtype.kind)

    @staticmethod
    def writer(rtype: ResourceType, manager: str, subresource: str | None) -> managedfields.Write:
        return managedfields.Write(manager, rtype.api_version, subresource, "status" in rtype.subresources)

    def _own(self, rtype: ResourceType, md: dict, old: dict | None, new: dict, sent: Any,
             field_manager: str | None, subresource: str | None, managed: list[dict] | None) -> None:
        """Write metadata.managedFields of new: `managed` as given (apply worked them out), or the Update of
        field_manager (the client's) from old to new. Internal writes (neither) keep what they carry."""
        if managed is None and field_manager is not None:
            live = old["metadata"].get("managedFields") if old is not None else None
            base = managedfields.base_entries(sent, live, subresource)
            managed = managedfields.update(base, old, new, self.schema(rtype),
                                           self.writer(rtype, field_manager, subresource))
        if managed is not None:
            if managed:
                md["managedFields"] = managed
            else:
                md.pop("managedFields", None)

    def create(self, rtype: ResourceType, ns: str | None, body: dict, *, dry_run: bool = False,
               strict: bool = False, raw: bool = False, field_manager: str | None = None,
               managed: list[dict] | None = None) -> Any:
        """Create an object; returns it as stored (raw=True: its JSON bytes). field_manager: the client's, whose
        Update entry managedFields gets; managed: the managedFields as server-side apply worked them out."""
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        self.last_warnings = []
        obj = _clone(body)
        check_kind(rtype, obj)
        obj = typed(rtype, obj)
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
        for check in self.before_write:
            check(rtype, obj, None)
        warnings = admit(self.registry, rtype, obj, strict)
        self._own(rtype, md, None, obj, md.get("managedFields"), field_manager, None, managed)
        _template_generation(rtype, obj, None)
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
        out = self._commit(rtype, obj, None, raw)
        self.last_warnings = warnings  # after the hooks' own writes
        return out

    def update(self, rtype: ResourceType, ns: str | None, name: str, body: dict, *, subresource: str | None = None,
               dry_run: bool = False, strict: bool = False, _internal: bool = False, raw: bool = False,
               field_manager: str | None = None, managed: list[dict] | None = None) -> Any:
        """PUT semantics: optimistic concurrency on metadata.resourceVersion when the body has one.

        subresource="status" changes only status; a main update keeps status when the type has a
        status subresource (unless _internal: controllers write both). A write that changes nothing
        keeps the resourceVersion and sends no event. field_manager / managed: as for create.
        """
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request was not a JSON object")
        self.last_warnings = []
        cur = self._entry(rtype, ns, name)
        old = cur.obj
        new = _clone(body)
        check_kind(rtype, new)
        md = new.get("metadata")
        if md is None:
            md = new["metadata"] = {}
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        sent = md.get("managedFields")
        if md.get("name") and md["name"] != name:
            raise errors.bad_request(f'the name of the object ({md["name"]}) does not match the name on the URL ({name})')
        if md.get("namespace") and rtype.namespaced and ns and md["namespace"] != ns:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        want_rv = md.get("resourceVersion")
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rtype, name)
        new = typed(rtype, new)
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
        if not _internal:
            for check in self.before_write:
                check(rtype, new, old)
        warnings = admit(self.registry, rtype, new, strict, old, _internal or subresource == "status")
        self._own(rtype, md, old, new, sent, field_manager, subresource, managed)
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
        _template_generation(rtype, new, old)
        if new == old:
            return self._result(rtype, old, cur.raw, raw)  # a no-op write does not bump resourceVersion
        if omd.get("deletionTimestamp") and not md.get("finalizers") and omd.get("finalizers"):
            md.pop("finalizers", None)
            if dry_run:
                return self._result(rtype, new, None, raw)
            return self._remove(rtype, new, raw=raw)
        if dry_run:
            return self._result(rtype, new, None, raw)
        out = self._commit(rtype, new, old, raw)
        self.last_warnings = warnings
        return out

    def _commit(self, rtype: ResourceType, obj: dict, old: dict | None, raw: bool) -> Any:
        """Store obj (replacing old) under a new resourceVersion, index it, and tell watchers and hooks."""
        obj["metadata"]["resourceVersion"] = str(self._next_rv())
        if old is not None:
            self._index_owners(rtype, old, False)
        e = self._store(rtype, obj)
        self._index_owners(rtype, obj, True)
        if _is_crd_type(rtype):
            self.registry.register_crd(obj)
        out = self._result(rtype, obj, e.raw, raw)
        self._emit(rtype, "ADDED" if old is None else "MODIFIED", obj, old, e.raw)
        return out


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _template_generation(rtype: ResourceType, new: dict, old: dict | None) -> None:
    """The DaemonSet strategy's spec.templateGeneration, which apps/v1 serves as this annotation: 1 at create, one
    more each time the pod template changes (the controller's pod-template-generation label follows it)."""
    if rtype.kind != "DaemonSet" or rtype.group != "apps" or rtype.crd or not isinstance(new.get("spec"), dict):
        return
    gen = 1
    if old is not None:
        try:
            gen = int((old["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION, 1))
        except ValueError:
            gen = 1
        gen += new["spec"].get("template") != (old.get("spec") or {}).get("template")
    md = new["metadata"]
    md["annotations"] = dict(md.get("annotations") or {}, **{TEMPLATE_GENERATION: str(gen)})
