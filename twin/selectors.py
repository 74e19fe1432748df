"""Label and field selectors, parsed as the API server parses them."""
from __future__ import annotations

import re
from typing import Any, Callable

Predicate = Callable[[dict], bool]


class SelectorError(ValueError):
    pass


_SET_RE = re.compile(r"^\s*(!?)([A-Za-z0-9./_-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, cur = [], 0, []
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


def parse_label_selector(text: str | None) -> Predicate:
    if not text:
        return lambda labels: True
    checks: list[Predicate] = []
    for term in _split_terms(text):
        m = _EQ_RE.match(term)
        if m:
            key, op, val = m.groups()
            if op == "!=":
                checks.append(lambda lb, k=key, v=val: lb.get(k) != v)
            else:
                checks.append(lambda lb, k=key, v=val: lb.get(k) == v)
            continue
        m = _SET_RE.match(term)
        if not m:
            raise SelectorError(f"unable to parse requirement: {term!r}")
        neg, key, op, values = m.groups()
        if op:
            vals = {v.strip() for v in values.split(",") if v.strip()}
            if op == "in":
                checks.append(lambda lb, k=key, vs=vals: lb.get(k) in vs)
            else:
                checks.append(lambda lb, k=key, vs=vals: lb.get(k) not in vs)
        elif neg:
            checks.append(lambda lb, k=key: k not in lb)
        else:
            checks.append(lambda lb, k=key: k in lb)
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

        if op == "!=":
            checks.append(lambda o, g=get, v=val: g(o) != v)
        else:
            checks.append(lambda o, g=get, v=val: g(o) == v)
    return lambda obj: all(c(obj) for c in checks)
