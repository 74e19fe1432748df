"""Validate built-in kinds against the Kubernetes JSON schemas shipped by kubernetes-validate.

The twin answers like the real server: schema violations become 422 Invalid with
details.causes naming the field, and unknown fields under fieldValidation=Strict a 400 strict
decoding error. Validators are built once per kind and cached: schema loading is the slow part.
"""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import jsonschema
import kubernetes_validate
from referencing import Registry, Resource

SCHEMA_VERSION = "v1.32.0"
_ROOT = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"


class Invalid(Exception):
    def __init__(self, causes: list[dict], strict_unknown: bool = False):
        super().__init__("; ".join(f"{c['field']}: {c['message']}" for c in causes))
        self.causes = causes
        self.strict_unknown = strict_unknown


@functools.lru_cache(maxsize=4)
def _registry(strict: bool) -> Registry:
    d = _ROOT / (f"{SCHEMA_VERSION}-local" + ("-strict" if strict else ""))
    defs = json.loads((d / "_definitions.json").read_text())
    return Resource.from_contents(defs) @ Registry()


@functools.lru_cache(maxsize=256)
def _validator(kind: str, api_version: str, strict: bool):
    d = _ROOT / (f"{SCHEMA_VERSION}-local" + ("-strict" if strict else ""))
    gv = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    f = d / f"{kind.lower()}-{gv}.json"
    if not f.exists():
        return None
    schema = json.loads(f.read_text())
    return jsonschema.validators.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ _registry(strict))


def _path(err: jsonschema.ValidationError) -> str:
    out = ""
    for p in err.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def _cause(err: jsonschema.ValidationError) -> dict:
    field = _path(err)
    if err.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", err.message)
        name = missing.group(1) if missing else "?"
        field = f"{field}.{name}" if field != "<root>" else name
        return {"reason": "FieldValueRequired", "message": "Required value", "field": field}
    if err.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", err.message)
        name = extra[0] if extra else "?"
        field = f"{field}.{name}" if field != "<root>" else name
        return {"reason": "FieldValueInvalid", "message": f'unknown field "{field}"', "field": field}
    if err.validator == "type":
        want = err.validator_value
        if isinstance(want, list):
            want = next((t for t in want if t != "null"), want[0])
        return {"reason": "FieldValueTypeInvalid",
                "message": f"Invalid value: {json.dumps(err.instance)[:80]}: {field} in body must be of type {want}",
                "field": field}
    if err.validator == "enum":
        return {"reason": "FieldValueNotSupported",
                "message": f"Unsupported value: {json.dumps(err.instance)[:80]}: supported values: {err.validator_value}",
                "field": field}
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {err.message[:200]}", "field": field}


def validate(obj: dict, strict: bool = False) -> None:
    """Raise Invalid for a built-in object that violates its schema; CRD objects pass through."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not kind or not api_version:
        missing = "kind" if not kind else "apiVersion"
        raise Invalid([{"reason": "FieldValueRequired", "message": "Required value", "field": missing}])
    v = _validator(kind, api_version, False)
    if v is None:
        return
    errors = sorted(v.iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        raise Invalid([_cause(e) for e in errors[:10]])
    if strict:
        sv = _validator(kind, api_version, True)
        unknown = [e for e in sv.iter_errors(obj) if e.validator == "additionalProperties"] if sv else []
        if unknown:
            raise Invalid([_cause(e) for e in unknown[:10]], strict_unknown=True)


def warm() -> None:
    """Build the registries in the background so the first request does not pay for it."""
    _registry(False)
