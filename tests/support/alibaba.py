"""Drive the twin's Alibaba Cloud side from tests: its admin door (call counts, throttling, faults, seeds) and
small playbooks that run the ack_* modules against the twin inventory, with the twin's keys in the environment
(Twin.env(), from DIR/env) unless a test gives them as variables.
"""
from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.support.twin import REPO, PlaybookRun, Twin

# The environment of a controller without credentials: what the twin's DIR/env put there is taken away again.
NO_CREDENTIALS_ENV = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "",
                      "ALIBABA_CLOUD_SECURITY_TOKEN": "", "ONTAP_USERNAME": "", "ONTAP_PASSWORD": ""}

MODULE_PLAYBOOK = """
- name: One storageperf.k8s module against the twin's ACK cluster
  hosts: localhost
  gather_facts: false
  module_defaults:
    group/storageperf.k8s.alibaba:
      cluster_id: "{{ ack_cluster_id }}"
      cs_endpoint: "{{ ack_cs_endpoint }}"
      ecs_endpoint: "{{ ack_ecs_endpoint }}"
      # module options only when a test gives them (-e alibaba_access_key_id=...): the deprecated way
      access_key_id: "{{ alibaba_access_key_id | default(omit) }}"
      access_key_secret: "{{ alibaba_access_key_secret | default(omit) }}"
  tasks:
    - name: module under test
      storageperf.k8s.MODULE: ARGS
"""


def admin(twin: Twin, verb: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """POST /_twin/<verb> with the twin's token (the twin's own control door, not a cloud API)."""
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(f"{twin.server}/_twin/{verb}", data=json.dumps(body or {}).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {twin.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.loads(r.read())


def cloud_calls(twin: Twin) -> dict[str, Any]:
    """Per-action call counts the twin's gateway saw (calls, ok, throttled, failed, rejected, writes)."""
    return admin(twin, "alibaba", {})


def cloud_state(twin: Twin) -> dict[str, Any]:
    """The twin's CloudState: addons with config, node pools, instances with tags and attach limits."""
    return admin(twin, "cloud", {})


def run_module(twin: Twin, module: str, args: dict[str, Any], *, check: bool = False, diff: bool = False,
               extra_vars: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> PlaybookRun:
    """Run storageperf.k8s.<module> with args; credentials and endpoints come from inventories/twin."""
    path = twin.dir / f"{module}.yml"
    # JSON is YAML: the arguments go into the task as written (module names and args cannot be templated)
    path.write_text(MODULE_PLAYBOOK.replace("MODULE", module).replace("ARGS", json.dumps(args)))
    return twin.playbook(path, extra_vars=extra_vars, check=check,
                         diff=diff, env={"STORAGEPERF_TWIN_DIR": str(twin.dir), **(env or {})})


def run_role_playbook(twin: Twin, *, extra_vars: dict[str, Any] | None = None, check: bool = False,
                      diff: bool = False, env: dict[str, str] | None = None,
                      inventory: list[Path] | None = None) -> PlaybookRun:
    return twin.playbook(REPO / "playbooks" / "enable_parallel_attach.yml", extra_vars=extra_vars, check=check,
                         diff=diff, env={"STORAGEPERF_TWIN_DIR": str(twin.dir), **(env or {})}, inventory=inventory)


def credentials_inventory(twin: Twin, path: Path) -> list[Path]:
    """inventories/twin and beside it a file holding the twin's keys and ONTAP user as inventory variables: what a
    user's inventory may do (no shipped one does). Run it with NO_CREDENTIALS_ENV, so that these variables, through
    the roles' task environment, are the only way the keys reach the modules."""
    alibaba, ontap = twin.cloud["alibaba"], twin.cloud["ontap"]
    path.write_text(yaml.safe_dump({"all": {"vars": {
        "alibaba_access_key_id": alibaba["access_key_id"], "alibaba_access_key_secret": alibaba["access_key_secret"],
        "ontap_username": ontap["username"], "ontap_password": ontap["password"]}}}))
    return [REPO / "inventories" / "twin", path]
