"""Conformance: RBAC escalation prevention, as kube-apiserver's rbac registry does it (pkg/registry/rbac).

A ServiceAccount that may write Roles and RoleBindings still may not grant what it does not hold: a Role's rules
must be covered by the requester's own (or it needs `escalate` on roles), a binding's role likewise (or it needs
`bind` on that role). The refusal is the real 403, `user "<name>" (groups=[...]) is attempting to grant RBAC
permissions not currently held:` and the missing rules, one per line, broken down, compacted by verb and sorted.
"""
from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.service_account import Bot

RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
def bot(bot: Bot) -> Bot:
    """conftest's bot, that may also write Roles and RoleBindings in its namespace and read ConfigMaps there."""
    bot.grant("rbac-writer", "--verb=get,list,create,update,patch", "--resource=roles,rolebindings")
    bot.grant("cm-reader", "--verb=get,list", "--resource=configmaps")
    return bot


def _not_held(bot: Bot, *missing: str) -> str:
    return (f'user "{bot.user}" (groups={bot.groups}) is attempting to grant RBAC permissions not currently held:\n'
            + "\n".join(missing))


def test_a_role_with_rules_the_requester_does_not_hold_is_refused(bot):
    out = bot.kubectl("create", "role", "more", "--verb=get,list,delete", "--resource=configmaps,secrets")
    assert out.returncode == 1
    assert out.stderr == ('Error from server (Forbidden): roles.rbac.authorization.k8s.io "more" is forbidden: ' + _not_held(
        bot, '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}',
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}') + "\n")
    assert bot.twin.kubectl("-n", bot.ns, "get", "role", "more", check=False).returncode == 1  # nothing stored
    # what it holds it may grant, also narrowed to names; a dry run is checked like the write
    assert bot.kubectl("create", "role", "same", "--verb=list", "--resource=configmaps", check=True).returncode == 0
    assert bot.kubectl("create", "role", "one", "--verb=get", "--resource=configmaps", "--resource-name=a",
                       check=True).returncode == 0
    out = bot.kubectl("create", "role", "dry", "--verb=watch", "--resource=configmaps", "--dry-run=server")
    assert "Verbs:[\"watch\"]}" in out.stderr and out.returncode == 1


def test_the_python_client_gets_the_forbidden_status(bot):
    role = client.V1Role(metadata=client.V1ObjectMeta(name="urls"),
                         rules=[client.V1PolicyRule(api_groups=["apps"], resources=["deployments/scale"], verbs=["update"])])
    with bot.api() as api, pytest.raises(ApiException) as e:
        client.RbacAuthorizationV1Api(api).create_namespaced_role(bot.ns, role)
    assert e.value.status == 403
    status = json.loads(e.value.body)
    assert status["reason"] == "Forbidden"
    assert status["details"] == {"name": "urls", "group": RBAC, "kind": "roles"}
    assert status["message"].endswith('{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["update"]}')


def test_the_escalate_verb_lets_a_requester_write_any_role(twin, bot):
    bot.grant("escalator", "--verb=escalate", "--resource=roles")
    assert bot.kubectl("create", "role", "more", "--verb=*", "--resource=secrets", check=True).returncode == 0


def test_an_update_is_checked_unless_it_changes_only_what_the_garbage_collector_needs(twin, bot):
    twin.kubectl("-n", bot.ns, "create", "role", "admins", "--verb=*", "--resource=secrets")
    out = bot.kubectl("label", "role", "admins", "team=x")
    assert out.returncode == 1
    assert 'roles.rbac.authorization.k8s.io "admins" is forbidden: user' in out.stderr
    assert '{APIGroups:[""], Resources:["secrets"], Verbs:["*"]}' in out.stderr
    patch = {"metadata": {"finalizers": ["example.com/keep"]}}
    assert bot.kubectl("patch", "role", "admins", "--type=merge", "-p", json.dumps(patch), check=True).returncode == 0


def test_a_binding_to_a_role_not_held_needs_bind(twin, bot):
    out = bot.kubectl("create", "rolebinding", "root", "--clusterrole=cluster-admin", "--user=mallory")
    assert out.returncode == 1
    assert out.stderr == ('error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "root" is forbidden: '
                          + _not_held(bot, '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
                                      '{NonResourceURLs:["*"], Verbs:["*"]}') + "\n")
    out = bot.kubectl("create", "rolebinding", "ghost", "--role=missing", "--user=mallory")
    assert out.stderr == ('error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "ghost" is forbidden: '
                          'role.rbac.authorization.k8s.io "missing" not found\n')
    # a role the bot holds entirely may be bound to anyone
    assert bot.kubectl("create", "rolebinding", "share", "--role=cm-reader", "--user=alice", check=True).returncode == 0
    # bind on that one cluster role, granted by name
    bot.grant("binder", "--verb=bind", "--resource=clusterroles", "--resource-name=cluster-admin")
    assert bot.kubectl("create", "rolebinding", "root", "--clusterrole=cluster-admin", "--user=mallory",
                       check=True).returncode == 0
    # bind on one name allows that role only
    twin.kubectl("create", "clusterrole", f"{bot.ns}-secrets", "--verb=get", "--resource=secrets")
    try:
        out = bot.kubectl("create", "rolebinding", "secrets", f"--clusterrole={bot.ns}-secrets", "--user=mallory")
        assert out.returncode == 1 and out.stderr.endswith('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}\n')
    finally:
        twin.kubectl("delete", "clusterrole", f"{bot.ns}-secrets")


def test_cluster_roles_and_their_bindings_are_checked_against_cluster_wide_rules(twin, bot):
    twin.kubectl("create", "clusterrole", f"{bot.ns}-writer", "--verb=create", "--resource=clusterroles,clusterrolebindings")
    twin.kubectl("create", "clusterrolebinding", f"{bot.ns}-writer", f"--clusterrole={bot.ns}-writer",
                 f"--serviceaccount={bot.ns}:{bot.name}")
    try:
        # the bot reads ConfigMaps in its namespace only: a cluster role with that rule grants more than it holds
        out = bot.kubectl("create", "clusterrole", f"{bot.ns}-cm", "--verb=get", "--resource=configmaps")
        assert out.stderr == (f'Error from server (Forbidden): clusterroles.rbac.authorization.k8s.io "{bot.ns}-cm" is '
                              'forbidden: ' + _not_held(bot, '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}')
                              + "\n")
        # what every authenticated user holds cluster-wide may be granted
        assert bot.kubectl("create", "clusterrole", f"{bot.ns}-urls", "--verb=get", "--non-resource-url=/version",
                           check=True).returncode == 0
        assert bot.kubectl("create", "clusterrolebinding", f"{bot.ns}-urls", f"--clusterrole={bot.ns}-urls",
                           "--user=alice", check=True).returncode == 0
        # an aggregationRule can gather anything: it needs every right, even with no rules of its own
        agg = client.V1ClusterRole(metadata=client.V1ObjectMeta(name=f"{bot.ns}-agg"), aggregation_rule=client.V1AggregationRule(
            cluster_role_selectors=[client.V1LabelSelector(match_labels={"example.com/aggregate": "true"})]))
        with bot.api() as api, pytest.raises(ApiException) as e:
            client.RbacAuthorizationV1Api(api).create_cluster_role(agg)
        assert e.value.status == 403
        assert json.loads(e.value.body)["message"] == (f'clusterroles.rbac.authorization.k8s.io "{bot.ns}-agg" is forbidden: '
                                                       'must have cluster-admin privileges to use the aggregationRule')
        # a member of system:masters is never checked (EscalationAllowed)
        assert twin.kubectl("create", "clusterrole", f"{bot.ns}-all", "--verb=*", "--resource=*", "--as=root",
                            "--as-group=system:masters").returncode == 0
    finally:
        for kind, name in (("clusterrolebinding", "writer"), ("clusterrolebinding", "urls"), ("clusterrole", "writer"),
                           ("clusterrole", "cm"), ("clusterrole", "urls"), ("clusterrole", "all")):
            twin.kubectl("delete", kind, f"{bot.ns}-{name}", "--ignore-not-found")
