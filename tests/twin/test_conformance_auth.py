"""Conformance: `kubectl auth can-i` and the authorization.k8s.io/v1 self reviews, as kube-apiserver answers them.

The twin's token is kubeadm's admin identity (group kubeadm:cluster-admins, bound to cluster-admin), so the
real RBAC authorizer allows everything and names that binding; `can-i --list` shows cluster-admin's rules
and the bootstrap ones of every authenticated user. The reviews are create-only and never stored.
"""
from __future__ import annotations

import contextlib
import json
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


ADMIN_REASON = ('RBAC: allowed by ClusterRoleBinding "kubeadm:cluster-admins" of ClusterRole "cluster-admin" '
                'to Group "kubeadm:cluster-admins"')


@contextlib.contextmanager
def without_admin_binding(twin):
    """kubeadm's cluster-admin binding deleted for the block, then put back as it was by the super-admin (the
    admin has no right left to do it, as on a real cluster)."""
    binding = twin.kubectl_json("get", "clusterrolebinding", "kubeadm:cluster-admins")
    twin.kubectl("delete", "clusterrolebinding", "kubeadm:cluster-admins")
    try:
        yield
    finally:
        for k in ("uid", "resourceVersion", "creationTimestamp"):
            binding["metadata"].pop(k, None)
        twin.kubectl("apply", "-f", "-", input=json.dumps(binding), kubeconfig=twin.super_admin_kubeconfig)


def test_discovery_lists_the_reviews_create_only(twin):
    doc = json.loads(twin.kubectl("get", "--raw", "/apis/authorization.k8s.io/v1").stdout)
    by_name = {r["name"]: r for r in doc["resources"]}
    for name, kind in (("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
                       ("selfsubjectrulesreviews", "SelfSubjectRulesReview")):
        assert by_name[name]["verbs"] == ["create"]
        assert by_name[name]["kind"] == kind
        assert by_name[name]["namespaced"] is False
        assert "storageVersionHash" not in by_name[name]  # not stored, as the real list has it
    groups = [g["name"] for g in json.loads(twin.kubectl("get", "--raw", "/apis").stdout)["groups"]]
    assert "authorization.k8s.io" in groups


def test_can_i_answers_yes_for_resources_subresources_and_urls(twin):
    assert twin.kubectl("auth", "can-i", "get", "pods").stdout == "yes\n"
    assert twin.kubectl("auth", "can-i", "delete", "nodes").stdout == "yes\n"
    assert twin.kubectl("auth", "can-i", "get", "pods", "--subresource=log", "-n", "kube-system").stdout == "yes\n"
    assert twin.kubectl("auth", "can-i", "create", "volumesnapshots.snapshot.storage.k8s.io", "-A").stdout == "yes\n"
    assert twin.kubectl("auth", "can-i", "get", "/healthz").stdout == "yes\n"
    # kubectl warns about what discovery does not hold, and still asks the server
    out = twin.kubectl("auth", "can-i", "list", "gizmos")
    assert out.stdout == "yes\n"
    assert "the server doesn't have a resource type 'gizmos'" in out.stderr


def test_can_i_list_shows_the_cluster_admin_rule(twin):
    rows = [line.split() for line in twin.kubectl("auth", "can-i", "--list").stdout.splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["*.*", "[]", "[]", "[*]"] in rows
    assert ["[*]", "[]", "[*]"] in rows  # the nonResourceURLs rule of cluster-admin
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows  # system:basic-user
    assert ["[/version]", "[]", "[get]"] in rows  # system:discovery and system:public-info-viewer


def test_access_review_through_the_python_client_carries_the_rbac_reason(twin, api):
    authz = client.AuthorizationV1Api(api)
    review = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
            namespace="default", verb="create", group="apps", resource="statefulsets", subresource="scale"))))
    assert review.status.allowed is True
    assert review.status.reason == ADMIN_REASON
    assert review.spec.resource_attributes.subresource == "scale"  # the request is echoed
    url = authz.create_self_subject_access_review({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/metrics"}}})
    assert url.status.allowed is True


def test_rules_review_through_the_python_client(twin, api):
    rules = client.AuthorizationV1Api(api).create_self_subject_rules_review(
        client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace="default")))
    assert rules.status.incomplete is False
    assert any(r.verbs == ["*"] and r.api_groups == ["*"] and r.resources == ["*"] for r in rules.status.resource_rules)
    assert any(r.verbs == ["*"] and r.non_resource_urls == ["*"] for r in rules.status.non_resource_rules)


def test_rules_review_without_namespace_is_400(twin, api):
    with pytest.raises(ApiException) as e:
        client.AuthorizationV1Api(api).create_self_subject_rules_review({"spec": {}})
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == "no namespace on request"


def test_access_review_without_attributes_is_422(twin, api):
    with pytest.raises(ApiException) as e:
        client.AuthorizationV1Api(api).create_self_subject_access_review({"spec": {}})
    assert e.value.status == 422
    status = json.loads(e.value.body)
    assert status["message"] == ('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                                 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
                                 'must be specified')
    assert status["details"]["causes"][0]["field"] == "spec.resourceAttributes"


def test_reviews_are_create_only_and_not_stored(twin):
    out = twin.kubectl("get", "selfsubjectaccessreviews", check=False)
    assert out.returncode != 0
    assert "(MethodNotAllowed)" in out.stderr


def test_the_reason_follows_the_stored_bindings(twin, api):
    """A RoleBinding for the admin user in a namespace is visited after the cluster bindings, as the resolver does;
    removing kubeadm's binding leaves the namespaced one to allow (and to be named)."""
    ns = f"a-{uuid.uuid4().hex[:8]}"
    twin.kubectl("create", "namespace", ns)
    twin.kubectl("-n", ns, "create", "role", "pod-reader", "--verb=get", "--resource=pods")
    twin.kubectl("-n", ns, "create", "rolebinding", "admin-reads", "--role=pod-reader", "--user=kubernetes-admin")
    with without_admin_binding(twin):
        assert twin.kubectl("-n", ns, "auth", "can-i", "get", "pods").stdout == "yes\n"
        assert twin.kubectl("-n", ns, "auth", "can-i", "delete", "pods", check=False).stdout == "no\n"
        review = client.AuthorizationV1Api(api).create_self_subject_access_review(
            {"spec": {"resourceAttributes": {"namespace": ns, "verb": "get", "resource": "pods"}}})
        assert review.status.reason == (f'RBAC: allowed by RoleBinding "admin-reads/{ns}" of Role "pod-reader" '
                                        'to User "kubernetes-admin"')
    assert twin.kubectl("-n", ns, "auth", "can-i", "delete", "pods").stdout == "yes\n"


def test_a_binding_to_a_missing_role_is_the_resolvers_error(twin, api):
    """A RoleBinding naming a Role that does not exist: the rules review carries the lister's NotFound as
    evaluationError and the other rules still; an access review nothing allows gives it as the reason."""
    ns = f"a-{uuid.uuid4().hex[:8]}"
    twin.kubectl("create", "namespace", ns)
    twin.kubectl("-n", ns, "create", "rolebinding", "dangling", "--role=ghost", "--user=kubernetes-admin")
    authz = client.AuthorizationV1Api(api)
    rules = authz.create_self_subject_rules_review({"spec": {"namespace": ns}})
    assert rules.status.evaluation_error == 'role.rbac.authorization.k8s.io "ghost" not found'
    assert rules.status.incomplete is False
    assert any(r.resources == ["*"] for r in rules.status.resource_rules)
    with without_admin_binding(twin):
        out = twin.kubectl("-n", ns, "auth", "can-i", "get", "pods", check=False)
        assert out.returncode == 1
        assert out.stdout == 'no - RBAC: role.rbac.authorization.k8s.io "ghost" not found\n'
