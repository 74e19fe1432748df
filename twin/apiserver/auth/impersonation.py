"""Impersonation, as kube-apiserver's WithImpersonation filter (apiserver/pkg/endpoints/filters/impersonation.go).

Impersonate-User (a system:serviceaccount:<ns>:<name> user is a ServiceAccount), Impersonate-Group (repeated),
Impersonate-Extra-<key> (repeated; the key lower-cased and path-unescaped) and Impersonate-Uid each need the
`impersonate` verb for the requester, checked in that order: users / groups / serviceaccounts in the core
group, userextras/<key> and uids in authentication.k8s.io, the value as the name. The first refusal is the
403 responsewriters.Forbidden writes; groups, extras or a uid without a user are the filter's plain-text 500.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from .authentication import Identity, split_sa_user

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHN = "authentication.k8s.io"


def requested(headers: Any) -> bool:
    return any(k.lower() in ("impersonate-user", "impersonate-group", "impersonate-uid")
               or k.lower().startswith(EXTRA_PREFIX) for k in headers)


def _extras(headers: Any) -> list[tuple[str, str]]:
    """(key, value) per Impersonate-Extra-<key> value, in header order (unescapeExtraKey: PathUnescape)."""
    return [(unquote(k[len(EXTRA_PREFIX):].lower()), v) for k, v in headers.items() if k.lower().startswith(EXTRA_PREFIX)]


def _go_reference(ref: dict) -> str:
    """Go's %v of a v1.ObjectReference: its seven string fields separated by spaces, in braces."""
    fields = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    return "{" + " ".join(ref.get(f, "") for f in fields) + "}"


def impersonate(authz: Any, who: Identity, headers: Any, uri: str) -> Identity:
    """The identity the headers ask for, each part authorized for the requester (authz.check raises the 403)."""
    user = headers.get(USER, "")
    groups = headers.getall(GROUP, [])
    extras = _extras(headers)
    uid = headers.get(UID, "")
    refs: list[dict] = []
    sa = split_sa_user(user) if user else None
    if sa is not None:
        refs.append({"kind": "ServiceAccount", "namespace": sa[0], "name": sa[1]})
    elif user:
        refs.append({"kind": "User", "name": user})
    refs.extend({"kind": "Group", "name": g} for g in groups)
    refs.extend({"kind": "UserExtra", "apiVersion": f"{AUTHN}/v1", "name": v, "fieldPath": k} for k, v in extras)
    if uid:
        refs.append({"kind": "UID", "name": uid, "apiVersion": f"{AUTHN}/v1"})
    if not user:
        text = (f"Internal Server Error: {json.dumps(uri)}: requested [{' '.join(_go_reference(r) for r in refs)}] "
                "without impersonating a user")
        raise web.HTTPInternalServerError(text=text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + "\n",
                                          headers={"X-Content-Type-Options": "nosniff"})
    new_groups: list[str] = [] if groups or sa is None else ["system:serviceaccounts", f"system:serviceaccounts:{sa[0]}"]
    new_groups.extend(groups)
    extra: dict[str, list[str]] = {}
    for k, v in extras:
        extra.setdefault(k, []).append(v)
    for ref in refs:
        attrs = {"verb": "impersonate", "group": "", "namespace": ref.get("namespace", ""), "name": ref["name"]}
        attrs.update({"ServiceAccount": {"resource": "serviceaccounts"}, "User": {"resource": "users"},
                      "Group": {"resource": "groups"},
                      "UserExtra": {"group": AUTHN, "resource": "userextras", "subresource": ref.get("fieldPath", "")},
                      "UID": {"group": AUTHN, "resource": "uids"}}[ref["kind"]])
        authz.check(who, attrs)
    if user != "system:anonymous":
        if not any(g in ("system:authenticated", "system:unauthenticated") for g in new_groups):
            new_groups.append("system:authenticated")
    elif "system:unauthenticated" not in new_groups:
        new_groups.append("system:unauthenticated")
    return Identity(user, tuple(new_groups), uid, tuple((k, tuple(v)) for k, v in extra.items()))
