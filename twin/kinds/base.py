"""What one built-in kind brings, gathered in one place: its resource type, defaulting, validation, update rules,
`kubectl get` columns and field selectors. The concern modules (registry/resources, defaulters, tables, selectors,
validation/semantic, metadata, updates) read KINDS from twin/kinds/__init__.py; a kind module imports only leaf
helpers (apimachinery/fieldrules, printing, podspec), so the import graph stays acyclic."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

Causes = list[dict]
Column = tuple[str, str, int, str]  # name, type, priority (1: -o wide), format


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    generation: bool = False  # spec changes bump metadata.generation
    categories: tuple[str, ...] = ()
    # how metadata.name is checked: "subdomain" (DNS-1123 subdomain), "label" (DNS-1123 label) or "path" (a path
    # segment only: the kind's own rule, in validate, says the rest)
    name_rule: str = "subdomain"
    default: Callable[[dict], None] | None = None
    validate: Callable[[dict], Causes] | None = None
    # (path of a workload spec inside the object, whose kind's rules apply): the pod template checks of
    # validation/semantic.py run there (a CronJob's jobTemplate is checked as a Job's spec)
    workload: tuple[str, str] | None = None
    validate_update: Callable[[dict, dict], Causes] | None = None
    columns: tuple[Column, ...] = ()
    row: Callable[[dict], list[Any]] | None = None
    field_selectors: frozenset[str] = frozenset()
