"""Decoding a request body against its kind's compiled schema, as Go decoding does.

A value of the wrong JSON type ("cannot unmarshal string into Go struct field
StatefulSetSpec.spec.replicas of type int32") or a malformed quantity is a DecodeError (400), and
so, under fieldValidation=Strict, is an unknown field ("strict decoding error: unknown field
\"spec.foo\""). Without Strict, unknown fields are dropped, as Go decoding drops them, and reported
as warnings. Required scalars that Go always serialises (non-omitempty fields) are filled with
their zero values where the real server does not reject them (status fields, StatefulSet
serviceName). Custom resources are checked against their CRD's schema (types, required, enums,
bounds, patterns: 422 causes) and pruned of unknown fields unless
x-kubernetes-preserve-unknown-fields.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ..apimachinery import fieldrules

from .causes import DecodeError
from .schema import Node, _def_node

_JSON_TYPE = {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}


def _json_kind(v: Any) -> str:
    return _JSON_TYPE.get(type(v), "value")


_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_ZERO = {"string": "", "integer": 0, "number": 0, "boolean": False}
# Required (non-omitempty) fields that the real server fills with Go zero values instead of rejecting.
_ZERO_FILL = {("StatefulSetSpec", "serviceName"), ("ControllerRevision", "revision"), ("CSINodeSpec", "drivers"),
              ("Event", "metadata"), ("Event", "involvedObject")}


# CRD length bounds, in the order the real server reports them:
# (keyword, the JSON type it bounds, True for a minimum, message)
_LENGTH_BOUNDS = (("minLength", str, True, "should be at least {} chars long"),
                  ("maxLength", str, False, "may not be more than {} bytes"),
                  ("minItems", list, True, "should have at least {} items"),
                  ("maxItems", list, False, "must have at most {} items"))


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
            if t.one_of:
                self._one_of(t.one_of, v, path)
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

    def _one_of(self, alts: tuple[tuple[str, ...], ...], v: dict, path: str) -> None:
        """kube-openapi's oneOf (validate/schema_props.go): exactly one alternative must hold. Its error is not a
        field error, so apiextensions reports it on the nil path (`<nil>: Invalid value: ""`); with none valid,
        the first alternative's failures follow (equal match counts keep the first)."""
        valid = sum(1 for req in alts if all(k in v for k in req))
        if valid == 1:
            return
        extra = "Found none valid" if not valid else f"Found {valid} valid alternatives"
        self.causes.append({"reason": "FieldValueInvalid", "field": "<nil>",
                            "message": f'Invalid value: "": "{path}" must validate one and only one schema (oneOf). {extra}'})
        if not valid:
            for k in alts[0]:
                if k not in v:
                    self.causes.append({"reason": "FieldValueRequired", "message": "Required value", "field": _join(path, k)})

    def _bounds(self, b: dict, v: Any, path: str) -> None:
        def bad(msg: str) -> None:
            self.causes.append({"reason": "FieldValueInvalid", "field": path,
                                "message": f"Invalid value: {json.dumps(v)[:80]}: {path} in body {msg}"})
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in b and (v < b["minimum"] or (b.get("exclusiveMinimum") is True and v == b["minimum"])):
                bad(f"should be greater than or equal to {b['minimum']}")
            if "maximum" in b and (v > b["maximum"] or (b.get("exclusiveMaximum") is True and v == b["maximum"])):
                bad(f"should be less than or equal to {b['maximum']}")
        elif isinstance(v, (str, list)):
            for key, kind, at_least, msg in _LENGTH_BOUNDS:
                if key in b and isinstance(v, kind) and (len(v) < b[key] if at_least else len(v) > b[key]):
                    bad(msg.format(b[key]))
            if isinstance(v, str) and "pattern" in b and not re.search(b["pattern"], v):
                bad(f"should match '{b['pattern']}'")


def _strict_message(unknown: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)


def decode(obj: dict, *, strict: bool, schema: Node | None, crd: bool) -> tuple[list[str], list[dict]]:
    """Decode-check obj in place (prune unknown fields unless strict).

    Raises DecodeError (400); returns the warnings of a non-strict decode and the 422 causes the
    schema itself gives (CRD types, required fields, enums, bounds).
    """
    kind = obj.get("kind")
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
    return warnings, causes
