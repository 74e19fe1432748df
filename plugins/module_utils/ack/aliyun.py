# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The signed Alibaba Cloud client: ACK (CS, ROA style) and ECS (RPC style) through aliyun-python-sdk-core.

Every call is a CommonRequest signed by the SDK (signature 1.0, HMAC-SHA1). On top of the SDK this adds what a
module needs at scale: credentials from credentials.py (the default credential chain), endpoint overrides, the
request policy of common/request_policy.py (retries of throttling and transient server errors with capped,
jittered backoff, honouring the gateway's x-acs-retry-after), per-action call counts, bounded parallel calls on a
thread pool, paging written once (`AliyunClient.pages`), and errors that say what to fix and never carry the
secret. The SDK's own retry is switched off so that every attempt is counted and backed off here.
What the collection asks of ACK and ECS (clusters, node pools, addons, tags, disks) is in cluster.py.
"""
from __future__ import annotations


import json
import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.credentials import (  # noqa: F401 (re-exported)
    ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, ENV_PROFILE, ENV_SECURITY_TOKEN, credentials_from, split_endpoint)
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.errors import AliyunError
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
ENV_REGION = "ALIBABA_CLOUD_REGION_ID"
# Sent by the POP gateway with a throttling error when the API's flow control says how long to wait (milliseconds),
# as the official Tea SDKs read it (alibabacloud_tea_openapi Utils.get_throttling_time_left).
RETRY_AFTER_HEADER = "x-acs-retry-after"

T = TypeVar("T")
U = TypeVar("U")

# The options every Alibaba-facing module shares (module_defaults group `alibaba`).
ALIBABA_AUTH_ARG_SPEC: dict[str, dict[str, Any]] = dict(
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


def _option(params: Mapping[str, Any], name: str) -> Any:
    """An option as the argument spec fills it in, for callers that pass a partial dict (tests, scripts)."""
    value = params.get(name)
    return ALIBABA_AUTH_ARG_SPEC[name]["default"] if value is None else value


def mask(access_key_id: str | None) -> str:
    """Show enough of an AccessKey id to recognise it: LTAI****a5e9."""
    key = str(access_key_id or "")
    return key[:4] + "****" + key[-4:] if len(key) > 8 else "****"


def batches(items: Iterable[T], size: int) -> list[list[T]]:
    """Consecutive slices of at most `size` items."""
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]


def indexed_params(prefix: str, values: Iterable[T], suffix: str = "") -> dict[str, T]:
    """{"ResourceId.1": a, "ResourceId.2": b} - RPC's repeated-parameter encoding."""
    return {"%s.%d%s" % (prefix, i + 1, suffix): v for i, v in enumerate(values)}


def tag_params(tags: Mapping[str, str]) -> dict[str, str]:
    """Tag.N.Key / Tag.N.Value for a {key: value} mapping, in key order."""
    out = {}
    for i, (k, v) in enumerate(sorted(tags.items())):
        out["Tag.%d.Key" % (i + 1)] = k
        out["Tag.%d.Value" % (i + 1)] = v
    return out


def pages_needed(total: int, page_size: int) -> int:
    return max(1, -(-int(total) // int(page_size)))


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float | None:
    """The gateway's x-acs-retry-after (milliseconds) in seconds, or None when absent or not a positive number."""
    for key, value in (headers or {}).items():
        if str(key).lower() == RETRY_AFTER_HEADER:
            ms = rp.parse_retry_after(value)
            return ms / 1000.0 if ms else None
    return None


class AliyunClient:
    """ACK and ECS calls for one account and region, safe to use from several threads."""

    def __init__(self, params: Mapping[str, Any], environ: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        if not HAS_ALIYUN_SDK:
            raise AliyunError("aliyun-python-sdk-core is required on the host that runs this module: "
                              "pip install aliyun-python-sdk-core", code="MissingLibrary")
        key_id, secret, token = credentials_from(params, environ)
        self._secret = secret
        self._token = token
        self.access_key_id = key_id
        env = os.environ if environ is None else environ
        self.region = params.get("region") or env.get(ENV_REGION)
        self.timeout = int(_option(params, "api_timeout"))
        self.retries = max(1, int(_option(params, "api_retries")))
        self.concurrency = max(1, int(_option(params, "concurrency")))
        self.cs_endpoint = split_endpoint(params.get("cs_endpoint") or CS_DEFAULT_ENDPOINT)
        self._ecs_endpoint = params.get("ecs_endpoint")
        self._sleep = sleep
        # the run's retry budget and whether the cloud endpoints still answer, shared by the client's threads
        self.health = rp.Health()
        self._policy = rp.RequestPolicy(self.health, attempts=self.retries, first=0.3, cap=10.0, sleep=sleep,
                                        system="Alibaba Cloud")
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()  # attempts by "cs:Action" / "ecs:Action"
        self.retried: Counter[str] = Counter()
        self.throttled: Counter[str] = Counter()
        self._clients: dict[str, Any] = {}

    # plumbing -------------------------------------------------------------------------------
    def _acs(self) -> Any:
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

    def ecs_endpoint(self) -> tuple[str, str]:
        if self._ecs_endpoint:
            return split_endpoint(self._ecs_endpoint)
        if not self.region:
            raise AliyunError("the ECS region is unknown: set region (or %s)" % ENV_REGION, code="MissingRegion")
        return ECS_ENDPOINT_TEMPLATE % self.region, "https"

    def _scrub(self, text: object) -> str:
        text = str(text)
        for secret in (self._secret, self._token):
            if secret:
                text = text.replace(secret, "********")
        return text

    def _explain(self, action: str, code: str | None, message: object, status: int | None, request_id: str | None) -> AliyunError:
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

    def _error(self, action: str, exc: Exception) -> AliyunError:
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

    def _attempt(self, action: str, request: Any) -> Any:
        """One counted call; the SDK's exceptions become AliyunErrors that say whether to retry and, when the
        gateway said so (x-acs-retry-after), after how long.

        do_action_with_exception() is this same call without the headers, which its ServerException drops."""
        with self._lock:
            self.calls[action] += 1
        request.set_accept_format("JSON")
        try:
            _status, headers, body, exc = self._acs()._implementation_of_do_action(request)
        except (ServerException, ClientException) as e:
            raise self._error(action, e) from None  # the SDK's exception adds nothing the message lacks
        if exc is not None:
            err = self._error(action, exc)
            err.retry_after = retry_after_seconds(headers)
            raise err
        return body

    def _count_retry(self, action: str, error: AliyunError) -> None:
        with self._lock:
            self.retried[action] += 1
            if error.throttled:
                self.throttled[action] += 1

    def _do(self, action: str, request: Any) -> dict[str, Any]:
        def judge(_body: Any, exc: BaseException | None) -> rp.Verdict:
            if exc is None:
                return rp.Verdict(answered=True)
            if not isinstance(exc, AliyunError):
                return rp.Verdict(answered=False)
            # an HTTP status is an answer; the SDK's own HttpError / ServerUnreachable codes are not
            return rp.Verdict(answered=exc.status is not None, retry=exc.retryable, status=exc.code or exc.status,
                              retry_after=exc.retry_after)

        try:
            # equal jitter keeps parallel callers that were throttled together from retrying together
            body = self._policy.call(lambda: self._attempt(action, request), judge, request.get_domain(), action,
                                     on_retry=lambda _verdict, e: self._count_retry(action, e))  # type: ignore[arg-type]  # judge retries AliyunErrors
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
    def cs(self, action: str, method: str, path: str, query: Mapping[str, Any] | None = None, body: Any = None) -> dict[str, Any]:
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

    def ecs(self, action: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
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
    def parallel(self, fn: Callable[[T], U], items: Iterable[T]) -> list[tuple[T, U | None, AliyunError | None]]:
        """Run fn(item) for every item, at most `concurrency` at a time. Returns [(item, result, error)] in
        item order; an AliyunError of one item never stops the others, so every failure is reported."""
        items = list(items)

        def one(item: T) -> tuple[T, U | None, AliyunError | None]:
            try:
                return item, fn(item), None
            except AliyunError as e:
                return item, None, e

        if self.concurrency <= 1 or len(items) <= 1:
            return [one(i) for i in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(one, items))

    # paging, the one place the collection pages ---------------------------------------------------
    def pages(self, fetch: Callable[[Any], dict[str, Any]], total: Callable[[dict[str, Any]], int | None] | None = None, per_page: int | None = None,
              items: Callable[[dict[str, Any]], list[Any] | None] | None = None,
              next_token: Callable[[dict[str, Any]], str | None] | None = None) -> Iterator[dict[str, Any]]:
        """Every page of one list call, in order.

        By token (next_token given, ECS's NextToken/MaxResults): fetch(None), then fetch(token) while
        next_token(page) gives a new one. By number (ACK's pageNumber/pageSize): fetch(1); when total(page) gives
        the item count, pages 2.. are fetched at once on the thread pool (the first failed page raises); without a
        count, read on while a page holds per_page items (items(page)).
        """
        if next_token is not None:
            token, seen = None, set()
            while True:
                page = fetch(token)
                yield page
                token = next_token(page)
                if not token:
                    return
                if token in seen:  # a server that hands out a token twice would keep this loop going forever
                    raise AliyunError("the listing handed out NextToken %s twice; stopped reading it" % token,
                                      code="InvalidNextToken")
                seen.add(token)
        first = fetch(1)
        yield first
        count = total(first) if total else None
        if count is not None:
            # by number, the caller gives per_page with total or items
            for _n, page, err in self.parallel(fetch, range(2, pages_needed(count, per_page) + 1)):  # type: ignore[arg-type, assignment]
                if err is not None:
                    raise err
                yield page
            return
        number, page = 1, first
        while len(items(page) or []) >= per_page:  # type: ignore[misc, operator]
            number += 1
            page = fetch(number)
            yield page

    # stats ------------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        writes = sum(n for a, n in self.calls.items() if a in WRITE_ACTIONS)
        return {"calls": dict(sorted(self.calls.items())), "total": sum(self.calls.values()), "writes": writes,
                "retried": dict(self.retried), "throttled": dict(self.throttled)}


WRITE_ACTIONS = ("cs:ModifyClusterAddon", "cs:ModifyClusterNodePool", "ecs:TagResources", "ecs:UntagResources")


def first_errors(results: Iterable[tuple[Any, Any, AliyunError | None]], limit: int = 20) -> list[dict[str, Any]]:
    """The errors of parallel() results, as dicts a module can return."""
    out = []
    for item, _result, err in results:
        if err is not None:
            out.append({"item": item, "error": err.msg, "code": err.code})
    return out[:limit] if limit else out


def client_from_module(module: Any) -> AliyunClient:  # type: ignore[return]  # fail_json exits
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
