"""The Alibaba Cloud default credential chain of module_utils/ack/credentials.py: every source on its own, and the order in
which alibabacloud-credentials' DefaultCredentialsProvider tries them (environment, RRSA OIDC, CLI profile, ECS RAM
role). The metadata service and STS are small HTTP servers on loopback that answer with the real shapes."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import credentials as A

ROLE = "storageperf-ecs-role"
ECS_CREDS = {"AccessKeyId": "STS.ecs0001", "AccessKeySecret": "ecs-secret", "SecurityToken": "ecs-token",
             "Expiration": "2030-01-01T00:00:00Z", "LastUpdated": "2029-12-31T23:00:00Z", "Code": "Success"}
OIDC_CREDS = {"AccessKeyId": "STS.oidc0001", "AccessKeySecret": "oidc-secret", "SecurityToken": "oidc-token",
              "Expiration": "2030-01-01T00:00:00Z"}
ROLE_ARN = "acs:ram::1234567890123456:role/awx-bench"
PROVIDER_ARN = "acs:ram::1234567890123456:oidc-provider/ack-rrsa-c1234"


class Recorder(BaseHTTPRequestHandler):
    """ECS metadata (IMDSv2 token + role credentials) and STS AssumeRoleWithOIDC, recording what arrived."""

    seen: list = []
    imdsv2 = True
    sts_status = 200

    def log_message(self, *args):
        pass

    def _send(self, status, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        self.seen.append(("PUT", self.path, dict(self.headers)))
        if self.path == "/latest/api/token" and self.imdsv2:
            return self._send(200, b"imds-session-token", "text/plain")
        return self._send(404, b"not found", "text/plain")

    def do_GET(self):
        self.seen.append(("GET", self.path, dict(self.headers)))
        if self.path == "/latest/meta-data/ram/security-credentials/" + ROLE:
            if self.imdsv2 and self.headers.get("X-aliyun-ecs-metadata-token") != "imds-session-token":
                return self._send(401, b"unauthorized", "text/plain")
            return self._send(200, ECS_CREDS)
        return self._send(404, b"not found", "text/plain")

    def do_POST(self):
        form = parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
        self.seen.append(("POST", self.path, {k: v[0] for k, v in form.items()}))
        if form.get("Action") != ["AssumeRoleWithOIDC"] or self.sts_status != 200:
            return self._send(self.sts_status if self.sts_status != 200 else 400,
                              {"RequestId": "r-1", "Code": "AuthenticationFail.OIDCToken.Invalid",
                               "Message": "OIDC token is invalid"})
        return self._send(200, {"RequestId": "r-2", "Credentials": OIDC_CREDS,
                                "AssumedRoleUser": {"Arn": ROLE_ARN + "/s", "AssumedRoleId": "3:s"},
                                "OIDCTokenInfo": {"Subject": "system:serviceaccount:awx:awx", "Issuer": "x"}})


@pytest.fixture
def server():
    Recorder.seen = []
    Recorder.imdsv2 = True
    Recorder.sts_status = 200
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def sources(tmp_path, server):
    """An environment in which every source of the chain is available."""
    token_file = tmp_path / "oidc-token"
    token_file.write_text("eyJhbGciOiJSUzI1NiJ9.the-service-account-token.sig\n")
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(json.dumps({"current": "main", "profiles": [
        {"name": "main", "mode": "AK", "access_key_id": "LTAIprofile01", "access_key_secret": "profile-secret"}]}))
    return {
        "HOME": str(tmp_path),
        "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIenv000001", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "env-secret",
        "ALIBABA_CLOUD_ROLE_ARN": ROLE_ARN, "ALIBABA_CLOUD_OIDC_PROVIDER_ARN": PROVIDER_ARN,
        "ALIBABA_CLOUD_OIDC_TOKEN_FILE": str(token_file), "ALIBABA_CLOUD_STS_ENDPOINT": server,
        "ALIBABA_CLOUD_ECS_METADATA": ROLE, "ALIBABA_CLOUD_ECS_METADATA_ENDPOINT": server,
    }


def without(env, *names):
    return {k: v for k, v in env.items() if k not in names}


ENV_KEYS = ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET")
OIDC_KEYS = ("ALIBABA_CLOUD_ROLE_ARN",)


def test_the_chain_order_is_the_sdks(sources):
    assert A.CHAIN == ("options", "environment", "oidc_role_arn", "cli_profile", "ecs_ram_role")
    env = dict(sources)
    assert A.resolve_credentials({"access_key_id": "LTAIopt", "access_key_secret": "o"}, env)[0] == "options"
    assert A.resolve_credentials({}, env) == ("environment", ("LTAIenv000001", "env-secret", None))
    env = without(env, *ENV_KEYS)
    assert A.resolve_credentials({}, env) == ("oidc_role_arn", ("STS.oidc0001", "oidc-secret", "oidc-token"))
    env = without(env, *OIDC_KEYS)
    assert A.resolve_credentials({}, env) == ("cli_profile", ("LTAIprofile01", "profile-secret", None))
    env["ALIBABA_CLOUD_CLI_PROFILE_DISABLED"] = "true"
    assert A.resolve_credentials({}, env) == ("ecs_ram_role", ("STS.ecs0001", "ecs-secret", "ecs-token"))
    env["ALIBABA_CLOUD_ECS_METADATA_DISABLED"] = "true"
    with pytest.raises(A.AliyunError) as e:
        A.resolve_credentials({}, env)
    assert e.value.code == "MissingCredentials" and "ALIBABA_CLOUD_ROLE_ARN" in e.value.msg


def test_sts_token_from_the_environment_goes_with_its_key(sources):
    env = dict(sources, ALIBABA_CLOUD_ACCESS_KEY_ID="STS.env0001", ALIBABA_CLOUD_SECURITY_TOKEN="env-token")
    assert A.resolve_credentials({}, env) == ("environment", ("STS.env0001", "env-secret", "env-token"))


def test_oidc_sends_the_token_in_the_body_and_the_real_parameters(sources, server):
    env = without(sources, *ENV_KEYS)
    env["ALIBABA_CLOUD_ROLE_SESSION_NAME"] = "awx-job-42"
    assert A.oidc_credentials(env) == ("STS.oidc0001", "oidc-secret", "oidc-token")
    method, path, form = Recorder.seen[-1]
    assert (method, path) == ("POST", "/")
    assert form["Action"] == "AssumeRoleWithOIDC" and form["Version"] == "2015-04-01"
    assert form["RoleArn"] == ROLE_ARN and form["OIDCProviderArn"] == PROVIDER_ARN
    assert form["OIDCToken"] == "eyJhbGciOiJSUzI1NiJ9.the-service-account-token.sig"
    assert form["RoleSessionName"] == "awx-job-42" and int(form["DurationSeconds"]) >= 900


def test_oidc_refused_names_the_variables_without_the_token(sources):
    Recorder.sts_status = 403
    env = without(sources, *ENV_KEYS)
    with pytest.raises(A.AliyunError) as e:
        A.resolve_credentials({}, env)
    assert e.value.code == "AuthenticationFail.OIDCToken.Invalid"
    assert "ALIBABA_CLOUD_ROLE_ARN" in e.value.msg and "the-service-account-token" not in e.value.msg


def test_oidc_needs_all_three_variables(sources):
    env = without(sources, "ALIBABA_CLOUD_OIDC_TOKEN_FILE")
    assert A.oidc_credentials(env) is None


def test_sts_endpoint_defaults_follow_the_sdk():
    assert A.sts_endpoint({}) == "sts.aliyuncs.com"
    assert A.sts_endpoint({"ALIBABA_CLOUD_STS_REGION": "cn-beijing"}) == "sts.cn-beijing.aliyuncs.com"
    assert A.sts_endpoint({"ALIBABA_CLOUD_STS_REGION": "cn-beijing",
                           "ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED": "true"}) == "sts-vpc.cn-beijing.aliyuncs.com"


def test_ecs_ram_role_uses_an_imdsv2_session_token(sources):
    assert A.ecs_ram_role_credentials(sources) == ("STS.ecs0001", "ecs-secret", "ecs-token")
    put, get = Recorder.seen[-2:]
    assert put[:2] == ("PUT", "/latest/api/token") and "x-aliyun-ecs-metadata-token-ttl-seconds" in {k.lower() for k in put[2]}
    assert get[:2] == ("GET", "/latest/meta-data/ram/security-credentials/" + ROLE)
    assert {k.lower(): v for k, v in get[2].items()}["x-aliyun-ecs-metadata-token"] == "imds-session-token"


def test_ecs_ram_role_falls_back_to_imdsv1_unless_forbidden(sources):
    Recorder.imdsv2 = False
    assert A.ecs_ram_role_credentials(sources)[0] == "STS.ecs0001"
    with pytest.raises(A.AliyunError) as e:
        A.ecs_ram_role_credentials(dict(sources, ALIBABA_CLOUD_IMDSV1_DISABLED="true"))
    assert "IMDSv1" in e.value.msg


def test_ecs_ram_role_unknown_role_is_a_clear_error(sources):
    with pytest.raises(A.AliyunError) as e:
        A.ecs_ram_role_credentials(dict(sources, ALIBABA_CLOUD_ECS_METADATA="no-such-role"))
    assert "no-such-role" in e.value.msg and "ALIBABA_CLOUD_ECS_METADATA" in e.value.msg


def test_ecs_ram_role_is_not_probed_without_a_role_name(sources):
    assert A.ecs_ram_role_credentials(without(sources, "ALIBABA_CLOUD_ECS_METADATA")) is None
    assert Recorder.seen == []


def test_cli_profiles_in_ecs_ram_role_and_oidc_modes(sources):
    home = sources["HOME"]
    (__import__("pathlib").Path(home) / ".aliyun" / "config.json").write_text(json.dumps({"current": "ecs", "profiles": [
        {"name": "ecs", "mode": "EcsRamRole", "ram_role_name": ROLE},
        {"name": "rrsa", "mode": "OIDC", "ram_role_arn": ROLE_ARN, "oidc_provider_arn": PROVIDER_ARN,
         "oidc_token_file": sources["ALIBABA_CLOUD_OIDC_TOKEN_FILE"]}]}))
    env = without(sources, *ENV_KEYS, *OIDC_KEYS, "ALIBABA_CLOUD_ECS_METADATA")
    assert A.resolve_credentials({}, env) == ("cli_profile", ("STS.ecs0001", "ecs-secret", "ecs-token"))
    env["ALIBABA_CLOUD_PROFILE"] = "rrsa"
    assert A.resolve_credentials({}, env) == ("cli_profile", ("STS.oidc0001", "oidc-secret", "oidc-token"))
