"""The changelog tells the truth about the plugins: every module, filter and inventory plugin that a release lists
exists, or a later release says it was removed; every plugin that exists is listed in the release its version_added
names, once that version is released; CHANGELOG.rst is what antsibull-changelog renders from changelogs/changelog.yaml;
galaxy.yml carries a version at or after the last release (docs/releasing.md)."""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
CHANGES = yaml.safe_load((REPO / "changelogs" / "changelog.yaml").read_text())
RELEASES = dict(sorted(CHANGES["releases"].items(), key=lambda kv: Version(kv[0])))


def _documentation(path: Path) -> dict:
    if path.suffix == ".yml":
        return yaml.safe_load(path.read_text())["DOCUMENTATION"]
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DOCUMENTATION":
            return yaml.safe_load(node.value.value)
    raise AssertionError(f"{path} has no DOCUMENTATION")


def _plugins() -> dict[tuple[str, str], str]:
    """{(kind, name): version_added} of every documented plugin, kind as changelog.yaml spells it."""
    found = {}
    for kind, pattern in (("module", "modules/*.py"), ("filter", "filter/*.yml"), ("inventory", "inventory/*.py")):
        for path in sorted((REPO / "plugins").glob(pattern)):
            if path.name != "__init__.py":
                found[(kind, path.stem)] = str(_documentation(path)["version_added"])
    return found


def _listed() -> dict[tuple[str, str], str]:
    """{(kind, name): release} of every plugin the changelog lists as new."""
    listed = {}
    for version, release in RELEASES.items():
        for module in release.get("modules", []):
            listed[("module", module["name"])] = version
        for kind, plugins in release.get("plugins", {}).items():
            for plugin in plugins:
                listed[(kind, plugin["name"])] = version
    return listed


def _removed_after(version: str) -> set[str]:
    """Names that a release after `version` says were removed (a "<name> - removed" entry)."""
    names = set()
    for later, release in RELEASES.items():
        if Version(later) > Version(version):
            for section in ("removed_features", "breaking_changes"):
                for entry in release.get("changes", {}).get(section, []):
                    match = re.match(r"(\w+) - removed\b", entry)
                    if match:
                        names.add(match.group(1))
    return names


def test_every_plugin_the_changelog_lists_exists_or_was_removed_later():
    plugins = _plugins()
    for (kind, name), version in _listed().items():
        assert (kind, name) in plugins or name in _removed_after(version), (
            f"changelog.yaml lists the {kind} {name} as new in {version}, but plugins/ has none and no later release "
            f"says '{name} - removed': add a changelog fragment under removed_features or breaking_changes")


def test_every_released_plugin_is_listed_in_its_version_added_release():
    listed = _listed()
    newest = Version(next(reversed(RELEASES)))
    for (kind, name), added in _plugins().items():
        if Version(added) <= newest:
            assert listed.get((kind, name)) == added, (
                f"the {kind} {name} says version_added {added}, but changelog.yaml lists it "
                f"{'in ' + listed[(kind, name)] if (kind, name) in listed else 'in no release'}: a new plugin's "
                f"version_added is the next release, above {newest}")


def test_galaxy_version_is_the_last_release_or_the_one_being_prepared():
    version = Version(yaml.safe_load((REPO / "galaxy.yml").read_text())["version"])
    assert version >= Version(next(reversed(RELEASES)))
    assert CHANGES["ancestor"] is None


def test_changelog_rst_is_what_antsibull_changelog_renders(tmp_path):
    """No hand edits: antsibull-changelog generate on a copy rewrites CHANGELOG.rst to the same text."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("galaxy.yml", "CHANGELOG.rst"):
        shutil.copy(REPO / name, copy / name)
    shutil.copytree(REPO / "changelogs", copy / "changelogs")
    shutil.copytree(REPO / "plugins", copy / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "meta", copy / "meta")
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "antsibull-changelog"), "generate"], cwd=copy,
                   check=True, capture_output=True, text=True,
                   env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert (copy / "CHANGELOG.rst").read_text() == (REPO / "CHANGELOG.rst").read_text()
    lint = subprocess.run([str(bin_dir / "antsibull-changelog"), "lint-changelog-yaml",
                           str(REPO / "changelogs" / "changelog.yaml")], capture_output=True, text=True)
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr
