"""The object store behind the twin's API server: CRUD, resourceVersions, watches, deletion.

Writes go through the same stages as in the real API server: decode (unknown fields dropped or,
under fieldValidation=Strict, rejected), defaulting, validation, admission (namespace
lifecycle), then storage with a new resourceVersion and a watch event. One file per concern:

- objects.py: the object map (dict and JSON bytes of each object), indexes, resourceVersions, reads;
- watch.py: the per-resource event log, the watchers and what a watch replays;
- admission.py: the checks of a body before storage (kind, defaulting, validation);
- writes.py: create and update; deletion.py: delete, finalizers, namespaces and CRDs;
- patching.py: json/merge/strategic patch and server-side apply; managedfields.py: apply's merge and field
  ownership (metadata.managedFields, conflicts);
- facade.py: Store, the class the rest of the twin holds. Name allocation is twin/apimachinery/names.py and
  the patch arithmetic twin/apimachinery/patch.py.

Python API used by the controllers (kept stable): create, get, get_raw, exists, list,
list_entries, count, update(_internal=True), patch, delete, finalize, delete_collection, watch,
unwatch, rt, rt_for; hooks on_change, on_removed, on_marked; indexes objects, dependents, by_uid.
"""
from __future__ import annotations

from .deletion import CRD_CLEANUP_FINALIZER, RETURNS_DELETED_OBJECT, SYSTEM_NAMESPACES
from .facade import Store
from .objects import Entry, dumps, now_iso, parse_selectors
from .watch import EVENT_LOG_SIZE, WATCH_BACKLOG, Event, Watcher

__all__ = ["CRD_CLEANUP_FINALIZER", "EVENT_LOG_SIZE", "RETURNS_DELETED_OBJECT", "SYSTEM_NAMESPACES", "WATCH_BACKLOG",
           "Entry", "Event", "Store", "Watcher", "dumps", "now_iso", "parse_selectors"]
