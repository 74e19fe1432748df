"""RBAC escalation prevention, as kube-apiserver's rbac registry (pkg/registry/rbac) does it.

A client may write a Role or ClusterRole only with rules it holds itself (ConfirmNoEscalation over the rules
RulesFor gives it in the role's namespace), unless it may `escalate` that roles/clusterroles resource; it may
write a RoleBinding or ClusterRoleBinding only to a role whose rules it holds, unless it may `bind` that role.
system:masters skips both (EscalationAllowed). The refusal is apierrors.NewForbidden with the validation
package's message, the missing rules broken down (BreakdownRule), compacted by verb (CompactRules), written
with CompactString and sorted. An update that changes only ownerReferences, finalizers or managedFields is not
checked (IsOnlyMutatingGCFields), and neither is a controller's write: the check needs the requester, which the
API server puts in REQUEST for the request being served.
"""
from __future__ import annotations

import contextvars
import json
from typing import Any

from ...apimachinery import errors
from .authentication import Identity
from ...registry.resources import ResourceType

RBAC = "rbac.authorization.k8s.io"
PRIVILEGED_GROUP = "system:masters"
# (requester, request attributes) of the authorized request being served (server.ApiServer._authorize sets it in
# the request's own task); unset in controllers' tasks and on requests that were not authorized
REQUEST: contextvars.ContextVar[tuple[Identity, dict] | None] = contextvars.ContextVar("twin_request", default=None)
_ROLES = {"roles", "clusterroles"}
_BINDINGS = {"rolebindings", "clusterrolebindings"}
_GC_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields")
FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]


def install(store: Any, authz: Any) -> None:
    """Check every client write of an RBAC role or binding (store.before_write)."""
    def check(rtype: ResourceType, obj: dict, old: dict | None) -> None:
        current = REQUEST.get()
        if current is None or rtype.group != RBAC or rtype.plural not in _ROLES | _BINDINGS:
            return
        who, attrs = current
        if PRIVILEGED_GROUP in who.groups or (old is not None and _only_gc_fields(obj, old)):
            return
        if rtype.plural in _ROLES:
            _check_role(store, authz, who, attrs, rtype, obj, old)
        else:
            _check_binding(store, authz, who, rtype, obj)

    store.before_write.append(check)


def _only_gc_fields(new: dict, old: dict) -> bool:
    md = dict(new.get("metadata") or {})
    omd = old.get("metadata") or {}
    for k in _GC_FIELDS:
        md.pop(k, None)
        if k in omd:
            md[k] = omd[k]
    return {**new, "metadata": md} == old


def _check_role(store: Any, authz: Any, who: Identity, attrs: dict, rtype: ResourceType, role: dict,
                old: dict | None) -> None:
    """RoleEscalationAuthorized (escalate on the request's resource and name), else ConfirmNoEscalation; a
    ClusterRole with an aggregationRule (before or after) also needs every right, as it can gather anything."""
    md = role.get("metadata") or {}
    namespace = md.get("namespace", "") if rtype.namespaced else ""
    allowed, _ = authz.authorize(who, {"verb": "escalate", "group": RBAC, "resource": rtype.plural,
                                       "namespace": namespace, "name": attrs.get("name", "")})
    if allowed:
        return
    _confirm_no_escalation(store, who, namespace, rtype, md.get("name", ""), role.get("rules") or [])
    if rtype.plural == "clusterroles" and (role.get("aggregationRule") or (old or {}).get("aggregationRule")):
        try:
            _confirm_no_escalation(store, who, "", rtype, md.get("name", ""), FULL_AUTHORITY)
        except errors.ApiError as e:
            raise _forbidden(rtype, md.get("name", ""), "must have cluster-admin privileges to use the aggregationRule") from e


def _check_binding(store: Any, authz: Any, who: Identity, rtype: ResourceType, binding: dict) -> None:
    """BindingAuthorized (bind on the referenced role), else the role's rules must all be held."""
    from .authorization import role_reference_rules

    md = binding.get("metadata") or {}
    namespace = md.get("namespace", "") if rtype.namespaced else ""
    ref = binding.get("roleRef") or {}
    kind = ref.get("kind", "")
    resource = "clusterroles" if kind == "ClusterRole" else "roles" if kind == "Role" else ""
    allowed, _ = authz.authorize(who, {"verb": "bind", "group": RBAC, "resource": resource, "namespace": namespace,
                                       "name": ref.get("name", "")})
    if allowed:
        return
    rules, err = role_reference_rules(store, kind, ref.get("name", ""), namespace)
    if err:
        raise _forbidden(rtype, md.get("name", ""), err)
    _confirm_no_escalation(store, who, namespace, rtype, md.get("name", ""), rules)


def _confirm_no_escalation(store: Any, who: Identity, namespace: str, rtype: ResourceType, name: str,
                           rules: list[dict]) -> None:
    from .authorization import rules_for

    owner, resolution_errors = rules_for(store, who, namespace)
    missing = [sub for rule in rules for sub in breakdown(rule) if not any(covers(o, sub) for o in owner)]
    if not missing:
        return
    lines = sorted({compact_string(r) for r in compact(missing)})
    msg = (f"user {_go_quote(who.user)} (groups={_go_quote_list(who.groups)}) is attempting to grant RBAC "
           "permissions not currently held:\n" + "\n".join(lines))
    if resolution_errors:
        msg += f"; resolution errors: [{resolution_errors}]"
    raise _forbidden(rtype, name, msg)


def _forbidden(rtype: ResourceType, name: str, why: str) -> errors.ApiError:
    """apierrors.NewForbidden(qualified resource, name, err)."""
    return errors.forbidden(f'{rtype.plural}.{RBAC} "{name}" is forbidden: {why}',
                            {"name": name, "group": RBAC, "kind": rtype.plural})


# policy_comparator.go ---------------------------------------------------------------------------------
def breakdown(rule: dict) -> list[dict]:
    """BreakdownRule: one rule per group x resource x verb (x resourceName), then per URL x verb."""
    out = []
    names = rule.get("resourceNames") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in rule.get("verbs") or []:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                out.extend([{**base, "resourceNames": [n]} for n in names] if names else [base])
    for url in rule.get("nonResourceURLs") or []:
        for verb in rule.get("verbs") or []:
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _has_all(values: list[str], wanted: list[str]) -> bool:
    return all(w in values for w in wanted)


def _resources_cover(owned: list[str], wanted: list[str]) -> bool:
    if "*" in owned or _has_all(owned, wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def covers(owner: dict, sub: dict) -> bool:
    """ruleCovers: the owner rule allows everything the broken-down rule does."""
    o_verbs, o_groups, o_names = owner.get("verbs") or [], owner.get("apiGroups") or [], owner.get("resourceNames") or []
    s_names = sub.get("resourceNames") or []
    return (("*" in o_verbs or _has_all(o_verbs, sub.get("verbs") or []))
            and ("*" in o_groups or _has_all(o_groups, sub.get("apiGroups") or []))
            and _resources_cover(owner.get("resources") or [], sub.get("resources") or [])
            and all(any(_url_covers(o, p) for o in owner.get("nonResourceURLs") or [])
                    for p in sub.get("nonResourceURLs") or [])
            and (not o_names or (bool(s_names) and _has_all(o_names, s_names))))


def compact(rules: list[dict]) -> list[dict]:
    """CompactRules: simple rules (one group, one resource, at most one name) that differ only by verb, merged."""
    out: list[dict] = []
    simple: dict[tuple, dict] = {}
    for r in rules:
        names = r.get("resourceNames") or []
        if r.get("nonResourceURLs") or len(names) > 1 or len(r.get("apiGroups") or []) != 1 or \
                len(r.get("resources") or []) != 1:
            out.append(r)
            continue
        key = (r["apiGroups"][0], r["resources"][0], tuple(names))
        if key in simple:
            simple[key]["verbs"] = simple[key]["verbs"] + list(r.get("verbs") or [])
        else:
            simple[key] = {**r, "verbs": list(r.get("verbs") or [])}
    return out + list(simple.values())


def _go_quote(s: str) -> str:
    """Go's %q of a string (JSON's escaping covers the names RBAC allows)."""
    return json.dumps(s, ensure_ascii=False)


def _go_quote_list(values: Any) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(_go_quote(v) for v in values) + "]"


def compact_string(rule: dict) -> str:
    """rbacv1helpers.CompactString: {APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}."""
    parts = [f"{label}:{_go_quote_list(rule[key])}" for label, key in (
        ("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"), ("Verbs", "verbs")) if rule.get(key)]
    return "{" + ", ".join(parts) + "}"
