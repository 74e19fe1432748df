"""The two ways a request body fails, and the causes a 422 names.

DecodeError is the real server's 400 (the body does not decode into the kind's Go type);
Invalid is its 422, whose details.causes name each field: the builders below write one cause
each in the wording of apimachinery's field.Error (Invalid value, Required value, ...).
"""
from __future__ import annotations

import json
from typing import Any

from ..apimachinery import fieldrules


class Invalid(Exception):
    """422: the object decoded but is not valid. causes: [{reason, message, field}]."""

    def __init__(self, causes: list[dict], strict_unknown: bool = False):
        super().__init__("; ".join(f"{c['field']}: {c['message']}" for c in causes))
        self.causes = causes
        self.strict_unknown = strict_unknown  # kept for callers of the old API


class DecodeError(Exception):
    """400: the body could not be decoded into the kind (wrong types, strict unknown fields)."""


_invalid, _required, _unsupported, _forbidden = (fieldrules.invalid, fieldrules.required, fieldrules.not_supported,
                                                 fieldrules.forbidden)


def _duplicate(field: str, value: Any) -> dict:
    return {"reason": "FieldValueDuplicate", "field": field, "message": f"Duplicate value: {json.dumps(value)}"}


def _not_found(field: str, value: Any) -> dict:
    return {"reason": "FieldValueNotFound", "field": field, "message": f"Not found: {json.dumps(value)}"}
