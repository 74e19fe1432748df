"""ServiceAccountsController (pkg/controller/serviceaccount/serviceaccounts_controller.go): every active namespace
has a ServiceAccount "default", made when the namespace appears and made again when someone deletes it.

It acts inside the write (store hook), so a pod created right after its namespace finds the "default" account the
ServiceAccount admission plugin (apimachinery/admission_serviceaccount.py) looks up; the real controller's informer lag
is a retry loop in clients that the twin does not need. A terminating namespace gets nothing (its content goes).
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..apimachinery import errors
from .base import Controller, Kind

if TYPE_CHECKING:
    from ..registry.resources import ResourceType
    from ..store import Store

DEFAULT = "default"


def active_namespaces(store: Store) -> list[str]:
    """The namespaces not being terminated, in store order."""
    return [e.obj["metadata"]["name"] for e in store.list_entries(store.rt("", "v1", "namespaces"))
            if not e.obj["metadata"].get("deletionTimestamp")]


def ensure_service_account(store: Store, ns: str, name: str) -> None:
    """Create ServiceAccount ns/name unless it exists or the namespace is gone or terminating (a workload the twin
    installs ships its account, as real installs do: the admission plugin refuses pods naming a missing one)."""
    ns_rt, sa_rt = store.rt("", "v1", "namespaces"), store.rt("", "v1", "serviceaccounts")
    if store.exists(sa_rt, ns, name) or not store.exists(ns_rt, None, ns):
        return
    if store.get(ns_rt, None, ns)["metadata"].get("deletionTimestamp"):
        return
    try:
        store.create(sa_rt, ns, {"metadata": {"name": name, "namespace": ns}})
    except errors.ApiError as e:
        if e.code not in (403, 404, 409):  # raced with the namespace's deletion or another creator
            raise


class ServiceAccountsController(Controller):
    name = "serviceaccount-controller"
    ns_rt = Kind("", "v1", "namespaces")
    sa_rt = Kind("", "v1", "serviceaccounts")

    def setup(self) -> None:
        for ns in active_namespaces(self.store):
            ensure_service_account(self.store, ns, DEFAULT)

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        md = obj["metadata"]
        if rtype.key == self.ns_rt.key and etype != "DELETED":
            ensure_service_account(self.store, md["name"], DEFAULT)
        elif rtype.key == self.sa_rt.key and etype == "DELETED" and md["name"] == DEFAULT:
            ensure_service_account(self.store, md["namespace"], DEFAULT)

    async def run(self) -> None:
        await asyncio.Event().wait()  # everything arrives through the store hook
