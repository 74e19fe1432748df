"""Decoding and validation of objects, as the real API server does it.

The real server decodes a request body into its Go type, defaults it, then validates it. The
twin does the same, in layers that each have a file:

- schema.py: the Kubernetes 1.32 schemas (kubernetes-validate) and CRD openAPIV3Schemas,
  compiled into one tree; also what twin/apimachinery/patch.py reads merge keys and list types from.
- decoding.py: the typed decode of a body against that tree (400 BadRequest on wrong JSON types,
  malformed quantities and, under fieldValidation=Strict, unknown fields; otherwise unknown
  fields are pruned and reported as warnings).
- metadata.py and semantic.py: the create-time field rules (422 Invalid, details.causes naming
  each field): names, labels, selectors, then the rules of each kind.
- updates.py: what an update may change (the fields the real server keeps immutable).
- causes.py: the two errors and the builders of 422 causes the rules share.
- body.py: `check`, the decode and create-time rules in one call, as the store's write path uses them.
"""
from __future__ import annotations

from .body import check, validate, warm
from .causes import DecodeError, Invalid
from .metadata import LABEL_MSG, SUBDOMAIN_MSG
from .schema import SCHEMA_VERSION, Node, _defs, _gvk_index, compile_crd_schema, schema_for
from .semantic import semantic
from .updates import update_causes

__all__ = ["LABEL_MSG", "SCHEMA_VERSION", "SUBDOMAIN_MSG", "DecodeError", "Invalid", "Node", "_defs", "_gvk_index",
           "check", "compile_crd_schema", "schema_for", "semantic", "update_causes", "validate", "warm"]
