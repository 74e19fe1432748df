"""The whole check of a request body: decode it, then apply the create-time rules.

The real server decodes a request body into its Go type, defaults it, then validates it; the
store defaults between its own calls (twin/registry/defaulters.py) and adds the update rules (updates.py).
"""
from __future__ import annotations

from .causes import DecodeError, Invalid
from .decoding import decode
from .metadata import _meta_causes
from .schema import Node, schema_for
from .semantic import semantic


def check(obj: dict, *, strict: bool = False, schema: Node | None = None, crd: bool = False) -> list[str]:
    """Decode-check obj in place (prune unknown fields unless strict) and validate it.

    Raises DecodeError (400) or Invalid (422); returns the warnings of a non-strict decode.
    schema: the kind's compiled schema (default: looked up by apiVersion/kind).
    """
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if schema is None and not crd:
        schema = schema_for(api_version or "", kind or "")
    warnings, causes = decode(obj, strict=strict, schema=schema, crd=crd)
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
