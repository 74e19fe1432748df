"""What `kubectl get` rows are made of: ages as kubectl prints them, names, selectors, container lists, and the
column tuples (name, type, priority, format) that tables.py turns into a Table's columnDefinitions.

A leaf module: tables.py and the kinds in twin/kinds/ print with it.
"""
from __future__ import annotations

from datetime import datetime, UTC
from typing import Any
from collections.abc import Callable

Row = Callable[[dict], list[Any]]


def _parse_ts(ts: str | None) -> datetime | None:
    if not ts or not isinstance(ts, str):
        return None
    try:
        return datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def human_duration(secs: float) -> str:
    """duration.HumanDuration."""
    s = int(secs)
    if s < 0:
        return "0s" if s > -2 else "<invalid>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        dy = h // 24 % 365
        return f"{h // 24 // 365}y{dy}d" if dy else f"{h // 24 // 365}y"
    return f"{h // 24 // 365}y"


def _since(ts: str | None) -> str:
    t = _parse_ts(ts)
    if t is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - t).total_seconds())


def _age(o: dict) -> str:
    return _since(o.get("metadata", {}).get("creationTimestamp"))


def _name(o: dict) -> str:
    return o["metadata"]["name"]


def _join(items: list[str]) -> str:
    return ",".join(items) if items else "<none>"


def _containers(o: dict) -> tuple[str, str]:
    cs = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _selector(sel: dict | None) -> str:
    if not sel:
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator")
        if op == "In":
            parts.append(f"{e['key']} in ({','.join(e.get('values') or [])})")
        elif op == "NotIn":
            parts.append(f"{e['key']} notin ({','.join(e.get('values') or [])})")
        elif op == "Exists":
            parts.append(e["key"])
        elif op == "DoesNotExist":
            parts.append(f"!{e['key']}")
    return ",".join(parts) or "<none>"


def _c(name: str, type_: str = "string", priority: int = 0, fmt: str = "") -> tuple[str, str, int, str]:
    return (name, type_, priority, fmt or ("name" if name == "Name" else ""))
