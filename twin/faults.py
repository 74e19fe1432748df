"""Fault injection: API errors for a fraction of requests (filled in by the storage control plane)."""
from __future__ import annotations

import random
from typing import Any

from . import errors


class Faults:
    """What the twin should break, and how often. Set through `python -m twin fault ...`."""

    def __init__(self, seed: int | None = None) -> None:
        self.rules: dict[str, dict[str, Any]] = {}
        self.rng = random.Random(seed)

    def set(self, name: str, rule: dict[str, Any]) -> None:
        self.rules[name] = rule

    def clear(self, name: str | None = None) -> None:
        if name is None:
            self.rules.clear()
        else:
            self.rules.pop(name, None)

    def api_error(self, method: str, path: str) -> errors.ApiError | None:
        rule = self.rules.get("api")
        if not rule or self.rng.random() >= float(rule.get("fraction", 0)):
            return None
        if rule.get("methods") and method not in rule["methods"]:
            return None
        if rule.get("path_contains") and rule["path_contains"] not in path:
            return None
        code = int(rule.get("code", 500))
        return errors.too_many_requests() if code == 429 else errors.internal("injected fault")
