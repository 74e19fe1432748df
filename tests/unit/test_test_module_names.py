"""pytest imports test modules by basename from the rootdir: two test files with one name break collection."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_its_own_basename():
    names = Counter(p.name for p in TESTS.rglob("test_*.py") if "output" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []
