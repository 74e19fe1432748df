"""The Kubernetes schemas compiled into one small tree that a single pass walks.

Built-in kinds come from the Kubernetes 1.32 schemas shipped by kubernetes-validate
(`schema_for(api_version, kind)`), custom resources from their CRD's openAPIV3Schema
(`compile_crd_schema`). The same tree gives strategic merge patch and server-side apply their
per-field merge keys and list types (see twin/apimachinery/patch.py).
"""
from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

SCHEMA_VERSION = "v1.32.0"
# the schemas shipped by kubernetes-validate (located, not imported: importing it pulls in jsonschema)
_SPEC = importlib.util.find_spec("kubernetes_validate")
_ROOT = Path(list(_SPEC.submodule_search_locations)[0] if _SPEC and _SPEC.submodule_search_locations
             else ".") / "kubernetes-json-schema"


# ---------------------------------------------------------------------------------------------
# the compiled schema tree
# ---------------------------------------------------------------------------------------------
class Node:
    """One schema position. Structure lives on the def node (`t`); a field node carries the
    per-field list/patch metadata and points at its def through `t`."""

    __slots__ = ("types", "props", "values", "items", "required", "enum", "merge_key", "strategy",
                 "list_type", "map_keys", "free", "fmt", "go", "t", "name", "preserve", "bounds",
                 "int_or_string", "nullable", "pyt", "simple", "one_of", "map_type")

    def __init__(self) -> None:
        self.types: frozenset[str] | None = None
        self.props: dict[str, Node] | None = None
        self.values: Node | None = None          # map values (additionalProperties schema)
        self.items: Node | None = None
        self.required: tuple[str, ...] = ()
        self.enum: tuple | None = None
        self.merge_key: str | None = None        # x-kubernetes-patch-merge-key
        self.strategy: str = ""                  # x-kubernetes-patch-strategy
        self.list_type: str | None = None        # atomic | set | map
        self.map_keys: tuple[str, ...] = ()      # x-kubernetes-list-map-keys
        self.map_type: str | None = None         # x-kubernetes-map-type (atomic: server-side apply owns it whole)
        self.free = False                        # anything goes (RawExtension, JSON, preserve-unknown)
        self.fmt: str | None = None              # int32, int64, quantity, date-time, ...
        self.go = ""                             # Go type name for decode errors
        self.t: Node = self                      # the node holding the structure
        self.name = ""                           # def name (Go struct name)
        self.preserve = False                    # x-kubernetes-preserve-unknown-fields
        self.bounds: dict | None = None          # CRD schemas: minimum, maxLength, pattern, ...
        self.int_or_string = False
        self.nullable = False
        self.pyt: frozenset | None = None        # the Python types a value may have (exact type match)
        self.simple = False                      # a scalar that only needs its type checked
        self.one_of: tuple[tuple[str, ...], ...] = ()  # CRD `oneOf` whose alternatives are `required` lists


_PY = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
       "object": (dict,)}


def _finish(n: Node) -> None:
    if n.types:
        pyt: set = set()
        for t in n.types:
            pyt.update(_PY.get(t, ()))
        n.pyt = frozenset(pyt)
    n.simple = (not n.free and n.pyt is not None and not (n.pyt & {dict, list}) and n.enum is None
                and n.fmt != "quantity" and not n.bounds and not n.one_of)


@functools.lru_cache(maxsize=1)
def _defs() -> dict[str, dict]:
    doc = json.loads((_ROOT / f"{SCHEMA_VERSION}-local-strict" / "_definitions.json").read_text())
    return doc["$defs"]


_DEF_NODES: dict[str, Node] = {}


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _def_node(name: str) -> Node:
    n = _DEF_NODES.get(name)
    if n is not None:
        return n
    n = Node()
    n.name = name.rsplit(".", 1)[-1]
    _DEF_NODES[name] = n
    _fill(n, _defs()[name], name)
    return n


def _fill(n: Node, s: dict, def_name: str = "") -> None:
    if "oneOf" in s:  # IntOrString, Quantity
        types = set()
        for alt in s["oneOf"]:
            t = alt.get("type")
            types.update(t if isinstance(t, list) else [t])
        n.nullable = "null" in types
        n.types = frozenset(types - {"null"})
        if def_name.endswith("Quantity"):
            n.fmt, n.go = "quantity", "resource.Quantity"
        else:
            n.int_or_string, n.go = True, "intstr.IntOrString"
        _finish(n)
        return
    t = s.get("type")
    if t is None:
        n.free = True
        return
    tl = t if isinstance(t, list) else [t]
    n.nullable = "null" in tl
    n.types = frozenset(x for x in tl if x != "null")
    n.fmt = s.get("format")
    n.map_type = s.get("x-kubernetes-map-type", n.map_type)
    if "enum" in s:
        n.enum = tuple(s["enum"])
    if "object" in n.types:
        if "properties" in s:
            n.props = {k: _field(v) for k, v in s["properties"].items()}
            n.required = tuple(s.get("required", ()))
            n.go = "v1." + n.name if n.name else "struct"
        elif isinstance(s.get("additionalProperties"), dict):
            n.values = _field(s["additionalProperties"])
            n.go = "map[string]" + (n.values.t.go or "string")
        else:
            n.free = True
            n.go = "map[string]interface {}"
    elif "array" in n.types:
        n.items = _field(s.get("items") or {})
        n.go = "[]" + (n.items.t.go or "interface {}")
    else:
        n.go = {"integer": n.fmt or "int64", "number": "float64", "boolean": "bool", "string": "string"}.get(
            next(iter(n.types)) if n.types else "", "")
    _finish(n)


def _field(s: dict) -> Node:
    if "$ref" in s and len(s) <= 2 and not any(k.startswith("x-kubernetes") for k in s):
        return _def_node(_ref_name(s["$ref"]))
    n = Node()
    if "$ref" in s:
        n.t = _def_node(_ref_name(s["$ref"]))
    else:
        _fill(n, s)
    _list_meta(n, s)
    return n


def _list_meta(n: Node, s: dict) -> None:
    n.merge_key = s.get("x-kubernetes-patch-merge-key")
    n.strategy = s.get("x-kubernetes-patch-strategy", "")
    n.list_type = s.get("x-kubernetes-list-type")
    n.map_keys = tuple(s.get("x-kubernetes-list-map-keys", ()))
    n.map_type = s.get("x-kubernetes-map-type", n.map_type)


@functools.lru_cache(maxsize=1)
def _gvk_index() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, s in _defs().items():
        for g in s.get("x-kubernetes-group-version-kind", ()):
            key = (g.get("group", ""), g["version"], g["kind"])
            if key not in out or name.rsplit(".", 1)[-1] == g["kind"]:
                out[key] = name
    return out


def schema_for(api_version: str, kind: str) -> Node | None:
    """The compiled schema of a built-in kind (None for kinds the schemas do not know)."""
    group, _, version = api_version.rpartition("/")
    name = _gvk_index().get((group, version, kind))
    return _def_node(name) if name else None


# ---------------------------------------------------------------------------------------------
# CRD schemas (openAPIV3Schema) compiled into the same tree
# ---------------------------------------------------------------------------------------------
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
           "minItems", "maxItems", "minProperties", "maxProperties", "multipleOf", "uniqueItems")


def compile_crd_schema(s: dict | None) -> Node:
    n = Node()
    if not isinstance(s, dict):
        n.free = True
        return n
    n.preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    n.nullable = bool(s.get("nullable"))
    _list_meta(n, s)
    if s.get("x-kubernetes-int-or-string"):
        n.types, n.int_or_string = frozenset({"integer", "string"}), True
    elif s.get("x-kubernetes-embedded-resource") or (not s.get("type") and not s.get("properties")):
        n.free = n.preserve or not s.get("type")
    t = s.get("type")
    if t and not n.int_or_string:
        n.types = frozenset([t])
    if "enum" in s:
        n.enum = tuple(s["enum"])
    n.fmt = s.get("format")
    b = {k: s[k] for k in _BOUNDS if k in s}
    n.bounds = b or None
    if "properties" in s:
        n.props = {k: compile_crd_schema(v) for k, v in s["properties"].items()}
        n.types = n.types or frozenset(["object"])
    if isinstance(s.get("additionalProperties"), dict):
        n.values = compile_crd_schema(s["additionalProperties"])
    elif s.get("additionalProperties") is True:
        n.preserve = True
    if "items" in s:
        n.items = compile_crd_schema(s["items"] if isinstance(s["items"], dict) else {})
    n.required = tuple(s.get("required", ()))
    n.one_of = _required_alternatives(s.get("oneOf"))
    if n.types == frozenset(["object"]) and n.props is None and n.values is None:
        n.free = True
    _finish(n)
    return n


def _required_alternatives(alts: object) -> tuple[tuple[str, ...], ...]:
    """A structural schema's `oneOf` may only restate its own properties' value validations; the form CRDs use
    is a list of `required` alternatives (exactly one of these fields). Other alternatives are not checked."""
    if not isinstance(alts, list) or not all(isinstance(a, dict) and set(a) == {"required"} for a in alts):
        return ()
    return tuple(tuple(a["required"]) for a in alts)
