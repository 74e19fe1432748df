"""ontap_volume_info with its credentials in the environment (ONTAP_USERNAME / ONTAP_PASSWORD), as an AWX
credential type or tune_trident.yml's task environment gives them: it works against the twin's ONTAP, the
password is in no kept payload file, and without credentials the error names the variables."""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from tests.support.alibaba import NO_CREDENTIALS_ENV, credentials_inventory

TASK = "ONTAP volumes"


def play(path: Path, environment: dict[str, str] | None = None) -> Path:
    task = {"name": TASK, "storageperf.k8s.ontap_volume_info": {
        "hostname": "{{ ontap_hostname }}", "ca_cert": "{{ ontap_ca_cert }}", "svm": "{{ ontap_svm }}"}}
    if environment:
        task["environment"] = environment
    path.write_text(yaml.safe_dump([{"name": "ONTAP check", "hosts": "localhost", "gather_facts": False,
                                     "tasks": [task]}], sort_keys=False))
    return path


def kept_files_env(base: Path) -> dict[str, str]:
    for d in ("home", "local-tmp", "remote-tmp"):
        (base / d).mkdir(parents=True, exist_ok=True)
    return {"HOME": str(base / "home"), "ANSIBLE_LOCAL_TEMP": str(base / "local-tmp"),
            "ANSIBLE_REMOTE_TEMP": str(base / "remote-tmp"), "ANSIBLE_KEEP_REMOTE_FILES": "1",
            "ANSIBLE_PIPELINING": "False"}


def files_holding(base: Path, needle: str) -> list[str]:
    return [str(Path(r) / n) for r, _d, names in os.walk(base) for n in names
            if needle.encode() in (Path(r) / n).read_bytes()]


def test_credentials_from_the_controller_environment_and_the_task_environment(twin, tmp_path):
    ontap = twin.cloud["ontap"]
    base = tmp_path / "controller"
    run = twin.playbook(play(tmp_path / "controller.yml"),
                        env={**kept_files_env(base), "ONTAP_USERNAME": ontap["username"], "ONTAP_PASSWORD": ontap["password"]})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task(TASK)["result"]["api"] == "rest"
    assert list((base / "remote-tmp").rglob("AnsiballZ_ontap_volume_info.py"))  # the payload was kept
    assert files_holding(base, ontap["password"]) == []

    base = tmp_path / "task"
    run = twin.playbook(play(tmp_path / "task.yml", {"ONTAP_USERNAME": "{{ ontap_username }}",
                                                     "ONTAP_PASSWORD": "{{ ontap_password }}"}),
                        env={**kept_files_env(base), **NO_CREDENTIALS_ENV},
                        inventory=credentials_inventory(twin, twin.dir / "keys.yml"))  # variables, as a user may
    assert run.rc == 0, run.stdout + run.stderr
    assert files_holding(base, ontap["password"]) == []


def test_missing_credentials_name_the_variables(twin, tmp_path):
    run = twin.playbook(play(tmp_path / "none.yml"), env={"ONTAP_USERNAME": "", "ONTAP_PASSWORD": ""})
    assert run.rc != 0
    msg = run.task(TASK)["result"]["msg"]
    assert "ONTAP_USERNAME" in msg and "ONTAP_PASSWORD" in msg
