"""The legacy token controller (pkg/controller/serviceaccount/tokens_controller.go): a Secret of type
kubernetes.io/service-account-token that names a ServiceAccount (annotation kubernetes.io/service-account.name, and
kubernetes.io/service-account.uid once known) gets data token, ca.crt and namespace and the uid annotation; one whose
ServiceAccount does not exist (or is another one by uid) is deleted, and so are an account's token Secrets when the
account goes.

The token comes from the API server's Authenticator (legacy_token: legacy.go's claims, no expiry), so it
authenticates as system:serviceaccount:<ns>:<name> while the Secret holds it. It acts inside the write, like
serviceaccounts.py, so a client reading the Secret back after creating it finds the data.
"""
from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING

from ..apimachinery import errors
from .base import Controller, Kind

if TYPE_CHECKING:
    from ..registry.resources import ResourceType

TOKEN_TYPE = "kubernetes.io/service-account-token"
NAME_KEY = "kubernetes.io/service-account.name"
UID_KEY = "kubernetes.io/service-account.uid"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _names(secret: dict, sa: dict) -> bool:
    """IsServiceAccountToken: the Secret is a token of this account (by name, and by uid when it has one)."""
    ann = secret["metadata"].get("annotations") or {}
    return secret.get("type") == TOKEN_TYPE and ann.get(NAME_KEY) == sa["metadata"]["name"] and \
        ann.get(UID_KEY, "") in ("", sa["metadata"]["uid"])


class TokensController(Controller):
    name = "tokens-controller"
    sa_rt = Kind("", "v1", "serviceaccounts")
    secret_rt = Kind("", "v1", "secrets")

    def setup(self) -> None:
        self.ca = (self.cluster.dir / "pki" / "ca.crt").read_text()  # the root CA the publisher also serves
        for e in self.store.list_entries(self.secret_rt):
            self.sync_secret(e.obj)

    def on_change(self, rtype: ResourceType, etype: str, obj: dict, old: dict | None) -> None:
        if rtype.key == self.secret_rt.key and etype != "DELETED" and obj.get("type") == TOKEN_TYPE:
            self.sync_secret(obj)
        elif rtype.key == self.sa_rt.key and etype == "DELETED":
            for e in self.store.list_entries(self.secret_rt, obj["metadata"]["namespace"]):
                if _names(e.obj, obj):
                    self._delete(e.obj)

    def sync_secret(self, secret: dict) -> None:
        md = secret["metadata"]
        ns, sa_name = md["namespace"], (md.get("annotations") or {}).get(NAME_KEY, "")
        if md.get("deletionTimestamp") or not sa_name:
            return
        sa = self.store.get(self.sa_rt, ns, sa_name) if self.store.exists(self.sa_rt, ns, sa_name) else None
        if sa is None or not _names(secret, sa):
            self._delete(secret)  # syncSecret: "service account does not exist, deleting token"
            return
        data = secret.get("data") or {}
        if all(data.get(k) for k in ("token", "ca.crt", "namespace")):
            return
        fresh = self.store.get(self.secret_rt, ns, md["name"])
        fresh["data"] = dict(fresh.get("data") or {}, **{
            "ca.crt": _b64(self.ca), "namespace": _b64(ns),
            "token": _b64(self.cluster.authn.legacy_token(ns, sa_name, sa["metadata"]["uid"], md["name"]))})
        fresh["metadata"]["annotations"] = dict(fresh["metadata"].get("annotations") or {},
                                                **{NAME_KEY: sa_name, UID_KEY: sa["metadata"]["uid"]})
        try:
            self.store.update(self.secret_rt, ns, md["name"], fresh)
        except errors.ApiError as e:
            if e.code not in (404, 409):  # gone meanwhile, or a newer write that brings its own sync
                raise

    def _delete(self, secret: dict) -> None:
        try:
            self.store.delete(self.secret_rt, secret["metadata"]["namespace"], secret["metadata"]["name"])
        except errors.ApiError as e:
            if e.code != 404:
                raise

    async def run(self) -> None:
        await asyncio.Event().wait()  # everything arrives through the store hook
