"""`make release` in a clone of the repository (never in this checkout: it commits and tags): the version bump, the
changelog, the build, galaxy-importer's verdict on the tarball, the commit and the tag (docs/releasing.md)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile

import yaml

from tests.support.twin import REPO, VENV_BIN

# The importer's one warning that is not a finding: Galaxy says that sanity ignore files exist.
IGNORE_FILES = re.compile(r"WARNING: Ignore files skip ansible-test sanity tests, found ignore-2\.\d+\.txt with \d+ statement\(s\)")


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _clone(tmp_path):
    """A clone of this checkout's HEAD with its venvs, and a fragment of its own so that there is something to release."""
    release_venv = REPO / ".venv-release"
    assert (release_venv / "bin" / "python").exists(), "no .venv-release: run bash scripts/setup.sh (make test does)"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    (clone / ".venv").symlink_to(VENV_BIN.parent)
    (clone / ".venv-release").symlink_to(release_venv.resolve())
    _git(clone, "config", "user.name", "release test")
    _git(clone, "config", "user.email", "release-test@example.invalid")
    (clone / "changelogs" / "fragments" / "release-test.yml").write_text(yaml.safe_dump({
        "release_summary": "A release cut by tests/functional/test_release.py.",
        "bugfixes": ["release test - a fix that this release carries."]}))
    _git(clone, "add", "changelogs/fragments/release-test.yml")
    _git(clone, "commit", "-q", "-m", "release test fragment")
    return clone


def _make_release(clone, version, timeout=900):
    # galaxy-importer's ansible-lint run (45 of its 56 CPU-s here) is left out of the test: its findings are
    # warnings that never fail an import, and scripts/test.sh ansible-lint runs the same ansible-lint and profile on
    # the whole repository with kubernetes.core installed, where the importer cannot resolve it. make release itself
    # runs it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "GIT_"))}
    env["GALAXY_IMPORTER_RUN_ANSIBLE_LINT"] = "false"
    return subprocess.run(["make", "release", f"VERSION={version}"], cwd=clone, env=env, text=True,
                          capture_output=True, timeout=timeout)


def test_make_release_bumps_builds_checks_with_galaxy_importer_and_tags(tmp_path):
    clone = _clone(tmp_path)
    before = yaml.safe_load((clone / "galaxy.yml").read_text())["version"]
    major, minor, patch = (int(x) for x in before.split("."))
    version = f"{major}.{minor}.{patch + 1}"
    fragments_before = {p.name for p in (clone / "changelogs" / "fragments").glob("*.y*ml")}

    proc = _make_release(clone, "patch")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
    assert "Importer processing completed successfully" in proc.stdout

    # the version, in galaxy.yml and in the tarball the EE installs
    assert yaml.safe_load((clone / "galaxy.yml").read_text())["version"] == version
    ee = (clone / "execution-environment.yml").read_text()
    assert f"build/storageperf-k8s-{version}.tar.gz" in ee and f"storageperf-k8s-{before}.tar.gz" not in ee
    # the changelog: the new section first, with the fragment's entries, and the fragments consumed
    rst = (clone / "CHANGELOG.rst").read_text()
    sections = re.findall(r"^v(\d+\.\d+\.\d+)\n=+$", rst, re.M)
    assert sections[0] == version and before in sections
    assert "release test - a fix that this release carries." in rst.split(f"v{before}\n")[0]
    assert version in yaml.safe_load((clone / "changelogs" / "changelog.yaml").read_text())["releases"]
    assert not list((clone / "changelogs" / "fragments").glob("*.y*ml")), fragments_before

    # the tarball: this version's manifest and changelog
    tarball = clone / "build" / f"storageperf-k8s-{version}.tar.gz"
    with tarfile.open(tarball) as tar:
        assert json.load(tar.extractfile("MANIFEST.json"))["collection_info"]["version"] == version
        assert tar.extractfile("CHANGELOG.rst").read().decode() == rst

    # galaxy-importer: no warning but the ignore files', every module's and inventory plugin's docs rendered, every
    # role's README read
    log = (clone / "build" / "galaxy-importer" / "import.log").read_text().splitlines()
    warnings = [ln for ln in log if ln.startswith(("WARNING", "ERROR"))]
    assert [w for w in warnings if not IGNORE_FILES.fullmatch(w)] == []
    result = json.loads((clone / "build" / "galaxy-importer" / "importer_result.json").read_text())
    assert result["metadata"]["version"] == version
    docs = {(c["content_type"], c["content_name"]): c for c in result["docs_blob"]["contents"]}
    for kind in ("modules", "inventory"):
        for path in (REPO / "plugins" / kind).glob("*.py"):
            entry = docs[(kind.rstrip("s"), path.stem)]
            assert entry["doc_strings"]["doc"]["short_description"], path
    roles = {p.name for p in (REPO / "roles").iterdir() if p.is_dir()}
    assert {name for (kind, name), c in docs.items() if kind == "role" and c["readme_html"]} == roles

    # one commit on top of the fragment's, tagged with the bare version; nothing left uncommitted
    assert _git(clone, "log", "-1", "--format=%s") == f"Release {version}"
    assert _git(clone, "rev-parse", f"{version}^{{commit}}") == _git(clone, "rev-parse", "HEAD")
    assert _git(clone, "cat-file", "-t", version) == "tag"
    assert _git(clone, "status", "--porcelain", "--untracked-files=no") == ""


def test_make_release_refuses_bad_input_before_writing_anything(tmp_path):
    clone = _clone(tmp_path)
    head = _git(clone, "rev-parse", "HEAD")
    tags = _git(clone, "tag")  # the releases this checkout has tagged (a clone of main carries 0.2.0)
    current = yaml.safe_load((clone / "galaxy.yml").read_text())["version"]
    released = max(yaml.safe_load((clone / "changelogs" / "changelog.yaml").read_text())["releases"],
                   key=lambda v: tuple(int(x) for x in v.split(".")))
    for argument, message in (("", "usage: make release VERSION=major|minor|patch|X.Y.Z"),
                              ("1.2", "VERSION='1.2': give major, minor, patch or a version X.Y.Z"),
                              ("v1.0.0", "VERSION='v1.0.0'"),
                              (released, f"VERSION={released} is not above {released}")):
        proc = _make_release(clone, argument)
        assert proc.returncode != 0 and message in proc.stderr, (argument, proc.stderr)
    # a checkout with changes, and a release without a summary
    (clone / "README.md").write_text("changed\n")
    proc = _make_release(clone, "patch")
    assert proc.returncode != 0 and "uncommitted changes" in proc.stderr, proc.stderr
    _git(clone, "checkout", "--", "README.md")
    (clone / "changelogs" / "fragments" / "release-test.yml").write_text(
        yaml.safe_dump({"bugfixes": ["release test - no summary."]}))
    _git(clone, "commit", "-q", "-am", "no summary")
    proc = _make_release(clone, "patch")
    assert proc.returncode != 0 and "no fragment has a release_summary" in proc.stderr, proc.stderr
    # nothing written: galaxy.yml as it was, no new commit but the test's own, no tag
    assert yaml.safe_load((clone / "galaxy.yml").read_text())["version"] == current
    assert _git(clone, "rev-parse", "HEAD~1") == head
    assert _git(clone, "tag") == tags
