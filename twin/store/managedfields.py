"""metadata.managedFields: who owns which field, as kube-apiserver's field manager (structured-merge-diff) keeps it.

A field set is a Python set of paths; a path is a tuple of FieldsV1 path elements: "f:<field>",
'k:{"name":"web"}' (an item of a list-map, by its x-kubernetes-list-map-keys), 'v:"a"' (an item of a
set). FieldsV1 is that set as a tree, where ".": {} marks a path that is itself in the set and has children.

The rules (sigs.k8s.io/structured-merge-diff merge/update.go, k8s.io/apimachinery managedfields/internal):
- Update (create, PUT, every non-apply patch): the fields the write added or changed move to its manager (taken
  from anyone who owned them); removed fields leave every manager.
- Apply: the manager owns exactly the fields of its configuration; a field it applied before and no longer
  applies is removed from the object unless another manager owns it; a change of a field another manager owns is
  a conflict (409) unless force, which moves the field; applying the value already there shares the field.
Schema knowledge (the kind's OpenAPI: list-type, list-map-keys, map-type) decides what a list item is; without
it lists are atomic and maps are free-form, as the server's deduced type treats them.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..apimachinery import errors
from .objects import now_iso

Path = tuple[str, ...]

# apiVersion, kind and the metadata the server sets are never owned (stripmeta.go)
_STRIPPED: frozenset[Path] = frozenset({("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", f"f:{k}") for k in ("name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                                       "generation", "managedFields", "resourceVersion")})
# what a create is compared with: the kind's empty Go struct, whose metadata and spec are there, empty (so a
# created spec is not an added member, as a created label map is)
_ZERO: dict = {"metadata": {}, "spec": {}, "status": {}}
# Update entries beyond this many are merged, oldest first, into one "ancient-changes" entry (capmanagers.go)
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
# default values of list-map keys: an item without the key is keyed by its default (ports' protocol)
_KEY_DEFAULTS = {"protocol": "TCP"}


# ---------------------------------------------------------------------------------------------
# the schema as structured-merge-diff sees it
# ---------------------------------------------------------------------------------------------
def _child(node: Any, key: str) -> Any:
    if node is None or node.t.free:
        return None
    t = node.t
    return t.props.get(key) if t.props is not None else t.values


def _declared(node: Any, key: str) -> bool:
    return node is not None and node.t.props is not None and key in node.t.props


def _atomic_map(node: Any) -> bool:
    return node is not None and "atomic" in (node.map_type, node.t.map_type)


def _list_keys(node: Any) -> tuple[str, ...] | None:
    """The keys of a list-map, () for a set, None for an atomic list (the default, and without a schema)."""
    if node is None or node.t.free:
        return None
    if node.list_type == "map" and node.map_keys:
        return node.map_keys
    if node.list_type == "set":
        return ()
    if node.list_type is None and "merge" in (node.strategy or "").split(","):
        return (node.merge_key,) if node.merge_key else ()
    return None


def _items(node: Any) -> Any:
    return node.t.items if node is not None else None


def _pe(item: Any, keys: tuple[str, ...]) -> str:
    if keys and isinstance(item, dict):
        key = {k: item.get(k, _KEY_DEFAULTS.get(k)) for k in sorted(keys) if k in item or k in _KEY_DEFAULTS}
        return "k:" + json.dumps(key, separators=(",", ":"))
    return "v:" + json.dumps(item, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# sets of an object: what an applied configuration names, what a write changed
# ---------------------------------------------------------------------------------------------
def applied_set(config: dict, node: Any) -> set[Path]:
    """The fields an apply configuration sets (typed.ToFieldSet): leaves, list items, and a map key as itself
    when its value is null or {} or the map is free-form."""
    out: set[Path] = set()
    _to_set(config, node, (), out)
    return out - _STRIPPED


def _to_set(v: Any, node: Any, path: Path, out: set[Path]) -> None:
    if isinstance(v, dict):
        if _atomic_map(node):
            out.add(path)
            return
        for k, x in v.items():
            p = (*path, "f:" + k)
            _to_set(x, _child(node, k), p, out)
            if x is None or x == {} or not _declared(node, k):
                out.add(p)
    elif isinstance(v, list):
        keys = _list_keys(node)
        if keys is None:
            out.add(path)
            return
        for item in v:
            p = (*path, _pe(item, keys))
            _to_set(item, _items(node), p, out)
            out.add(p)
    elif path:
        out.add(path)


@dataclass
class Comparison:
    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def changed(self) -> set[Path]:
        return self.added | self.modified


def compare(lhs: Any, rhs: Any, node: Any) -> Comparison:
    """What turned lhs into rhs (typed.Compare): a map or list item that appears is added as itself."""
    c = Comparison()
    _cmp(lhs, rhs, node, (), c)
    for s in (c.added, c.modified, c.removed):
        s -= _STRIPPED
    return c


def _leaf(lhs: Any, rhs: Any, path: Path, c: Comparison) -> None:
    if lhs is None and rhs is not None:
        c.added.add(path)
    elif rhs is None and lhs is not None:
        c.removed.add(path)
    elif lhs != rhs:
        c.modified.add(path)


def _cmp(lhs: Any, rhs: Any, node: Any, path: Path, c: Comparison) -> None:
    if isinstance(lhs, dict) or isinstance(rhs, dict):
        if not isinstance(lhs, (dict, type(None))) or not isinstance(rhs, (dict, type(None))) \
                or _atomic_map(node) or (not lhs and not rhs):
            _leaf(lhs, rhs, path, c)
            return
        if lhs is None:
            c.added.add(path)
        elif rhs is None:
            c.removed.add(path)
        lm, rm = lhs or {}, rhs or {}
        for k in {**lm, **rm}:
            _cmp(lm.get(k), rm.get(k), _child(node, k), (*path, "f:" + k), c)
    elif isinstance(lhs, list) or isinstance(rhs, list):
        keys = _list_keys(node)
        if keys is None or not isinstance(lhs, (list, type(None))) or not isinstance(rhs, (list, type(None))) \
                or (not lhs and not rhs):
            _leaf(lhs, rhs, path, c)
            return
        li = {_pe(x, keys): x for x in lhs or []}
        ri = {_pe(x, keys): x for x in rhs or []}
        for pe in {**li, **ri}:
            _cmp(li.get(pe), ri.get(pe), _items(node), (*path, pe), c)
    else:
        _leaf(lhs, rhs, path, c)


def merge(live: Any, applied: Any, node: Any) -> Any:
    """The live object with an applied configuration merged in (the configuration's values win, null removes):
    maps merge key by key, list-maps item by item, sets value by value; atomic lists and maps are replaced."""
    if isinstance(applied, dict) and isinstance(live, dict) and not _atomic_map(node):
        out = dict(live)
        for k, v in applied.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(live.get(k), v, _child(node, k))
        return out
    keys = _list_keys(node) if isinstance(applied, list) and isinstance(live, list) else None
    if keys is None:
        return copy.deepcopy(applied)
    items = list(live)
    at = {_pe(x, keys): i for i, x in enumerate(items)}
    for a in applied:
        pe = _pe(a, keys)
        if pe in at:
            items[at[pe]] = merge(items[at[pe]], a, _items(node)) if keys else a
        else:
            at[pe] = len(items)
            items.append(copy.deepcopy(a))
    return items


def remove_paths(obj: Any, drop: set[Path], keep: set[Path], node: Any, path: Path = ()) -> Any:
    """obj without the fields of drop; a field that holds a kept one stays (with its list-map keys)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            p = (*path, "f:" + k)
            if p in drop and not _holds(p, keep):
                continue
            out[k] = remove_paths(v, drop, keep, _child(node, k), p) if _holds(p, drop) else v
        return out
    if isinstance(obj, list):
        keys_ = _list_keys(node)
        if keys_ is None:
            return obj
        kept = []
        for item in obj:
            p = (*path, _pe(item, keys_))
            if p in drop and not _holds(p, keep):
                continue
            if _holds(p, drop) and isinstance(item, dict):
                trimmed = remove_paths(item, drop, keep, _items(node), p)
                item = {**{k: item[k] for k in keys_ if k in item}, **trimmed}
            kept.append(item)
        return kept
    return obj


def _holds(prefix: Path, paths: set[Path]) -> bool:
    """Whether a path of paths lies below prefix."""
    n = len(prefix)
    return any(len(p) > n and p[:n] == prefix for p in paths)


def ignore(paths: set[Path], ignored: Path | None, only: Path | None) -> set[Path]:
    """The paths a write may own: none under `ignored` (status, written through its subresource), or only those
    under `only` (a status write owns status alone)."""
    if only is not None:
        return {p for p in paths if p[:len(only)] == only and len(p) > len(only)}
    if ignored is not None:
        return {p for p in paths if p[:len(ignored)] != ignored}
    return paths


# ---------------------------------------------------------------------------------------------
# FieldsV1 and the managedFields entries
# ---------------------------------------------------------------------------------------------
def encode(paths: set[Path]) -> dict:
    root: dict = {}
    for p in sorted(paths):
        node = root
        for pe in p:
            node = node.setdefault(pe, {})
    for p in paths:
        node = root
        for pe in p:
            node = node[pe]
        if node and "." not in node:
            node["."] = {}
    return _sorted(root)


def _sorted(tree: dict) -> dict:
    return {k: _sorted(tree[k]) for k in sorted(tree)}


def decode(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for k, sub in tree.items():
        if k == ".":
            continue
        p = (*prefix, k)
        if not sub or (isinstance(sub, dict) and "." in sub):
            out.add(p)
        out |= decode(sub, p)
    return out


@dataclass
class Manager:
    manager: str
    operation: str
    api_version: str
    subresource: str = ""
    time: str | None = None
    fields: set[Path] = field(default_factory=set)

    def ident(self) -> tuple[str, str, str, str]:
        # an applier is one entry whatever the version it applies; updaters have one per version
        return self.manager, self.operation, self.api_version if self.operation == "Update" else "", self.subresource

    def printed(self) -> str:
        s = json.dumps(self.manager)
        if self.subresource:
            s += f" with subresource {json.dumps(self.subresource)}"
        return s + (f" using {self.api_version}" if self.operation == "Update" else "")


def decode_entries(entries: Any) -> list[Manager] | None:
    """The entries of metadata.managedFields, or None when they do not decode (the server then keeps the live
    object's)."""
    if not isinstance(entries, list):
        return None
    out = []
    for e in entries:
        if not isinstance(e, dict) or e.get("operation") not in ("Apply", "Update") or not e.get("apiVersion") \
                or e.get("fieldsType") != "FieldsV1" or not isinstance(e.get("manager", ""), str):
            return None
        out.append(Manager(e.get("manager", ""), e["operation"], e["apiVersion"], e.get("subresource") or "",
                           e.get("time"), decode(e.get("fieldsV1") or {})))
    return out


def encode_entries(managers: list[Manager]) -> list[dict]:
    ordered = sorted((m for m in managers if m.fields), key=lambda m: (
        m.operation, m.time or "", m.manager, m.api_version, m.subresource))
    out = []
    for m in ordered:
        e: dict = {"manager": m.manager, "operation": m.operation, "apiVersion": m.api_version}
        if m.time:
            e["time"] = m.time
        e["fieldsType"] = "FieldsV1"
        e["fieldsV1"] = encode(m.fields)
        if m.subresource:
            e["subresource"] = m.subresource
        out.append(e)
    return out


def is_reset(entries: Any) -> bool:
    """managedFields: [{}] asks the server to forget every owner."""
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


def base_entries(sent: Any, live: Any, subresource: str | None) -> list[Manager]:
    """The owners an Update starts from: those the client sent (so a client can edit them, [{}] clears them)
    unless they are empty or do not decode, or the write is to a subresource; otherwise the live object's."""
    if not subresource:
        if is_reset(sent):
            return []
        mine = decode_entries(sent)
        if mine:
            return mine
    return decode_entries(live) or []


def _strip(obj: dict) -> dict:
    md = obj.get("metadata")
    if isinstance(md, dict) and "managedFields" in md:
        obj = dict(obj, metadata={k: v for k, v in md.items() if k != "managedFields"})
    return obj


@dataclass
class Write:
    """Who writes (the fieldManager), through which subresource, and what the kind's status rule is."""
    manager: str
    api_version: str
    subresource: str | None = None
    status_apart: bool = False  # the kind has a status subresource: the main resource does not own status

    def scope(self, paths: set[Path]) -> set[Path]:
        if self.subresource == "status":
            return ignore(paths, None, ("f:status",))
        return ignore(paths, ("f:status",) if self.status_apart else None, None)


def update(managers: list[Manager], old: dict | None, new: dict, node: Any, w: Write) -> list[dict]:
    """The managedFields after an Update operation turned old (None: a create) into new."""
    c = compare(_strip(old) if old is not None else _ZERO, _strip(new), node)
    changed, removed = w.scope(c.changed()), w.scope(c.removed)
    for m in managers:
        m.fields -= changed | removed
    if changed:
        me = Manager(w.manager, "Update", w.api_version, w.subresource or "", now_iso())
        prev = next((m for m in managers if m.ident() == me.ident()), None)
        if prev is not None:
            prev.fields |= changed
            prev.time = me.time
        else:
            me.fields = changed
            managers.append(me)
    return encode_entries(_cap([m for m in managers if m.fields]))


def _cap(managers: list[Manager]) -> list[Manager]:
    updaters = sorted((m for m in managers if m.operation == "Update"), key=lambda m: m.time or "")
    excess = len(updaters) - MAX_UPDATE_MANAGERS
    if excess <= 0:
        return managers
    merged = updaters[:excess + 1]
    bucket = Manager(ANCIENT_CHANGES, "Update", merged[-1].api_version, "", merged[-1].time,
                     set().union(*(m.fields for m in merged)))
    return [m for m in managers if m not in merged] + [bucket]


def conflict(conflicts: list[tuple[Manager, Path]]) -> errors.ApiError:
    """409 Conflict with one FieldManagerConflict cause per field, worded as the real server words it."""
    conflicts = sorted(conflicts, key=lambda mp: (mp[0].manager, mp[1]))
    causes = [{"type": "FieldManagerConflict", "message": f"conflict with {m.printed()}", "field": path_string(p)}
              for m, p in conflicts]
    if len(conflicts) == 1:
        m, p = conflicts[0]
        msg = f"Apply failed with 1 conflict: conflict with {m.printed()}: {path_string(p)}"
    else:
        lines: list[str] = []
        for who in sorted({m.printed() for m, _ in conflicts}):
            lines.append(f"conflicts with {who}:")
            lines += [f"- {path_string(p)}" for m, p in conflicts if m.printed() == who]
        msg = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.ApiError(409, "Conflict", msg, {"causes": causes})


def path_string(p: Path) -> str:
    """.spec.template.spec.containers[name="web"].image, as fieldpath.Path.String writes it."""
    out = ""
    for pe in p:
        kind, _, rest = pe.partition(":")
        if kind == "f":
            out += "." + rest
        elif kind == "k":
            key = json.loads(rest)
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in key.items()) + "]"
        elif kind == "v":
            out += f"[={rest}]"
        else:
            out += f"[{rest}]"
    return out


def apply(live: dict | None, config: dict, node: Any, w: Write, force: bool) -> tuple[dict, list[dict], bool]:
    """Server-side apply of config onto live (None: the object does not exist yet).

    Returns the merged object (before defaulting), its managedFields and whether the object itself changed."""
    base = _strip(live) if live is not None else {}
    managers = decode_entries((live or {}).get("metadata", {}).get("managedFields")) or []
    me = next((m for m in managers if m.ident() == (w.manager, "Apply", "", w.subresource or "")), None)
    last = set(me.fields) if me is not None else set()
    mine = w.scope(applied_set(config, node))
    merged = merge(base, config, node)
    others = [m for m in managers if m is not me]
    if last:
        owned = mine.union(*(m.fields for m in others))
        drop = last - owned
        if drop:
            merged = remove_paths(merged, drop, owned, node)
    c = compare(base, merged, node)
    changed, removed = w.scope(c.changed()), w.scope(c.removed)
    found = [(m, p) for m in others for p in sorted(m.fields & changed)]
    if found and not force:
        raise conflict(found)
    for m in others:
        m.fields -= changed | removed
    object_changed = merged != base
    if me is None:
        me = Manager(w.manager, "Apply", w.api_version, w.subresource or "", now_iso())
    elif object_changed:
        me.time = now_iso()
    me.api_version = w.api_version
    me.fields = mine
    return merged, encode_entries(_cap([m for m in [*others, me] if m.fields])), object_changed
