# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One Kubernetes client for every module of the collection.

Authentication follows kubernetes.core: module options first, then the K8S_AUTH_* environment
variables, then the kubeconfig's current context. Every HTTP exchange, the dynamic client's discovery
included, goes through the collection's request policy (common/request_policy.py: Retry-After on 429,
backoff with jitter on 5xx and resets, a per-run retry budget, unreachable as a state); failures become
K8sError with a message that says what to fix.
"""
from __future__ import annotations

import copy
import json
import os
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from ansible.module_utils.basic import env_fallback

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits
from ansible_collections.storageperf.k8s.plugins.module_utils.common import request_policy as rp
from ansible_collections.storageperf.k8s.plugins.module_utils.common.auth import register as register_auth
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

try:
    import urllib3
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.discovery import LazyDiscoverer
    from kubernetes.dynamic.exceptions import DynamicApiError, ResourceNotFoundError
    HAS_K8S = True
    K8S_IMPORT_ERROR = None
except ImportError as e:  # pragma: no cover - reported through missing_required_lib
    HAS_K8S = False
    K8S_IMPORT_ERROR = e

T = TypeVar("T")


if HAS_K8S:
    class _RunDiscoverer(LazyDiscoverer):
        """API discovery that lives as long as one Client, never on disk.

        The library's default caches discovery in $TMPDIR/osrcp-<md5 of the host URL>.json for every later process.
        A cluster rebuilt behind the same URL, or one whose CRDs were removed since, then answers "served" for a
        resource it no longer has and the next list fails with 404; in a shared /tmp another user can plant that
        file, and every fork rewrites it in place at once. One module run pays a few discovery requests instead.
        """

        def __init__(self, client: Any, cache_file: str | None = None) -> None:
            # a path that is never created: the base class reads it only if it exists, and _write_cache is off
            LazyDiscoverer.__init__(self, client, cache_file=os.path.join(os.devnull, "storageperf-discovery"))

        def _write_cache(self) -> None:
            pass

    class _PolicyApiClient(k8s_client.ApiClient):
        """The library's ApiClient with every HTTP exchange sent under the request policy.

        call_api is where the generated APIs, the dynamic client (discovery too) and Client._call all meet, so a
        storm of 429 or 500 is ridden out request by request instead of failing a whole discovery."""

        storageperf_policy: rp.RequestPolicy = None  # type: ignore[assignment]  # Client sets it before any call

        def call_api(self, method: str, url: str, header_params: Any = None, body: Any = None, post_params: Any = None, _request_timeout: Any = None) -> Any:
            streaming = "watch=true" in url

            def send() -> Any:
                resp = k8s_client.ApiClient.call_api(self, method, url, header_params=header_params, body=body,
                                                     post_params=post_params, _request_timeout=_request_timeout)
                if not streaming:
                    resp.read()  # a body cut off mid-read is a failed try too
                return resp

            what = "%s %s" % (method, url.split("?", 1)[0].replace(self.configuration.host, "", 1) or "/")
            return self.storageperf_policy.call(send, _judge, self.configuration.host, what)

    def _judge(resp: Any, exc: BaseException | None) -> rp.Verdict:
        if exc is not None:
            if isinstance(exc, (urllib3.exceptions.HTTPError, OSError)):
                return rp.Verdict(answered=False, retry=True)
            return rp.Verdict(answered=False)
        if resp.status in RETRY_STATUS:
            resp.read()  # drained, so the connection goes back to the pool
            return rp.Verdict(answered=True, retry=True, status=resp.status, detail="%d %s" % (resp.status, resp.reason),
                              retry_after=rp.parse_retry_after(resp.getheader("Retry-After")))
        return rp.Verdict(answered=True)


# ours: kubernetes.core has no such option, so no K8S_AUTH_* variable
UNREACHABLE_ENV = "STORAGEPERF_API_UNREACHABLE_AFTER"

K8S_AUTH_ARG_SPEC = dict(
    kubeconfig=dict(type="raw"),
    context=dict(type="str"),
    host=dict(type="str"),
    api_key=dict(type="str", no_log=True),
    validate_certs=dict(type="bool", aliases=["verify_ssl"]),
    ca_cert=dict(type="path", aliases=["ssl_ca_cert"]),
    client_cert=dict(type="path", aliases=["cert_file"]),
    client_key=dict(type="path", aliases=["key_file"], no_log=False),
    request_timeout=dict(type="float", default=30.0),
    api_retries=dict(type="int", default=rp.DEFAULT_ATTEMPTS),
    api_unreachable_after=dict(type="float", default=rp.UNREACHABLE_AFTER, fallback=(env_fallback, [UNREACHABLE_ENV])),
)

# The variables kubernetes.core reads, so one environment serves both collections.
AUTH_ENV = {
    "kubeconfig": "K8S_AUTH_KUBECONFIG",
    "context": "K8S_AUTH_CONTEXT",
    "host": "K8S_AUTH_HOST",
    "api_key": "K8S_AUTH_API_KEY",
    "validate_certs": "K8S_AUTH_VERIFY_SSL",
    "ca_cert": "K8S_AUTH_SSL_CA_CERT",
    "client_cert": "K8S_AUTH_CERT_FILE",
    "client_key": "K8S_AUTH_KEY_FILE",
    # the argument spec's fallback for modules, this entry for other callers
    "api_unreachable_after": UNREACHABLE_ENV,
}

RETRY_STATUS = (429, 500, 502, 503, 504)
PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}


class K8sError(StoragePerfError):
    """A Kubernetes failure with a message meant for the person running the play."""

    def __init__(self, msg: str, status: int | None = None, reason: str | None = None, body: Any = None, **details: Any) -> None:
        super().__init__(msg, status=status, reason=reason, **details)
        self.msg = msg
        self.status = status
        self.reason = reason
        self.body = body


class K8sUnreachable(K8sError):
    """The API server stopped answering (request_policy.ServerUnreachable); since is its last answer (UTC)."""


def _env_bool(value: object) -> bool:
    return str(value).lower() in ("1", "true", "yes", "on")


def auth_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Module options merged over the K8S_AUTH_* environment."""
    out = {}
    for key in K8S_AUTH_ARG_SPEC:
        value = params.get(key)
        if value is None and key in AUTH_ENV and os.environ.get(AUTH_ENV[key]) is not None:
            value = os.environ[AUTH_ENV[key]]
            if key == "validate_certs":
                value = _env_bool(value)
        out[key] = value
    if out.get("request_timeout") is None:
        out["request_timeout"] = 30.0
    if out.get("api_retries") is None:
        out["api_retries"] = rp.DEFAULT_ATTEMPTS
    out["api_unreachable_after"] = _unreachable_after(out.get("api_unreachable_after"))
    return out


def _unreachable_after(value: Any) -> float:
    """api_unreachable_after in seconds; modules have checked theirs, the environment of other callers is checked here."""
    if value is None:
        return rp.UNREACHABLE_AFTER
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    most = limits.UNREACHABLE_AFTER.maximum
    if not 0 < seconds <= most:
        raise K8sError("api_unreachable_after (or %s) must be a number of seconds above 0 and at most %s, not %r: "
                       "give how long a server may answer nothing before the run calls it unreachable"
                       % (UNREACHABLE_ENV, most, value))
    return seconds


def build_configuration(params: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A kubernetes Configuration from host/api_key, or from a kubeconfig (file or dict)."""
    p = auth_params(params)
    cfg = k8s_client.Configuration()
    if p.get("host") and p.get("api_key"):
        cfg.host = p["host"]
        cfg.api_key = {"authorization": p["api_key"]}
        cfg.api_key_prefix = {"authorization": "Bearer"}
    else:
        kubeconfig = p.get("kubeconfig")
        try:
            if isinstance(kubeconfig, dict):
                k8s_config.load_kube_config_from_dict(kubeconfig, context=p.get("context"), client_configuration=cfg)
            else:
                path = os.path.expanduser(kubeconfig or os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0])
                if not os.path.exists(path):
                    raise K8sError(
                        "kubeconfig %s does not exist: pass kubeconfig (or set K8S_AUTH_KUBECONFIG / KUBECONFIG) to a "
                        "readable kubeconfig, or host and api_key" % path)
                k8s_config.load_kube_config(config_file=path, context=p.get("context"), client_configuration=cfg)
        except ConfigException as e:
            raise K8sError("kubeconfig could not be used: %s. Check the file, and that context %r exists in it."
                           % (e, p.get("context")))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise K8sError("kubeconfig is malformed (%s): it must be a kubeconfig YAML with clusters, users and contexts" % e)
        if p.get("host") or p.get("api_key"):
            # the kubeconfig loader's refresh hook would rewrite host and token on every request
            cfg.refresh_api_key_hook = None
        if p.get("host"):
            cfg.host = p["host"]
        if p.get("api_key"):
            cfg.api_key = {"authorization": p["api_key"]}
            cfg.api_key_prefix = {"authorization": "Bearer"}
    if p.get("validate_certs") is not None:
        cfg.verify_ssl = bool(p["validate_certs"])
    if p.get("ca_cert"):
        cfg.ssl_ca_cert = p["ca_cert"]
    if p.get("client_cert"):
        cfg.cert_file = p["client_cert"]
    if p.get("client_key"):
        cfg.key_file = p["client_key"]
    # urllib3's own retries would hide failures from our counting and backoff.
    cfg.retries = False
    return cfg, p


def _status_body(exc: BaseException) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else {}
    except (TypeError, ValueError):
        return {"message": body}


class Client:
    """Requests against one API server, with retries and a request counter."""

    def __init__(self, params: Mapping[str, Any], sleep: Callable[[float], None] = time.sleep, pool_maxsize: int | None = None) -> None:
        if not HAS_K8S:
            raise K8sError("the kubernetes Python library is required on the host that runs this module: pip install kubernetes")
        self.configuration, self.params = build_configuration(params)
        if pool_maxsize:
            # callers that share one Client between threads (the bench engine) need a connection per thread,
            # else urllib3 discards connections and every request pays a new TLS handshake
            self.configuration.connection_pool_maxsize = int(pool_maxsize)
        self.api_client = _PolicyApiClient(self.configuration)
        # one Health per Client and its siblings: the run's retry budget and whether its server still answers
        self.health = rp.Health(unreachable_after=self.params["api_unreachable_after"])
        # ignore: auth_params always sets api_retries, which get() cannot know
        self.api_client.storageperf_policy = rp.RequestPolicy(self.health, attempts=self.params.get("api_retries"),  # type: ignore[arg-type]
                                                              sleep=sleep, system="the Kubernetes API")
        self._dynamic = None
        self._sleep = sleep
        self._resources: dict[tuple[str, str], Any] = {}
        # the counters are shared by threads that use one Client (the bench engine counts its own requests)
        self._count_lock = threading.Lock()
        self.requests = 0

    @property
    def retried(self) -> int:
        """Retries sent by this Client and its siblings (they share one budget)."""
        return self.health.retries

    @property
    def host(self) -> str:
        return self.configuration.host

    def sibling(self) -> Client:
        """This Client's connection and discovery with its own request counters, for background work (the run's
        Lease renewals) whose requests must not count against the bench engine's measured steps."""
        other = copy.copy(self)
        other._count_lock = threading.Lock()
        other.requests = 0
        return other

    @property
    def dynamic(self) -> Any:
        if self._dynamic is None:
            def discover() -> Any:
                return DynamicClient(self.api_client, discoverer=_RunDiscoverer)

            self._dynamic = self._with_retries(discover, "discovery")
        return self._dynamic

    # error handling ---------------------------------------------------------------------------
    def _explain(self, exc: BaseException, what: str) -> K8sError:
        status = getattr(exc, "status", None)
        body = _status_body(exc)
        message = body.get("message") or getattr(exc, "reason", "") or str(exc)
        if status == 401:
            return K8sError("the API server at %s rejected the credentials (401 Unauthorized) for %s: check the token or "
                            "client certificate in the kubeconfig, or api_key" % (self.host, what), 401, "Unauthorized", body)
        if status == 403:
            return K8sError("forbidden (403) for %s: %s. Grant the user RBAC rights for it." % (what, message), 403,
                            "Forbidden", body)
        return K8sError("%s failed (%s %s): %s" % (what, status, body.get("reason", ""), message), status,
                        body.get("reason"), body)

    def _with_retries(self, call: Callable[[], T], what: str) -> T:
        """call(), counted as one request; the request policy retries each HTTP exchange inside it."""
        with self._count_lock:
            self.requests += 1
        try:
            return call()
        except rp.ServerUnreachable as e:
            raise K8sUnreachable(e.msg, None,
                                 "Unreachable", since=e.details.get("since"), hint=e.hint)
        except rp.GiveUp as e:
            cause = e.details.get("cause")
            if isinstance(cause, (ApiException, DynamicApiError)) or not e.details.get("answered"):
                raise K8sError("cannot reach the Kubernetes API at %s for %s: %s. Check host/kubeconfig, that the "
                               "server is up, and the CA (ca_cert / validate_certs)." % (self.host, what, e.msg))
            raise K8sError("%s failed: %s" % (what, e.msg), e.details.get("status"), "Retried")
        except (ApiException, DynamicApiError) as e:
            raise self._explain(e, what)
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise K8sError("cannot reach the Kubernetes API at %s for %s: %s. Check host/kubeconfig, that the "
                           "server is up, and the CA (ca_cert / validate_certs)." % (self.host, what, e))

    # raw requests -----------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None, content_type: str | None = None,
                what: str | None = None) -> Any:
        """One REST call; returns the decoded JSON body (dict) or None for an empty body."""
        query_params = [(k, v) for k, v in (query or {}).items() if v is not None]
        timeout = self.params.get("request_timeout")

        def call() -> Any:
            resp = self._call(method, path, query_params, body, content_type, timeout)
            data = resp.read()
            return json.loads(data) if data else None

        return self._with_retries(call, what or "%s %s" % (method, path))

    def _call(self, method: str, path: str, query_params: Iterable[tuple[str, Any]], body: Any = None, content_type: str | None = None,
              timeout: float | None = None) -> Any:
        """One HTTP exchange through the kubernetes library's transport (auth, TLS, proxies)."""
        headers = {"Accept": "application/json", "Content-Type": content_type or "application/json"}
        method, url, headers, body, post = self.api_client.param_serialize(
            method, path, query_params=list(query_params), header_params=headers, body=body,
            auth_settings=["BearerToken"])
        resp = self.api_client.call_api(method, url, header_params=headers, body=body, post_params=post,
                                        _request_timeout=timeout)
        if not 200 <= resp.status <= 299:
            resp.read()
            self.api_client.response_deserialize(resp, {})  # raises ApiException with the Status body
        return resp

    # resources --------------------------------------------------------------------------------
    def resource(self, api_version: str, kind: str) -> Any:
        # cached: a lookup the dynamic client answers from memory is not an API request and must not count as one
        cached = self._resources.get((api_version, kind))
        if cached is not None:
            return cached
        try:
            res = self._with_retries(lambda: self.dynamic.resources.get(api_version=api_version, kind=kind),
                                     "discovery of %s/%s" % (api_version, kind))
            self._resources[(api_version, kind)] = res
            return res
        except ResourceNotFoundError:
            raise K8sError("the API server does not serve %s %s: is its CRD installed?" % (api_version, kind), 404,
                           "NotFound")

    def has_resource(self, api_version: str, kind: str) -> bool:
        try:
            self.resource(api_version, kind)
            return True
        except K8sError as e:
            if e.status == 404:
                return False
            raise

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        res = self.resource(api_version, kind)
        group, _, version = api_version.rpartition("/")
        base = "/apis/%s/%s" % (group, version) if group else "/api/%s" % version
        if res.namespaced and namespace:
            base += "/namespaces/%s" % namespace
        base += "/" + res.name
        if name:
            base += "/" + name
        if subresource:
            base += "/" + subresource
        return base

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None, missing_ok: bool = False) -> dict[str, Any] | None:
        try:
            return self.request("GET", self.path(api_version, kind, namespace, name),
                                what="get %s %s" % (kind, _qualified(namespace, name)))
        except K8sError as e:
            if missing_ok and e.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None,
             limit: int = 500) -> tuple[list[dict[str, Any]], str | None]:
        """All items across pages, and the list's resourceVersion."""
        items: list[dict[str, Any]] = []
        token, rv = None, None
        path = self.path(api_version, kind, namespace)
        while True:
            doc = self.request("GET", path, query={"labelSelector": label_selector, "fieldSelector": field_selector,
                                                   "limit": limit, "continue": token},
                               what="list %s" % kind)
            items.extend(doc.get("items") or [])
            rv = doc.get("metadata", {}).get("resourceVersion", rv)
            token = doc.get("metadata", {}).get("continue")
            if not token:
                return items, rv

    def create(self, body: dict[str, Any], namespace: str | None = None, dry_run: bool = False) -> Any:
        ns = namespace or body.get("metadata", {}).get("namespace")
        return self.request("POST", self.path(body["apiVersion"], body["kind"], ns), body=body,
                            query={"dryRun": "All" if dry_run else None, "fieldManager": "storageperf"},
                            what="create %s %s" % (body["kind"], _qualified(ns, body.get("metadata", {}).get("name"))))

    def replace(self, body: dict[str, Any], dry_run: bool = False) -> Any:
        md = body["metadata"]
        return self.request("PUT", self.path(body["apiVersion"], body["kind"], md.get("namespace"), md["name"]),
                            body=body, query={"dryRun": "All" if dry_run else None, "fieldManager": "storageperf"},
                            what="replace %s %s" % (body["kind"], _qualified(md.get("namespace"), md["name"])))

    def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None, patch_type: str = "merge",
              subresource: str | None = None, dry_run: bool = False) -> Any:
        return self.request("PATCH", self.path(api_version, kind, namespace, name, subresource), body=patch,
                            query={"dryRun": "All" if dry_run else None, "fieldManager": "storageperf"},
                            content_type=PATCH_CONTENT_TYPES[patch_type],
                            what="patch %s %s" % (kind, _qualified(namespace, name)))

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, propagation: str = "Background", missing_ok: bool = True) -> Any:
        try:
            return self.request("DELETE", self.path(api_version, kind, namespace, name),
                                body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation},
                                what="delete %s %s" % (kind, _qualified(namespace, name)))
        except K8sError as e:
            if missing_ok and e.status == 404:
                return None
            raise

    def server_version(self) -> dict[str, Any]:
        return self.request("GET", "/version", what="server version")

    def pod_log(self, name: str, namespace: str | None, container: str | None = None) -> str:
        """A pod's log as text (the bench engine reads a tool's output from it: bench/job_run.py)."""
        path = self.path("v1", "Pod", namespace, name, "log")
        query = [("container", container)] if container else []
        resp = self._with_retries(lambda: self._call("GET", path, query, timeout=self.params.get("request_timeout")),
                                  "log of pod %s" % _qualified(namespace, name))
        return resp.read().decode("utf-8", "replace")

    def watch(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, timeout_seconds: int = 60, bookmarks: bool = True,
              on_open: Callable[[Any], object] | None = None) -> Iterator[tuple[str | None, dict[str, Any], float]]:
        """Yield (type, object, monotonic receive time) from one watch request until it ends.

        The receive time is taken when the event's line arrives, before decoding, so that every
        interval a benchmark measures comes from this one client clock.
        on_open(response) is called once the server has answered the watch request (headers in),
        before the first event: the bench engine starts submitting only after that, and may call
        response.shutdown() from another thread to end the watch at once.
        """
        path = self.path(api_version, kind, namespace)
        query = [("watch", "true"), ("timeoutSeconds", int(timeout_seconds))]
        for k, v in (("labelSelector", label_selector), ("fieldSelector", field_selector),
                     ("resourceVersion", resource_version), ("allowWatchBookmarks", "true" if bookmarks else None)):
            if v is not None:
                query.append((k, v))
        resp = self._with_retries(lambda: self._call("GET", path, query, timeout=timeout_seconds + 10).response,
                                  "watch %s" % kind)
        if on_open is not None:
            on_open(resp)
        try:
            buf = b""
            for chunk in resp.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    received = time.monotonic()
                    ev = json.loads(line)
                    yield ev.get("type"), ev.get("object") or {}, received
        finally:
            resp.release_conn()


def _qualified(namespace: str | None, name: object) -> str:
    return "%s/%s" % (namespace, name) if namespace else str(name)


def client_from_module(module: Any, pool_maxsize: int | None = None) -> Client:  # type: ignore[return]  # fail_json exits
    """A Client for an AnsibleModule whose argument_spec includes K8S_AUTH_ARG_SPEC; fails the module clearly."""
    if not HAS_K8S:
        from ansible.module_utils.basic import missing_required_lib

        module.fail_json(msg=missing_required_lib("kubernetes"), exception=str(K8S_IMPORT_ERROR))
    try:
        return Client(module.params, pool_maxsize=pool_maxsize)
    except K8sError as e:
        module.fail_json(msg=e.msg)


# StoragePerfModule(auth="k8s") takes its options and client from here: common/ imports no system package
register_auth("k8s", K8S_AUTH_ARG_SPEC, client_from_module)
