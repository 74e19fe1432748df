"""Decoding and validation of objects, as the real API server does it.

The real server first decodes a request body into its Go type, then defaults it, then
validates it. The twin does the same with the Kubernetes 1.32 schemas shipped by
kubernetes-validate, compiled once into a small tree that one pass walks:

- decoding (400 BadRequest): a value of the wrong JSON type ("cannot unmarshal string into Go
  struct field StatefulSetSpec.spec.replicas of type int32"), a malformed quantity, and, under
  fieldValidation=Strict, unknown fields ("strict decoding error: unknown field \"spec.foo\"").
  Without Strict, unknown fields are dropped, as Go decoding drops them, and reported as warnings.
  Required scalars that Go always serialises (non-omitempty fields) are filled with their zero
  values where the real server does not reject them (status fields, StatefulSet serviceName).
- validation (422 Invalid with details.causes naming each field): required fields, supported
  values, names, labels, selectors matching templates, containers, ports, PVC and PV essentials,
  and on update the fields the real server keeps immutable.

Custom resources are checked against their CRD's openAPIV3Schema (types, required, enums,
bounds, patterns) and pruned of unknown fields unless x-kubernetes-preserve-unknown-fields.

The same compiled tree gives strategic merge patch and server-side apply their per-field
merge keys and list types (see patch.py): `schema_for(api_version, kind)`.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from . import admission, fieldrules

SCHEMA_VERSION = "v1.32.0"
# the schemas shipped by kubernetes-validate (located, not imported: importing it pulls in jsonschema)
_SPEC = importlib.util.find_spec("kubernetes_validate")
_ROOT = Path(list(_SPEC.submodule_search_locations)[0] if _SPEC and _SPEC.submodule_search_locations
             else ".") / "kubernetes-json-schema"


class Invalid(Exception):
    """422: the object decoded but is not valid. causes: [{reason, message, field}]."""

    def __init__(self, causes: list[dict], strict_unknown: bool = False):
        super().__init__("; ".join(f"{c['field']}: {c['message']}" for c in causes))
        self.causes = causes
        self.strict_unknown = strict_unknown  # kept for callers of the old API


class DecodeError(Exception):
    """400: the body could not be decoded into the kind (wrong types, strict unknown fields)."""


# ---------------------------------------------------------------------------------------------
# the compiled schema tree
# ---------------------------------------------------------------------------------------------
class Node:
    """One schema position. Structure lives on the def node (`t`); a field node carries the
    per-field list/patch metadata and points at its def through `t`."""

    __slots__ = ("types", "props", "values", "items", "required", "enum", "merge_key", "strategy",
                 "list_type", "map_keys", "free", "fmt", "go", "t", "name", "preserve", "bounds",
                 "int_or_string", "nullable", "pyt", "simple")

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


_PY = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
       "object": (dict,)}


def _finish(n: Node) -> None:
    if n.types:
        pyt: set = set()
        for t in n.types:
            pyt.update(_PY.get(t, ()))
        n.pyt = frozenset(pyt)
    n.simple = (not n.free and n.pyt is not None and not (n.pyt & {dict, list}) and n.enum is None
                and n.fmt != "quantity" and not n.bounds)


_JSON_TYPE = {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}


def _json_kind(v: Any) -> str:
    return _JSON_TYPE.get(type(v), "value")


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
    if n.types == frozenset(["object"]) and n.props is None and n.values is None:
        n.free = True
    _finish(n)
    return n


# ---------------------------------------------------------------------------------------------
# the walk
# ---------------------------------------------------------------------------------------------
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_ZERO = {"string": "", "integer": 0, "number": 0, "boolean": False}
# Required (non-omitempty) fields that the real server fills with Go zero values instead of rejecting.
_ZERO_FILL = {("StatefulSetSpec", "serviceName"), ("ControllerRevision", "revision"), ("CSINodeSpec", "drivers"),
              ("Event", "metadata"), ("Event", "involvedObject")}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Walk:
    __slots__ = ("strict", "crd", "unknown", "decode", "causes")

    def __init__(self, strict: bool, crd: bool) -> None:
        self.strict = strict
        self.crd = crd
        self.unknown: list[str] = []
        self.decode: list[str] = []
        self.causes: list[dict] = []

    def type_error(self, node: Node, v: Any, path: str, parent: str) -> None:
        t = node.t
        if self.crd:
            want = next(iter(t.types)) if t.types else "object"
            if t.int_or_string:
                want = "integer or string"
            self.causes.append({"reason": "FieldValueTypeInvalid", "field": path,
                                "message": f"Invalid value: \"{_json_kind(v)}\": {path} in body must be of type {want}: "
                                           f"\"{_json_kind(v)}\""})
        else:
            self.decode.append(f"json: cannot unmarshal {_json_kind(v)} into Go struct field {parent}.{path} "
                               f"of type {t.go or 'string'}")

    def walk(self, v: Any, node: Node, path: str, parent: str, in_status: bool) -> None:
        """Check v against node, pruning unknown fields unless strict. parent = enclosing Go struct name."""
        t = node.t
        if v is None or t.free:
            return
        tv = type(v)
        if t.pyt is not None and tv not in t.pyt:
            self.type_error(node, v, path, parent)
            return
        if t.fmt == "quantity" and tv is str and fieldrules.quantity_error(v):
            self.decode.append(fieldrules.quantity_error(v) or "")
            return
        if t.enum is not None and v not in t.enum and path not in ("apiVersion", "kind"):
            supported = ", ".join(json.dumps(e) for e in t.enum)
            self.causes.append({"reason": "FieldValueNotSupported", "field": path,
                                "message": f"Unsupported value: {json.dumps(v)}: supported values: {supported}"})
        if t.bounds:
            self._bounds(t.bounds, v, path)
        if tv is dict:
            props = t.props
            if props is not None:
                name = t.name or parent
                drop = None
                for k, sub in v.items():
                    pn = props.get(k)
                    if pn is None:
                        if t.preserve or (not path and k in ("apiVersion", "kind", "metadata")):
                            continue
                        self.unknown.append(f"{path}.{k}" if path else k)
                        if drop is None:
                            drop = []
                        drop.append(k)
                        continue
                    if sub is None:
                        continue
                    pt = pn.t
                    if pt.simple:  # a simple node always has pyt (_finish)
                        if pt.pyt is not None and type(sub) not in pt.pyt:
                            self.type_error(pn, sub, f"{path}.{k}" if path else k, name)
                        continue
                    self.walk(sub, pn, f"{path}.{k}" if path else k, name,
                              in_status or (not path and k == "status"))
                if drop is not None and not self.strict:
                    for k in drop:
                        del v[k]
                for r in t.required:
                    cur = v.get(r)
                    if cur is None or (cur == "" and not in_status):
                        self._missing(t, v, r, props[r], f"{path}.{r}" if path else r, in_status)
            elif t.values is not None:
                vn = t.values
                vt = vn.t
                crd = self.crd
                for k, sub in v.items():
                    if sub is None:
                        continue
                    if vt.simple:
                        if vt.pyt is not None and type(sub) not in vt.pyt:
                            self.type_error(vn, sub, f"{path}.{k}" if crd else f"{path}[{k}]", parent)
                        continue
                    self.walk(sub, vn, f"{path}.{k}" if crd else f"{path}[{k}]", parent, in_status)
        elif tv is list:
            it = t.items
            if it is not None:
                itt = it.t
                if itt.simple:
                    pyt = itt.pyt
                    if pyt is not None:  # always, for a simple node (_finish)
                        for i, sub in enumerate(v):
                            if sub is not None and type(sub) not in pyt:
                                self.type_error(it, sub, f"{path}[{i}]", parent)
                    return
                if itt.free:
                    return
                for i, sub in enumerate(v):
                    if sub is not None:
                        self.walk(sub, it, f"{path}[{i}]", parent, in_status)

    def _missing(self, t: Node, obj: dict, key: str, fnode: Node, path: str, in_status: bool) -> None:
        ft = fnode.t
        if self.crd:
            self.causes.append({"reason": "FieldValueRequired", "message": "Required value", "field": path})
            return
        types = ft.types or frozenset()
        zero_fill = in_status or (t.name, key) in _ZERO_FILL or "boolean" in types
        if zero_fill or ("object" in types and ft.props is not None and not ft.nullable):
            if "object" in types:
                obj[key] = {}
                self.walk(obj[key], fnode, path, t.name, in_status)
            elif "array" in types:
                obj[key] = []
            elif types:
                obj[key] = _ZERO.get(next(iter(types)), "")
            return
        self.causes.append({"reason": "FieldValueRequired", "message": "Required value", "field": path})

    def _bounds(self, b: dict, v: Any, path: str) -> None:
        def bad(msg: str) -> None:
            self.causes.append({"reason": "FieldValueInvalid", "field": path,
                                "message": f"Invalid value: {json.dumps(v)[:80]}: {path} in body {msg}"})
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in b and (v < b["minimum"] or (b.get("exclusiveMinimum") is True and v == b["minimum"])):
                bad(f"should be greater than or equal to {b['minimum']}")
            if "maximum" in b and (v > b["maximum"] or (b.get("exclusiveMaximum") is True and v == b["maximum"])):
                bad(f"should be less than or equal to {b['maximum']}")
        elif isinstance(v, str):
            if "minLength" in b and len(v) < b["minLength"]:
                bad(f"should be at least {b['minLength']} chars long")
            if "maxLength" in b and len(v) > b["maxLength"]:
                bad(f"may not be more than {b['maxLength']} bytes")
            if "pattern" in b and not re.search(b["pattern"], v):
                bad(f"should match '{b['pattern']}'")
        elif isinstance(v, list):
            if "minItems" in b and len(v) < b["minItems"]:
                bad(f"should have at least {b['minItems']} items")
            if "maxItems" in b and len(v) > b["maxItems"]:
                bad(f"must have at most {b['maxItems']} items")


def _strict_message(unknown: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)


def check(obj: dict, *, strict: bool = False, schema: Node | None = None, crd: bool = False) -> list[str]:
    """Decode-check obj in place (prune unknown fields unless strict) and validate it.

    Raises DecodeError (400) or Invalid (422); returns the warnings of a non-strict decode.
    schema: the kind's compiled schema (default: looked up by apiVersion/kind).
    """
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if schema is None and not crd:
        schema = schema_for(api_version or "", kind or "")
    warnings: list[str] = []
    causes: list[dict] = []
    if crd and isinstance(obj.get("metadata"), dict):
        # a custom resource's metadata is a typed ObjectMeta all the same
        mw = _Walk(strict, False)
        mw.walk(obj["metadata"], _def_node("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), "metadata", kind or "", False)
        if mw.decode:
            raise DecodeError(mw.decode[0])
        if mw.unknown and strict:
            raise DecodeError(_strict_message(mw.unknown))
        warnings += [f'unknown field "{u}"' for u in mw.unknown]
    if schema is not None:
        w = _Walk(strict, crd)
        w.walk(obj, schema, "", schema.t.name or kind or "", False)
        w.decode += [] if crd else fieldrules.decode_errors(obj)
        if w.decode:
            raise DecodeError(w.decode[0])
        if w.unknown:
            if strict:
                raise DecodeError(_strict_message(w.unknown))
            warnings += [f'unknown field "{u}"' for u in w.unknown]
        causes = w.causes
    if not crd:
        causes.extend(semantic(obj))
    else:
        causes.extend(_meta_causes(obj, "CustomResource"))
    if causes:
        seen, unique = set(), []
        for c in causes:
            if (c["field"], c["message"]) not in seen:
                seen.add((c["field"], c["message"]))
                unique.append(c)
        raise Invalid(unique[:20])
    return warnings


def validate(obj: dict, strict: bool = False) -> None:
    """The old entry point: raise Invalid for an object that does not decode or validate."""
    try:
        check(obj, strict=strict)
    except DecodeError as e:
        raise Invalid([{"reason": "FieldValueInvalid", "message": str(e), "field": ""}],
                      strict_unknown=str(e).startswith("strict decoding error")) from e


def warm() -> None:
    """Compile the common kinds up front so the first request does not pay for it."""
    for av, k in (("v1", "Pod"), ("apps/v1", "StatefulSet"), ("v1", "PersistentVolumeClaim"), ("v1", "ConfigMap")):
        schema_for(av, k)


# ---------------------------------------------------------------------------------------------
# semantic validation (what the real server's validation.go files check)
# ---------------------------------------------------------------------------------------------
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_C_IDENTIFIER_ENV = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_LABEL_NAMED = {"Namespace"}  # kinds whose names are DNS-1123 labels
# only checked as path segments here (Service names are DNS-1035 labels: fieldrules.causes)
_PATH_SEGMENT_NAMES = {"Service", "ClusterRole", "Role", "RoleBinding", "ClusterRoleBinding"}

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
             "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


_invalid, _required, _unsupported, _forbidden = (fieldrules.invalid, fieldrules.required, fieldrules.not_supported,
                                                 fieldrules.forbidden)


def _duplicate(field: str, value: Any) -> dict:
    return {"reason": "FieldValueDuplicate", "field": field, "message": f"Duplicate value: {json.dumps(value)}"}


def _not_found(field: str, value: Any) -> dict:
    return {"reason": "FieldValueNotFound", "field": field, "message": f"Not found: {json.dumps(value)}"}


def _check_name(name: str, field: str, label: bool) -> list[dict]:
    if label:
        if len(name) > 63:
            return [_invalid(field, name, "must be no more than 63 characters")]
        if not _DNS1123_LABEL.match(name):
            return [_invalid(field, name, LABEL_MSG)]
    else:
        if len(name) > 253:
            return [_invalid(field, name, "must be no more than 253 characters")]
        if not _DNS1123_SUBDOMAIN.match(name):
            return [_invalid(field, name, SUBDOMAIN_MSG)]
    return []


def _check_qualified_key(key: str, field: str) -> list[dict]:
    prefix, _, name = key.rpartition("/")
    out = []
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        out.append(_invalid(field, key, "prefix part " + SUBDOMAIN_MSG))
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        out.append(_invalid(field, key, "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                                        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                                        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"))
    return out


def _check_labels(labels: Any, field: str) -> list[dict]:
    out: list[dict] = []
    if not isinstance(labels, dict):
        return out
    for k, v in labels.items():
        out += _check_qualified_key(k, field)
        if not isinstance(v, str) or len(v) > 63 or not _LABEL_VALUE.match(v):
            out.append(_invalid(f"{field}", v, "a valid label must be an empty string or consist of alphanumeric "
                                               "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                                               "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                                               "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"))
    return out


def _meta_causes(obj: dict, kind: str) -> list[dict]:
    md = obj.get("metadata") or {}
    out: list[dict] = []
    name = md.get("name")
    if isinstance(name, str) and name and kind not in _PATH_SEGMENT_NAMES:
        out += _check_name(name, "metadata.name", kind in _LABEL_NAMED)
    elif isinstance(name, str) and name and kind in _PATH_SEGMENT_NAMES and ("/" in name or name in (".", "..")):
        out.append(_invalid("metadata.name", name, 'may not contain "/"'))
    out += _check_labels(md.get("labels"), "metadata.labels")
    if isinstance(md.get("annotations"), dict):
        for k in md["annotations"]:
            out += _check_qualified_key(k, "metadata.annotations")
    for i, o in enumerate(md.get("ownerReferences") or []):
        if isinstance(o, dict):
            for f in ("apiVersion", "kind", "name", "uid"):
                if not o.get(f):
                    out.append(_required(f"metadata.ownerReferences[{i}].{f}" if f != "uid" else
                                         f"metadata.ownerReferences[{i}].uid"))
    return out


def _selector_matches(selector: dict, labels: dict) -> bool:
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def _selector_causes(sel: Any, field: str) -> list[dict]:
    return fieldrules.label_selector(sel, field)


_RESTART = ("Always", "OnFailure", "Never")
_PULL = ("Always", "IfNotPresent", "Never")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_DNS = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def _container_causes(cs: list, field: str, volumes: set[str], seen: set[str]) -> list[dict]:
    out: list[dict] = []
    for i, c in enumerate(cs):
        if not isinstance(c, dict):
            continue
        f = f"{field}[{i}]"
        name = c.get("name")
        if not name:
            out.append(_required(f"{f}.name"))
        else:
            out += _check_name(name, f"{f}.name", True)
            if name in seen:
                out.append(_duplicate(f"{f}.name", name))
            seen.add(name)
        if not c.get("image"):
            out.append(_required(f"{f}.image"))
        if c.get("imagePullPolicy") and c["imagePullPolicy"] not in _PULL:
            out.append(_unsupported(f"{f}.imagePullPolicy", c["imagePullPolicy"], _PULL))
        ports = set()
        for j, p in enumerate(c.get("ports") or []):
            cp = p.get("containerPort")
            if not cp:
                out.append(_required(f"{f}.ports[{j}].containerPort"))
            elif not 1 <= cp <= 65535:
                out.append(_invalid(f"{f}.ports[{j}].containerPort", cp, "must be between 1 and 65535, inclusive"))
            if p.get("protocol") and p["protocol"] not in _PROTOCOLS:
                out.append(_unsupported(f"{f}.ports[{j}].protocol", p["protocol"], _PROTOCOLS))
            if (cp, p.get("protocol", "TCP")) in ports:
                out.append(_duplicate(f"{f}.ports[{j}]", {"containerPort": cp, "protocol": p.get("protocol", "TCP")}))
            ports.add((cp, p.get("protocol", "TCP")))
        for j, e in enumerate(c.get("env") or []):
            if not e.get("name"):
                out.append(_required(f"{f}.env[{j}].name"))
        mounts = set()
        for j, m in enumerate(c.get("volumeMounts") or []):
            if not m.get("name"):
                out.append(_required(f"{f}.volumeMounts[{j}].name"))
            elif m["name"] not in volumes:
                out.append(_not_found(f"{f}.volumeMounts[{j}].name", m["name"]))
            if not m.get("mountPath"):
                out.append(_required(f"{f}.volumeMounts[{j}].mountPath"))
            elif m["mountPath"] in mounts:
                out.append(_invalid(f"{f}.volumeMounts[{j}].mountPath", m["mountPath"], "must be unique"))
            mounts.add(m.get("mountPath"))
    return out


def _pod_spec_causes(spec: Any, field: str, extra_volumes: Iterable[str] = (),
                     restart: tuple[str, ...] | None = None) -> list[dict]:
    if not isinstance(spec, dict):
        return []
    out: list[dict] = []
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        name = v.get("name") if isinstance(v, dict) else None
        if not name:
            out.append(_required(f"{field}.volumes[{i}].name"))
            continue
        out += _check_name(name, f"{field}.volumes[{i}].name", True)
        if name in volumes:
            out.append(_duplicate(f"{field}.volumes[{i}].name", name))
        volumes.add(name)
    volumes.update(extra_volumes)
    if not spec.get("containers"):
        out.append(_required(f"{field}.containers"))
    seen: set[str] = set()
    out += _container_causes(spec.get("initContainers") or [], f"{field}.initContainers", volumes, seen)
    out += _container_causes(spec.get("containers") or [], f"{field}.containers", volumes, seen)
    rp = spec.get("restartPolicy")
    if rp is not None:
        allowed = restart or _RESTART
        if rp not in allowed:
            out.append(_unsupported(f"{field}.restartPolicy", rp, allowed))
    if spec.get("dnsPolicy") and spec["dnsPolicy"] not in _DNS:
        out.append(_unsupported(f"{field}.dnsPolicy", spec["dnsPolicy"], _DNS))
    tgp = spec.get("terminationGracePeriodSeconds")
    if isinstance(tgp, int) and tgp < 0:
        out.append(_invalid(f"{field}.terminationGracePeriodSeconds", tgp, "must be greater than or equal to 0"))
    return out


def _workload_causes(obj: dict, kind: str) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    r = spec.get("replicas")
    if isinstance(r, int) and r < 0:
        out.append(_invalid("spec.replicas", r, "must be greater than or equal to 0"))
    sel = spec.get("selector")
    tpl = spec.get("template") or {}
    tlabels = (tpl.get("metadata") or {}).get("labels") or {}
    if kind != "Job" or spec.get("manualSelector"):
        if not sel or not (sel.get("matchLabels") or sel.get("matchExpressions")):
            out.append(_invalid("spec.selector", sel or {}, f"empty selector is invalid for {kind.lower()}")
                       if sel is not None else _required("spec.selector"))
        else:
            out += _selector_causes(sel, "spec.selector")
            if not _selector_matches(sel, tlabels):
                out.append(_invalid("spec.template.metadata.labels", tlabels, "`selector` does not match template `labels`"))
    out += _check_labels(tlabels, "spec.template.metadata.labels")
    extra = [t.get("metadata", {}).get("name") for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    restart: tuple[str, ...] = ("Always",)
    tspec = tpl.get("spec")
    if kind == "Job":
        restart = ("OnFailure", "Never")
        if isinstance(tspec, dict) and tspec.get("restartPolicy") not in restart:
            out.append(_required("spec.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
            restart = _RESTART
    out += _pod_spec_causes(tspec, "spec.template.spec", [e for e in extra if e], restart)
    if kind == "StatefulSet":
        pmp = spec.get("podManagementPolicy")
        if pmp and pmp not in ("OrderedReady", "Parallel"):
            out.append(_unsupported("spec.podManagementPolicy", pmp, ("OrderedReady", "Parallel")))
        us = (spec.get("updateStrategy") or {}).get("type")
        if us and us not in ("RollingUpdate", "OnDelete"):
            out.append(_unsupported("spec.updateStrategy.type", us, ("OnDelete", "RollingUpdate")))
        for i, t in enumerate(spec.get("volumeClaimTemplates") or []):
            out += _pvc_spec_causes((t or {}).get("spec") or {}, f"spec.volumeClaimTemplates[{i}].spec")
    if kind == "Deployment":
        st = (spec.get("strategy") or {}).get("type")
        if st and st not in ("Recreate", "RollingUpdate"):
            out.append(_unsupported("spec.strategy.type", st, ("Recreate", "RollingUpdate")))
    return out


_ACCESS = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")


def _pvc_spec_causes(spec: dict, field: str) -> list[dict]:
    out: list[dict] = []
    modes = spec.get("accessModes")
    if not modes:
        out.append(_required(f"{field}.accessModes", "at least 1 access mode is required"))
    for m in modes or []:
        if m not in _ACCESS:
            out.append(_unsupported(f"{field}.accessModes", m, _ACCESS))
    if not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
        out.append(_required(f"{field}.resources[storage]"))
    vm = spec.get("volumeMode")
    if vm and vm not in _VOLUME_MODES:
        out.append(_unsupported(f"{field}.volumeMode", vm, _VOLUME_MODES))
    return out


_PV_SOURCES = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker",
               "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk",
               "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")


def _pv_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    if not (spec.get("capacity") or {}).get("storage"):
        out.append(_required("spec.capacity[storage]"))
    if not spec.get("accessModes"):
        out.append(_required("spec.accessModes"))
    for m in spec.get("accessModes") or []:
        if m not in _ACCESS:
            out.append(_unsupported("spec.accessModes", m, _ACCESS))
    n = sum(1 for s in _PV_SOURCES if spec.get(s))
    if n == 0:
        out.append(_required("spec", "must specify a volume type"))
    elif n > 1:
        out.append(_forbidden("spec", "may not specify more than 1 volume type"))
    rp = spec.get("persistentVolumeReclaimPolicy")
    if rp and rp not in ("Delete", "Recycle", "Retain"):
        out.append(_unsupported("spec.persistentVolumeReclaimPolicy", rp, ("Delete", "Recycle", "Retain")))
    return out


def _sc_causes(obj: dict) -> list[dict]:
    out: list[dict] = []
    if not obj.get("provisioner"):
        out.append(_required("provisioner"))
    rp = obj.get("reclaimPolicy")
    if rp and rp not in ("Delete", "Retain"):
        out.append(_unsupported("reclaimPolicy", rp, ("Delete", "Retain")))
    vbm = obj.get("volumeBindingMode")
    if vbm and vbm not in ("Immediate", "WaitForFirstConsumer"):
        out.append(_unsupported("volumeBindingMode", vbm, ("Immediate", "WaitForFirstConsumer")))
    return out


def _va_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    if not spec.get("attacher"):
        out.append(_required("spec.attacher"))
    if not spec.get("nodeName"):
        out.append(_required("spec.nodeName"))
    src = spec.get("source") or {}
    n = sum(1 for k in ("persistentVolumeName", "inlineVolumeSpec") if src.get(k))
    if n != 1:
        why = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        out.append(_required("spec.source", why) if n == 0 else _forbidden("spec.source", why))
    return out


def _service_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    out: list[dict] = []
    t = spec.get("type", "ClusterIP")
    if t not in ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"):
        out.append(_unsupported("spec.type", t, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")))
    if t != "ExternalName" and spec.get("clusterIP") != "None" and not spec.get("ports"):
        out.append(_required("spec.ports"))
    ports = spec.get("ports") or []
    for i, p in enumerate(ports):
        port = p.get("port")
        if not port:
            out.append(_required(f"spec.ports[{i}].port"))
        elif not 1 <= port <= 65535:
            out.append(_invalid(f"spec.ports[{i}].port", port, "must be between 1 and 65535, inclusive"))
        if len(ports) > 1 and not p.get("name"):
            out.append(_required(f"spec.ports[{i}].name"))
    return out


def _crd_causes(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    out: list[dict] = []
    name = (obj.get("metadata") or {}).get("name")
    want = f"{names.get('plural')}.{spec.get('group')}"
    if name and name != want:
        out.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in ("Cluster", "Namespaced"):
        out.append(_unsupported("spec.scope", spec.get("scope"), ("Cluster", "Namespaced")))
    versions = spec.get("versions") or []
    if not versions:
        out.append(_invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    elif sum(1 for v in versions if v.get("storage")) != 1:
        out.append(_invalid("spec.versions", [v.get("name") for v in versions],
                            "must have exactly one version marked as storage version"))
    for f in ("plural", "kind"):
        if not names.get(f):
            out.append(_required(f"spec.names.{f}"))
    return out


_SEMANTIC = {
    "StatefulSet": _workload_causes, "Deployment": _workload_causes, "ReplicaSet": _workload_causes,
    "DaemonSet": _workload_causes, "Job": _workload_causes,
}


def semantic(obj: dict) -> list[dict]:
    """The kind-specific validation of a decoded, defaulted built-in object."""
    kind = obj.get("kind") or ""
    out = _meta_causes(obj, kind)
    if kind in _SEMANTIC:
        out += _SEMANTIC[kind](obj, kind)
    elif kind == "Pod":
        out += _pod_spec_causes(obj.get("spec"), "spec")
    elif kind == "PodTemplate":
        out += _pod_spec_causes((obj.get("template") or {}).get("spec"), "template.spec")
    elif kind == "PersistentVolumeClaim":
        out += _pvc_spec_causes(obj.get("spec") or {}, "spec")
    elif kind == "PersistentVolume":
        out += _pv_causes(obj)
    elif kind == "StorageClass":
        out += _sc_causes(obj)
    elif kind == "VolumeAttachment":
        out += _va_causes(obj)
    elif kind == "Service":
        out += _service_causes(obj)
    elif kind == "CustomResourceDefinition":
        out += _crd_causes(obj)
    out += fieldrules.causes(obj)
    return out


# ---------------------------------------------------------------------------------------------
# update validation: fields the real server keeps immutable
# ---------------------------------------------------------------------------------------------
_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _without(d: dict | None, keys: Iterable[str]) -> dict:
    return {k: v for k, v in (d or {}).items() if k not in keys}


def _strip_images(spec: dict) -> dict:
    spec = dict(spec or {})
    for f in ("containers", "initContainers"):
        spec[f] = [_without(c, ("image",)) for c in spec.get(f) or []]
    return _without(spec, ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates"))


def update_causes(old: dict, new: dict) -> list[dict]:
    """Immutability rules of the real server's ValidateXUpdate functions."""
    kind = new.get("kind")
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    out: list[dict] = []
    if kind in ("StatefulSet", "Deployment", "ReplicaSet", "DaemonSet", "Job"):
        if kind != "Job" and os_.get("selector") != ns_.get("selector"):
            out.append(_invalid("spec.selector", ns_.get("selector"), "field is immutable"))
        if kind == "StatefulSet" and _without(os_, _STS_MUTABLE) != _without(ns_, _STS_MUTABLE):
            out.append(_forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                          "'template', 'updateStrategy', 'revisionHistoryLimit', "
                                          "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
    elif kind == "Pod":
        if _strip_images(os_) != _strip_images(ns_):
            out.append(_forbidden("spec", "pod updates may not change fields other than `spec.containers[*].image`,"
                                          "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                                          "`spec.tolerations` (only additions to existing tolerations),"
                                          "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                                          "previously negative)"))
    elif kind == "StorageClass":
        for f, msg in (("parameters", "updates to parameters are forbidden."),
                       ("provisioner", "updates to provisioner are forbidden."),
                       ("reclaimPolicy", "updates to reclaimPolicy are forbidden.")):
            if old.get(f) != new.get(f):
                out.append(_forbidden(f, msg))
        if old.get("volumeBindingMode") != new.get("volumeBindingMode"):
            out.append(_invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
    elif kind == "VolumeAttachment":
        if os_ != ns_:
            out.append(_invalid("spec", ns_, "field is immutable"))
    elif kind in ("ConfigMap", "Secret"):
        if old.get("immutable"):
            for f in ("data", "binaryData", "stringData"):
                if old.get(f) != new.get(f):
                    out.append(_forbidden(f, "field is immutable when `immutable` is set"))
            if not new.get("immutable"):
                out.append(_forbidden("immutable", "field is immutable when `immutable` is set"))
    elif kind == "CustomResourceDefinition":
        if os_.get("group") != ns_.get("group"):
            out.append(_invalid("spec.group", ns_.get("group"), "field is immutable"))
        if (os_.get("names") or {}).get("plural") != (ns_.get("names") or {}).get("plural"):
            out.append(_invalid("status.acceptedNames.plural", (ns_.get("names") or {}).get("plural"), "field is immutable"))
    out += fieldrules.update_causes(old, new)
    if not out:  # validating admission (403) runs once validation passed
        admission.validate_update(old, new)
    return out
