"""ontap_volume_info with its credentials in the environment (ONTAP_USERNAME / ONTAP_PASSWORD), as an AWX
credential type or tune_trident.yml's task environment gives them: it works against the twin's ONTAP, the
password is in no kept payload file, and without credentials the error names the variables."""
from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.alibaba import NO_CREDENTIALS_ENV, credentials_inventory
from tests.support.payload import files_holding, kept_payload_env

TASK = "ONTAP volumes"


def play(path: Path, environment: dict[str, str] | None = None) -> Path:
    task = {"name": TASK, "storageperf.k8s.ontap_volume_info": {
        "hostname": "{{ ontap_hostname }}", "ca_cert": "{{ ontap_ca_cert }}", "svm": "{{ ontap_svm }}"}}
    if environment:
        task["environment"] = environment
    path.write_text(yaml.safe_dump([{"name": "ONTAP check", "hosts": "localhost", "gather_facts": False,
                                     "tasks": [task]}], sort_keys=False))
    return path


def test_credentials_from_the_controller_environment_and_the_task_environment(twin, tmp_path):
    ontap = twin.cloud["ontap"]
    base = tmp_path / "controller"
    run = twin.playbook(play(tmp_path / "controller.yml"),
                        env={**kept_payload_env(base), "ONTAP_USERNAME": ontap["username"], "ONTAP_PASSWORD": ontap["password"]})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task(TASK)["result"]["api"] == "rest"
    assert list((base / "remote-tmp").rglob("AnsiballZ_ontap_volume_info.py"))  # the payload was kept
    assert files_holding(base, ontap["password"]) == []

    base = tmp_path / "task"
    run = twin.playbook(play(tmp_path / "task.yml", {"ONTAP_USERNAME": "{{ ontap_username }}",
                                                     "ONTAP_PASSWORD": "{{ ontap_password }}"}),
                        env={**kept_payload_env(base), **NO_CREDENTIALS_ENV},
                        inventory=credentials_inventory(twin, twin.dir / "keys.yml"))  # variables, as a user may
    assert run.rc == 0, run.stdout + run.stderr
    assert files_holding(base, ontap["password"]) == []


def test_missing_credentials_name_the_variables(twin, tmp_path):
    run = twin.playbook(play(tmp_path / "none.yml"), env={"ONTAP_USERNAME": "", "ONTAP_PASSWORD": ""})
    assert run.rc != 0
    msg = run.task(TASK)["result"]["msg"]
    assert "ONTAP_USERNAME" in msg and "ONTAP_PASSWORD" in msg
