"""The two ways a request body fails, and the causes a 422 names.

DecodeError is the real server's 400 (the body does not decode into the kind's Go type);
Invalid is its 422, whose details.causes name each field: the builders below write one cause
each in the wording of apimachinery's field.Error (Invalid value, Required value, ...).
"""
from __future__ import annotations

import json
from typing import Any
from collections.abc import Iterable


class Invalid(Exception):
    """422: the object decoded but is not valid. causes: [{reason, message, field}]."""

    def __init__(self, causes: list[dict], strict_unknown: bool = False):
        super().__init__("; ".join(f"{c['field']}: {c['message']}" for c in causes))
        self.causes = causes
        self.strict_unknown = strict_unknown  # kept for callers of the old API


class DecodeError(Exception):
    """400: the body could not be decoded into the kind (wrong types, strict unknown fields)."""


def _invalid(field: str, value: Any, msg: str) -> dict:
    return {"reason": "FieldValueInvalid", "field": field, "message": f"Invalid value: {json.dumps(value)}: {msg}"}


def _required(field: str, detail: str = "") -> dict:
    return {"reason": "FieldValueRequired", "field": field, "message": "Required value" + (f": {detail}" if detail else "")}


def _unsupported(field: str, value: Any, allowed: Iterable[str]) -> dict:
    return {"reason": "FieldValueNotSupported", "field": field,
            "message": f"Unsupported value: {json.dumps(value)}: supported values: " + ", ".join(f'"{a}"' for a in allowed)}


def _forbidden(field: str, msg: str) -> dict:
    return {"reason": "FieldValueForbidden", "field": field, "message": f"Forbidden: {msg}"}


def _duplicate(field: str, value: Any) -> dict:
    return {"reason": "FieldValueDuplicate", "field": field, "message": f"Duplicate value: {json.dumps(value)}"}


def _not_found(field: str, value: Any) -> dict:
    return {"reason": "FieldValueNotFound", "field": field, "message": f"Not found: {json.dumps(value)}"}
