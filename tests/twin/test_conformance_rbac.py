"""Conformance: RBAC enforced on every request, ServiceAccount tokens, impersonation, SubjectAccessReview.

Each test makes its own ServiceAccount in its own namespace and gets a token with `kubectl create token`; what
the token may do is exactly what the RoleBindings and ClusterRoleBindings give it, and a denial is the 403
kube-apiserver writes (endpoints/handlers/responsewriters.forbiddenMessage inside apierrors.NewForbidden).
"""
from __future__ import annotations

import base64
import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def _forbidden(e: ApiException) -> dict:
    assert e.status == 403
    return json.loads(e.body)


def test_a_token_without_rights_is_forbidden_with_the_real_message(bot):
    out = bot.kubectl("get", "pod", "web")
    assert out.returncode == 1
    assert out.stderr == (f'Error from server (Forbidden): pods "web" is forbidden: User "{bot.user}" cannot get resource '
                          f'"pods" in API group "" in the namespace "{bot.ns}"\n')
    out = bot.kubectl("get", "nodes")
    assert out.stderr == (f'Error from server (Forbidden): nodes is forbidden: User "{bot.user}" cannot list resource '
                          f'"nodes" in API group "" at the cluster scope\n')
    with bot.api() as api, pytest.raises(ApiException) as e:
        client.AppsV1Api(api).patch_namespaced_deployment_scale("web", bot.ns, {"spec": {"replicas": 2}})
    status = _forbidden(e.value)
    assert status["reason"] == "Forbidden"
    assert status["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert status["message"] == (f'deployments.apps "web" is forbidden: User "{bot.user}" cannot patch resource '
                                 f'"deployments/scale" in API group "apps" in the namespace "{bot.ns}"')
    assert bot.kubectl("get", "--raw", "/metrics").stderr == (
        f'Error from server (Forbidden): forbidden: User "{bot.user}" cannot get path "/metrics"\n')
    # what every authenticated user has: discovery and the self reviews
    assert bot.kubectl("api-versions", check=True).stdout
    assert bot.kubectl("auth", "can-i", "get", "pods").stdout == "no\n"


def test_a_role_binding_grants_exactly_its_rules(twin, bot):
    twin.kubectl("-n", bot.ns, "run", "web", "--image=nginx")
    assert bot.kubectl("get", "pods").returncode == 1
    twin.kubectl("-n", bot.ns, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "bot-reads", "--role=pod-reader",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    assert bot.kubectl("get", "pods", "-o", "name", check=True).stdout == "pod/web\n"  # the cached denial is gone
    assert bot.kubectl("get", "pod", "web", "-o", "name", check=True).stdout == "pod/web\n"
    assert "cannot delete resource \"pods\"" in bot.kubectl("delete", "pod", "web").stderr
    assert "cannot watch resource \"pods\"" in bot.kubectl("get", "pods", "--watch-only", "--request-timeout=2s").stderr
    assert "cannot get resource \"pods/log\"" in bot.kubectl("logs", "web").stderr
    assert "cannot list resource \"pods\" in API group \"\" in the namespace \"default\"" in \
        bot.kubectl("get", "pods", "-n", "default").stderr
    assert bot.kubectl("auth", "can-i", "list", "pods").stdout == "yes\n"
    with bot.api() as api:
        assert [p.metadata.name for p in client.CoreV1Api(api).list_namespaced_pod(bot.ns).items] == ["web"]
    twin.kubectl("-n", bot.ns, "delete", "rolebinding", "bot-reads")
    assert bot.kubectl("get", "pods").returncode == 1


def test_resource_names_allow_only_the_named_objects(twin, bot):
    for name in ("mine", "other"):
        twin.kubectl("-n", bot.ns, "create", "configmap", name)
    twin.kubectl("-n", bot.ns, "create", "role", "one-cm", "--verb=get,list,update,patch", "--resource=configmaps",
                 "--resource-name=mine")
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "one-cm", "--role=one-cm", f"--serviceaccount={bot.ns}:{bot.name}")
    assert bot.kubectl("get", "configmap", "mine", "-o", "name", check=True).stdout == "configmap/mine\n"
    assert bot.kubectl("label", "configmap", "mine", "a=b", check=True).returncode == 0
    assert f'configmaps "other" is forbidden: User "{bot.user}" cannot get resource' in \
        bot.kubectl("get", "configmap", "other").stderr
    assert "cannot list resource \"configmaps\"" in bot.kubectl("get", "configmaps").stderr  # a list names nothing
    # a list narrowed to the name by fieldSelector is authorized as that name, as RequestInfoFactory does
    with bot.api() as api:
        items = client.CoreV1Api(api).list_namespaced_config_map(bot.ns, field_selector="metadata.name=mine").items
    assert [c.metadata.name for c in items] == ["mine"]


def test_a_cluster_role_binding_grants_cluster_wide(twin, bot):
    twin.kubectl("create", "clusterrole", f"{bot.ns}-nodes", "--verb=list", "--resource=nodes,namespaces")
    twin.kubectl("create", "clusterrolebinding", f"{bot.ns}-nodes", f"--clusterrole={bot.ns}-nodes",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    try:
        nodes = bot.kubectl("get", "nodes", "-o", "name", check=True).stdout.split()
        assert nodes == twin.kubectl("get", "nodes", "-o", "name").stdout.split()
        assert bot.kubectl("get", "namespaces", "-o", "name", check=True).returncode == 0
        assert "cannot get resource \"nodes\"" in bot.kubectl("get", "node", nodes[0].split("/")[1]).stderr
    finally:
        twin.kubectl("delete", "clusterrolebinding", f"{bot.ns}-nodes")
    assert bot.kubectl("get", "nodes").returncode == 1


def test_group_subjects_match_the_service_account_groups(twin, bot):
    twin.kubectl("-n", bot.ns, "create", "role", "cm-list", "--verb=list", "--resource=configmaps")
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "all-sas", "--role=cm-list",
                 f"--group=system:serviceaccounts:{bot.ns}")
    assert bot.kubectl("get", "configmaps", check=True).returncode == 0


def test_impersonation_by_the_admin(twin, bot):
    out = twin.kubectl("-n", bot.ns, "get", "pods", "--as", "alice", check=False)
    assert out.stderr == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" '
                          f'in API group "" in the namespace "{bot.ns}"\n')
    twin.kubectl("-n", bot.ns, "create", "role", "pod-lister", "--verb=list", "--resource=pods")
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "readers", "--role=pod-lister", "--group=readers")
    assert twin.kubectl("-n", bot.ns, "get", "pods", "--as", "alice", "--as-group", "readers").returncode == 0
    assert twin.kubectl("-n", bot.ns, "auth", "can-i", "list", "pods", "--as", "alice", check=False).stdout == "no\n"
    assert twin.kubectl("-n", bot.ns, "auth", "can-i", "list", "pods", "--as", "alice", "--as-group", "readers",
                        check=False).stdout == "yes\n"
    # a ServiceAccount user gets its groups when none are asked for
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "sas", "--role=pod-lister", f"--group=system:serviceaccounts:{bot.ns}")
    assert twin.kubectl("-n", bot.ns, "auth", "can-i", "list", "pods", "--as", bot.user).stdout == "yes\n"


def test_impersonation_needs_the_impersonate_verb(twin, bot):
    out = bot.kubectl("get", "pods", "--as", "alice")
    assert out.stderr == (f'Error from server (Forbidden): users "alice" is forbidden: User "{bot.user}" cannot '
                          'impersonate resource "users" in API group "" at the cluster scope\n')
    out = bot.kubectl("get", "pods", "--as", "system:serviceaccount:kube-system:default")
    assert out.stderr == (f'Error from server (Forbidden): serviceaccounts "default" is forbidden: User "{bot.user}" '
                          'cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"\n')
    twin.kubectl("create", "clusterrole", f"{bot.ns}-imp", "--verb=impersonate", "--resource=users",
                 "--resource-name=alice")
    twin.kubectl("create", "clusterrolebinding", f"{bot.ns}-imp", f"--clusterrole={bot.ns}-imp",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    try:
        out = bot.kubectl("get", "pods", "--as", "alice")
        assert 'User "alice" cannot list resource "pods"' in out.stderr  # impersonated, then denied as alice
        assert 'users "bob" is forbidden' in bot.kubectl("get", "pods", "--as", "bob").stderr
        out = bot.kubectl("get", "pods", "--as", "alice", "--as-group", "admins")
        assert 'groups "admins" is forbidden' in out.stderr
    finally:
        twin.kubectl("delete", "clusterrolebinding", f"{bot.ns}-imp")


def test_subject_access_review_uses_the_same_evaluator(twin, api, bot):
    twin.kubectl("-n", bot.ns, "create", "role", "pod-reader", "--verb=get", "--resource=pods")
    twin.kubectl("-n", bot.ns, "create", "rolebinding", "bot-reads", "--role=pod-reader",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    authz = client.AuthorizationV1Api(api)

    def review(verb):
        return authz.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
            user=bot.user, groups=["system:serviceaccounts"],
            resource_attributes=client.V1ResourceAttributes(namespace=bot.ns, verb=verb, resource="pods")))).status

    allowed = review("get")
    assert allowed.allowed is True
    assert allowed.reason == (f'RBAC: allowed by RoleBinding "bot-reads/{bot.ns}" of Role "pod-reader" to '
                              f'ServiceAccount "{bot.name}/{bot.ns}"')
    assert review("delete").allowed is False
    with pytest.raises(ApiException) as e:
        authz.create_subject_access_review({"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert e.value.status == 422
    assert json.loads(e.value.body)["message"] == ('SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: '
                                                   'Invalid value: "": at least one of user or group must be specified')
    # a SubjectAccessReview is itself authorized: the bot may not ask
    with bot.api() as bot_api, pytest.raises(ApiException) as e:
        client.AuthorizationV1Api(bot_api).create_subject_access_review(
            {"spec": {"user": "x", "nonResourceAttributes": {"verb": "get", "path": "/"}}})
    assert _forbidden(e.value)["details"] == {"group": "authorization.k8s.io", "kind": "subjectaccessreviews"}


def test_token_requests(twin, api, bot):
    out = twin.kubectl("-n", bot.ns, "create", "token", "missing", check=False)
    assert out.returncode == 1
    assert out.stderr == 'error: failed to create token: serviceaccounts "missing" not found\n'
    token = twin.kubectl("-n", bot.ns, "create", "token", bot.name, "--duration=15m").stdout.strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["exp"] - claims["iat"] == 900
    assert claims["sub"] == bot.user
    assert claims["kubernetes.io"]["serviceaccount"]["name"] == bot.name
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as e:
        core.create_namespaced_service_account_token(bot.name, bot.ns, {"spec": {"expirationSeconds": 60}})
    assert e.value.status == 422
    assert "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes" in \
        json.loads(e.value.body)["message"]
    tr = core.create_namespaced_service_account_token(bot.name, bot.ns, {"spec": {"expirationSeconds": 3600}})
    assert tr.status.token and tr.spec.expiration_seconds == 3600


def test_a_deleted_service_accounts_token_is_unauthorized(twin, bot):
    assert bot.kubectl("auth", "can-i", "get", "pods").stdout == "no\n"  # authenticated
    twin.kubectl("-n", bot.ns, "delete", "serviceaccount", bot.name)
    out = bot.kubectl("get", "pods")
    assert out.returncode == 1
    assert "error: You must be logged in to the server (Unauthorized)" in out.stderr
    twin.kubectl("-n", bot.ns, "create", "serviceaccount", bot.name)  # same name, new uid: the old token stays dead
    assert "(Unauthorized)" in bot.kubectl("get", "pods").stderr


def test_an_aggregated_cluster_role_gathers_the_rules_of_the_roles_it_selects(twin, bot):
    agg, part = f"{bot.ns}-agg", f"{bot.ns}-part"
    twin.kubectl("create", "clusterrole", agg, f"--aggregation-rule=example.com/{bot.ns}=true")
    twin.kubectl("create", "clusterrolebinding", agg, f"--clusterrole={agg}", f"--serviceaccount={bot.ns}:{bot.name}")
    try:
        twin.kubectl("create", "clusterrole", part, "--verb=get,list", "--resource=configmaps")
        assert bot.kubectl("get", "configmaps").returncode == 1  # not selected yet
        twin.kubectl("label", "clusterrole", part, f"example.com/{bot.ns}=true")
        rules = twin.kubectl_json("get", "clusterrole", agg)["rules"]
        assert rules == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
        assert bot.kubectl("get", "configmaps", check=True).returncode == 0
        twin.kubectl("delete", "clusterrole", part)
        assert twin.kubectl_json("get", "clusterrole", agg)["rules"] == []
        assert bot.kubectl("get", "configmaps").returncode == 1
    finally:
        twin.kubectl("delete", "clusterrolebinding", agg)
        twin.kubectl("delete", "clusterrole", agg, part, "--ignore-not-found")
