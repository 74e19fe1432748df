"""Run `ansible-inventory --list` on an inventory source, as a user does, with the installed collection."""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from tests.support.twin import COLLECTIONS, REPO, VENV_BIN


def plain(value: Any) -> Any:
    """ansible-inventory's legacy profile wraps untrusted strings as {"__ansible_unsafe": s}: unwrap them."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@dataclass
class Listing:
    rc: int
    stdout: str
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        if self.rc != 0:
            raise AssertionError(f"ansible-inventory failed ({self.rc}):\n{self.stderr}")
        return plain(json.loads(self.stdout))

    @property
    def hostvars(self) -> dict[str, dict[str, Any]]:
        return self.data["_meta"]["hostvars"]

    def group(self, name: str) -> list[str]:
        """Hosts of a group (direct members), [] when the group does not exist."""
        return sorted(self.data.get(name, {}).get("hosts", []))

    @property
    def groups(self) -> set[str]:
        return {k for k in self.data if k != "_meta"}


def list_inventory(source: str | Path, *, env: dict[str, str] | None = None, args: tuple[str, ...] = (),
                   base_env: dict[str, str] | None = None, preexec_fn: Callable[[], Any] | None = None,
                   timeout: float = 600) -> Listing:
    """`ansible-inventory -i SOURCE --list`; a source that cannot be parsed is an error (rc != 0), not a warning."""
    run_env = dict(os.environ if base_env is None else base_env)
    run_env.update({
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true",
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{VENV_BIN}:{run_env.get('PATH', '')}",
    })
    run_env.update(env or {})
    proc = subprocess.run([str(VENV_BIN / "ansible-inventory"), "-i", str(source), "--list", *args],
                          cwd=REPO, env=run_env, text=True, capture_output=True, timeout=timeout,
                          preexec_fn=preexec_fn)
    return Listing(proc.returncode, proc.stdout, proc.stderr)


def write_yaml(path: Path, doc: Any) -> Path:
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def cache_entries(cache_dir: Path) -> list[Any]:
    """What the jsonfile cache plugin holds (ansible-core 2.19 wraps each entry as {"__payload__": json})."""
    out = []
    for p in sorted(Path(cache_dir).iterdir()):
        doc = json.loads(p.read_text())
        out.append(json.loads(doc["__payload__"]) if isinstance(doc, dict) and "__payload__" in doc else doc)
    return out
