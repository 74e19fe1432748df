"""Every module has an ansible-test integration target that ansible-test really runs (CONTRIBUTING.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARGETS = REPO / "tests" / "integration" / "targets"
MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
ROLES = {p.name for p in (REPO / "roles").iterdir() if p.is_dir()}


def test_every_module_has_a_target():
    assert [m for m in MODULES if not (TARGETS / m).is_dir()] == []


@pytest.mark.parametrize("target", sorted(p.name for p in TARGETS.iterdir() if p.is_dir()))
def test_target_is_complete(target):
    d = TARGETS / target
    aliases = (d / "aliases").read_text().split() if (d / "aliases").exists() else []
    assert "context/controller" in aliases, "%s/aliases: say context/controller (its tasks run on the controller)" % target
    if (d / "runme.sh").exists():
        assert (d / "runme.sh").stat().st_mode & 0o111, "%s/runme.sh must be executable" % target
    else:
        assert (d / "tasks" / "main.yml").exists()
        # a role target is played without facts: they cost about a second per target and no target reads them
        assert "gather_facts/no" in aliases, "%s/aliases: add gather_facts/no" % target
    # ansible-test plays a target named like one of the collection's roles as that role, not as the target's own
    # tasks/main.yml (fleet_report's tasks never ran that way): such a target plays its tasks from runme.sh
    if target in ROLES:
        assert (d / "runme.sh").exists(), "%s shares its name with roles/%s: add runme.sh and run.yml" % (target, target)
