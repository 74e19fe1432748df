"""The house rules of docs/development.md, held by the code: one module base, one exception base, thin modules."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import auth as AUTH
from tests.support import import_graph as G
from tests.support import option_rules as O

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


# --- imports: no loops, common/ at the bottom, the report floors ----------------------------------
PLUGIN_MODULES = G.module_names(ROOT, "plugins", G.COLLECTION)
PLUGIN_ARROWS = G.arrows(PLUGIN_MODULES)
TWIN_MODULES = G.module_names(ROOT, "twin")
TWIN_ARROWS = G.arrows(TWIN_MODULES)
MODULE_UTILS = G.COLLECTION + ".plugins.module_utils"
REPORT = MODULE_UTILS + ".report"
REPORT_INIT = PLUGINS / "module_utils" / "report" / "__init__.py"


def _report_files() -> list[str]:
    return sorted(p.stem for p in REPORT_INIT.parent.glob("*.py") if p.name != "__init__.py")


def test_the_import_scan_sees_the_collection():
    # a scan that resolves nothing would pass every rule below
    assert len(PLUGIN_MODULES) > 100 and len(PLUGIN_ARROWS) > 200
    # and sees a function-level import (render draws charts only when asked, so matplotlib loads only then)
    assert any(a.src == REPORT + ".render" and a.dst == REPORT + ".charts" and a.late for a in PLUGIN_ARROWS)


def test_no_import_loop_in_plugins():
    assert G.cycles(PLUGIN_ARROWS) == []


def _package_arrows(edges: list[G.Arrow], parent: str = MODULE_UTILS) -> list[G.Arrow]:
    """The arrows between the packages below parent (report -> common ...), one per file-level arrow that crosses;
    a module directly below parent (twin/context.py) is a node of its own."""
    def package(name: str) -> str:
        return name[len(parent) + 1:].split(".")[0]
    return [G.Arrow(package(a.src), package(a.dst), a.line, a.late) for a in edges
            if a.src.startswith(parent + ".") and a.dst.startswith(parent + ".")
            and package(a.src) != package(a.dst)]


def test_no_import_loop_between_module_utils_packages():
    # a package stands on the ones it imports: advice reads report's renderer, so no report file may import advice
    # (report/advice_render.py is the advice's page, on report's render floor, for that reason)
    arrows = _package_arrows(PLUGIN_ARROWS)
    assert ("advice", "report") in {(a.src, a.dst) for a in arrows}  # the scan sees the packages' arrows
    assert G.cycles(arrows) == []


def test_checker_finds_a_loop_between_packages():
    def arrow(src: str, dst: str) -> G.Arrow:
        return G.Arrow(f"{MODULE_UTILS}.{src}", f"{MODULE_UTILS}.{dst}", 1, False)
    arrows = _package_arrows([arrow("advice.render", "report.render"), arrow("report.fleet", "advice.render"),
                              arrow("report.fleet", "report.render")])
    assert G.cycles(arrows) == [["advice", "report"]]


def test_common_imports_no_other_module_utils_package():
    assert G.escapes(PLUGIN_ARROWS, MODULE_UTILS + ".common", MODULE_UTILS) == []


# the file each auth system registers from, as common/auth.py names it (one source: a new system needs no edit here)
AUTH_HOMES = {s: MODULE_UTILS + "." + path[len("plugins/module_utils/"):-len(".py")].replace("/", ".")
              for s, path in AUTH.HOMES.items()}


def _loaded_with(name: str) -> set[str]:
    """The modules Python loads with `name` (its module-level imports, followed), which is also what Ansible ships."""
    graph: dict[str, set[str]] = {}
    for a in PLUGIN_ARROWS:
        if not a.late:
            graph.setdefault(a.src, set()).add(a.dst)
    seen, todo = set(), [name]
    while todo:
        for dst in graph.get(todo.pop(), ()):
            if dst not in seen:
                seen.add(dst)
                todo.append(dst)
    return seen


def _auth_of(path: Path) -> tuple[str, ...]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.keyword) and node.arg == "auth":
            value = ast.literal_eval(node.value)
            return (value,) if isinstance(value, str) else tuple(value)
    return ()


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_a_module_loads_the_client_of_every_system_it_authenticates_to(path):
    # common/auth.py learns a system's options when the system's client module is imported (common/ imports
    # none): a module with auth="k8s" that never loaded k8s/client.py would fail at its first run
    loaded = _loaded_with(G.COLLECTION + ".plugins.modules." + path.stem)
    assert [s for s in _auth_of(path) if AUTH_HOMES[s] not in loaded] == []


def test_every_report_file_is_on_a_floor_and_no_floor_imports_upward():
    assert G.floor_problems(PLUGIN_ARROWS, REPORT, G.floors_of(REPORT_INIT), _report_files()) == []


ROLLOUT = MODULE_UTILS + ".rollout"


def test_the_rollout_stands_on_the_report_never_under_it():
    # rollout/ (records, gate, waves) reads and renders with report/; a report file importing rollout/ would make
    # every benchmark module ship the rollout, and the two packages a loop waiting to happen
    assert any(a.src.startswith(ROLLOUT + ".") and a.dst.startswith(REPORT + ".") for a in PLUGIN_ARROWS)
    assert [a for a in PLUGIN_ARROWS if a.src.startswith(REPORT + ".") and a.dst.startswith(ROLLOUT)] == []


def test_no_import_loop_in_twin():
    assert len(TWIN_MODULES) > 50
    assert G.cycles(TWIN_ARROWS) == []


def test_no_part_of_the_twin_imports_the_fleet_that_builds_it():
    # fleet/ assembles the parts (fleet/cluster.py): a part that imported it tied them all into one loop, as the
    # controllers did while the calibration lived in fleet/, and context.py while the fault rules did; only the CLI
    # starts it
    assert sorted({a.src for a in TWIN_ARROWS if a.dst.startswith("twin.fleet") and not a.src.startswith("twin.fleet")}) \
        == ["twin.__main__"]
    assert any(a.src.startswith("twin.controllers.") and a.dst == "twin.calibration" for a in TWIN_ARROWS)


def test_no_import_loop_between_the_twins_packages():
    # a package stands on the ones it imports: apimachinery/ at the bottom, then kinds/, validation/, registry/,
    # streams/ and store/, the controllers and clouds, apiserver/ (the server), fleet/ on top (twin/README.md). While
    # the registry lived in apiserver/, the server and what it serves imported each other: one loop of ten packages.
    arrows = _package_arrows(TWIN_ARROWS, "twin")
    assert ("fleet", "controllers") in {(a.src, a.dst) for a in arrows}  # the scan sees the packages' arrows
    assert G.cycles(arrows) == []
    assert G.escapes(TWIN_ARROWS, "twin.apimachinery", "twin") == []


# --- the checker catches what it is for ---------------------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> list[G.Arrow]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return G.arrows(G.module_names(tmp_path, "pkg"))


def test_checker_finds_a_loop_hidden_in_a_function(tmp_path):
    edges = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def late():\n    from pkg.a import thing\n",
        "pkg/c.py": "from . import a\n",
    })
    assert G.Arrow("pkg.b", "pkg.a", 2, True) in edges
    assert G.cycles(edges) == [["pkg.a", "pkg.b"]]


def test_checker_finds_a_loop_through_relative_imports(tmp_path):
    edges = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "",
                             "pkg/sub/x.py": "from ..y import f\n", "pkg/y.py": "from .sub import x\n"})
    assert G.cycles(edges) == [["pkg.sub.x", "pkg.y"]]


def test_checker_finds_common_importing_a_package_above_it(tmp_path):
    edges = _tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/common/__init__.py": "", "pkg/k8s/__init__.py": "",
        "pkg/common/base.py": "def specs():\n    from pkg.k8s.client import SPEC\n",
        "pkg/common/errors.py": "", "pkg/common/waiter.py": "from pkg.common import errors\n",
        "pkg/k8s/client.py": "from pkg.common.base import specs\n",
    })
    assert G.escapes(edges, "pkg.common", "pkg") == [G.Arrow("pkg.common.base", "pkg.k8s.client", 2, True)]


def test_checker_finds_an_upward_import_and_a_file_on_no_floor(tmp_path):
    (tmp_path / "pkg" / "report").mkdir(parents=True)
    (tmp_path / "pkg" / "report" / "__init__.py").write_text(
        'FLOORS = (("model", ("document",)), ("render", ("render",)))\n')
    edges = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/report/render.py": "from pkg.report import document\n",
                             "pkg/report/document.py": "from pkg.report.render import table\n",
                             "pkg/report/new.py": ""})
    floors = G.floors_of(tmp_path / "pkg" / "report" / "__init__.py")
    problems = G.floor_problems(edges, "pkg.report", floors, ["document", "new", "render"])
    assert problems == ["pkg.report.new is on no floor: add it to FLOORS in report/__init__.py",
                        "document (model) imports render (render) on line 1: a floor imports only from its own "
                        "floor and below"]


# --- one interface per job, each default in one place (tests/support/option_rules.py) ------------
@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_no_module_takes_an_option_that_one_of_its_modes_ignores(path, monkeypatch):
    import yaml

    spec, module = O.declared_spec(path.stem, monkeypatch)
    doc = yaml.safe_load(module.DOCUMENTATION)
    assert O.mode_problems(path.stem, spec, doc.get("options") or {}, getattr(module, "MODE_READS", None)) == []


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_no_default_is_written_twice(path, monkeypatch):
    spec, _ = O.declared_spec(path.stem, monkeypatch, with_auth=True)
    name = G.COLLECTION + ".plugins.modules." + path.stem
    files = [path] + [PLUGIN_MODULES[m] for m in _loaded_with(name) if m.startswith(MODULE_UTILS)]
    found = O.second_defaults(O.spec_defaults(spec), {p: p.read_text() for p in files})
    assert found == [], "read the parameter as the argument spec fills it in"


def test_checker_finds_an_option_that_a_mode_ignores():
    # bench_run before the split: one module, three jobs, options that one benchmark or one mode reads
    spec = {"benchmark": {"choices": ["csi_lifecycle", "attach_stress"]},
            "mode": {"choices": ["preflight", "measure", "finalize"]}, "volumes": {"type": "int"}, "reason": {}}
    doc = {"volumes": {"description": ["(csi_lifecycle) Number of volumes."]},
           "reason": {"description": "(finalize) Why the run failed."}, "mode": {"description": "What to do."}}
    assert O.mode_problems("bench_run", spec, doc) == [
        "bench_run: option reason is read only when mode=finalize; mode=preflight/measure ignore it: give each job "
        "its own module, or the option to a suboption of what reads it",
        "bench_run: option volumes is read only when benchmark=csi_lifecycle; benchmark=attach_stress ignore it: give "
        "each job its own module, or the option to a suboption of what reads it",
        "bench_run: option mode selects between jobs (preflight, measure, finalize); declare MODE_READS {mode: options "
        "read} or split the module, one per job"]
    reads = {"preflight": ["benchmark", "volumes", "reason"], "measure": ["benchmark", "volumes", "reason"],
             "finalize": ["benchmark", "reason"]}
    assert O.mode_problems("m", {k: spec[k] for k in ("mode", "volumes", "benchmark", "reason")}, {}, reads) == [
        "m: mode=finalize ignores volumes"]


def test_checker_finds_a_default_written_twice(tmp_path):
    spec = {"csi_lifecycle": {"type": "dict", "options": {"volumes": {"type": "int", "default": 100}}},
            "size": {"type": "str", "default": "1Gi"}, "node": {"type": "str"}}
    code = ("def plan(params):\n"
            "    volumes = int(params.get('volumes') or 100)\n"
            "    size = params.get('size', '1Gi')\n"
            "    node = params.get('node') or None\n"
            "    return params['size'], params.get('other', 3)\n")
    assert O.spec_defaults(spec) == {"volumes": 100, "size": "1Gi"}
    assert O.default_problems(O.spec_defaults(spec), {tmp_path / "plan.py": code}) == [
        "plan.py:2: a second default for option volumes (the argument spec's is 100): read the parameter as the spec "
        "fills it in",
        "plan.py:3: a second default for option size (the argument spec's is '1Gi'): read the parameter as the spec "
        "fills it in"]


def _module_takers(root: Path) -> list[str]:
    """module_utils functions that take the AnsibleModule (a parameter named module or m), other than the client
    factories the module base calls (client_from_module, registered in common/auth.py)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "client_from_module":
                names = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                if {"module", "m"} & set(names):
                    out.append("%s:%s" % (path.relative_to(root), node.name))
    return out


def test_module_utils_take_parameters_and_callbacks_not_the_module():
    # the module base is kept when module_utils get params, clients and warn/check_mode, never the whole module
    assert _module_takers(PLUGINS / "module_utils") == []


def test_checker_finds_a_function_that_takes_the_module(tmp_path):
    (tmp_path / "thing.py").write_text("def run(module):\n    return module.params\n\n"
                                       "def client_from_module(module):\n    return module\n")
    assert _module_takers(tmp_path) == ["thing.py:run"]
