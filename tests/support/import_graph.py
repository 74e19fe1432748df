"""The import arrows between the modules of a source tree, read with ast (nothing is imported), and the rules on them.

An arrow is (importer, imported, line, late): late when the import sits inside a function, where a loop can
hide (it does not break at import time, but the two modules still cannot be understood apart). Both count.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

COLLECTION = "ansible_collections.storageperf.k8s"


class Arrow(NamedTuple):
    src: str
    dst: str
    line: int
    late: bool


def module_names(root: Path, top: str, prefix: str = "") -> dict[str, Path]:
    """{dotted name: path} of every .py under root/top; a package is its __init__.py's dotted name."""
    out = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(filter(None, [prefix] + parts))] = path
    return out


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node: ast.AST, package: str) -> list[list[str]]:
    """The dotted names an import statement may refer to, most specific first for each imported name."""
    if isinstance(node, ast.Import):
        return [[a.name] for a in node.names]
    if node.level:
        base = package.split(".")
        base = base[:len(base) - node.level + 1]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    return [[mod + "." + a.name, mod] for a in node.names]


def arrows(modules: dict[str, Path]) -> list[Arrow]:
    """Every import between two of these modules, at module level or inside a function."""
    out = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        package = _package(name, path)
        late_nodes = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for candidates in _targets(node, package):
                dst = next((c for c in candidates if c in modules), None)
                if dst and dst != name:
                    out.append(Arrow(name, dst, node.lineno, id(node) in late_nodes))
    return sorted(set(out))


def cycles(edges: list[Arrow]) -> list[list[str]]:
    """The import loops: strongly connected groups of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a in edges:
        graph.setdefault(a.src, set()).add(a.dst)
        graph.setdefault(a.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def escapes(edges: list[Arrow], package: str, parent: str) -> list[Arrow]:
    """Arrows from inside package to another package under parent (common/ importing k8s/, say)."""
    inside = package + "."
    return [a for a in edges if (a.src + ".").startswith(inside) and a.dst.startswith(parent + ".")
            and not (a.dst + ".").startswith(inside)]


def floors_of(init: Path) -> list[tuple[str, tuple[str, ...]]]:
    """The FLOORS table a package declares in its __init__.py: ((floor, (module, ...)), ...), lowest first."""
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FLOORS" for t in node.targets):
            return [(floor, tuple(files)) for floor, files in ast.literal_eval(node.value)]
    raise AssertionError("%s declares no FLOORS table" % init)


def floor_problems(edges: list[Arrow], package: str, floors: list[tuple[str, tuple[str, ...]]],
                   present: list[str]) -> list[str]:
    """What breaks the floors: a module on no floor or on two, a floor naming a missing module, an upward arrow."""
    level: dict[str, int] = {}
    problems = []
    for i, (floor, files) in enumerate(floors):
        for f in files:
            if f in level:
                problems.append("%s is on two floors" % f)
            level[f] = i
    problems += ["%s.%s is on no floor: add it to FLOORS in %s/__init__.py" % (package, f, package.rpartition(".")[2])
                 for f in present if f not in level]
    problems += ["FLOORS names %s, which does not exist" % f for f in level if f not in present]
    for a in edges:
        src, dst = (x[len(package) + 1:] for x in (a.src, a.dst))
        if a.src.startswith(package + ".") and a.dst.startswith(package + ".") and src in level and dst in level \
                and level[dst] > level[src]:
            problems.append("%s (%s) imports %s (%s) on line %d: a floor imports only from its own floor and below"
                            % (src, floors[level[src]][0], dst, floors[level[dst]][0], a.line))
    return problems
