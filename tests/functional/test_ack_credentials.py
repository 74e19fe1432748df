"""Where the AccessKey lives during a run of playbooks/enable_parallel_attach.yml.

Ansible writes a module's arguments, no_log ones included, into the AnsiballZ payload file; a run stopped by
SIGTERM leaves that file behind (here: kept on purpose with ANSIBLE_KEEP_REMOTE_FILES=1, the worst case). The
role therefore hands keys given as variables to its modules through their environment, and with none the
modules find them through the Alibaba Cloud default credential chain of the controller. Each source of that
chain is driven end to end against the twin's signed ACK/ECS endpoints: RRSA through the twin's STS
(AssumeRoleWithOIDC), the ECS metadata service as a small loopback server handing out the twin's STS keys in the
real response shape.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.alibaba import (NO_CREDENTIALS_ENV, admin, cloud_calls, credentials_inventory, run_module,
                                   run_role_playbook)
from tests.support.payload import files_holding, kept_payload_env
from tests.support.twin import CALLBACKS, COLLECTIONS, REPO, VENV_BIN, Twin

PLAYBOOK = REPO / "playbooks" / "enable_parallel_attach.yml"
MODULE_TASK = "Set parallel disk attach to"
PAYLOAD = "AnsiballZ_ack_parallel_attach.py"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("ack-creds") / "twin", nodes=3, time_scale=0.01) as t:
        yield t


def wait_for_file(base: Path, name: str, proc: subprocess.Popen, deadline: float) -> Path:
    while time.monotonic() < deadline:
        found = next(base.rglob(name), None)
        if found is not None:
            return found
        if proc.poll() is not None:
            raise AssertionError(f"ansible-playbook ended ({proc.returncode}) before {name} was written")
        time.sleep(0.05)  # a bounded poll on the file itself, not a wait for time to pass
    raise AssertionError(f"{name} did not appear")


def test_sigterm_during_enable_leaves_no_file_holding_the_secret(twin, tmp_path):
    secret = twin.cloud["alibaba"]["access_key_secret"]
    cluster_id = twin.cloud["alibaba"]["cluster_id"]
    admin(twin, "alibaba", {"latency": 0.5})  # every cloud call takes half a second: the module is mid-run
    try:
        env = {**twin.env(), **kept_payload_env(tmp_path), "STORAGEPERF_TWIN_DIR": str(twin.dir),
               "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
               "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS), "ANSIBLE_CALLBACKS_ENABLED": "record_results",
               "RECORD_RESULTS_FILE": str(tmp_path / "results.jsonl"), "ANSIBLE_NOCOLOR": "1"}
        env.update(NO_CREDENTIALS_ENV)  # the secret comes from the inventory variables only
        inventory = [arg for path in credentials_inventory(twin, twin.dir / "keys.yml") for arg in ("-i", str(path))]
        proc = subprocess.Popen([str(VENV_BIN / "ansible-playbook"), str(PLAYBOOK), *inventory],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            payload = wait_for_file(tmp_path, PAYLOAD, proc, time.monotonic() + 600)
            os.killpg(proc.pid, signal.SIGTERM)
            output, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    finally:
        admin(twin, "alibaba", {"latency": 0})
    assert proc.returncode != 0  # it was stopped, not finished
    # the payload was kept and does carry the module's arguments: the search below reads what was left
    assert payload.exists() and cluster_id in payload.read_text()
    assert files_holding(tmp_path, secret) == []
    assert secret not in output


def test_module_arguments_are_in_the_payload_the_environment_is_not(twin, tmp_path):
    """Why the role moved the keys: the same module run both ways, payload files kept."""
    secret = twin.cloud["alibaba"]["access_key_secret"]
    as_args = tmp_path / "args"
    keys = {"alibaba_access_key_id": twin.cloud["alibaba"]["access_key_id"], "alibaba_access_key_secret": secret}
    run = run_module(twin, "ack_cluster_info", {}, extra_vars=keys, env=kept_payload_env(as_args))  # as module arguments (deprecated)
    assert run.rc == 0, run.stdout
    assert files_holding(as_args / "remote-tmp", secret)  # the AnsiballZ file holds the no_log secret

    as_env = tmp_path / "env"
    run = run_role_playbook(twin, check=True, env={**kept_payload_env(as_env), **NO_CREDENTIALS_ENV},
                            inventory=credentials_inventory(twin, tmp_path / "keys.yml"))
    assert run.rc == 0, run.stdout + run.stderr
    assert next((as_env / "remote-tmp").rglob(PAYLOAD), None) is not None
    assert files_holding(as_env, secret) == []


def chain_run(twin: Twin, env: dict[str, str]):
    """The role with no key in the inventory: the module must find one in the controller's credential chain."""
    base = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "",
            "ALIBABA_CLOUD_SECURITY_TOKEN": "", "HOME": str(twin.dir / "home")}
    return run_role_playbook(twin, check=True, extra_vars={"alibaba_access_key_id": "", "alibaba_access_key_secret": ""},
                             env={**base, **env})


def test_keys_from_the_controller_environment(twin):
    alibaba = twin.cloud["alibaba"]
    run = chain_run(twin, {"ALIBABA_CLOUD_ACCESS_KEY_ID": alibaba["access_key_id"],
                           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": alibaba["access_key_secret"]})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task(MODULE_TASK)["status"] == "ok"


def test_sts_token_from_the_controller_environment(twin):
    sts = twin.cloud["alibaba"]["sts"]
    admin(twin, "alibaba", {"reset_calls": True})
    run = chain_run(twin, {"ALIBABA_CLOUD_ACCESS_KEY_ID": sts["access_key_id"],
                           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": sts["access_key_secret"]})
    assert run.rc != 0 and "MissingSecurityToken" in run.stdout  # the twin insists on the token of an STS key
    run = chain_run(twin, {"ALIBABA_CLOUD_ACCESS_KEY_ID": sts["access_key_id"],
                           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": sts["access_key_secret"],
                           "ALIBABA_CLOUD_SECURITY_TOKEN": sts["security_token"]})
    assert run.rc == 0, run.stdout + run.stderr
    assert cloud_calls(twin)["rejected"] == {"MissingSecurityToken": 1}


def test_keys_from_an_aliyun_cli_profile(twin, tmp_path):
    sts = twin.cloud["alibaba"]["sts"]
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(json.dumps({"current": "bench", "profiles": [
        {"name": "bench", "mode": "StsToken", "access_key_id": sts["access_key_id"],
         "access_key_secret": sts["access_key_secret"], "sts_token": sts["security_token"]}]}))
    run = chain_run(twin, {"HOME": str(tmp_path)})
    assert run.rc == 0, run.stdout + run.stderr


class CredentialServer(BaseHTTPRequestHandler):
    """The ECS metadata service (IMDSv2) on loopback, answering with `creds` in the real shape."""

    creds: dict = {}
    requests: list = []

    def log_message(self, *args):
        pass

    def _json(self, body):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        self.requests.append(("PUT", self.path))
        self._json(b"imds-token")

    def do_GET(self):
        self.requests.append(("GET", self.path))
        self._json({"Code": "Success", "AccessKeyId": self.creds["access_key_id"],
                    "AccessKeySecret": self.creds["access_key_secret"], "SecurityToken": self.creds["security_token"],
                    "Expiration": "2030-01-01T00:00:00Z", "LastUpdated": "2029-12-31T23:00:00Z"})


@pytest.fixture
def credential_server(twin):
    CredentialServer.creds = twin.cloud["alibaba"]["sts"]
    CredentialServer.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), CredentialServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_keys_from_an_ecs_ram_role(twin, credential_server):
    run = chain_run(twin, {"ALIBABA_CLOUD_ECS_METADATA": "bench-role",
                           "ALIBABA_CLOUD_ECS_METADATA_ENDPOINT": credential_server})
    assert run.rc == 0, run.stdout + run.stderr
    assert ("GET", "/latest/meta-data/ram/security-credentials/bench-role") in CredentialServer.requests


def test_keys_from_rrsa_oidc_through_the_twin_sts(twin):
    """RRSA as ACK sets it up in a pod; the twin's STS swaps the token for keys its ACK/ECS gateway accepts."""
    alibaba = twin.cloud["alibaba"]
    rrsa = {"ALIBABA_CLOUD_ROLE_ARN": alibaba["rrsa"]["role_arn"],
            "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": alibaba["rrsa"]["oidc_provider_arn"],
            "ALIBABA_CLOUD_OIDC_TOKEN_FILE": alibaba["rrsa"]["oidc_token_file"],
            "ALIBABA_CLOUD_STS_ENDPOINT": alibaba["sts_endpoint"]}
    admin(twin, "alibaba", {"reset_calls": True})
    run = chain_run(twin, rrsa)
    assert run.rc == 0, run.stdout + run.stderr
    calls = cloud_calls(twin)
    assert calls["ok"].get("sts:AssumeRoleWithOIDC", 0) >= 1
    assert calls["ok"].get("cs:DescribeClusterDetail", 0) >= 1  # signed with the keys STS handed out


def test_a_refused_oidc_token_is_a_clear_error_without_the_token(twin, tmp_path):
    alibaba = twin.cloud["alibaba"]
    forged = tmp_path / "token"
    forged.write_text("eyJhbGciOiJIUzI1NiJ9.forged-service-account-token.c2ln")
    admin(twin, "alibaba", {"reset_calls": True})
    run = chain_run(twin, {"ALIBABA_CLOUD_ROLE_ARN": alibaba["rrsa"]["role_arn"],
                           "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": alibaba["rrsa"]["oidc_provider_arn"],
                           "ALIBABA_CLOUD_OIDC_TOKEN_FILE": str(forged),
                           "ALIBABA_CLOUD_STS_ENDPOINT": alibaba["sts_endpoint"]})
    assert run.rc != 0
    msg = run.task("Read the cluster")["result"]["msg"]
    assert "AuthenticationFail.OIDCToken.Invalid" in msg and "ALIBABA_CLOUD_ROLE_ARN" in msg
    assert "forged-service-account-token" not in run.stdout + run.stderr
    calls = cloud_calls(twin)
    assert calls["rejected"] == {"AuthenticationFail.OIDCToken.Invalid": 1}
    assert not any(a.startswith(("cs:", "ecs:")) for a in calls["calls"])  # nothing reached ACK or ECS
