"""RBAC as kube-apiserver authorizes: every request and the access reviews (`kubectl auth can-i`).

Impersonation is twin/apiserver/auth/impersonation.py, escalation prevention on RBAC writes twin/apiserver/auth/escalation.py.

The admin token and admin.conf's client certificate stand for kubeadm's admin identity
(twin/apiserver/auth/authentication.py), which the ClusterRoleBinding kubeadm:cluster-admins binds to cluster-admin. At start the twin stores those objects
and the bootstrap roles every authenticated user has (system:basic-user, system:discovery,
system:public-info-viewer), so requests and reviews are evaluated as the real RBAC authorizer does it
(plugin/pkg/auth/authorizer/rbac): the first binding whose role allows the request gives the reason; the
rules review lists every rule of every binding that applies. The group system:masters is allowed before
RBAC is asked, as kube-apiserver's privileged-group authorizer does.
"""
from __future__ import annotations

from typing import Any

from ...apimachinery import errors
from . import rbac_aggregation
from .authentication import Identity, split_sa_user
from ...registry.resources import ResourceType

PRIVILEGED_GROUP = "system:masters"

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
    """Store the ClusterRoles and ClusterRoleBindings a kubeadm cluster starts with (those the reviews use), and
    keep aggregated ClusterRoles' rules (twin/apiserver/auth/rbac_aggregation.py)."""
    rbac_aggregation.install(store)
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


def _applies(subject: dict, who: Identity, binding_ns: str) -> bool:
    """appliesToUser: a User by name, a Group by membership, a ServiceAccount by its user name (the subject's
    namespace defaults to the RoleBinding's)."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == who.user
    if kind == "Group":
        return name in who.groups
    if kind == "ServiceAccount":
        sa_ns = subject.get("namespace") or binding_ns
        return bool(sa_ns) and split_sa_user(who.user) == (sa_ns, name)
    return False


def _describe(subject: dict, binding_ns: str) -> str:
    if subject["kind"] == "ServiceAccount":  # describeSubject: name/namespace
        return f'ServiceAccount "{subject["name"]}/{subject.get("namespace") or binding_ns}"'
    return f'{subject["kind"]} "{subject["name"]}"'


def role_reference_rules(store: Any, kind: str, name: str, namespace: str) -> tuple[list[dict], str]:
    """GetRoleReferenceRules: the rules of a roleRef, or the lister's NotFound / the unsupported kind as error."""
    if kind == "ClusterRole":
        rt, role_ns = store.rt(_RBAC, "v1", "clusterroles"), None
    elif kind == "Role":
        rt, role_ns = store.rt(_RBAC, "v1", "roles"), namespace
    else:
        return [], f'unsupported role reference kind: "{kind}"'
    if not role_ns and kind == "Role" or not store.exists(rt, role_ns, name):
        return [], f'{rt.singular}.{_RBAC} "{name}" not found'
    return store.get(rt, role_ns, name).get("rules") or [], ""


def _visit(store: Any, who: Identity, namespace: str):
    """(source, rules, error) per binding that applies to the user, cluster bindings first (the resolver's order);
    a binding whose role is missing gives the lister's NotFound as its error, as GetRoleReferenceRules does."""
    scopes: list[tuple[str, str, str | None]] = [("ClusterRoleBinding", "clusterrolebindings", None)]
    if namespace:
        scopes.append(("RoleBinding", "rolebindings", namespace))
    for kind, plural, ns in scopes:
        for b in sorted(store.list(store.rt(_RBAC, "v1", plural), ns), key=lambda x: x["metadata"]["name"]):
            subject = next((s for s in b.get("subjects") or [] if _applies(s, who, ns or "")), None)
            if subject is None:
                continue
            ref = b.get("roleRef") or {}
            role_kind, role_name = ref.get("kind", ""), ref.get("name", "")
            rules, err = role_reference_rules(store, role_kind, role_name, ns or "")
            if err:
                yield "", [], err
                continue
            where = b["metadata"]["name"] + (f"/{ns}" if ns else "")
            yield f'{kind} "{where}" of {role_kind} "{role_name}" to {_describe(subject, ns or "")}', rules, ""


def rules_for(store: Any, who: Identity, namespace: str) -> tuple[list[dict], str]:
    """RulesFor: every rule the user holds in the namespace (cluster-wide ones only for ""), and the aggregated
    resolution errors."""
    rules: list[dict] = []
    errs: list[str] = []
    for _source, found, err in _visit(store, who, namespace):
        rules.extend(found)
        if err:
            errs.append(err)
    return rules, _aggregate(errs) if errs else ""


def evaluate(store: Any, who: Identity, attrs: dict, resource_request: bool) -> tuple[bool, str]:
    """(allowed, reason) as the union of the privileged-group and RBAC authorizers answers: a denial's reason
    is empty unless a binding could not be resolved."""
    if PRIVILEGED_GROUP in who.groups:
        return True, ""
    namespace = attrs.get("namespace", "") if resource_request else ""
    errs: list[str] = []
    for source, rules, err in _visit(store, who, namespace):
        if any(_allows(r, attrs, resource_request) for r in rules):
            return True, f"RBAC: allowed by {source}"
        if err:
            errs.append(err)
    return False, f"RBAC: {_aggregate(errs)}" if errs else ""


class Authorizer:
    """evaluate() behind a cache of decisions, dropped whenever an RBAC object changes (store.on_change): the
    hot path of a request is one dict lookup."""

    MAX_ENTRIES = 20000

    def __init__(self, store: Any):
        self.store = store
        self.cache: dict[tuple, tuple[bool, str]] = {}
        store.on_change.append(self._changed)

    def _changed(self, rtype: ResourceType, _etype: str, _obj: dict, _old: dict | None) -> None:
        if rtype.group == _RBAC:
            self.cache.clear()

    def authorize(self, who: Identity, attrs: dict, resource_request: bool = True) -> tuple[bool, str]:
        if resource_request:
            key: tuple = (who, attrs.get("verb", ""), attrs.get("group", ""), attrs.get("resource", ""),
                          attrs.get("subresource", ""), attrs.get("namespace", ""), attrs.get("name", ""))
        else:
            key = (who, attrs.get("verb", ""), attrs.get("path", ""))
        hit = self.cache.get(key)
        if hit is None:
            if len(self.cache) >= self.MAX_ENTRIES:
                self.cache.clear()
            hit = self.cache[key] = evaluate(self.store, who, attrs, resource_request)
        return hit

    def check(self, who: Identity, attrs: dict, resource_request: bool = True) -> None:
        """403 Forbidden as responsewriters.Forbidden writes it, unless allowed."""
        allowed, reason = self.authorize(who, attrs, resource_request)
        if not allowed:
            raise forbidden(who, attrs, resource_request, reason)


def forbidden(who: Identity, attrs: dict, resource_request: bool, reason: str) -> errors.ApiError:
    """forbiddenMessage + apierrors.NewForbidden: the qualified resource (no subresource) and name lead the
    message; details carry name, group and the resource as kind."""
    verb = attrs.get("verb", "")
    if not resource_request:
        msg = f'User "{who.user}" cannot {verb} path "{attrs.get("path", "")}"'
    else:
        resource, sub = attrs.get("resource", ""), attrs.get("subresource", "")
        msg = (f'User "{who.user}" cannot {verb} resource "{resource}{"/" + sub if sub else ""}" '
               f'in API group "{attrs.get("group", "")}"')
        ns = attrs.get("namespace", "")
        msg += f' in the namespace "{ns}"' if ns else " at the cluster scope"
    if reason:
        msg = f"{msg}: {reason}"
    if not resource_request:
        return errors.forbidden(f"forbidden: {msg}")
    group, resource, name = attrs.get("group", ""), attrs.get("resource", ""), attrs.get("name", "")
    qualified = f"{resource}.{group}" if group else resource
    lead = f'{qualified} "{name}"' if name else qualified
    details = {k: v for k, v in (("name", name), ("group", group), ("kind", resource)) if v}
    return errors.forbidden(f"{lead} is forbidden: {msg}", details)


def _aggregate(errs: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as it is, several deduplicated in brackets."""
    seen = list(dict.fromkeys(errs))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


# the access reviews ------------------------------------------------------------------------------------
def _invalid(rtype: ResourceType, field: str, value: str, message: str) -> errors.ApiError:
    return errors.invalid(rtype, "", [{"reason": "FieldValueInvalid", "field": field,
                                       "message": f"Invalid value: {value}: {message}"}])


def _metadata_must_be_empty(rtype: ResourceType, body: dict) -> None:
    md = {k: v for k, v in (body.get("metadata") or {}).items() if v not in (None, {}, [], "") and k != "managedFields"}
    if md:
        raise _invalid(rtype, "metadata", '"' + ", ".join(sorted(md)) + '"', "must be empty")


def _review_attrs(rtype: ResourceType, spec: dict) -> tuple[dict, bool]:
    res, nonres = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and nonres is not None:
        raise _invalid(rtype, "spec.nonResourceAttributes", "{}", "cannot be specified in combination with resourceAttributes")
    if res is None and nonres is None:
        raise _invalid(rtype, "spec.resourceAttributes", '"null"',
                       "exactly one of nonResourceAttributes or resourceAttributes must be specified")
    return (res if res is not None else nonres) or {}, res is not None


def _review_status(authz: Authorizer, who: Identity, attrs: dict, resource_request: bool) -> dict:
    allowed, reason = authz.authorize(who, attrs, resource_request)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def access_review(authz: Authorizer, who: Identity, rtype: ResourceType, body: dict) -> dict:
    """SelfSubjectAccessReview: the request echoed with status allowed / reason (selfsubjectaccessreview/rest.go)."""
    spec = body.get("spec") or {}
    attrs, resource_request = _review_attrs(rtype, spec)
    _metadata_must_be_empty(rtype, body)
    return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec,
            "status": _review_status(authz, who, attrs, resource_request)}


def subject_access_review(authz: Authorizer, rtype: ResourceType, body: dict) -> dict:
    """SubjectAccessReview: the same evaluation for the user and groups the spec names, taken as they are
    (subjectaccessreview/rest.go adds no group)."""
    spec = body.get("spec") or {}
    attrs, resource_request = _review_attrs(rtype, spec)
    user, groups = spec.get("user") or "", spec.get("groups") or []
    if not user and not groups:
        raise _invalid(rtype, "spec.user", '""', "at least one of user or group must be specified")
    _metadata_must_be_empty(rtype, body)
    extra = tuple((k, tuple(v or [])) for k, v in (spec.get("extra") or {}).items())
    return {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec,
            "status": _review_status(authz, Identity(user, tuple(groups), spec.get("uid") or "", extra), attrs,
                                     resource_request)}


def local_subject_access_review(authz: Authorizer, rtype: ResourceType, namespace: str, body: dict) -> dict:
    """LocalSubjectAccessReview: a SubjectAccessReview confined to the URL's namespace (localsubjectaccessreview
    validation and rest.go: metadata empty but for the namespace, no nonResourceAttributes, the same namespace)."""
    spec = body.get("spec") or {}
    nonres = spec.get("nonResourceAttributes")
    if nonres is not None:
        fields = ", ".join(f'{k.capitalize()}:"{nonres.get(k, "")}"' for k in ("path", "verb"))
        raise _invalid(rtype, "spec.nonResourceAttributes", f"&authorization.NonResourceAttributes{{{fields}}}",
                       "disallowed on this kind of request")
    _metadata_must_be_empty(rtype, {"metadata": {k: v for k, v in (body.get("metadata") or {}).items() if k != "namespace"}})
    if spec.get("resourceAttributes") is not None and (spec["resourceAttributes"].get("namespace") or "") != namespace:
        raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    review = subject_access_review(authz, rtype, {"spec": spec})
    return {**review, "kind": "LocalSubjectAccessReview", "metadata": {"namespace": namespace, "creationTimestamp": None}}


def rules_review(store: Any, who: Identity, body: dict) -> dict:
    """SelfSubjectRulesReview: a new object holding only the status (selfsubjectrulesreview/rest.go)."""
    namespace = (body.get("spec") or {}).get("namespace") or ""
    if not namespace:
        raise errors.bad_request("no namespace on request")
    resource_rules: list[dict] = []
    non_resource_rules: list[dict] = []
    errs: list[str] = []
    for _source, rules, err in _visit(store, who, namespace):
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
