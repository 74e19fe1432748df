"""The repository stands on its own: no tracked file cites the project brief's files beside the checkout.

The facts those files held are in docs/reference/ (README.md there says which page holds what).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# built, so that this file does not cite them: the brief's directory beside the checkout, by either path, and its
# reference file by name
CITATIONS = (".." + "/shared/", "/work" + "/shared", "REFERENCE" + ".md")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in out.decode().split("\0") if name]


def test_no_tracked_file_cites_the_shared_directory():
    citing = []
    for path in tracked_files():
        if not path.is_file():  # deleted in the work tree
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary
        citing += ["%s:%d" % (path.relative_to(REPO), n) for n, line in enumerate(text.splitlines(), 1) if any(c in line for c in CITATIONS)]
    assert citing == [], "cite docs/reference/ instead: %s" % citing


def test_reference_pages_exist():
    index = (REPO / "docs" / "reference" / "README.md").read_text()
    for page in ("seeds.md", "kubernetes.md", "trident.md", "gluster.md", "pmem.md", "tooling.md", "alibaba.md"):
        assert (REPO / "docs" / "reference" / page).is_file() and "(%s)" % page in index, page
