"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch."""
from __future__ import annotations

import copy
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
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError) as e:
        raise PatchError(str(e)) from e


# Merge keys of list fields, by field name: the built-in kinds' patchMergeKey tags.
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "imagePullSecrets": "name", "conditions": "type", "hostAliases": "ip", "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey", "resourceClaims": "name", "containerStatuses": "name",
    "initContainerStatuses": "name", "addresses": "type", "taints": "key",
}
# Lists of scalars merged as sets (patchStrategy=merge on a primitive list).
MERGED_PRIMITIVE_LISTS = {"finalizers"}


def _merge_key(field: str, items: list) -> str | None:
    if field == "ports":
        sample = next((i for i in items if isinstance(i, dict)), {})
        return "containerPort" if "containerPort" in sample else "port"
    return MERGE_KEYS.get(field)


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    return _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch)


def _smp_map(orig: dict, patch: dict) -> dict:
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be an object")
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    retain = patch.get("$retainKeys")
    out = dict(orig)
    orders = {}
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys"):
            continue
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(out.get(field), list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            cur = out.get(k)
            out[k] = _smp_map(cur if isinstance(cur, dict) else {}, v)
        elif isinstance(v, list):
            out[k] = _smp_list(k, out.get(k), v)
        else:
            out[k] = v
    for field, order in orders.items():
        if isinstance(out.get(field), list):
            out[field] = _apply_order(field, out[field], order)
    if retain is not None:
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _smp_list(field: str, orig: Any, patch: list) -> list:
    orig = orig if isinstance(orig, list) else []
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    if field in MERGED_PRIMITIVE_LISTS:
        out = list(orig)
        for p in patch:
            if p not in out:
                out.append(p)
        return out
    key = _merge_key(field, patch + orig)
    if not key or not all(isinstance(p, dict) for p in patch):
        return copy.deepcopy(patch)
    out = [copy.deepcopy(o) for o in orig]
    for p in patch:
        if p.get("$patch") == "delete":
            out = [o for o in out if not (isinstance(o, dict) and o.get(key) == p.get(key))]
            continue
        for i, o in enumerate(out):
            if isinstance(o, dict) and key in p and o.get(key) == p[key]:
                out[i] = _smp_map(o, p)
                break
        else:
            out.append({k: v for k, v in p.items() if k != "$patch"})
    return out


def _apply_order(field: str, items: list, order: list) -> list:
    key = _merge_key(field, items) if items and isinstance(items[0], dict) else None
    if key is None:
        ranked = {v: i for i, v in enumerate(order)}
        return sorted(items, key=lambda x: ranked.get(x, len(ranked)))
    ranked = {o.get(key): i for i, o in enumerate(order) if isinstance(o, dict)}
    return sorted(items, key=lambda x: ranked.get(x.get(key) if isinstance(x, dict) else None, len(ranked)))
