"""The house rules of docs/development.md, held by the code: one module base, one exception base, thin modules."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"
MODULES = sorted((PLUGINS / "modules").glob("*.py"))
BASE = "StoragePerfError"
# Control flow inside one function, never raised out of it.
PRIVATE = {"_PastDeadline"}


def classes(path: Path) -> dict[str, list[str]]:
    return {n.name: [ast.unparse(b).split(".")[-1] for b in n.bases]
            for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)}


def test_every_exception_of_the_collection_derives_from_the_one_base():
    bases: dict[str, list[str]] = {}
    for path in PLUGINS.rglob("*.py"):
        bases.update(classes(path))

    def derives(name: str, seen: frozenset = frozenset()) -> bool:
        if name == BASE:
            return True
        return name not in seen and any(derives(b, seen | {name}) for b in bases.get(name, []))

    errors = [n for n, b in bases.items() if n not in PRIVATE and n != BASE
              and any(x in ("Exception", "ValueError", "RuntimeError") or x.endswith(("Error", "Timeout")) for x in b)]
    assert errors, "the scan found no exception classes: it is broken"
    assert [n for n in errors if not derives(n)] == []


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_module_is_a_storageperf_module_with_no_error_handling_of_its_own(path):
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert "StoragePerfModule" in names and "AnsibleModule" not in names
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Try)], "failures go through StoragePerfError"
