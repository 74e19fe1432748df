"""A role's meta/argument_specs.yml is where its defaults are stated (AWX surveys and the docs read it).

Ansible does not apply those defaults (role argument validation only checks), so defaults/main.yml must
hold the same values; this test keeps the two equal for every role, so a default is changed in one
place and the test names the other.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
ROLE_NAMES = sorted(p.name for p in ROLES.iterdir() if (p / "meta" / "argument_specs.yml").is_file())


def _load(path):
    # a role without variables (common, whose task files read the importing role's) has no defaults file
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def _is_template(value):
    return isinstance(value, str) and "{{" in value


def test_every_role_has_an_argument_spec():
    assert ROLE_NAMES == sorted(p.name for p in ROLES.iterdir() if p.is_dir())


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_defaults_match_the_argument_spec(role):
    defaults = _load(ROLES / role / "defaults" / "main.yml")
    specs = _load(ROLES / role / "meta" / "argument_specs.yml")["argument_specs"]
    problems = []
    for entry, spec in specs.items():
        for name, option in (spec.get("options") or {}).items():
            if "default" not in option:
                continue
            if name not in defaults:
                problems.append("%s: argument_specs %s states default %r, defaults/main.yml does not set it"
                                % (name, entry, option["default"]))
            elif not _is_template(defaults[name]) and defaults[name] != option["default"]:
                problems.append("%s: defaults/main.yml says %r, argument_specs %s says %r"
                                % (name, defaults[name], entry, option["default"]))
    assert not problems, "\n".join(problems)
