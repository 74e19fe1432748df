"""The pre-commit hooks run the linters CI runs (scripts/test.sh run_lint), each through its own test.sh stage."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TEST_SH = (REPO / "scripts" / "test.sh").read_text()


def function_body(name: str) -> str:
    """The body of a shell function of test.sh, one-line (`f() { ...; }`) or multi-line."""
    name = re.escape(name)
    m = re.search(r"^%s\(\) \{\n(.*?)\n\}$" % name, TEST_SH, re.M | re.S) or \
        re.search(r"^%s\(\) \{ (.*); \}$" % name, TEST_SH, re.M)
    assert m, "scripts/test.sh has no function %s" % name
    return m.group(1)


def tools(name: str) -> set[str]:
    """The programs a test.sh function runs, following the run_* functions it calls."""
    out: set[str] = set()
    for line in function_body(name).replace(";", "\n").splitlines():
        words = line.split()
        if not words or words[0] in ("stage", "local", "#") or words[0].startswith(("#", "(", "|")):
            continue
        if words[0].startswith("run_"):
            out |= tools(words[0])
        elif "=" not in words[0]:
            out.add(words[0])
    return out


def stage_function(stage: str) -> str:
    m = re.search(r"^\s+%s\) (run_\w+) ;;$" % re.escape(stage), TEST_SH, re.M)
    assert m, "scripts/test.sh has no stage %s" % stage
    return m.group(1)


def hooks() -> list[dict]:
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    assert [r["repo"] for r in config["repos"]] == ["local"], "hooks run the .venv's tools, nothing downloaded"
    return config["repos"][0]["hooks"]


def test_lint_runs_the_three_linters():
    assert tools("run_lint") >= {"ruff", "mypy", "ansible-lint"}


def test_hooks_run_the_lint_stage_tools_and_nothing_else():
    named = set()
    for hook in hooks():
        assert hook["language"] == "system" and hook["pass_filenames"] is False, hook["id"]
        assert hook["entry"] == "bash scripts/test.sh %s" % hook["id"], hook["id"]
        stage_tools = tools(stage_function(hook["id"]))
        assert hook["id"] in stage_tools, "stage %s does not run %s" % (hook["id"], hook["id"])
        named |= stage_tools
    assert named == tools("run_lint")
