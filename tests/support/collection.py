"""The collection as users get it: the tarball `ansible-galaxy collection build` makes of this repository (as
scripts/install-collection.sh and scripts/release.sh build it), installed with `ansible-galaxy collection install`
into a directory of its own, and that tree made read-only."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.support.twin import REPO, VENV_BIN


def build(out: Path) -> Path:
    """The tarball of this checkout (galaxy.yml's build_ignore applies), in `out`."""
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "build", "--force", "--output-path", str(out),
                    str(REPO)], check=True, capture_output=True, text=True)
    (tarball,) = out.glob("storageperf-k8s-*.tar.gz")
    return tarball


def install(tarball: Path, path: Path) -> Path:
    """`ansible-galaxy collection install <tarball> -p <path>` (no dependencies: nothing is fetched); the installed
    collection's directory, <path>/ansible_collections/storageperf/k8s."""
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "install", "--force", "--no-deps", "-p", str(path),
                    str(tarball)], check=True, capture_output=True, text=True, env={**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(path)})
    return path / "ansible_collections" / "storageperf" / "k8s"


def make_read_only(tree: Path) -> list[str]:
    """chmod -R a-w, and the command prefix under which a write inside `tree` fails for the command and every process
    it starts. For any user but root the modes do it (the prefix is empty); root writes through modes, so for root
    the prefix runs the command in a mount namespace of its own where `tree` is bind-mounted read-only (EROFS)."""
    for p in _paths(tree):
        if not os.path.islink(p):
            os.chmod(p, stat.S_IMODE(os.lstat(p).st_mode) & ~0o222)
    if os.geteuid() != 0:
        return []
    remount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", remount, str(tree)]


def listing(tree: Path) -> dict[str, tuple[int, int, int]]:
    """Every file and directory under `tree` (itself too): (mode, size, mtime in ns), by relative path. A file
    written, added or removed, or a directory that gained or lost an entry, changes it."""
    return {os.path.relpath(p, tree): (st.st_mode, st.st_size, st.st_mtime_ns)
            for p in _paths(tree) for st in [os.lstat(p)]}


def _paths(tree: Path) -> list[str]:
    """`tree` and everything under it, symbolic links not followed."""
    return [str(tree), *(os.path.join(base, name) for base, dirs, files in os.walk(tree) for name in [*dirs, *files])]
