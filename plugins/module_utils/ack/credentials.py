# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the collection's Alibaba Cloud credentials come from: the Alibaba Cloud default credential chain.

Module options, then the environment, RRSA (STS AssumeRoleWithOIDC), the aliyun CLI profile and the ECS instance
RAM role, in the order of alibabacloud-credentials' DefaultCredentialsProvider (see CHAIN). Only reads: the signed
client (aliyun.py) takes the (access_key_id, access_key_secret, security_token) this returns.
"""
from __future__ import annotations


import datetime
import json
import os
import time
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from typing import Any, Mapping, Optional, Tuple

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.errors import AliyunError

ENV_ACCESS_KEY_ID = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ENV_ACCESS_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
ENV_SECURITY_TOKEN = "ALIBABA_CLOUD_SECURITY_TOKEN"
ENV_PROFILE = "ALIBABA_CLOUD_PROFILE"
ENV_CLI_PROFILE_DISABLED = "ALIBABA_CLOUD_CLI_PROFILE_DISABLED"
# RRSA (RAM Roles for Service Accounts): ACK mounts the service account's OIDC token and sets these three.
ENV_ROLE_ARN = "ALIBABA_CLOUD_ROLE_ARN"
ENV_OIDC_PROVIDER_ARN = "ALIBABA_CLOUD_OIDC_PROVIDER_ARN"
ENV_OIDC_TOKEN_FILE = "ALIBABA_CLOUD_OIDC_TOKEN_FILE"
ENV_ROLE_SESSION_NAME = "ALIBABA_CLOUD_ROLE_SESSION_NAME"
ENV_STS_REGION = "ALIBABA_CLOUD_STS_REGION"
ENV_VPC_ENDPOINT = "ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED"
# Not read by the SDKs (they take the STS endpoint as a parameter): this collection's way to point at a private
# STS endpoint or a test double.
ENV_STS_ENDPOINT = "ALIBABA_CLOUD_STS_ENDPOINT"
# ECS instance RAM role, from the instance metadata service.
ENV_ECS_METADATA = "ALIBABA_CLOUD_ECS_METADATA"  # the role name
ENV_ECS_METADATA_DISABLED = "ALIBABA_CLOUD_ECS_METADATA_DISABLED"
ENV_IMDSV1_DISABLED = "ALIBABA_CLOUD_IMDSV1_DISABLED"
ENV_ECS_METADATA_ENDPOINT = "ALIBABA_CLOUD_ECS_METADATA_ENDPOINT"  # this collection's override, as ENV_STS_ENDPOINT
ECS_METADATA_ENDPOINT = "http://100.100.100.200"
ECS_METADATA_CREDENTIALS_PATH = "/latest/meta-data/ram/security-credentials/"
ECS_METADATA_TOKEN_PATH = "/latest/api/token"
ECS_METADATA_TIMEOUT = 2  # the service answers on the instance within milliseconds; anything slower is not it
STS_VERSION = "2015-04-01"
STS_DURATION_SECONDS = 3600

# (access_key_id, access_key_secret, security_token or None)
Credentials = Tuple[str, str, Optional[str]]


def split_endpoint(endpoint: object) -> tuple[str, str]:
    """"http://127.0.0.1:8080" -> ("127.0.0.1:8080", "http"); a bare host means HTTPS."""
    text = str(endpoint).strip().rstrip("/")
    for scheme in ("https", "http"):
        if text.lower().startswith(scheme + "://"):
            return text[len(scheme) + 3:], scheme
    return text, "https"


def cli_profile_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The aliyun CLI's ~/.aliyun/config.json, or None when there is no home to look in."""
    if environ is None:
        return os.path.join(os.path.expanduser("~"), ".aliyun", "config.json")
    home = environ.get("HOME")
    return os.path.join(home, ".aliyun", "config.json") if home else None


def cli_profile_credentials(environ: Mapping[str, str] | None = None) -> Credentials | None:
    """(access_key_id, access_key_secret, security_token) of the aliyun CLI profile, or None without a config file.

    As the Alibaba Cloud default credential chain reads it: the profile named by ALIBABA_CLOUD_PROFILE, else the
    file's `current`; ALIBABA_CLOUD_CLI_PROFILE_DISABLED=true skips the file. Modes AK, StsToken, EcsRamRole and
    OIDC are taken; the ones that need a signed STS call with another key (RamRoleArn, ChainableRamRoleArn) or a
    browser (CloudSSO, OAuth) are refused by name.
    """
    env = os.environ if environ is None else environ
    path = cli_profile_path(environ)
    if str(env.get(ENV_CLI_PROFILE_DISABLED, "")).lower() == "true" or not path or not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise AliyunError("cannot read the aliyun CLI profiles in %s: %s" % (path, e), code="InvalidProfile") from None
    name = env.get(ENV_PROFILE) or (config.get("current") if isinstance(config, dict) else None)
    profiles = config.get("profiles") if isinstance(config, dict) else None
    profile = next((p for p in profiles or [] if isinstance(p, dict) and p.get("name") == name), None)
    if profile is None:
        if not env.get(ENV_PROFILE):
            return None  # a config file without a usable current profile: as if there were none
        raise AliyunError("%s=%s names no profile in %s" % (ENV_PROFILE, name, path), code="InvalidProfile")
    mode = profile.get("mode") or "AK"
    if mode == "EcsRamRole" and profile.get("ram_role_name"):
        return ecs_ram_role_credentials(env, role_name=profile["ram_role_name"])
    if mode == "OIDC":
        return oidc_credentials(env, role_arn=profile.get("ram_role_arn"),
                                provider_arn=profile.get("oidc_provider_arn"),
                                token_file=profile.get("oidc_token_file"))
    if mode not in ("AK", "StsToken"):
        raise AliyunError("the aliyun CLI profile %r in %s uses mode %s, which this collection cannot use: choose an "
                          "AK or StsToken profile with %s, or set %s and %s"
                          % (name, path, mode, ENV_PROFILE, ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET),
                          code="InvalidProfile")
    key_id, secret = profile.get("access_key_id"), profile.get("access_key_secret")
    if not key_id or not secret:
        raise AliyunError("the aliyun CLI profile %r in %s has no access_key_id/access_key_secret" % (name, path),
                          code="InvalidProfile")
    return key_id, secret, (profile.get("sts_token") or None) if mode == "StsToken" else None


def _true(value: object) -> bool:
    return str(value or "").strip().lower() == "true"


def _url(endpoint: str, path: str = "") -> str:
    """A full URL from an endpoint that may lack its scheme (a bare host means HTTPS, as for the API endpoints)."""
    host, scheme = split_endpoint(endpoint)
    return "%s://%s%s" % (scheme, host, path)


def _http(url: str, what: str, method: str = "GET", data: str | None = None, headers: dict[str, str] | None = None,
          timeout: float = 10) -> tuple[int, str]:
    """(status, body text) of one plain HTTP call; connection errors become an AliyunError naming `what`."""
    # imported here: ansible.module_utils.urls costs a module run 46 ms (cryptography, email), and only the chain's
    # RRSA, ECS RAM role and STS steps call out; keys from the environment never do (docs/performance.md)
    from ansible.module_utils.urls import open_url

    try:
        resp = open_url(url, method=method, data=data, headers=headers or {}, timeout=timeout,
                        follow_redirects="none", use_proxy=False)
        return resp.getcode(), resp.read().decode("utf-8", "replace")
    except HTTPError as e:
        body = e.read().decode("utf-8", "replace") if hasattr(e, "read") else ""
        return e.code, body
    except (URLError, OSError, ValueError) as e:
        raise AliyunError("%s: cannot reach %s: %s" % (what, url.split("?")[0], getattr(e, "reason", e)),
                          code="CredentialsUnreachable") from None


def _iso_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sts_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """Where AssumeRoleWithOIDC goes: ALIBABA_CLOUD_STS_ENDPOINT, else sts[-vpc].<ALIBABA_CLOUD_STS_REGION>
    .aliyuncs.com, else the central sts.aliyuncs.com - the SDKs' defaults."""
    env = os.environ if environ is None else environ
    if env.get(ENV_STS_ENDPOINT):
        return env[ENV_STS_ENDPOINT]
    prefix = "sts-vpc" if _true(env.get(ENV_VPC_ENDPOINT)) else "sts"
    region = env.get(ENV_STS_REGION)
    return "%s.%s.aliyuncs.com" % (prefix, region) if region else "sts.aliyuncs.com"


def oidc_credentials(environ: Mapping[str, str] | None = None, role_arn: str | None = None, provider_arn: str | None = None,
                     token_file: str | None = None) -> Credentials | None:
    """RRSA: exchange the pod's OIDC token for STS credentials of a RAM role (STS AssumeRoleWithOIDC).

    Returns None unless the role ARN, the OIDC provider ARN and the token file are all set (the SDKs' condition for
    putting this provider in the chain). The call is anonymous: the OIDC token is the proof, sent in the form
    body so that it never sits in a URL.
    """
    env = os.environ if environ is None else environ
    role_arn = role_arn or env.get(ENV_ROLE_ARN)
    provider_arn = provider_arn or env.get(ENV_OIDC_PROVIDER_ARN)
    token_file = token_file or env.get(ENV_OIDC_TOKEN_FILE)
    if not (role_arn and provider_arn and token_file):
        return None
    try:
        with open(token_file) as f:
            oidc_token = f.read().strip()
    except OSError as e:
        raise AliyunError("cannot read the OIDC token file %s=%s: %s" % (ENV_OIDC_TOKEN_FILE, token_file, e.strerror),
                          code="InvalidOIDCToken") from None
    if not oidc_token:
        raise AliyunError("the OIDC token file %s=%s is empty" % (ENV_OIDC_TOKEN_FILE, token_file),
                          code="InvalidOIDCToken")
    session = env.get(ENV_ROLE_SESSION_NAME) or "storageperf-k8s-%d" % int(time.time())
    form = urlencode({"Action": "AssumeRoleWithOIDC", "Format": "JSON", "Version": STS_VERSION,
                      "DurationSeconds": str(STS_DURATION_SECONDS), "RoleArn": role_arn,
                      "OIDCProviderArn": provider_arn, "OIDCToken": oidc_token, "RoleSessionName": session,
                      "Timestamp": _iso_now()})
    endpoint = sts_endpoint(env)
    status, text = _http(_url(endpoint, "/"), "STS AssumeRoleWithOIDC", method="POST", data=form,
                         headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"})
    try:
        body = json.loads(text)
    except ValueError:
        body = {}
    creds = body.get("Credentials") if isinstance(body, dict) else None
    if status != 200 or not isinstance(creds, dict) or not all(
            creds.get(k) for k in ("AccessKeyId", "AccessKeySecret", "SecurityToken")):
        code = body.get("Code") if isinstance(body, dict) else None
        message = (body.get("Message") if isinstance(body, dict) else None) or "no Credentials in the answer"
        raise AliyunError("STS AssumeRoleWithOIDC at %s for %s=%s failed (%s %s): %s - check %s, %s and that the "
                          "role trusts the cluster's OIDC provider"
                          % (endpoint, ENV_ROLE_ARN, role_arn, status, code or "", message.replace(oidc_token, "****"),
                             ENV_OIDC_PROVIDER_ARN, ENV_OIDC_TOKEN_FILE), code=code or "AssumeRoleWithOIDCFailed",
                          status=status) from None
    return creds["AccessKeyId"], creds["AccessKeySecret"], creds["SecurityToken"]


def ecs_ram_role_credentials(environ: Mapping[str, str] | None = None, role_name: str | None = None) -> Credentials | None:
    """STS credentials of the ECS instance's RAM role, from the instance metadata service.

    Asked only when the role is named (ALIBABA_CLOUD_ECS_METADATA) and ALIBABA_CLOUD_ECS_METADATA_DISABLED is not
    true: off ECS an unnamed probe would wait on 100.100.100.200 in every module run. IMDSv2 first (a session
    token from PUT /latest/api/token); without it IMDSv1, unless ALIBABA_CLOUD_IMDSV1_DISABLED=true.
    """
    env = os.environ if environ is None else environ
    role_name = role_name or env.get(ENV_ECS_METADATA)
    if not role_name or _true(env.get(ENV_ECS_METADATA_DISABLED)):
        return None
    base = env.get(ENV_ECS_METADATA_ENDPOINT) or ECS_METADATA_ENDPOINT
    what = "the ECS metadata service (RAM role %s)" % role_name
    headers = {}
    try:
        status, token = _http(_url(base, ECS_METADATA_TOKEN_PATH), what, method="PUT",
                              headers={"X-aliyun-ecs-metadata-token-ttl-seconds": "21600"},
                              timeout=ECS_METADATA_TIMEOUT)
    except AliyunError:
        status, token = None, ""
    if status == 200 and token:
        headers["X-aliyun-ecs-metadata-token"] = token.strip()
    elif _true(env.get(ENV_IMDSV1_DISABLED)):
        raise AliyunError("%s gave no IMDSv2 token (HTTP %s) and %s=true forbids IMDSv1"
                          % (what, status, ENV_IMDSV1_DISABLED), code="MetadataTokenUnavailable")
    status, text = _http(_url(base, ECS_METADATA_CREDENTIALS_PATH + role_name), what, headers=headers,
                         timeout=ECS_METADATA_TIMEOUT)
    try:
        body = json.loads(text) if status == 200 else {}
    except ValueError:
        body = {}
    if not isinstance(body, dict) or body.get("Code") != "Success" or not body.get("AccessKeyId") \
            or not body.get("AccessKeySecret"):
        raise AliyunError("%s has no credentials (HTTP %s): check %s names the role attached to this instance"
                          % (what, status, ENV_ECS_METADATA), code="MetadataCredentialsUnavailable")
    return body["AccessKeyId"], body["AccessKeySecret"], body.get("SecurityToken") or None


# The order of alibabacloud-credentials' DefaultCredentialsProvider (and the aliyun CLI): environment, RRSA OIDC,
# CLI profile, ECS RAM role. Options given to the module come before all of them.
CHAIN = ("options", "environment", "oidc_role_arn", "cli_profile", "ecs_ram_role")


def resolve_credentials(params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> tuple[str, Credentials]:
    """(source, (access_key_id, access_key_secret, security_token)), the source being one of CHAIN."""
    env = os.environ if environ is None else environ
    opt_id, opt_secret = params.get("access_key_id"), params.get("access_key_secret")
    key_id = opt_id or env.get(ENV_ACCESS_KEY_ID)
    secret = opt_secret or env.get(ENV_ACCESS_KEY_SECRET)
    token = params.get("security_token") or env.get(ENV_SECURITY_TOKEN)
    if key_id and secret:
        return ("options" if opt_id and opt_secret else "environment"), (key_id, secret, token or None)
    if not key_id and not secret:
        for source, provider in (("oidc_role_arn", oidc_credentials), ("cli_profile", cli_profile_credentials),
                                 ("ecs_ram_role", ecs_ram_role_credentials)):
            found = provider(environ)
            if found:
                return source, found
    # half a key pair is a mistake to name, never something to complete from another source
    missing = []
    if not key_id:
        missing.append("access_key_id (or %s)" % ENV_ACCESS_KEY_ID)
    if not secret:
        missing.append("access_key_secret (or %s)" % ENV_ACCESS_KEY_SECRET)
    raise AliyunError("no Alibaba Cloud credentials: set %s, or name an aliyun CLI profile with %s, or use RRSA "
                      "(%s, %s, %s) or an ECS RAM role (%s)"
                      % (" and ".join(missing), ENV_PROFILE, ENV_ROLE_ARN, ENV_OIDC_PROVIDER_ARN, ENV_OIDC_TOKEN_FILE,
                         ENV_ECS_METADATA), code="MissingCredentials")


def credentials_from(params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Credentials:
    """(access_key_id, access_key_secret, security_token) from the first source of CHAIN that has them."""
    return resolve_credentials(params, environ)[1]
