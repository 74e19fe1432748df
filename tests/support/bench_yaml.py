"""The docs and defaults made from the benchmark modules (plugins/module_utils/bench/<benchmark>.py), where each
option's default (OPTIONS), maximum (LIMITS) and help (DOCS) are written once.

Made here:
- bench_plan's suboption docs, the block of its DOCUMENTATION between the two GENERATED lines;
- the default of every bench role variable that its role hands to one of those options, wherever it is stated:
  the role's defaults/main.yml and meta/argument_specs.yml; its playbook (playbooks/<role>.yml), the `default(...)`
  of the short variable that feeds it and the default the header states; the variables table of
  docs/bench-<name>.md (scalars: a list is told in words there). A variable the role passes with
  `default(omit, true)` leaves the option's default to the module, and one whose option has no default is the
  role's own.

tests/unit/test_bench_yaml.py fails while the checked-in text is not what this makes.

    .venv/bin/python -m tests.support.bench_yaml --write    # after changing a benchmark's OPTIONS, LIMITS or DOCS
"""
from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.runner import BENCHMARKS
from ansible_collections.storageperf.k8s.plugins.module_utils.common.limits import Limit
from tests.support import option_rules as O

REPO = Path(__file__).resolve().parents[2]
BENCH_PLAN = REPO / "plugins" / "modules" / "bench_plan.py"
ROLES = REPO / "roles"
PLAYBOOKS = REPO / "playbooks"
BEGIN = "  # GENERATED from the benchmark modules' OPTIONS, LIMITS and DOCS: python -m tests.support.bench_yaml --write\n"
END = "  # GENERATED (end)\n"
WIDTH = 120


class _Flow(list):
    """A list written on one line ([a, b]): choices and defaults."""


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # "  - item" under its key, as the hand-written docs have it


def _flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(_Flow, _flow)


def limit_text(limit: Limit) -> str:
    """The sentence that documents a maximum (tests/unit/plugins/module_utils/test_limits.py looks for its start)."""
    if limit.kind == "list":
        text = "At most %s entries - %s" % (limit.shown(), limit.why)
        if limit.each is not None:
            text += "; each at most %s - %s" % (limit.each.shown(), limit.each.why)
        return text + "."
    return "At most %s - %s." % (limit.shown(), limit.why)


def option_doc(spec: Mapping[str, Any], lines: list[str], limit: Limit | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"description": list(lines) + ([limit_text(limit)] if limit else [])}
    doc["type"] = spec.get("type", "str")
    if "elements" in spec:
        doc["elements"] = spec["elements"]
    if "choices" in spec:
        doc["choices"] = _Flow(spec["choices"])
    if spec.get("required"):
        doc["required"] = True
    if "default" in spec:
        default = spec["default"]
        doc["default"] = _Flow(default) if isinstance(default, list) and _flat(default) else default
    return doc


def benchmark_options() -> dict[str, Any]:
    """bench_plan's options that each plan one benchmark, with their suboptions."""
    out: dict[str, Any] = {}
    for name, entry in BENCHMARKS.items():
        others = ", ".join("O(%s)" % other for other in BENCHMARKS if other != name)
        missing = set(entry.OPTIONS) ^ set(entry.DOCS)
        if missing:
            raise ValueError("%s: OPTIONS and DOCS name different options: %s" % (name, ", ".join(sorted(missing))))
        out[name] = {
            "description": "Plan the %s benchmark with these options. Give one of it, %s." % (entry.DOC_TITLE, others),
            "type": "dict",
            "suboptions": {option: option_doc(spec, entry.DOCS[option], entry.LIMITS.get(option))
                           for option, spec in entry.OPTIONS.items()},
        }
    return out


def options_block() -> str:
    text = yaml.dump(benchmark_options(), Dumper=_Dumper, sort_keys=False, width=WIDTH - 20, allow_unicode=True,
                     default_flow_style=False, indent=2)
    return BEGIN + "".join("  " + line + "\n" for line in text.splitlines()) + END


def render_bench_plan(source: str) -> str:
    """bench_plan.py's source with its generated block made anew."""
    if source.count(BEGIN) != 1 or source.count(END) != 1:
        raise ValueError("%s: the lines %r and %r must each stand once in DOCUMENTATION's options"
                         % (BENCH_PLAN, BEGIN.strip(), END.strip()))
    head, rest = source.split(BEGIN)
    return head + options_block() + rest.split(END, 1)[1]


def role_defaults(role: str) -> dict[str, Any]:
    """{role variable: the default of the benchmark option the role hands it to}, of the variables the role declares
    in its argument specs (not the facts it computes)."""
    out: dict[str, Any] = {}
    declared = set()
    for entry in yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"].values():
        declared |= set(entry.get("options") or {})
    for path in sorted((ROLES / role / "tasks").glob("*.yml")):
        for args in (args for module, args in O.module_args(yaml.safe_load(path.read_text())) if module == "bench_plan"):
            for name, entry in BENCHMARKS.items():
                for option, value in (args.get(name) or {}).items():
                    m = O.ROLE_VAR.match(value.strip()) if isinstance(value, str) else None
                    if (m and m.group(1) in declared and "omit" not in (m.group(2) or "")
                            and "default" in entry.OPTIONS[option] and _flat(entry.OPTIONS[option]["default"])):
                        out[m.group(1)] = entry.OPTIONS[option]["default"]
    return out


def _flat(value: Any) -> bool:
    """A scalar or a list of scalars, written on a line or two; a nested default (fio's jobs) is the role's to write
    out in block style, held equal to the option's by tests/unit/test_defaults_in_one_place.py."""
    return not isinstance(value, dict) and not (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value))


def _plain(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def yaml_value(value: Any, indent: int) -> str:
    """value as a YAML flow scalar or list; a list longer than a line goes on under its first item."""
    value = _plain(value)
    if not isinstance(value, list):
        return yaml.safe_dump(value, default_flow_style=True, width=10 ** 6).removesuffix("\n...\n").strip()
    lines, line = [], "["
    for i, item in enumerate(value):
        word = yaml_value(item, 0) + (", " if i < len(value) - 1 else "]")
        if len(line) + len(word) + indent > WIDTH and line != "[":
            lines.append(line.rstrip())
            line = " " * (indent + 1)
        line += word
    return "\n".join(lines + [line if value else "[]"])


def jinja_value(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'%s'" % value.replace("'", "\\'")
    if isinstance(value, list):
        return "[%s]" % ", ".join(jinja_value(v) for v in value)
    return str(value)


def _set_entry(text: str, head: re.Pattern[str], key_of: Any, value: Any) -> str:
    """text with the value of the one YAML entry that head finds (continuation lines included) set to value."""
    m = head.search(text)
    if m is None:
        return text
    end = m.end()
    deeper = " " * (len(m.group(1)) + 1)
    while text.startswith(deeper, end + 1):  # the entry's continuation lines, indented deeper than its key
        nl = text.find("\n", end + 1)
        end = nl if nl != -1 else len(text)
    key = key_of(m)
    return text[:m.start()] + m.group(1) + key + yaml_value(value, len(m.group(1)) + len(key)) + text[end:]


def render_role_defaults(text: str, defaults: Mapping[str, Any]) -> str:
    for var, value in defaults.items():
        text = _set_entry(text, re.compile(r"^()%s: [^\n]*" % var, re.M), lambda m, v=var: v + ": ", value)
    return text


def render_argument_specs(text: str, defaults: Mapping[str, Any]) -> str:
    for var, value in defaults.items():
        block = re.search(r"^( +)%s:\n((?:\1  [^\n]*\n|\n(?=\1  ))+)" % var, text, re.M)
        if block is None:
            continue
        body = _set_entry(block.group(2), re.compile(r"^( +)default: [^\n]*", re.M), lambda m: "default: ", value)
        text = text[:block.start(2)] + body + text[block.end(2):]
    return text


def render_playbook(text: str, defaults: Mapping[str, Any]) -> str:
    """The playbook's `default(...)` of the short variable that feeds each role variable, and the default its header
    states for it (`# ... volumes (int, 100) ...`)."""
    for var, value in defaults.items():
        fed = re.search(r'^\s+%s: "\{\{ (\w+) \| default\(' % var, text, re.M)
        if fed is None:
            continue
        text = re.sub(r'^(\s+%s: "\{\{ \w+ \| default\()[^\n]*?(\) \}\}")$' % var,
                      lambda m, v=value: m.group(1) + jinja_value(v) + m.group(2), text, flags=re.M)
        text = re.sub(r"^(#.*\b%s \(\w+, )[^),]*(\))" % fed.group(1),
                      lambda m, v=value: m.group(1) + yaml_value(v, 0) + m.group(2), text, flags=re.M)
    return text


def render_doc(text: str, defaults: Mapping[str, Any]) -> str:
    """The default cell of each row of a variables table (docs/bench-<name>.md) that names one role variable in a
    cell of its own (`| ... | `bench_x_volumes` | 100 | ... |`), for a scalar default: its leading value, in the
    cell's style (in backticks or not); what follows it (a remark) stays."""
    for var, value in defaults.items():
        if isinstance(value, list):
            continue  # lists are told in words there ("all 8", "[] (off)")
        shown = yaml_value(value, 0)
        text = re.sub(r"^(\|.*\| `%s` \| )(`[^`]*`|[^ |`]+)" % var,
                      lambda m, s=shown: m.group(1) + ("`%s`" % s if m.group(2).startswith("`") else s), text, flags=re.M)
    return text


def made() -> dict[Path, str]:
    """{path: the text this makes} of every file with generated parts."""
    out = {BENCH_PLAN: render_bench_plan(BENCH_PLAN.read_text())}
    for role in sorted(p.name for p in ROLES.glob("bench_*") if (p / "tasks").is_dir()):
        defaults = role_defaults(role)
        for path, render in ((ROLES / role / "defaults" / "main.yml", render_role_defaults),
                             (ROLES / role / "meta" / "argument_specs.yml", render_argument_specs),
                             (PLAYBOOKS / (role + ".yml"), render_playbook),
                             (REPO / "docs" / ("bench-%s.md" % role.removeprefix("bench_").replace("_", "-")), render_doc)):
            if defaults and path.is_file():
                out[path] = render(path.read_text(), defaults)
    return out


def stale() -> list[Path]:
    return [path for path, text in made().items() if path.read_text() != text]


def main(argv: list[str]) -> int:
    if argv[1:] == ["--write"]:
        for path, text in made().items():
            if path.read_text() != text:
                path.write_text(text)
        return 0
    for path in stale():
        print("stale: %s" % path.relative_to(REPO))
    return 1 if stale() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
