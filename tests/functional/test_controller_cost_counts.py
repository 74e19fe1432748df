"""The controller's work per cluster stays what docs/performance.md states (counts, not times: issue 33).

benchmarks/controller_cost.py --counts runs bench_csi_lifecycle.yml (10 volumes), cluster_info.yml and advise.yml
once each on one twin cluster and counts, per playbook, the task results that were not skipped and the module
processes the workers started (benchmarks/callback_plugins/task_profile.py). Each must stay at or below the figure
of the table under the counts marker in docs/performance.md, the one place those figures live: a change that adds
a task or a module run to a cluster's path has to say so there.
"""
from __future__ import annotations

import json
import re
import subprocess

from tests.support.twin import REPO, VENV_BIN

DOC = REPO / "docs" / "performance.md"
MARKER = "<!-- counts: tests/functional/test_controller_cost_counts.py -->"
ROW = re.compile(r"^\| `(?P<playbook>[\w.]+)`[^|]*\| (?P<tasks>\d+) \| (?P<modules>\d+) \|$")


def documented_counts(text: str) -> dict[str, dict[str, int]]:
    """{playbook: {tasks, modules}} of the table right after MARKER (up to the first line that is no table row)."""
    assert MARKER in text, f"{DOC} has lost its counts table (the line {MARKER} and the table after it)"
    table = text.split(MARKER, 1)[1].strip().splitlines()
    rows: dict[str, dict[str, int]] = {}
    for line in table[2:]:  # header and separator first
        if not line.startswith("|"):
            break
        m = ROW.match(line)
        assert m, f"{DOC}: a counts row reads | `playbook.yml` ... | tasks | module runs |, not {line!r}"
        rows[m["playbook"]] = {"tasks": int(m["tasks"]), "modules": int(m["modules"])}
    return rows


def test_the_doc_table_is_read_as_written():
    text = (f"{MARKER}\n| playbook | tasks per cluster | module runs per cluster |\n|---|---|---|\n"
            "| `a.yml` (`-e volumes=10`) | 25 | 5 |\n| `b.yml` | 4 | 1 |\n\nprose | 9 | 9 |\n")
    assert documented_counts(text) == {"a.yml": {"tasks": 25, "modules": 5}, "b.yml": {"tasks": 4, "modules": 1}}


def test_no_playbook_runs_more_tasks_or_modules_per_cluster_than_documented(tmp_path):
    documented = documented_counts(DOC.read_text())
    assert sorted(documented) == ["advise.yml", "bench_csi_lifecycle.yml", "cluster_info.yml"]
    proc = subprocess.run([str(VENV_BIN / "python"), str(REPO / "benchmarks" / "controller_cost.py"), "--counts",
                           "--volumes", "10", "--dir", str(tmp_path / "cost")],
                          cwd=REPO, text=True, capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    measured = json.loads(proc.stdout)
    grown = {f"{playbook} {what}": (measured[playbook][what], limit)
             for playbook, counts in documented.items() for what, limit in counts.items()
             if measured[playbook][what] > limit}
    assert not grown, (
        f"more per cluster than docs/performance.md states, (measured, documented): {grown}; cut them, or say "
        "in the doc why the cluster's path needs them and raise its counts table")
