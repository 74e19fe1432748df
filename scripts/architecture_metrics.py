"""Print the figures issue 16 asks for, so that a before/after is one command.

Usage: .venv/bin/python scripts/architecture_metrics.py [ROOT]
"""
import ast
import pathlib
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
DOC_NAMES = {"DOCUMENTATION", "EXAMPLES", "RETURN"}


def logic_lines(path):
    """Lines of code outside the docs strings, imports, comments and blanks."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in tree.body:
        doc = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in DOC_NAMES for t in node.targets)
        if doc or isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant):
            skip.update(range(node.lineno, node.end_lineno + 1))
    count = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if number in skip or not text or text.startswith("#"):
            continue
        if text in ("__metaclass__ = type", "from __future__ import absolute_import, division, print_function"):
            continue
        count += 1
    return count


def exception_classes(paths):
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception")) for b in bases) or node.name.endswith(("Error", "Exception")):
                    found.append(f"{path}:{node.name}")
    return found


def wait_loops(paths):
    """`while` loops whose body sleeps: a wait or a retry written by hand."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.While, ast.For)):
                body = ast.unparse(node)
                if "sleep(" in body:
                    found.append("%s:%d" % (path, node.lineno))
    return found


def main():
    plugins = sorted((ROOT / "plugins").rglob("*.py"))
    modules = sorted((ROOT / "plugins" / "modules").glob("*.py"))
    twin = sorted((ROOT / "twin").rglob("*.py"))
    print("## lines of logic per module (outside DOCUMENTATION/EXAMPLES/RETURN, imports, comments)")
    sizes = sorted(((logic_lines(p), p.name) for p in modules), reverse=True)
    for n, name in sizes:
        print("%5d  %s" % (n, name))
    print("total %d, largest %d, median %d" % (sum(n for n, _ in sizes), sizes[0][0], sizes[len(sizes) // 2][0]))
    excs = exception_classes(plugins)
    print("\n## exception classes in plugins/: %d" % len(excs))
    for e in excs:
        print("  " + e)
    loops = wait_loops(plugins)
    print("\n## loops that sleep in plugins/ (hand-written waits/retries): %d" % len(loops))
    for loop in loops:
        print("  " + loop)
    print("\n## largest files (plugins/ and twin/)")
    files = sorted(((len(p.read_text().splitlines()), str(p.relative_to(ROOT))) for p in plugins + twin), reverse=True)
    for n, name in files[:10]:
        print("%5d  %s" % (n, name))


if __name__ == "__main__":
    main()
