"""Helpers shared by the tests of the kinds added in twin/kinds/: headers of `kubectl get`, 422 causes, watches."""
from __future__ import annotations

import json
from typing import Any


def header(twin, *args: str) -> list[str]:
    """The column names `kubectl get` prints (split on runs of two or more spaces, as kubectl pads them)."""
    import re

    first = twin.kubectl("get", *args).stdout.splitlines()[0]
    return re.split(r"\s{2,}", first.strip())


def row(twin, *args: str) -> list[str]:
    import re

    lines = twin.kubectl("get", *args, "--no-headers").stdout.splitlines()
    assert len(lines) == 1, lines
    return re.split(r"\s{2,}", lines[0].strip())


def rejected(exc: Any) -> tuple[int, str, list[tuple[str, str, str]]]:
    """(status, reason, [(cause reason, field, message)]) of a kubernetes.client ApiException."""
    body = json.loads(exc.body)
    causes = [(c["reason"], c["field"], c["message"]) for c in (body.get("details") or {}).get("causes") or []]
    return exc.status, body["reason"], causes


def watched_names(list_fn, *args: Any, names: set[str], **kw: Any) -> dict[str, str]:
    """Watch from resource version 0 until every name in `names` has an event; name -> its first event type."""
    from kubernetes import watch

    seen: dict[str, str] = {}
    w = watch.Watch()
    for ev in w.stream(list_fn, *args, resource_version="0", timeout_seconds=30, **kw):
        seen.setdefault(ev["object"].metadata.name, ev["type"])
        if names <= seen.keys():
            w.stop()
    return seen
