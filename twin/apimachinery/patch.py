"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge patch takes its per-field rules from the kind's schema (see validation.schema_for):
x-kubernetes-patch-strategy / patch-merge-key (containers, volumes and env merged by name, volumeMounts
by mountPath, ports by containerPort, conditions by type, args and tolerations replaced, finalizers
merged as a set). Without a schema it falls back to the merge keys of the built-in kinds by field name.
Server-side apply (merge by x-kubernetes-list-type / list-map-keys, field ownership) is
twin/store/managedfields.py.
"""
from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch


class PatchError(ValueError):
    pass


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list of operations")
    try:
        return jsonpatch.JsonPatch(ops).apply(target, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError,
            AttributeError, ValueError) as e:
        raise PatchError(str(e)) from e


# Merge keys of list fields by field name, used when no schema is known.
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "imagePullSecrets": "name", "conditions": "type", "hostAliases": "ip", "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey", "resourceClaims": "name",
}
MERGED_PRIMITIVE_LISTS = {"finalizers"}


def _child(node: Any, key: str) -> Any:
    if node is None:
        return None
    t = node.t
    if t.props is not None:
        return t.props.get(key)
    return t.values


def _list_rule(field: str, node: Any, items: list) -> tuple[str, str | None]:
    """('merge-keyed', key) | ('merge-set', None) | ('replace', None) for a list field."""
    if node is not None:
        if "merge" in (node.strategy or "").split(","):
            if node.merge_key:
                return "keyed", node.merge_key
            return "set", None
        return "replace", None
    if field in MERGED_PRIMITIVE_LISTS:
        return "set", None
    if field == "ports":
        sample = next((i for i in items if isinstance(i, dict)), {})
        return "keyed", "containerPort" if "containerPort" in sample else "port"
    if field in MERGE_KEYS:
        return "keyed", MERGE_KEYS[field]
    return "replace", None


def strategic_merge_patch(target: Any, patch: Any, schema: Any = None) -> Any:
    """Apply a strategic merge patch. schema: the kind's compiled schema node (or None)."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be an object")
    out = _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, schema)
    return out if out is not None else {}


def _smp_map(orig: dict, patch: dict, node: Any) -> dict | None:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive is not None:
        raise PatchError(f"Unknown patch type: {directive}")
    retain = patch.get("$retainKeys")
    out = dict(orig)
    orders: dict[str, list] = {}
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys"):
            continue
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            f = k.split("/", 1)[1]
            if isinstance(out.get(f), list) and isinstance(v, list):
                out[f] = [x for x in out[f] if x not in v]
            continue
        child = _child(node, k)
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            cur = out.get(k)
            merged = _smp_map(cur if isinstance(cur, dict) else {}, v, child)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list):
            out[k] = _smp_list(k, out.get(k), v, child)
        else:
            out[k] = v
    for f, order in orders.items():
        if isinstance(out.get(f), list) and isinstance(order, list):
            out[f] = _apply_order(f, out[f], order, _child(node, f))
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _smp_list(field: str, orig: Any, patch: list, node: Any) -> list:
    orig = orig if isinstance(orig, list) else []
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    rule, key = _list_rule(field, node, patch + orig)
    if rule == "set":
        out = list(orig)
        for p in patch:
            if p not in out:
                out.append(p)
        return out
    if rule == "replace" or not all(isinstance(p, dict) for p in patch):
        return copy.deepcopy([p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "delete")])
    items = node.t.items if node is not None else None
    out = [copy.deepcopy(o) for o in orig]
    for p in patch:
        if key not in p:
            raise PatchError(f"map: {p} does not contain declared merge key: {key}")
        if p.get("$patch") == "delete":
            out = [o for o in out if not (isinstance(o, dict) and o.get(key) == p.get(key))]
            continue
        for i, o in enumerate(out):
            if isinstance(o, dict) and o.get(key) == p[key]:
                merged = _smp_map(o, p, items)
                out[i] = merged if merged is not None else o
                break
        else:
            out.append(_smp_map({}, {k: v for k, v in p.items() if k != "$patch"}, items) or {})
    return out


def _apply_order(field: str, items: list, order: list, node: Any) -> list:
    if not items or not isinstance(items[0], dict):
        ranked = {json.dumps(v): i for i, v in enumerate(order)}
        return sorted(items, key=lambda x: ranked.get(json.dumps(x), len(ranked)))
    _, key = _list_rule(field, node, items)
    if key is None:
        return items
    ranked = {json.dumps(o.get(key)): i for i, o in enumerate(order) if isinstance(o, dict)}
    return sorted(items, key=lambda x: ranked.get(json.dumps(x.get(key)) if isinstance(x, dict) else "", len(ranked)))
