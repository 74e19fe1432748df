"""authorization.k8s.io/v1 self reviews (`kubectl auth can-i`, `can-i --list`), answered by RBAC over the stored roles.

The twin's bearer token stands for kubeadm's admin.conf identity (1.29+): user kubernetes-admin in the
group kubeadm:cluster-admins, which the ClusterRoleBinding of that name binds to cluster-admin. At start
the twin stores those objects and the bootstrap roles every authenticated user has (system:basic-user,
system:discovery, system:public-info-viewer), so the reviews are evaluated as the real RBAC authorizer
does it (plugin/pkg/auth/authorizer/rbac): the first binding whose role allows the request gives the
reason; the rules review lists every rule of every binding that applies. The twin itself lets the token
do anything, whatever the bindings say (docs/twin.md, limits).
"""
from __future__ import annotations

from typing import Any

from . import errors
from .resources import ResourceType

USER = "kubernetes-admin"
GROUPS = ("kubeadm:cluster-admins", "system:authenticated")
REVIEW_KINDS = {"selfsubjectaccessreviews": "SelfSubjectAccessReview", "selfsubjectrulesreviews": "SelfSubjectRulesReview"}

_BOOTSTRAP_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                   "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}
_DISCOVERY_URLS = ["/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi", "/openapi/*", "/api", "/api/*",
                   "/apis", "/apis/*"]
# name -> rules, as pkg/registry/rbac/rest bootstrap policy (1.32) and kubeadm define them
_CLUSTER_ROLES = {
    "cluster-admin": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "system:basic-user": [
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
         "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
        {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}],
    "system:discovery": [{"verbs": ["get"], "nonResourceURLs": _DISCOVERY_URLS}],
    "system:public-info-viewer": [{"verbs": ["get"], "nonResourceURLs": _DISCOVERY_URLS[:5]}],
}
# binding name -> (cluster role, subject groups)
_BINDINGS = {
    "cluster-admin": ("cluster-admin", ["system:masters"]),
    "kubeadm:cluster-admins": ("cluster-admin", ["kubeadm:cluster-admins"]),
    "system:basic-user": ("system:basic-user", ["system:authenticated"]),
    "system:discovery": ("system:discovery", ["system:authenticated"]),
    "system:public-info-viewer": ("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
}
_RBAC = "rbac.authorization.k8s.io"


def bootstrap(store: Any) -> None:
    """Store the ClusterRoles and ClusterRoleBindings a kubeadm cluster starts with (those the reviews use)."""
    roles = store.rt(_RBAC, "v1", "clusterroles")
    bindings = store.rt(_RBAC, "v1", "clusterrolebindings")
    for name, rules in _CLUSTER_ROLES.items():
        store.create(roles, None, {"metadata": {"name": name, **_BOOTSTRAP_META}, "rules": rules})
    for name, (role, groups) in _BINDINGS.items():
        meta = {"name": name} if name.startswith("kubeadm:") else {"name": name, **_BOOTSTRAP_META}
        store.create(bindings, None, {
            "metadata": meta, "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": _RBAC, "kind": "Group", "name": g} for g in groups]})


# rule matching, as rbacv1helpers and RuleAllows ------------------------------------------------------
def _has(values: list[str] | None, want: str) -> bool:
    values = values or []
    return "*" in values or want in values


def _resource_matches(rule: dict, resource: str, sub: str) -> bool:
    combined = f"{resource}/{sub}" if sub else resource
    for r in rule.get("resources") or []:
        if r in ("*", combined) or (sub and r == f"*/{sub}"):
            return True
    return False


def _url_matches(rule: dict, path: str) -> bool:
    for u in rule.get("nonResourceURLs") or []:
        if u in ("*", path) or (u.endswith("*") and path.startswith(u[:-1])):
            return True
    return False


def _allows(rule: dict, attrs: dict, resource_request: bool) -> bool:
    if not _has(rule.get("verbs"), attrs.get("verb", "")):
        return False
    if not resource_request:
        return _url_matches(rule, attrs.get("path", ""))
    names = rule.get("resourceNames") or []
    return (_has(rule.get("apiGroups"), attrs.get("group", ""))
            and _resource_matches(rule, attrs.get("resource", ""), attrs.get("subresource", ""))
            and (not names or attrs.get("name", "") in names))


def _applies(subject: dict) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == USER
    if kind == "Group":
        return name in GROUPS
    return False  # ServiceAccount subjects never name the admin user


def _describe(subject: dict) -> str:
    return f'{subject["kind"]} "{subject["name"]}"'


def _visit(store: Any, namespace: str):
    """(source, rules, error) per binding that applies to the user, cluster bindings first (the resolver's order);
    a binding whose role is missing gives the lister's NotFound as its error, as GetRoleReferenceRules does."""
    cluster_roles = store.rt(_RBAC, "v1", "clusterroles")
    scopes: list[tuple[str, str, str | None]] = [("ClusterRoleBinding", "clusterrolebindings", None)]
    if namespace:
        scopes.append(("RoleBinding", "rolebindings", namespace))
    for kind, plural, ns in scopes:
        for b in sorted(store.list(store.rt(_RBAC, "v1", plural), ns), key=lambda x: x["metadata"]["name"]):
            subject = next((s for s in b.get("subjects") or [] if _applies(s)), None)
            if subject is None:
                continue
            ref = b.get("roleRef") or {}
            role_kind, role_name = ref.get("kind", ""), ref.get("name", "")
            if role_kind == "ClusterRole":
                rt, role_ns = cluster_roles, None
            elif role_kind == "Role" and ns:
                rt, role_ns = store.rt(_RBAC, "v1", "roles"), ns
            else:
                yield "", [], f'unsupported role reference kind: "{role_kind}"'
                continue
            if not store.exists(rt, role_ns, role_name):
                yield "", [], f'{rt.singular}.{_RBAC} "{role_name}" not found'
                continue
            where = b["metadata"]["name"] + (f"/{ns}" if ns else "")
            yield (f'{kind} "{where}" of {role_kind} "{role_name}" to {_describe(subject)}',
                   store.get(rt, role_ns, role_name).get("rules") or [], "")


def _aggregate(errs: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as it is, several deduplicated in brackets."""
    seen = list(dict.fromkeys(errs))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


# the two reviews --------------------------------------------------------------------------------------
def _invalid(rtype: ResourceType, field: str, value: str, message: str) -> errors.ApiError:
    return errors.invalid(rtype, "", [{"reason": "FieldValueInvalid", "field": field,
                                       "message": f"Invalid value: {value}: {message}"}])


def _metadata_must_be_empty(rtype: ResourceType, body: dict) -> None:
    md = {k: v for k, v in (body.get("metadata") or {}).items() if v not in (None, {}, [], "") and k != "managedFields"}
    if md:
        raise _invalid(rtype, "metadata", '"' + ", ".join(sorted(md)) + '"', "must be empty")


def access_review(store: Any, rtype: ResourceType, body: dict) -> dict:
    """SelfSubjectAccessReview: the request echoed with status allowed / reason (selfsubjectaccessreview/rest.go)."""
    spec = body.get("spec") or {}
    res, nonres = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and nonres is not None:
        raise _invalid(rtype, "spec.nonResourceAttributes", "{}", "cannot be specified in combination with resourceAttributes")
    if res is None and nonres is None:
        raise _invalid(rtype, "spec.resourceAttributes", '"null"',
                       "exactly one of nonResourceAttributes or resourceAttributes must be specified")
    _metadata_must_be_empty(rtype, body)
    attrs: dict = (res if res is not None else nonres) or {}
    namespace = attrs.get("namespace", "") if res is not None else ""
    status: dict[str, Any] = {"allowed": False}
    errs: list[str] = []
    for source, rules, err in _visit(store, namespace):
        if any(_allows(r, attrs, res is not None) for r in rules):
            status = {"allowed": True, "reason": f"RBAC: allowed by {source}"}
            break
        if err:
            errs.append(err)
    else:
        if errs:  # denied: the resolution errors are the reason (no opinion, no evaluationError)
            status["reason"] = f"RBAC: {_aggregate(errs)}"
    return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}


def rules_review(store: Any, body: dict) -> dict:
    """SelfSubjectRulesReview: a new object holding only the status (selfsubjectrulesreview/rest.go)."""
    namespace = (body.get("spec") or {}).get("namespace") or ""
    if not namespace:
        raise errors.bad_request("no namespace on request")
    resource_rules: list[dict] = []
    non_resource_rules: list[dict] = []
    errs: list[str] = []
    for _source, rules, err in _visit(store, namespace):
        if err:
            errs.append(err)
        for r in rules:
            if r.get("resources"):
                resource_rules.append({"verbs": r.get("verbs") or [],
                                       **{k: r[k] for k in ("apiGroups", "resources", "resourceNames") if r.get(k)}})
            if r.get("nonResourceURLs"):
                non_resource_rules.append({"verbs": r.get("verbs") or [], "nonResourceURLs": r["nonResourceURLs"]})
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                              "incomplete": False}
    if errs:
        status["evaluationError"] = _aggregate(errs)
    return {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}
