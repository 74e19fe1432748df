"""Where a secret could be left on disk: Ansible's temp dirs with the module payload files kept, and a search of them."""
from __future__ import annotations

import os
from pathlib import Path


def kept_payload_env(base: Path) -> dict[str, str]:
    """A HOME and both Ansible temp dirs under base, payload files kept, no pipelining (files are written)."""
    dirs = {"HOME": base / "home", "ANSIBLE_LOCAL_TEMP": base / "local-tmp", "ANSIBLE_REMOTE_TEMP": base / "remote-tmp"}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return {**{k: str(v) for k, v in dirs.items()}, "ANSIBLE_KEEP_REMOTE_FILES": "1", "ANSIBLE_PIPELINING": "False"}


def files_holding(base: Path, needle: str) -> list[str]:
    """The files under base that contain needle, relative to base."""
    hits = []
    for root, _dirs, names in os.walk(base):
        for name in names:
            path = Path(root) / name
            try:
                if needle.encode() in path.read_bytes():
                    hits.append(str(path.relative_to(base)))
            except OSError:
                continue
    return hits
