"""Start and drive a cluster twin from tests, through the same doors a user has.

Everything here goes through real clients: the `python -m twin` command, kubectl, the
`kubernetes` Python client and ansible-playbook with the installed collection.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.fleet import envfile

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
COLLECTIONS = REPO / "collections"
CALLBACKS = Path(__file__).parent / "callback_plugins"


@dataclass
class PlaybookRun:
    rc: int
    stdout: str
    stderr: str
    results: list[dict[str, Any]] = field(default_factory=list)

    def task(self, name: str) -> dict[str, Any]:
        """The last recorded result of the task whose name contains `name`."""
        found = [r for r in self.results if name in r["task"]]
        if not found:
            raise AssertionError(f"no task named like {name!r}; tasks: {[r['task'] for r in self.results]}")
        return found[-1]

    @property
    def changed_tasks(self) -> list[str]:
        return [r["task"] for r in self.results if r["status"] == "ok" and r["result"].get("changed")]


class Twin:
    """A twin started in its own directory. Use as a context manager or call down()."""

    def __init__(self, directory: Path, *, nodes: int = 3, time_scale: float = 0.01, extra: list[str] | None = None):
        self.dir = Path(directory)
        self.nodes = nodes
        self.time_scale = time_scale
        self.extra = extra or []

    # lifecycle -------------------------------------------------------------------------
    def up(self) -> Twin:
        self.dir.mkdir(parents=True, exist_ok=True)
        cmd = [str(VENV_BIN / "python"), "-m", "twin", "up", "--dir", str(self.dir),
               "--nodes", str(self.nodes), "--time-scale", str(self.time_scale), *self.extra]
        subprocess.run(cmd, cwd=REPO, check=True, timeout=60)
        return self

    def down(self) -> None:
        subprocess.run([str(VENV_BIN / "python"), "-m", "twin", "down", "--dir", str(self.dir)],
                       cwd=REPO, check=False, timeout=60)

    def __enter__(self) -> Twin:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    # what it wrote ---------------------------------------------------------------------
    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    @property
    def cloud(self) -> dict[str, Any]:
        return json.loads((self.dir / "cloud.json").read_text())

    @property
    def credentials(self) -> dict[str, str]:
        """What the twin hands the controller through the environment (DIR/env): its throwaway ACK/ECS keys and
        ONTAP user, as an AWX credential would. No inventory of the repository holds them."""
        path = self.dir / envfile.NAME
        return envfile.read(path) if path.exists() else {}

    @property
    def server(self) -> str:
        import yaml

        cfg = yaml.safe_load(self.kubeconfig.read_text())
        return cfg["clusters"][0]["cluster"]["server"]

    @property
    def token(self) -> str:
        import yaml

        cfg = yaml.safe_load(self.kubeconfig.read_text())
        return cfg["users"][0]["user"]["token"]

    # clients ---------------------------------------------------------------------------
    @property
    def super_admin_kubeconfig(self) -> Path:
        """kubeadm's break-glass identity (system:masters): allowed whatever the RBAC objects say."""
        return self.dir / "super-admin.conf"

    def kubeconfig_for(self, token: str, path: Path) -> Path:
        """A copy of the kubeconfig whose user is `token` (a ServiceAccount's, from `kubectl create token`)."""
        import yaml

        cfg = yaml.safe_load(self.kubeconfig.read_text())
        cfg["users"][0]["user"] = {"token": token}
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    def env(self, kubeconfig: Path | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.credentials)
        env["KUBECONFIG"] = str(kubeconfig or self.kubeconfig)
        env["K8S_AUTH_KUBECONFIG"] = str(kubeconfig or self.kubeconfig)
        env["STORAGEPERF_TWIN_DIR"] = str(self.dir)
        env["HOME"] = str(self.dir / "home")  # kubectl's discovery cache stays per twin
        env["PATH"] = f"{VENV_BIN}:{env.get('PATH', '')}"
        return env

    def kubectl(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120,
                kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["kubectl", *args], env=self.env(kubeconfig), input=input, text=True,
                              capture_output=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def kubectl_json(self, *args: str) -> Any:
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def label_pmem_node(self, index: int = 0, pmem_type: str = "lvm") -> str:
        """Give a node persistent memory, as ACK labels a PMEM instance (the scheduler places PMEM claims only
        there); returns its name."""
        node = self.kubectl("get", "nodes", "-o", f"jsonpath={{.items[{index}].metadata.name}}").stdout
        self.kubectl("label", "--overwrite", "node", node, f"pmem.csi.alibabacloud.com={pmem_type}",
                     f"pmem.csi.alibabacloud.com/type={pmem_type}")
        return node

    def api_client(self):  # -> kubernetes.client.ApiClient
        from kubernetes import config

        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def twin_cmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run `python -m twin <args> --dir <dir>` (fault injection and other twin verbs)."""
        return subprocess.run([str(VENV_BIN / "python"), "-m", "twin", *args, "--dir", str(self.dir)],
                              cwd=REPO, text=True, capture_output=True, check=check, timeout=60)

    def playbook(self, playbook: str | Path, *, extra_vars: dict[str, Any] | None = None,
                 check: bool = False, diff: bool = False, inventory: str | Path | list[Path] | None = None,
                 env: dict[str, str] | None = None, timeout: float = 900) -> PlaybookRun:
        return run_playbook(playbook, extra_vars=extra_vars, check=check, diff=diff,
                            inventory=inventory or REPO / "inventories" / "twin",
                            env={**self.env(), **(env or {})}, record_dir=self.dir, timeout=timeout)


def run_playbook(playbook: str | Path, *, extra_vars: dict[str, Any] | None = None, check: bool = False,
                 diff: bool = False, inventory: str | Path | list[Path] | None = None, env: dict[str, str] | None = None,
                 record_dir: Path | None = None, timeout: float = 900, collections_path: str | None = None,
                 bin_dir: Path | None = None, limit: str | None = None, user_dir: Path | None = None,
                 prefix: list[str] | None = None) -> PlaybookRun:
    """ansible-playbook with the installed collection; every task result is recorded as JSON.

    `playbook` may be a path or a collection playbook name such as storageperf.k8s.cluster_info. `bin_dir` is the
    bin/ of another venv whose ansible-playbook (and so Python, for the modules) runs it instead of this one's.
    `user_dir` runs it as a user does, from a directory of their own: there, with neither this repository's ansible.cfg
    nor the caller's ANSIBLE_* settings and PYTHONPATH (which holds collections/, where ansible-core's collection
    loader looks too); a relative `inventory` is read from there. `prefix` goes before the command (a wrapper).
    """
    bin_dir = bin_dir or VENV_BIN
    record_dir = Path(record_dir or REPO / ".cache")
    record_dir.mkdir(parents=True, exist_ok=True)
    record = record_dir / f"results-{time.monotonic_ns()}.jsonl"
    run_env = dict(env or os.environ)
    if user_dir is None:
        run_env["ANSIBLE_CONFIG"] = str(REPO / "ansible.cfg")
    else:
        run_env = {k: v for k, v in run_env.items() if not k.startswith("ANSIBLE_") and k != "PYTHONPATH"}
    run_env.update({
        "ANSIBLE_COLLECTIONS_PATH": collections_path or str(COLLECTIONS),
        "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS),
        "ANSIBLE_CALLBACKS_ENABLED": "record_results",
        "RECORD_RESULTS_FILE": str(record),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "PATH": f"{bin_dir}:{run_env.get('PATH', '')}",
    })
    cmd = [*(prefix or []), str(bin_dir / "ansible-playbook"), str(playbook)]
    for source in ([inventory] if isinstance(inventory, (str, Path)) else inventory or []):
        cmd += ["-i", str(source)]
    if extra_vars:
        cmd += ["-e", json.dumps(extra_vars)]
    if limit:
        cmd += ["--limit", limit]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    proc = subprocess.run(cmd, cwd=user_dir or REPO, env=run_env, text=True, capture_output=True, timeout=timeout)
    results = []
    if record.exists():
        results = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return PlaybookRun(proc.returncode, proc.stdout, proc.stderr, results)
