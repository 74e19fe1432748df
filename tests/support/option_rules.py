"""Rules on modules' options, read from their argument specs, docs and the code they load (architecture test).

- One interface per job: no option that one of the module's modes ignores. A mode is a value of an option with
  choices; an option documented as "(<value>) ..." is read in that mode only, and an option named `mode` is a
  module doing several jobs unless its MODE_READS table says every mode reads every option.
- Each default in one place: the argument spec. Code that reads an option with a literal fallback,
  `params.get("volumes", 100)` or `params.get("volumes") or 100`, writes the spec's default a second time (and the
  two drift apart: bench_run's volumes had its 100 in four places).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

QUALIFIED = re.compile(r"^\((\w+)\)")


def _lines(description) -> list[str]:
    return description if isinstance(description, list) else [description or ""]


def mode_problems(name: str, spec: dict, doc_options: dict, mode_reads: dict | None = None) -> list[str]:
    """What makes module `name` take an option one of its modes ignores (spec: its argument spec, doc_options: the
    options of its DOCUMENTATION, mode_reads: its MODE_READS table {mode: option names} or None)."""
    out = []
    modes = {value: option for option, s in spec.items() for value in (s.get("choices") or ()) if s.get("type", "str") == "str"}
    for option, doc in sorted(doc_options.items()):
        for line in _lines(doc.get("description")):
            m = QUALIFIED.match(line.strip())
            if m and m.group(1) in modes and modes[m.group(1)] != option:
                selector = modes[m.group(1)]
                others = [v for v in spec[selector]["choices"] if v != m.group(1)]
                out.append("%s: option %s is read only when %s=%s; %s=%s ignore it: give each job its own module, or "
                           "the option to a suboption of what reads it" % (name, option, selector, m.group(1), selector,
                                                                           "/".join(others)))
    if "mode" in spec and spec["mode"].get("choices"):
        if mode_reads is None:
            out.append("%s: option mode selects between jobs (%s); declare MODE_READS {mode: options read} or split "
                       "the module, one per job" % (name, ", ".join(spec["mode"]["choices"])))
        else:
            for mode in spec["mode"]["choices"]:
                ignored = sorted(set(spec) - {"mode"} - set(mode_reads.get(mode, ())))
                if ignored:
                    out.append("%s: mode=%s ignores %s" % (name, mode, ", ".join(ignored)))
    return out


def spec_defaults(spec: dict) -> dict[str, object]:
    """{option: default} of an argument spec, suboptions included under their own names."""
    out = {}
    for option, s in spec.items():
        if s.get("default") is not None:
            out[option] = s["default"]
        out.update(spec_defaults(s.get("options") or {}))
    return out


def _literal(node: ast.AST) -> bool:
    try:
        return ast.literal_eval(node) is not None
    except ValueError:
        return False


# what the code calls the module's parameters (module.params, a benchmark's options): a .get() on anything else
# reads a document or an API object, whose keys may share an option's name
PARAMS = {"params", "p", "parameters", "options", "opts"}


def _get_of(node: ast.AST) -> str | None:
    """The key of a `<params>.get("key", ...)` call, or None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return None
    receiver = node.func.value
    name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", None)
    return node.args[0].value if name in PARAMS else None


def second_defaults(defaults: dict[str, object], sources: dict[Path, str]) -> list[tuple[str, int, str]]:
    """(file name, line, option) of every place in sources that gives an option of `defaults` a literal fallback."""
    out = []
    for path, text in sorted(sources.items()):
        for node in sorted(ast.walk(ast.parse(text)), key=lambda n: getattr(n, "lineno", 0)):
            key = None
            if _get_of(node) and len(node.args) > 1 and _literal(node.args[1]):
                key = _get_of(node)
            elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2 \
                    and _get_of(node.values[0]) and _literal(node.values[1]):
                key = _get_of(node.values[0])
            if key in defaults:
                out.append((path.name, node.lineno, key))
    return out


def default_problems(defaults: dict[str, object], sources: dict[Path, str]) -> list[str]:
    """second_defaults() as messages: each is the spec's default written a second time."""
    return ["%s:%d: a second default for option %s (the argument spec's is %r): read the parameter as the spec "
            "fills it in" % (name, line, key, defaults[key]) for name, line, key in second_defaults(defaults, sources)]


class _Built(Exception):
    pass


def declared_spec(name: str, monkeypatch, with_auth: bool = False) -> tuple[dict, object]:
    """(argument spec, module) of the collection's module `name`, as its main() builds them (nothing runs); with_auth
    adds the connection options of the systems it names in `auth` (common/auth.py's registry), as the base does."""
    import importlib

    from ansible_collections.storageperf.k8s.plugins.module_utils.common import auth as AUTH
    from ansible_collections.storageperf.k8s.plugins.module_utils.common import module as M

    got: dict = {}

    def fake(self, argument_spec, **kwargs):
        if with_auth:
            auth = kwargs.get("auth") or ()
            for system in (auth,) if isinstance(auth, str) else auth:
                got.update(AUTH.system(system)[0])
        got.update(argument_spec)
        raise _Built

    monkeypatch.setattr(M.StoragePerfModule, "__init__", fake)
    module = importlib.import_module("ansible_collections.storageperf.k8s.plugins.modules." + name)
    try:
        module.main()
    except _Built:
        return got, module
    raise AssertionError("%s.main() built no StoragePerfModule" % name)


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def doc_problems(name: str, spec: dict, doc_options: dict, where: str = "") -> list[str]:
    """Options whose documented default is not the argument spec's (suboptions too)."""
    out = []
    for option, s in spec.items():
        doc = doc_options.get(option)
        if doc is None:
            continue
        if not _same(doc.get("default"), s.get("default")):
            out.append("%s: %s%s documents default %r, the argument spec has %r"
                       % (name, where, option, doc.get("default"), s.get("default")))
        out += doc_problems(name, s.get("options") or {}, doc.get("suboptions") or {}, where + option + ".")
    return out


ROLE_VAR = re.compile(r"^\{\{\s*(\w+)\s*(\|[^}]*)?\}\}$")


COMMON_TASKS = Path(__file__).resolve().parents[2] / "roles" / "common" / "tasks"
BARE_VAR = re.compile(r"^\{\{\s*(\w+)\s*\}\}$")


def _shared(task: dict):
    """(module name, args) of a task file of the common role that task imports, its common_* variables replaced by
    what the importing role hands it: the role's variable reaches the module through the shared file."""
    given = task.get("vars") or {}
    path = COMMON_TASKS / (task["ansible.builtin.import_role"]["tasks_from"] + ".yml")
    for module, args in module_args(yaml.safe_load(path.read_text())):
        yield module, {k: _handed(v, given) for k, v in args.items()}


def _handed(value, given: dict):
    m = BARE_VAR.match(value.strip()) if isinstance(value, str) else None
    return given[m.group(1)] if m and m.group(1) in given else value


def module_args(tasks):
    """(module name, args) of every task in a task list, blocks and the common role's imported task files included."""
    for task in tasks or ():
        if not isinstance(task, dict):
            continue
        for key in ("block", "rescue", "always"):
            yield from module_args(task.get(key))
        if (task.get("ansible.builtin.import_role") or {}).get("name") == "storageperf.k8s.common":
            yield from _shared(task)
        for key, args in task.items():
            if key.startswith("storageperf.k8s.") and isinstance(args, dict):
                yield key.rpartition(".")[2], args


def _passed(spec: dict, args: dict, path: str = ""):
    """(option path, option spec, value) of every argument given to an option of spec."""
    for option, value in args.items():
        s = spec.get(option)
        if s is None:
            continue
        if isinstance(value, dict) and s.get("options"):
            yield from _passed(s["options"], value, path + option + ".")
        else:
            yield path + option, s, value


def role_problems(role: str, tasks, role_options: dict, module_specs: dict) -> list[str]:
    """Role variables handed to a module option that has its own default: the role's default must be the module's,
    or empty with default(omit, true) (the module's then applies). A module option without a default leaves the
    role's as the only one."""
    out = []
    for module, args in module_args(tasks):
        if module not in module_specs:
            continue
        for option, s, value in _passed(module_specs[module], args):
            m = ROLE_VAR.match(value.strip()) if isinstance(value, str) else None
            if not m or m.group(1) not in role_options or "default" not in role_options[m.group(1)]:
                continue
            mine, theirs = role_options[m.group(1)]["default"], s.get("default")
            if theirs is None or _same(mine, theirs):
                continue
            if mine in ("", None, []) and "omit" in (m.group(2) or ""):
                continue
            out.append("%s: %s defaults to %r, but %s's option %s to %r: one default, in the module's argument spec "
                       "(or leave the role's empty and pass it with default(omit, true))"
                       % (role, m.group(1), mine, module, option, theirs))
    return out
