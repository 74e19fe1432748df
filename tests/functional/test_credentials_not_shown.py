"""Credentials given as inventory variables anyway (a user's inventory; no shipped one holds any) reach the modules
only through the roles' task environment, and from there by inheritance, not on the module's command line: a
`-vvv` run of enable_parallel_attach.yml and of tune_trident.yml prints no secret, no process's command line holds
one while a module runs, and no kept payload file does (plugins/plugin_utils/credential_env.py).
"""
from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.support.alibaba import NO_CREDENTIALS_ENV, admin, credentials_inventory
from tests.support.payload import files_holding, kept_payload_env
from tests.support.twin import CALLBACKS, COLLECTIONS, REPO, VENV_BIN, Twin

# inventory variables (or plugin options) that hold a credential, commented out or not
CREDENTIAL_KEY = re.compile(r"^\s*#?\s*-?\s*[\"']?([a-z_]*(?:access_key_secret|access_key_id|security_token|password|"
                            r"secret|ontap_username|api_key|token))[\"']?\s*:", re.MULTILINE)


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("creds-vvv") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def command_lines() -> dict[int, str]:
    """Every process's command line, as `ps` shows it to any user of the host."""
    out = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                out[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return out


def vvv(twin: Twin, playbook: str, base: Path, watch_module: str = "") -> tuple[subprocess.CompletedProcess, list[str]]:
    """ansible-playbook -vvv with the keys as inventory variables only; while `watch_module` runs, the command line
    of every process on the host is read (returned: those of the module's own processes seen)."""
    env = {**twin.env(), **kept_payload_env(base), **NO_CREDENTIALS_ENV, "STORAGEPERF_TWIN_DIR": str(twin.dir),
           "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
           "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS), "ANSIBLE_NOCOLOR": "1"}
    inventory = [a for p in credentials_inventory(twin, twin.dir / "keys.yml") for a in ("-i", str(p))]
    proc = subprocess.Popen([str(VENV_BIN / "ansible-playbook"), str(REPO / "playbooks" / playbook), *inventory, "-vvv"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[str] = []
    leaked: list[str] = []
    secrets = [twin.cloud["alibaba"]["access_key_secret"], twin.cloud["ontap"]["password"]]
    deadline = time.monotonic() + 600
    while watch_module and proc.poll() is None and time.monotonic() < deadline and not seen:
        lines = command_lines()
        seen = [c for c in lines.values() if f"AnsiballZ_{watch_module}" in c and "chmod" not in c]
        leaked += [c for c in lines.values() if any(s in c for s in secrets)]
        time.sleep(0.02)  # a bounded poll of /proc until the module's process shows up, not a wait for time to pass
    output, _ = proc.communicate(timeout=600)
    assert leaked == []
    return subprocess.CompletedProcess(proc.args, proc.returncode, output), seen


def test_no_shipped_inventory_holds_a_credential():
    found = {}
    for path in sorted((REPO / "inventories").rglob("*")):
        if path.suffix in (".yml", ".yaml", ".json", ".ini", "") and path.is_file():
            keys = CREDENTIAL_KEY.findall(path.read_text())
            if keys:
                found[str(path.relative_to(REPO))] = keys
            if path.suffix in (".yml", ".yaml"):
                yaml.safe_load(path.read_text())  # a file the scan could misread would be an inventory error too
    assert found == {}


def test_vvv_enable_parallel_attach_shows_no_secret(twin, tmp_path):
    secret = twin.cloud["alibaba"]["access_key_secret"]
    admin(twin, "alibaba", {"latency": 0.3})  # every cloud call takes a while: the module is seen while it runs
    try:
        run, seen = vvv(twin, "enable_parallel_attach.yml", tmp_path, watch_module="ack_cluster_info")
    finally:
        admin(twin, "alibaba", {"latency": 0})
    assert run.returncode == 0, run.stdout[-3000:]
    assert seen, "the module's process was never seen running"
    assert "EXEC" in run.stdout and "AnsiballZ_ack_parallel_attach" in run.stdout  # -vvv did print its commands
    assert secret not in run.stdout
    assert list((tmp_path / "remote-tmp").rglob("AnsiballZ_ack_parallel_attach.py"))  # payloads were kept
    assert files_holding(tmp_path, secret) == []


def test_vvv_tune_trident_shows_no_secret(twin, tmp_path):
    password = twin.cloud["ontap"]["password"]
    run, _ = vvv(twin, "tune_trident.yml", tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "AnsiballZ_ontap_volume_info" in run.stdout  # the ONTAP check ran, its commands printed
    assert password not in run.stdout
    assert files_holding(tmp_path, password) == []
