"""Every AWX artifact (set_stats key) a playbook's header documents is one the playbook publishes, and the other way
round: the header's `# Artifacts` paragraph is checked against the set_stats tasks the playbook reaches, through
import_playbook, import_role/include_role (with tasks_from) and import_tasks/include_tasks, read as YAML."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.support import option_rules as O

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = sorted(p for p in (ROOT / "playbooks").glob("*.yml"))
PREFIX = "storageperf.k8s."
KEY = re.compile(r"\bstorageperf_stats_[a-z0-9_]+")
BLOCKS = ("block", "rescue", "always")


def _tasks_keys(tasks, role):
    keys: set[str] = set()
    for task in tasks or []:
        for part in BLOCKS:
            keys |= _tasks_keys(task.get(part), role)
        for action, args in task.items():
            short = action.rsplit(".", 1)[-1]
            if short == "set_stats":
                keys |= set((args or {}).get("data") or {})
            elif short in ("import_role", "include_role"):
                name = args["name"]
                if name.startswith(PREFIX):
                    keys |= _handed(_role_keys(name[len(PREFIX):], args.get("tasks_from", "main")), task.get("vars"))
            elif short in ("import_tasks", "include_tasks") and role and "{{" not in str(args):
                keys |= _role_keys(role, str(args.get("file", args) if isinstance(args, dict) else args))
            elif short == "import_playbook":
                keys |= playbook_keys(str(args))
    return keys


def _handed(keys, given):
    """A shared task file's keys named by a variable (`"{{ common_bench_stats }}"`) are the values the importing task
    hands it; a key the importing task does not name is not published."""
    out = set()
    for key in keys:
        m = O.BARE_VAR.match(key)
        if not m:
            out.add(key)
        elif m.group(1) in (given or {}):
            out.add(given[m.group(1)])
    return out


@cache
def _role_keys(role, tasks_file):
    path = ROOT / "roles" / role / "tasks" / (tasks_file if tasks_file.endswith(".yml") else tasks_file + ".yml")
    return frozenset(_tasks_keys(yaml.safe_load(path.read_text()), role))


@cache
def playbook_keys(name):
    """The set_stats keys a playbook can publish."""
    keys: set[str] = set()
    for play in yaml.safe_load((ROOT / "playbooks" / name).read_text()):
        keys |= _tasks_keys([play], None)  # import_playbook entries
        for section in ("pre_tasks", "tasks", "post_tasks", "handlers"):
            keys |= _tasks_keys(play.get(section), None)
        for role in play.get("roles") or []:
            role_name = role if isinstance(role, str) else role["role"]
            keys |= _role_keys(role_name.removeprefix(PREFIX), "main")
    return frozenset(keys)


def header(path):
    """The leading comment lines of a playbook."""
    lines = []
    for line in path.read_text().splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def documented(path):
    """The keys of the header's `# Artifacts` paragraph (from that line to the first line ending with a period)."""
    lines = header(path)
    start = next((i for i, line in enumerate(lines) if line.startswith("# Artifacts")), None)
    if start is None:
        return None
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("."))
    return set(KEY.findall(" ".join(lines[start:end + 1])))


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda p: p.name)
def test_the_header_documents_exactly_the_artifacts_the_playbook_publishes(path):
    published = playbook_keys(path.name)
    listed = documented(path)
    if not published:
        assert listed in (None, set()), f"{path.name} documents artifacts it never publishes: {listed}"
        return
    assert listed is not None, f"{path.name} publishes {sorted(published)} but its header has no '# Artifacts' line"
    assert listed == published, (f"{path.name}: header lists {sorted(listed)}, the playbook publishes "
                                 f"{sorted(published)}")


def test_the_walker_finds_the_benchmarks_artifacts():
    """The walk reaches bench_report through the bench role and fleet_report through the playbook."""
    assert {"storageperf_stats_bench_last", "storageperf_stats_bench_runs", "storageperf_stats_bench_baseline",
            "storageperf_stats_bench_csi_lifecycle", "storageperf_stats_fleet_report"} <= playbook_keys(
        "bench_csi_lifecycle.yml")
    assert "storageperf_stats_compare" in playbook_keys("compare.yml")
