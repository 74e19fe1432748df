"""The built collection ships what its users need and nothing of the twin or of this repository's development,
and runs from a fresh path."""
from __future__ import annotations

import json
import tarfile

from tests.support.collection import build, install
from tests.support.twin import REPO, run_playbook


def _build(tmp_path):
    return build(tmp_path / "dist")


# What serves only the twin or this repository's development, never the collection's users.
NOT_SHIPPED_TOP = ("twin", ".venv", ".venv-oldest", ".venv-release", ".twin", "reports", "collections", "build", "benchmarks", "scripts", ".ci",
                   ".cache", ".config", "extensions", "Makefile", "ansible.cfg", ".ansible-lint", ".gitignore",
                   "pyproject.toml", "requirements-dev.txt", "requirements-twin.txt", "requirements-oldest.txt",
                   "requirements-release.txt", "constraints.txt", "execution-environment.yml", "ansible-navigator.yml",
                   ".hypothesis", ".ansible")
NOT_SHIPPED_UNDER = ("inventories/twin/", "inventories/twin-fleet/", "inventories/gluster-local/", "tests/twin/",
                     "tests/functional/", "tests/support/", "tests/integration/", "tests/output/")
NOT_SHIPPED_FILES = ("docs/twin.md", "docs/calibration.md", "docs/development.md", "tests/conftest.py",
                     "tests/__init__.py", "changelogs/.plugin-cache.yaml", "CONTRIBUTING.md", ".pre-commit-config.yaml")


def test_tarball_ships_only_what_users_need(tmp_path):
    tarball = _build(tmp_path)
    names = tarfile.open(tarball).getnames()
    top = {n.split("/", 1)[0] for n in names}
    for unwanted in NOT_SHIPPED_TOP:
        assert unwanted not in top, f"{unwanted} leaked into the build"
    for prefix in NOT_SHIPPED_UNDER:
        leaked = [n for n in names if (n + "/").startswith(prefix)]
        assert not leaked, f"{prefix} leaked into the build: {leaked[:5]}"
    for unwanted in NOT_SHIPPED_FILES:
        assert unwanted not in names, f"{unwanted} leaked into the build"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]

    for wanted in ("plugins", "roles", "playbooks", "meta", "docs", "changelogs", "MANIFEST.json", "FILES.json",
                   "README.md", "LICENSE", "CHANGELOG.rst", "requirements.txt", "bindep.txt"):
        assert wanted in top, f"{wanted} is missing from the build"
    for wanted in ("plugins/modules/cluster_info.py", "plugins/module_utils/k8s/client.py", "meta/runtime.yml",
                   "meta/execution-environment.yml", "docs/awx.md", "docs/result.schema.json",
                   "inventories/examples/ack.yml", "changelogs/changelog.yaml", "tests/sanity/ignore-2.18.txt",
                   "tests/sanity/ignore-2.19.txt",
                   "tests/unit/requirements.txt"):
        assert wanted in names, f"{wanted} is missing from the build"
    assert any(n.startswith("tests/unit/plugins/") and n.endswith(".py") for n in names)
    # Galaxy's importer refuses a collection with a role that has no README
    roles = {p.name for p in (REPO / "roles").iterdir() if p.is_dir()}
    assert {n.split("/")[1] for n in names if n.startswith("roles/") and n.endswith("/README.md")} == roles
    # every user-facing page under docs/ ships, only the twin's and the developers' pages stay behind
    shipped_docs = {m.name for m in tarfile.open(tarball).getmembers() if m.isfile() and m.name.startswith("docs/")}
    in_repo = {f"docs/{p.relative_to(REPO / 'docs')}" for p in (REPO / "docs").rglob("*") if p.is_file()}
    assert "docs/rbac/storageperf-read-only.yaml" in shipped_docs  # the read-only modules' rights (docs/cluster-info.md)
    assert shipped_docs == in_repo - {"docs/twin.md", "docs/calibration.md", "docs/development.md"}


def test_galaxy_metadata_names_the_project_and_the_license_text_ships(tmp_path):
    tarball = _build(tmp_path)
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
        license_text = tar.extractfile("LICENSE").read().decode()
    urls = {k: manifest[k] for k in ("repository", "documentation", "homepage", "issues")}
    assert all(u and u.startswith("https://github.com/storageperf/storageperf.k8s") for u in urls.values()), urls
    assert manifest["license"] == ["GPL-3.0-or-later"]
    assert "GNU GENERAL PUBLIC LICENSE" in license_text and "Version 3, 29 June 2007" in license_text
    assert "How to Apply These Terms to Your New Programs" in license_text  # the full text, not a stub


def test_installed_tarball_runs_playbooks_from_a_fresh_path(tmp_path, twin):
    tarball = _build(tmp_path)
    fresh = tmp_path / "fresh"
    installed = install(tarball, fresh)
    assert (installed / "playbooks" / "cluster_info.yml").exists()
    assert not (installed / "twin").exists()
    run = run_playbook("storageperf.k8s.cluster_info", inventory=REPO / "inventories" / "twin", env=twin.env(),
                       record_dir=tmp_path, collections_path=str(fresh))
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task("Read the cluster's storage facts")["result"]["node_count"] == 3
