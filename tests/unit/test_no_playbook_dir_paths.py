"""Installed, the collection's playbooks and roles sit in a read-only tree (an execution environment, a site
collections path): a path made from playbook_dir or role_path points inside it, so a default written there fails, or
writes into the collection. Outputs go under reports_dir, relative to the directory ansible-playbook runs in
(tests/functional/test_installed_use.py runs the installed build)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSIDE = re.compile(r"\b(playbook_dir|role_path)\b")


def test_no_playbook_or_role_makes_a_path_from_where_it_is_installed():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted([*(ROOT / "playbooks").glob("*.yml"), *(ROOT / "roles").rglob("*.yml")])
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if INSIDE.search(line.split("#", 1)[0])]
    assert found == [], "\n".join(found)
