"""Label and field selectors, parsed as the API server parses them."""
from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable

from .. import kinds

Predicate = Callable[[dict], bool]


class SelectorError(ValueError):
    pass


_SET_RE = re.compile(r"^\s*(!?)([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        terms.append("".join(cur))
    return [t for t in (x.strip() for x in terms) if t]


# One predicate per selector term. Factories rather than lambdas with default arguments: each binds its
# own key and value, and mypy knows the predicate's type.
def _label_equals(key: str, value: str) -> Predicate:
    return lambda labels: labels.get(key) == value


def _label_differs(key: str, value: str) -> Predicate:
    return lambda labels: labels.get(key) != value


def _label_in(key: str, values: set[str]) -> Predicate:
    return lambda labels: labels.get(key) in values


def _label_not_in(key: str, values: set[str]) -> Predicate:
    return lambda labels: labels.get(key) not in values


def _label_exists(key: str) -> Predicate:
    return lambda labels: key in labels


def _label_absent(key: str) -> Predicate:
    return lambda labels: key not in labels


def _field_equals(get: Callable[[dict], str], value: str) -> Predicate:
    return lambda obj: get(obj) == value


def _field_differs(get: Callable[[dict], str], value: str) -> Predicate:
    return lambda obj: get(obj) != value


def parse_label_selector(text: str | None) -> Predicate:
    if not text:
        return lambda labels: True
    checks: list[Predicate] = []
    for term in _split_terms(text):
        m = _EQ_RE.match(term)
        if m:
            key, op, val = m.groups()
            checks.append(_label_differs(key, val) if op == "!=" else _label_equals(key, val))
            continue
        m = _SET_RE.match(term)
        if not m:
            raise SelectorError(f"unable to parse requirement: {term!r}")
        neg, key, op, values = m.groups()
        if op:
            vals = {v.strip() for v in values.split(",") if v.strip()}
            checks.append(_label_in(key, vals) if op == "in" else _label_not_in(key, vals))
        elif neg:
            checks.append(_label_absent(key))
        else:
            checks.append(_label_exists(key))
    return lambda labels: all(c(labels) for c in checks)


def _field(obj: dict, path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


# Fields the real server supports for every kind, plus the per-kind ones clients use.
_ALWAYS = {"metadata.name", "metadata.namespace"}
_PER_KIND = {
    "Pod": {"spec.nodeName", "status.phase", "spec.schedulerName", "spec.serviceAccountName", "status.podIP"},
    "Event": {"involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid",
              "reason", "type", "source"},
    "Secret": {"type"},
    "PersistentVolumeClaim": {"status.phase"},
    "PersistentVolume": {"status.phase"},
    "Node": {"spec.unschedulable"},
    "Namespace": {"status.phase"},
    "Job": {"status.successful"},
    **{k.kind: set(k.field_selectors) for k in kinds.KINDS if k.field_selectors},
}


def field_equalities(text: str | None) -> dict[str, str]:
    """The `field=value` terms of a field selector (for index lookups; the predicate still applies)."""
    out: dict[str, str] = {}
    for term in _split_terms(text or ""):
        m = re.match(r"^\s*([A-Za-z0-9._-]+)\s*(==|=)\s*(.*?)\s*$", term)
        if m and "!" not in term.split("=")[0]:
            out[m.group(1)] = m.group(3)
    return out


def parse_field_selector(text: str | None, kind: str, crd: bool = False) -> Predicate:
    if not text:
        return lambda obj: True
    checks: list[Predicate] = []
    allowed = _ALWAYS if crd else _ALWAYS | _PER_KIND.get(kind, set())
    for term in _split_terms(text):
        m = _EQ_RE.match(term) or re.match(r"^\s*([A-Za-z0-9._-]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m:
            raise SelectorError(f"invalid field selector: {term!r}")
        path, op, val = m.groups()
        if path not in allowed:
            raise SelectorError(f'field label not supported: {path}')

        def get(obj: dict, p: str = path) -> str:
            v = _field(obj, p)
            if isinstance(v, bool):
                return "true" if v else "false"
            return "" if v is None else str(v)

        checks.append(_field_differs(get, val) if op == "!=" else _field_equals(get, val))
    return lambda obj: all(c(obj) for c in checks)
