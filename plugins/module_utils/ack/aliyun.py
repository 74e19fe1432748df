# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Alibaba Cloud calls for the collection: ACK (CS, ROA style) and ECS (RPC style) through aliyun-python-sdk-core.

Every call is a CommonRequest signed by the SDK (signature 1.0, HMAC-SHA1). On top of the SDK this adds what a
module needs at scale: credentials from the Alibaba Cloud default credential chain (see `credentials_from`),
endpoint overrides, retries of throttling (`Throttling*`) and transient server errors with capped, jittered
exponential backoff, per-action call counts, bounded parallel calls on a thread pool, paging helpers, and errors
that say what to fix and never carry the secret. The SDK's own retry is switched off so that every attempt is counted and
backed off here.
"""


import datetime
import json
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode

from ansible.module_utils.urls import open_url

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.common import request_policy as rp
from ansible_collections.storageperf.k8s.plugins.module_utils.common.auth import register as register_auth

try:
    from aliyunsdkcore.acs_exception.exceptions import ClientException, ServerException
    from aliyunsdkcore.auth.credentials import StsTokenCredential
    from aliyunsdkcore.client import AcsClient
    from aliyunsdkcore.request import CommonRequest
    HAS_ALIYUN_SDK = True
    ALIYUN_IMPORT_ERROR = None
except ImportError as e:  # pragma: no cover - reported through missing_required_lib
    HAS_ALIYUN_SDK = False
    ALIYUN_IMPORT_ERROR = e

CS_VERSION = "2015-12-15"
ECS_VERSION = "2014-05-26"
CS_DEFAULT_ENDPOINT = "cs.aliyuncs.com"  # the central endpoint; DescribeClusterDetail then names the region
ECS_ENDPOINT_TEMPLATE = "ecs.%s.aliyuncs.com"

TAG_RESOURCES_MAX_IDS = 50  # ECS TagResources / UntagResources / ListTagResources: ResourceId.N, N <= 50
TAG_RESOURCES_MAX_TAGS = 20  # Tag.N / TagKey.N, N <= 20
CS_MAX_PAGE_SIZE = 100  # DescribeClusterNodes pageSize 1-100
ECS_MAX_PAGE_SIZE = 100  # DescribeDisks PageSize 1-100
DISK_IDS_PER_CALL = 100  # DescribeDisks DiskIds (a JSON array) takes up to 100 ids
INSTANCE_TYPES_PER_CALL = 10  # DescribeInstanceTypes InstanceTypes.N, N <= 10

RETRY_CODES = ("InternalError", "UnknownError", "ServiceUnavailable", "SDK.HttpError", "SDK.ServerUnreachable")
RETRY_STATUS = (429, 500, 502, 503, 504)

ENV_ACCESS_KEY_ID = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ENV_ACCESS_KEY_SECRET = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
ENV_SECURITY_TOKEN = "ALIBABA_CLOUD_SECURITY_TOKEN"
ENV_REGION = "ALIBABA_CLOUD_REGION_ID"
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

# The options every Alibaba-facing module shares (module_defaults group `alibaba`).
ALIBABA_AUTH_ARG_SPEC = dict(
    access_key_id=dict(type="str", no_log=False, aliases=["alibaba_access_key_id"]),
    access_key_secret=dict(type="str", no_log=True, aliases=["alibaba_access_key_secret"]),
    security_token=dict(type="str", no_log=True, aliases=["alibaba_security_token"]),
    region=dict(type="str", aliases=["region_id"]),
    cs_endpoint=dict(type="str"),
    ecs_endpoint=dict(type="str"),
    api_timeout=dict(type="int", default=30),
    api_retries=dict(type="int", default=rp.DEFAULT_ATTEMPTS),
    concurrency=dict(type="int", default=8),
)


class AliyunError(StoragePerfError):
    """A failed Alibaba Cloud call, with a message for the person running the play (never the secret)."""

    def __init__(self, msg, code=None, status=None, request_id=None, action=None):
        super().__init__(msg, code=code, request_id=request_id)
        self.msg = msg
        self.code = code
        self.status = status
        self.request_id = request_id
        self.action = action

    @property
    def retryable(self):
        return bool(self.code and (self.code.startswith("Throttling") or self.code in RETRY_CODES)) or \
            self.status in RETRY_STATUS

    @property
    def throttled(self):
        return bool(self.code and self.code.startswith("Throttling")) or self.status == 429


def mask(access_key_id):
    """Show enough of an AccessKey id to recognise it: LTAI****a5e9."""
    key = str(access_key_id or "")
    return key[:4] + "****" + key[-4:] if len(key) > 8 else "****"


def split_endpoint(endpoint):
    """"http://127.0.0.1:8080" -> ("127.0.0.1:8080", "http"); a bare host means HTTPS."""
    text = str(endpoint).strip().rstrip("/")
    for scheme in ("https", "http"):
        if text.lower().startswith(scheme + "://"):
            return text[len(scheme) + 3:], scheme
    return text, "https"


def cli_profile_path(environ=None):
    """The aliyun CLI's ~/.aliyun/config.json, or None when there is no home to look in."""
    if environ is None:
        return os.path.join(os.path.expanduser("~"), ".aliyun", "config.json")
    home = environ.get("HOME")
    return os.path.join(home, ".aliyun", "config.json") if home else None


def cli_profile_credentials(environ=None):
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


def _true(value):
    return str(value or "").strip().lower() == "true"


def _url(endpoint, path=""):
    """A full URL from an endpoint that may lack its scheme (a bare host means HTTPS, as for the API endpoints)."""
    host, scheme = split_endpoint(endpoint)
    return "%s://%s%s" % (scheme, host, path)


def _http(url, what, method="GET", data=None, headers=None, timeout=10):
    """(status, body text) of one plain HTTP call; connection errors become an AliyunError naming `what`."""
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


def _iso_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def sts_endpoint(environ=None):
    """Where AssumeRoleWithOIDC goes: ALIBABA_CLOUD_STS_ENDPOINT, else sts[-vpc].<ALIBABA_CLOUD_STS_REGION>
    .aliyuncs.com, else the central sts.aliyuncs.com - the SDKs' defaults."""
    env = os.environ if environ is None else environ
    if env.get(ENV_STS_ENDPOINT):
        return env[ENV_STS_ENDPOINT]
    prefix = "sts-vpc" if _true(env.get(ENV_VPC_ENDPOINT)) else "sts"
    region = env.get(ENV_STS_REGION)
    return "%s.%s.aliyuncs.com" % (prefix, region) if region else "sts.aliyuncs.com"


def oidc_credentials(environ=None, role_arn=None, provider_arn=None, token_file=None):
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


def ecs_ram_role_credentials(environ=None, role_name=None):
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


def resolve_credentials(params, environ=None):
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


def credentials_from(params, environ=None):
    """(access_key_id, access_key_secret, security_token) from the first source of CHAIN that has them."""
    return resolve_credentials(params, environ)[1]


def batches(items, size):
    """Consecutive slices of at most `size` items."""
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]


def indexed_params(prefix, values, suffix=""):
    """{"ResourceId.1": a, "ResourceId.2": b} - RPC's repeated-parameter encoding."""
    return {"%s.%d%s" % (prefix, i + 1, suffix): v for i, v in enumerate(values)}


def tag_params(tags):
    """Tag.N.Key / Tag.N.Value for a {key: value} mapping, in key order."""
    out = {}
    for i, (k, v) in enumerate(sorted(tags.items())):
        out["Tag.%d.Key" % (i + 1)] = k
        out["Tag.%d.Value" % (i + 1)] = v
    return out


def pages_needed(total, page_size):
    return max(1, -(-int(total) // int(page_size)))


class AliyunClient:
    """ACK and ECS calls for one account and region, safe to use from several threads."""

    def __init__(self, params, environ=None, sleep=time.sleep):
        if not HAS_ALIYUN_SDK:
            raise AliyunError("aliyun-python-sdk-core is required on the host that runs this module: "
                              "pip install aliyun-python-sdk-core", code="MissingLibrary")
        key_id, secret, token = credentials_from(params, environ)
        self._secret = secret
        self._token = token
        self.access_key_id = key_id
        env = os.environ if environ is None else environ
        self.region = params.get("region") or env.get(ENV_REGION)
        self.timeout = int(params.get("api_timeout") or 30)
        self.retries = max(1, int(params.get("api_retries") or 1))
        self.concurrency = max(1, int(params.get("concurrency") or 1))
        self.cs_endpoint = split_endpoint(params.get("cs_endpoint") or CS_DEFAULT_ENDPOINT)
        self._ecs_endpoint = params.get("ecs_endpoint")
        self._sleep = sleep
        # the run's retry budget and whether the cloud endpoints still answer, shared by the client's threads
        self.health = rp.Health()
        self._policy = rp.RequestPolicy(self.health, attempts=self.retries, first=0.3, cap=10.0, sleep=sleep,
                                        system="Alibaba Cloud")
        self._lock = threading.Lock()
        self.calls = Counter()  # attempts by "cs:Action" / "ecs:Action"
        self.retried = Counter()
        self.throttled = Counter()
        self._clients = {}

    # plumbing -------------------------------------------------------------------------------
    def _acs(self):
        """One AcsClient per region; its connection pool is sized for the thread pool."""
        region = self.region or "cn-hangzhou"  # only signs RegionId into ROA calls before the region is known
        with self._lock:
            if region not in self._clients:
                if self._token:
                    auth = dict(credential=StsTokenCredential(self.access_key_id, self._secret, self._token))
                else:
                    # ak/secret directly: the SDK would otherwise prefer ALIYUN_ACCESS_KEY_* from the environment
                    auth = dict(ak=self.access_key_id, secret=self._secret)
                self._clients[region] = AcsClient(region_id=region, auto_retry=False, max_retry_time=0,
                                                  timeout=self.timeout, connect_timeout=min(self.timeout, 10),
                                                  pool_size=max(10, self.concurrency), **auth)
            return self._clients[region]

    def ecs_endpoint(self):
        if self._ecs_endpoint:
            return split_endpoint(self._ecs_endpoint)
        if not self.region:
            raise AliyunError("the ECS region is unknown: set region (or %s)" % ENV_REGION, code="MissingRegion")
        return ECS_ENDPOINT_TEMPLATE % self.region, "https"

    def _scrub(self, text):
        text = str(text)
        for secret in (self._secret, self._token):
            if secret:
                text = text.replace(secret, "********")
        return text

    def _explain(self, action, code, message, status, request_id):
        who = "access key %s" % mask(self.access_key_id)
        if code in ("InvalidAccessKeyId.NotFound", "InvalidAccessKeyId", "InvalidAccessKeyId.Inactive"):
            msg = ("Alibaba Cloud does not know %s (%s): check access_key_id (or %s)"
                   % (who, code, ENV_ACCESS_KEY_ID))
        elif code in ("SignatureDoesNotMatch", "InvalidAccessKeySecret", "IncompleteSignature"):
            msg = ("Alibaba Cloud rejected the signature of %s for %s (%s): the access key secret does not belong to "
                   "that key - check access_key_secret (or %s)" % (action, who, code, ENV_ACCESS_KEY_SECRET))
        elif code and (code.startswith("InvalidSecurityToken") or code == "MissingSecurityToken"):
            msg = ("the STS security token of %s was rejected (%s): renew it and set security_token (or %s)"
                   % (who, code, ENV_SECURITY_TOKEN))
        elif code and code.startswith("Forbidden"):
            msg = ("%s is not allowed to call %s (%s: %s): grant the RAM policy for it"
                   % (who, action, code, message))
        elif code and code.startswith("Throttling"):
            msg = ("%s was still throttled after %d attempts (%s): lower concurrency or raise api_retries"
                   % (action, self.retries, code))
        else:
            msg = "%s failed (%s %s): %s" % (action, status or "", code or "", message)
        if request_id:
            msg += " [RequestId %s]" % request_id
        return AliyunError(self._scrub(msg), code=code, status=status, request_id=request_id, action=action)

    def _error(self, action, exc):
        if isinstance(exc, ServerException):
            code, message = exc.get_error_code(), exc.get_error_msg()
            status, request_id = exc.get_http_status(), exc.get_request_id()
            if code == "SDK.UnknownServerError" and str(message).startswith("ServerResponseBody:"):
                # ACK's own errors are {"code", "message", "requestId"}, which the SDK does not parse
                try:
                    body = json.loads(str(message).split(":", 1)[1])
                    code = body.get("code") or body.get("Code") or code
                    message = body.get("message") or body.get("Message") or message
                    request_id = body.get("requestId") or body.get("RequestId") or request_id
                except (ValueError, AttributeError):
                    pass
            return self._explain(action, code, message, status, request_id)
        if isinstance(exc, ClientException):
            code = exc.get_error_code()
            return self._explain(action, code, exc.get_error_msg(), None, None)
        return AliyunError(self._scrub("%s failed: %s" % (action, exc)), action=action)

    def _attempt(self, action, request):
        """One counted call; the SDK's exceptions become AliyunErrors that say whether to retry."""
        with self._lock:
            self.calls[action] += 1
        try:
            return self._acs().do_action_with_exception(request)
        except (ServerException, ClientException) as e:
            raise self._error(action, e) from None  # the SDK's exception adds nothing the message lacks

    def _count_retry(self, action, error):
        with self._lock:
            self.retried[action] += 1
            if error.throttled:
                self.throttled[action] += 1

    def _do(self, action, request):
        def judge(_body, exc):
            if exc is None:
                return rp.Verdict(answered=True)
            if not isinstance(exc, AliyunError):
                return rp.Verdict(answered=False)
            # an HTTP status is an answer; the SDK's own HttpError / ServerUnreachable codes are not
            return rp.Verdict(answered=exc.status is not None, retry=exc.retryable, status=exc.code or exc.status)

        try:
            # equal jitter keeps parallel callers that were throttled together from retrying together
            body = self._policy.call(lambda: self._attempt(action, request), judge, request.get_domain(), action,
                                     on_retry=lambda _verdict, e: self._count_retry(action, e))
        except rp.GiveUp as e:
            cause = e.details.get("cause")
            raise cause if isinstance(cause, AliyunError) else AliyunError(e.msg, action=action) from None
        except rp.ServerUnreachable as e:
            raise AliyunError(self._scrub(e.msg), code="Unreachable", action=action) from None
        if not body:
            return {}
        try:
            return json.loads(body)
        except ValueError:
            raise AliyunError("%s returned a body that is not JSON" % action, action=action) from None

    # the two styles ---------------------------------------------------------------------------
    def cs(self, action, method, path, query=None, body=None):
        """One ACK call: ROA, JSON body, e.g. cs("DescribeClusterDetail", "GET", "/clusters/c123")."""
        domain, scheme = self.cs_endpoint
        req = CommonRequest(domain=domain, version=CS_VERSION, uri_pattern=path)
        req.set_method(method)
        req.set_protocol_type(scheme)
        req.add_header("Accept", "application/json")
        for k, v in (query or {}).items():
            if v is not None:
                req.add_query_param(k, str(v))
        if body is not None:
            req.add_header("Content-Type", "application/json")
            req.set_content(json.dumps(body).encode("utf-8"))
        return self._do("cs:" + action, req)

    def ecs(self, action, params=None):
        """One ECS call: RPC, e.g. ecs("TagResources", {"ResourceType": "instance", ...})."""
        domain, scheme = self.ecs_endpoint()
        if not self.region:
            raise AliyunError("the ECS region is unknown: set region (or %s)" % ENV_REGION, code="MissingRegion")
        req = CommonRequest(domain=domain, version=ECS_VERSION, action_name=action)
        req.set_method("GET")
        req.set_protocol_type(scheme)
        req.add_query_param("RegionId", self.region)
        for k, v in (params or {}).items():
            if v is not None:
                req.add_query_param(k, str(v))
        return self._do("ecs:" + action, req)

    # many calls at once -------------------------------------------------------------------------
    def parallel(self, fn, items):
        """Run fn(item) for every item, at most `concurrency` at a time. Returns [(item, result, error)] in
        item order; an AliyunError of one item never stops the others, so every failure is reported."""
        items = list(items)

        def one(item):
            try:
                return item, fn(item), None
            except AliyunError as e:
                return item, None, e

        if self.concurrency <= 1 or len(items) <= 1:
            return [one(i) for i in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(one, items))

    # stats ------------------------------------------------------------------------------------
    def stats(self):
        writes = sum(n for a, n in self.calls.items() if a in WRITE_ACTIONS)
        return {"calls": dict(sorted(self.calls.items())), "total": sum(self.calls.values()), "writes": writes,
                "retried": dict(self.retried), "throttled": dict(self.throttled)}


WRITE_ACTIONS = ("cs:ModifyClusterAddon", "cs:ModifyClusterNodePool", "ecs:TagResources", "ecs:UntagResources")


def first_errors(results, limit=20):
    """The errors of parallel() results, as dicts a module can return."""
    out = []
    for item, _result, err in results:
        if err is not None:
            out.append({"item": item, "error": err.msg, "code": err.code})
    return out[:limit] if limit else out


def client_from_module(module):
    """An AliyunClient for a module whose argument_spec includes ALIBABA_AUTH_ARG_SPEC; fails the module clearly."""
    if not HAS_ALIYUN_SDK:
        from ansible.module_utils.basic import missing_required_lib

        module.fail_json(msg=missing_required_lib("aliyun-python-sdk-core"), exception=str(ALIYUN_IMPORT_ERROR))
    try:
        return AliyunClient(module.params)
    except AliyunError as e:
        module.fail_json(msg=e.msg)


# StoragePerfModule(auth="alibaba") takes its options and client from here: common/ imports no system package
register_auth("alibaba", ALIBABA_AUTH_ARG_SPEC, client_from_module)
