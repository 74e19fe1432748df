"""Drive the twin's Alibaba Cloud side from tests: its admin door (call counts, throttling, faults, seeds) and
small playbooks that run the ack_* modules with the twin inventory's credentials.
"""
from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.twin import PlaybookRun, Twin

MODULE_PLAYBOOK = """
- name: One storageperf.k8s module against the twin's ACK cluster
  hosts: localhost
  gather_facts: false
  module_defaults:
    group/storageperf.k8s.alibaba:
      cluster_id: "{{ ack_cluster_id }}"
      cs_endpoint: "{{ ack_cs_endpoint }}"
      ecs_endpoint: "{{ ack_ecs_endpoint }}"
      access_key_id: "{{ alibaba_access_key_id }}"
      access_key_secret: "{{ alibaba_access_key_secret }}"
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
                      diff: bool = False, env: dict[str, str] | None = None) -> PlaybookRun:
    return twin.playbook(Path(__file__).resolve().parents[2] / "playbooks" / "enable_parallel_attach.yml",
                         extra_vars=extra_vars, check=check, diff=diff,
                         env={"STORAGEPERF_TWIN_DIR": str(twin.dir), **(env or {})})
