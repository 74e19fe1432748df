"""The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole with an
aggregationRule holds the rules of every other ClusterRole one of its clusterRoleSelectors selects, taken in name
order, each rule once. The twin recomputes them whenever a ClusterRole changes, before the write returns (the real
controller does it moments later); an aggregated role that selects another aggregated role sees that role's
aggregated rules, as the real one converges to.
"""
from __future__ import annotations

from typing import Any

from ...registry.resources import ResourceType
from ...registry.selectors import parse_label_selector
from ...registry.tables import _selector

_RBAC = "rbac.authorization.k8s.io"


def _selects(rule: dict, labels: dict) -> bool:
    """Any of the clusterRoleSelectors matches (LabelSelectorAsSelector: an empty selector matches everything)."""
    for sel in rule.get("clusterRoleSelectors") or []:
        if not sel or parse_label_selector(_selector(sel))(labels):
            return True
    return False


def install(store: Any) -> None:
    roles = store.rt(_RBAC, "v1", "clusterroles")

    def aggregate(rtype: ResourceType, _etype: str, _obj: dict, _old: dict | None) -> None:
        if rtype.key != roles.key:
            return
        everything = sorted(store.list(roles, None), key=lambda r: r["metadata"]["name"])
        for role in everything:
            rule = role.get("aggregationRule")
            if not rule:
                continue
            name = role["metadata"]["name"]
            rules: list[dict] = []
            for other in everything:
                if other["metadata"]["name"] == name or not _selects(rule, other["metadata"].get("labels") or {}):
                    continue
                rules.extend(r for r in other.get("rules") or [] if r not in rules)
            if rules != (role.get("rules") or []) and store.exists(roles, None, name):
                store.update(roles, None, name, {**role, "rules": rules}, _internal=True)  # its change re-enters here

    store.on_change.append(aggregate)
