"""Conformance: the authentication.k8s.io reviews and the rest of impersonation, as kube-apiserver 1.32 serves them.

`kubectl auth whoami` (SelfSubjectReview), TokenReview and LocalSubjectAccessReview through the kubernetes Python
client, and the Impersonate-Uid / Impersonate-Extra-<key> headers (`kubectl --as-uid`), each part of an
impersonation authorized on its own resource (uids, userextras/<key>) with the real 403 wording.
"""
from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.service_account import Bot
from tests.support.twin import Twin


def _post_review(twin: Twin, token: str, headers: dict, path: str = "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                 method: str = "POST") -> tuple[int, str]:
    """One request with impersonation headers the clients have no flag for; (status, body text)."""
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(twin.server + path, data=b"{}" if method == "POST" else None, method=method,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                          **headers})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _uid(twin: Twin, bot: Bot) -> str:
    return twin.kubectl("-n", bot.ns, "get", "sa", bot.name, "-o", "jsonpath={.metadata.uid}").stdout


def test_discovery_lists_the_reviews_as_create_only(twin):
    out = twin.kubectl("api-resources", "--api-group=authentication.k8s.io", "-o", "wide").stdout.splitlines()
    assert [line.split()[0] for line in out[1:]] == ["selfsubjectreviews", "tokenreviews"]
    assert all(line.split()[-1] == "create" for line in out[1:])
    out = twin.kubectl("api-resources", "--api-group=authorization.k8s.io", "--namespaced=true", "-o", "name").stdout
    assert out == "localsubjectaccessreviews.authorization.k8s.io\n"


def test_whoami_answers_for_the_admin_a_token_and_an_impersonation(twin, bot):
    assert twin.kubectl("auth", "whoami").stdout == (
        "ATTRIBUTE   VALUE\nUsername    kubernetes-admin\nGroups      [kubeadm:cluster-admins system:authenticated]\n")
    review = json.loads(bot.kubectl("auth", "whoami", "-o", "json", check=True).stdout)
    assert review["kind"] == "SelfSubjectReview" and review["metadata"]["creationTimestamp"]
    info = review["status"]["userInfo"]
    assert info["username"] == bot.user
    assert info["uid"] == _uid(twin, bot)
    assert info["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{bot.ns}", "system:authenticated"]
    jti = json.loads(base64.urlsafe_b64decode(bot.token.split(".")[1] + "=="))["jti"]
    assert info["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={jti}"]}
    out = twin.kubectl("auth", "whoami", "--as=alice", "--as-uid=1234", "--as-group=devs").stdout
    assert out == "ATTRIBUTE   VALUE\nUsername    alice\nUID         1234\nGroups      [devs system:authenticated]\n"
    with bot.api() as api:
        info = client.AuthenticationV1Api(api).create_self_subject_review({}).status.user_info
    assert info.username == bot.user


def test_impersonating_a_uid_or_extras_needs_its_own_rights(twin, api, bot):
    twin.kubectl("create", "clusterrole", f"{bot.ns}-imp", "--verb=impersonate", "--resource=users",
                 "--resource-name=alice")
    twin.kubectl("create", "clusterrolebinding", f"{bot.ns}-imp", f"--clusterrole={bot.ns}-imp",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    try:
        assert "Username    alice" in bot.kubectl("auth", "whoami", "--as=alice", check=True).stdout
        # (kubectl auth whoami reads any 403 as "the selfsubjectreviews API is not enabled", as it does on a real server)
        out = bot.kubectl("get", "pods", "--as=alice", "--as-uid=1234")
        assert out.stderr == ('Error from server (Forbidden): uids.authentication.k8s.io "1234" is forbidden: User '
                              f'"{bot.user}" cannot impersonate resource "uids" in API group "authentication.k8s.io" '
                              'at the cluster scope\n')
        headers = {"Impersonate-User": "alice", "Impersonate-Extra-Scopes": "view"}
        code, body = _post_review(twin, bot.token, headers)
        assert code == 403
        assert json.loads(body)["message"] == (
            f'userextras.authentication.k8s.io "view" is forbidden: User "{bot.user}" cannot impersonate resource '
            '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')
        # kubectl create clusterrole refuses resources discovery does not list: the client writes this one
        client.RbacAuthorizationV1Api(api).create_cluster_role(client.V1ClusterRole(
            metadata=client.V1ObjectMeta(name=f"{bot.ns}-extra"),
            rules=[client.V1PolicyRule(api_groups=["authentication.k8s.io"], resources=["userextras/scopes", "uids"],
                                       verbs=["impersonate"])]))
        twin.kubectl("create", "clusterrolebinding", f"{bot.ns}-extra", f"--clusterrole={bot.ns}-extra",
                     f"--serviceaccount={bot.ns}:{bot.name}")
        code, body = _post_review(twin, bot.token, {**headers, "Impersonate-Uid": "42"})
        assert code == 201
        assert json.loads(body)["status"]["userInfo"] == {
            "username": "alice", "uid": "42", "groups": ["system:authenticated"], "extra": {"scopes": ["view"]}}
    finally:
        for name in ("imp", "extra"):
            twin.kubectl("delete", "clusterrolebinding", f"{bot.ns}-{name}", "--ignore-not-found")
            twin.kubectl("delete", "clusterrole", f"{bot.ns}-{name}", "--ignore-not-found")


def test_groups_without_a_user_are_the_filters_plain_internal_error(twin):
    code, body = _post_review(twin, twin.token, {"Impersonate-Group": "devs"}, "/api/v1/namespaces", "GET")
    assert code == 500
    assert body == 'Internal Server Error: "/api/v1/namespaces": requested [{Group  devs    }] without impersonating a user\n'


def test_token_review_authenticates_a_token(twin, api, bot):
    authn = client.AuthenticationV1Api(api)
    review = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=bot.token)))
    assert review.status.authenticated is True
    assert review.status.user.username == bot.user
    assert review.status.user.uid == _uid(twin, bot)
    assert review.status.audiences == ["https://kubernetes.default.svc.cluster.local"]
    review = authn.create_token_review({"spec": {"token": bot.token, "audiences": ["vault"]}})
    assert review.status.authenticated is None
    assert review.status.error == ('[invalid bearer token, token audiences ["https://kubernetes.default.svc.cluster.local"] '
                                   'is invalid for the target audiences ["vault"]]')
    assert authn.create_token_review({"spec": {"token": "nonsense"}}).status.error == "invalid bearer token"
    with pytest.raises(ApiException) as e:
        authn.create_token_review({"spec": {"token": ""}})
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == "token is required for TokenReview in authentication"
    twin.kubectl("-n", bot.ns, "delete", "sa", bot.name)
    review = authn.create_token_review({"spec": {"token": bot.token}})
    assert review.status.error == "[invalid bearer token, service account token has been invalidated]"
    # a ServiceAccount may not review tokens without the right to
    other = Bot(twin, bot.kubeconfig.parent, name="other")
    with other.api() as other_api, pytest.raises(ApiException) as e:
        client.AuthenticationV1Api(other_api).create_token_review({"spec": {"token": bot.token}})
    assert e.value.status == 403


def test_local_subject_access_review_is_confined_to_its_namespace(twin, api, bot):
    bot.grant("pod-reader", "--verb=get", "--resource=pods")
    authz = client.AuthorizationV1Api(api)

    def review(ns, **attrs):
        return authz.create_namespaced_local_subject_access_review(ns, {"spec": {"user": bot.user, **attrs}})

    got = review(bot.ns, resourceAttributes={"namespace": bot.ns, "verb": "get", "resource": "pods"})
    assert got.kind == "LocalSubjectAccessReview" and got.metadata.namespace == bot.ns
    assert got.status.allowed is True
    assert got.status.reason == (f'RBAC: allowed by RoleBinding "pod-reader/{bot.ns}" of Role "pod-reader" to '
                                 f'ServiceAccount "{bot.name}/{bot.ns}"')
    assert review(bot.ns, resourceAttributes={"namespace": bot.ns, "verb": "delete", "resource": "pods"}).status.allowed \
        is False
    with pytest.raises(ApiException) as e:
        review(bot.ns, resourceAttributes={"namespace": "default", "verb": "get", "resource": "pods"})
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == f"spec.resourceAttributes.namespace must match namespace: {bot.ns}"
    with pytest.raises(ApiException) as e:
        review(bot.ns, nonResourceAttributes={"path": "/", "verb": "get"})
    assert e.value.status == 422
    assert "spec.nonResourceAttributes: Invalid value" in json.loads(e.value.body)["message"]
    assert "disallowed on this kind of request" in json.loads(e.value.body)["message"]
