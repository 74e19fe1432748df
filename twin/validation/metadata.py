"""Rules for what every object carries: names, labels, annotations, ownerReferences, selectors.

The wording is the real server's (apimachinery validation: IsDNS1123Label/Subdomain,
IsQualifiedName, label values, LabelSelector).
"""
from __future__ import annotations

import functools
import re
from typing import Any

from .. import kinds
from ..apimachinery import fieldrules

from .causes import _invalid, _required

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_C_IDENTIFIER_ENV = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_LABEL_NAMED = {"Namespace"} | {k.kind for k in kinds.KINDS if k.name_rule == "label"}  # DNS-1123 label names
# only checked as path segments here (Service names are DNS-1035 labels: fieldrules.causes)
_PATH_SEGMENT_NAMES = {"Service", "ClusterRole", "Role", "RoleBinding", "ClusterRoleBinding"} | \
    {k.kind for k in kinds.KINDS if k.name_rule == "path"}

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
             "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


# Every write validates its object's name, annotation keys and finalizers again, and a controller writes the
# same object many times over its life: the verdicts on valid strings are kept (the errors are not).
@functools.lru_cache(maxsize=16384)
def _name_ok(name: str, label: bool) -> bool:
    return len(name) <= 63 and bool(_DNS1123_LABEL.match(name)) if label else \
        len(name) <= 253 and bool(_DNS1123_SUBDOMAIN.match(name))


@functools.lru_cache(maxsize=16384)
def _qualified_key_ok(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (not prefix or len(prefix) <= 253 and bool(_DNS1123_SUBDOMAIN.match(prefix))) and \
        bool(name) and len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def _check_name(name: str, field: str, label: bool) -> list[dict]:
    if _name_ok(name, label):
        return []
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
    if _qualified_key_ok(key):
        return []
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
