"""The Swagger 2.0 document as the protobuf kubectl asks for (Accept:
application/com.github.proto-openapi.spec.v2@v1.0+protobuf): gnostic's openapi_v2.Document, which
kube-openapi makes with openapi_v2.ParseDocument(json) and proto.Marshal.

Only the messages a Kubernetes document uses are written; field numbers are those of gnostic's
openapiv2/OpenAPIv2.proto. Maps become repeated Named* (name, value) pairs in the JSON's order;
vendor extensions, defaults, enums and examples are `Any{yaml}` holding the value as YAML (JSON text
is YAML), which is what kube-openapi's proto reader unmarshals. proto3 leaves empty values out.
"""
from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _len(n: int, payload: bytes) -> bytes:
    return _varint(n << 3 | 2) + _varint(len(payload)) + payload


def _str(n: int, s: str) -> bytes:
    return _len(n, s.encode()) if s else b""


def _bool(n: int, v: Any) -> bytes:
    return _varint(n << 3) + b"\x01" if v else b""


def _int(n: int, v: Any) -> bytes:
    return _varint(n << 3) + _varint(int(v)) if v else b""


def _double(n: int, v: Any) -> bytes:
    return _varint(n << 3 | 1) + struct.pack("<d", float(v)) if v else b""


def _any(v: Any) -> bytes:
    return _str(2, json.dumps(v) + "\n")  # Any.yaml


def _named(n: int, name: str, value: bytes) -> bytes:
    return _len(n, _str(1, name) + _len(2, value))


def _extensions(n: int, obj: dict) -> bytes:
    return b"".join(_named(n, k, _any(v)) for k, v in obj.items() if k.startswith("x-"))


# Schema ----------------------------------------------------------------------------------------
def _schema_items(v: Any) -> bytes:
    return b"".join(_len(1, schema(x)) for x in (v if isinstance(v, list) else [v]))


def _additional(v: Any) -> bytes:
    return _len(1, schema(v)) if isinstance(v, dict) else _bool(2, v)


_SCHEMA: dict[str, tuple[int, Callable[[int, Any], bytes]]] = {
    "$ref": (1, _str), "format": (2, _str), "title": (3, _str), "description": (4, _str),
    "default": (5, lambda n, v: _len(n, _any(v))), "multipleOf": (6, _double), "maximum": (7, _double),
    "exclusiveMaximum": (8, _bool), "minimum": (9, _double), "exclusiveMinimum": (10, _bool),
    "maxLength": (11, _int), "minLength": (12, _int), "pattern": (13, _str), "maxItems": (14, _int),
    "minItems": (15, _int), "uniqueItems": (16, _bool), "maxProperties": (17, _int), "minProperties": (18, _int),
    "required": (19, lambda n, v: b"".join(_str(n, x) for x in v)),
    "enum": (20, lambda n, v: b"".join(_len(n, _any(x)) for x in v)),
    "additionalProperties": (21, lambda n, v: _len(n, _additional(v))),
    "type": (22, lambda n, v: _len(n, b"".join(_str(1, t) for t in ([v] if isinstance(v, str) else v)))),
    "items": (23, lambda n, v: _len(n, _schema_items(v))),
    "allOf": (24, lambda n, v: b"".join(_len(n, schema(x)) for x in v)),
    "properties": (25, lambda n, v: _len(n, b"".join(_named(1, k, schema(s)) for k, s in v.items()))),
    "discriminator": (26, _str), "readOnly": (27, _bool),
    "externalDocs": (29, lambda n, v: _len(n, _str(1, v.get("description", "")) + _str(2, v.get("url", "")))),
    "example": (30, lambda n, v: _len(n, _any(v))),
}
SCHEMA_KEYS = frozenset(_SCHEMA)


def schema(s: dict) -> bytes:
    """One Schema message; a keyword Swagger 2.0 does not have is an error (gnostic refuses it too)."""
    parts = []
    for k, v in s.items():
        if k.startswith("x-"):
            continue
        if k not in _SCHEMA:
            raise ValueError(f"not a Swagger 2.0 schema keyword: {k}")
        n, enc = _SCHEMA[k]
        parts.append((n, enc(n, v)))
    parts.sort(key=lambda p: p[0])
    return b"".join(p for _, p in parts) + _extensions(31, s)


# Paths -----------------------------------------------------------------------------------------
def _parameter(p: dict) -> bytes:
    if "$ref" in p:
        return _len(2, _str(1, p["$ref"]))  # ParametersItem.json_reference
    if p["in"] == "body":
        body = (_str(1, p.get("description", "")) + _str(2, p["name"]) + _str(3, "body") + _bool(4, p.get("required"))
                + _len(5, schema(p["schema"])) + _extensions(6, p))
        return _len(1, _len(1, body))  # ParametersItem.parameter.body_parameter
    # the four sub-schemas share numbers up to name; query and formData have allow_empty_value at 5
    shift = 1 if p["in"] in ("query", "formData") else 0
    sub = (_bool(1, p.get("required")) + _str(2, p["in"]) + _str(3, p.get("description", "")) + _str(4, p["name"])
           + _str(5 + shift, p.get("type", "")) + _bool(19 + shift, p.get("uniqueItems")) + _extensions(22 + shift, p))
    kind = {"header": 1, "formData": 2, "query": 3, "path": 4}[p["in"]]
    return _len(1, _len(2, _len(kind, sub)))  # ParametersItem.parameter.non_body_parameter.<kind>


def _response(r: dict) -> bytes:
    body = _str(1, r.get("description", ""))
    if "schema" in r:
        body += _len(2, _len(1, schema(r["schema"])))  # SchemaItem.schema
    return _len(1, body + _extensions(5, r))  # ResponseValue.response


def _operation(o: dict) -> bytes:
    out = b"".join(_str(1, t) for t in o.get("tags", ()))
    out += _str(2, o.get("summary", "")) + _str(3, o.get("description", "")) + _str(5, o.get("operationId", ""))
    out += b"".join(_str(6, t) for t in o.get("produces", ())) + b"".join(_str(7, t) for t in o.get("consumes", ()))
    out += b"".join(_len(8, _parameter(p)) for p in o.get("parameters", ()))
    codes = b"".join(_named(1, code, _response(r)) for code, r in o.get("responses", {}).items())
    out += _len(9, codes) + b"".join(_str(10, s) for s in o.get("schemes", ())) + _bool(11, o.get("deprecated"))
    return out + _extensions(13, o)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: dict) -> bytes:
    out = b"".join(_len(n, _operation(item[m])) for m, n in _METHODS.items() if m in item)
    out += b"".join(_len(9, _parameter(p)) for p in item.get("parameters", ()))
    return out + _extensions(10, item)


# Document --------------------------------------------------------------------------------------
def _security_definition(d: dict) -> bytes:
    if d.get("type") != "apiKey":
        raise ValueError(f"security definition type {d.get('type')} is not written")
    key = (_str(1, "apiKey") + _str(2, d.get("name", "")) + _str(3, d.get("in", "")) + _str(4, d.get("description", ""))
           + _extensions(5, d))
    return _len(2, key)  # SecurityDefinitionsItem.api_key_security


def encode_document(doc: dict) -> bytes:
    info = doc.get("info", {})
    out = _str(1, doc.get("swagger", "2.0"))
    out += _len(2, _str(1, info.get("title", "")) + _str(2, info.get("version", "")) + _extensions(7, info))
    out += _len(8, _extensions(1, doc.get("paths", {}))
                + b"".join(_named(2, p, _path_item(v)) for p, v in doc.get("paths", {}).items() if not p.startswith("x-")))
    out += _len(9, b"".join(_named(1, k, schema(v)) for k, v in doc.get("definitions", {}).items()))
    for req in doc.get("security", ()):
        out += _len(12, b"".join(_named(1, k, b"".join(_str(1, s) for s in v)) for k, v in req.items()))
    if doc.get("securityDefinitions"):
        out += _len(13, b"".join(_named(1, k, _security_definition(v)) for k, v in doc["securityDefinitions"].items()))
    return out + _extensions(16, doc)
