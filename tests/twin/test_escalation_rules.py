"""The rule comparison behind RBAC escalation prevention (twin/apiserver/auth/escalation.py), case by case as
pkg/registry/rbac/validation's policy comparator and CompactRules decide them."""
from __future__ import annotations

import pytest

from twin.apiserver.auth.escalation import breakdown, compact, compact_string, covers


def _covered(owner: list[dict], rule: dict) -> list[str]:
    """CompactString of each broken-down part of rule that no owner rule covers."""
    return sorted(compact_string(r) for r in compact([s for s in breakdown(rule) if not any(covers(o, s) for o in owner)]))


@pytest.mark.parametrize("owner, rule, missing", [
    # a wildcard verb, group or resource covers everything of its kind
    ([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
     {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["patch"]}, []),
    # */scale covers every scale subresource, not the parent resource
    ([{"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["patch"]}],
     {"apiGroups": ["apps"], "resources": ["deployments/scale", "deployments"], "verbs": ["patch"]},
     ['{APIGroups:["apps"], Resources:["deployments"], Verbs:["patch"]}']),
    # a rule narrowed to names covers those names only, never the unnamed rule
    ([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}],
     {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"], "verbs": ["get"]},
     ['{APIGroups:[""], Resources:["configmaps"], ResourceNames:["b"], Verbs:["get"]}']),
    ([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}],
     {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
     ['{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}']),
    # a URL prefix with * covers what starts with it; verbs are compacted per resource in the rule's order
    ([{"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}],
     {"nonResourceURLs": ["/apis/apps", "/metrics"], "verbs": ["get"]}, ['{NonResourceURLs:["/metrics"], Verbs:["get"]}']),
    ([], {"apiGroups": ["", "apps"], "resources": ["pods"], "verbs": ["watch", "get"]},
     ['{APIGroups:[""], Resources:["pods"], Verbs:["watch" "get"]}',
      '{APIGroups:["apps"], Resources:["pods"], Verbs:["watch" "get"]}']),
])
def test_what_a_rule_grants_beyond_the_owners_rules(owner, rule, missing):
    assert _covered(owner, rule) == missing
