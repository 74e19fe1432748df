# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NetApp ONTAP: list what a Trident backend created, over REST or ZAPI, so a benchmark can prove no leak.

Trident names what it creates after the backend's storage prefix (default `trident_`):
- ontap-nas / ontap-san: one FlexVol per PV, `<prefix>pvc_<PV uuid with _>` (the PV's
  spec.csi.volumeAttributes.internalName);
- ontap-nas-economy: qtrees named like that inside FlexVols `<prefix>qtree_pool_*`;
- ontap-san-economy: LUNs named like that inside FlexVols `<prefix>lun_pool_*`.

REST (ONTAP 9.6+, what the netapp.ontap collection uses by default): GET /api/storage/volumes,
/api/storage/qtrees and /api/storage/luns with `name` patterns (`*` wildcard, `|` or, `!` not),
`fields=...`, `max_records` pages followed through `_links.next.href`, basic auth.
ZAPI (older systems, `use_rest: never`): netapp-lib's NaServer with volume-get-iter, qtree-list-iter and
lun-get-iter, desired-attributes and `next-tag` paging. The session first asks system-get-ontapi-version (at
ONTAPI 1.0, which every ONTAP answers) and then speaks the server's ONTAPI, capped at ZAPI_VERSION: ONTAP refuses
a request above its own (errno 13010), and the REST fallback only reaches ZAPI on ONTAP before 9.6 (ONTAPI 1.150
and lower).
"""
from __future__ import annotations


import base64
import json
import re
import ssl
from urllib import request as urllib_request
from urllib.parse import urlencode
from typing import Any, Callable, Mapping

from ansible.module_utils.basic import env_fallback
from ansible.module_utils.urls import open_url

from ansible_collections.storageperf.k8s.plugins.module_utils.common import request_policy as rp
from ansible_collections.storageperf.k8s.plugins.module_utils.common.auth import register as register_auth
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

try:
    from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError
except ImportError:  # pragma: no cover
    from urllib.error import HTTPError, URLError

try:
    from netapp_lib.api.zapi import zapi
    HAS_NETAPP_LIB = True
    NETAPP_LIB_ERROR = None
except ImportError as e:  # pragma: no cover - reported by the module
    HAS_NETAPP_LIB = False
    NETAPP_LIB_ERROR = e

ZAPI_PATH = "servlets/netapp.servlets.admin.XMLrequest_filer"
# the ONTAPI the ZAPI calls below were written against (ONTAP 9.7); a newer server is spoken to at this version
ZAPI_VERSION = (1, 170)
# the version system-get-ontapi-version is asked at: below every ONTAP's, so no server refuses it
PROBE_VERSION = (1, 0)


class OntapError(StoragePerfError):
    def __init__(self, msg: str, status: int | str | None = None) -> None:
        super().__init__(msg)
        self.msg = msg
        self.status = status


# names -------------------------------------------------------------------------------------------------
def kind_of(name: str | None, prefix: str) -> str | None:
    """"volume" (one PV), "qtree_pool", "lun_pool", or None for names Trident did not make."""
    if not name or not name.startswith(prefix):
        return None
    rest = name[len(prefix):]
    if rest.startswith("qtree_pool_"):
        return "qtree_pool"
    if rest.startswith("lun_pool_"):
        return "lun_pool"
    return "volume"


def internal_name(pv_or_name: object, prefix: str) -> str:
    """The ONTAP name Trident gives a PV: "pvc-1b2c-..." -> "trident_pvc_1b2c_..."; internal names pass through."""
    text = str(pv_or_name)
    if text.startswith(prefix):
        return text
    return prefix + text.replace("-", "_")


def leak_report(volumes: list[dict[str, Any]], qtrees: list[dict[str, Any]], luns: list[dict[str, Any]], expected: list[str] | None,
                prefix: str) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """(leaked, missing, empty_pools): objects no expected PV accounts for, expected PVs not found, empty pools."""
    wanted = {internal_name(e, prefix) for e in (expected or [])}
    objects = ([dict(name=v["name"], kind="volume", volume=v["name"], svm=v.get("svm")) for v in volumes
                if kind_of(v["name"], prefix) == "volume"]
               + [dict(name=q["name"], kind="qtree", volume=q["volume"], svm=q.get("svm")) for q in qtrees]
               + [dict(name=lun["name"], kind="lun", volume=lun["volume"], svm=lun.get("svm")) for lun in luns])
    found = {o["name"] for o in objects}
    leaked = [o for o in objects if o["name"] not in wanted] if expected is not None else []
    missing = sorted(wanted - found) if expected is not None else []
    used = {o["volume"] for o in objects if o["kind"] != "volume"}
    empty_pools = sorted(v["name"] for v in volumes if kind_of(v["name"], prefix) in ("qtree_pool", "lun_pool")
                         and v["name"] not in used)
    return leaked, missing, empty_pools


def split_host_port(hostname: str) -> tuple[str, int | None]:
    """"10.0.0.5:8443" -> ("10.0.0.5", 8443); "[fd00::5]:443" -> ("fd00::5", 443); no port -> (host, None)."""
    m = re.match(r"^\[(?P<v6>[^\]]+)\](?::(?P<p6>\d+))?$|^(?P<host>[^:]+)(?::(?P<port>\d+))?$", hostname or "")
    if not m:
        return hostname, None  # a bare IPv6 address
    host = m.group("v6") or m.group("host")
    port = m.group("p6") or m.group("port")
    return host, int(port) if port else None


# REST --------------------------------------------------------------------------------------------------
def _judge(_body: bytes | None, exc: BaseException | None) -> rp.Verdict:
    if exc is None:
        return rp.Verdict(answered=True)
    if isinstance(exc, HTTPError):
        retry = exc.code in (429, 500, 502, 503, 504)
        if retry:
            exc.read()
        return rp.Verdict(answered=True, retry=retry, status=exc.code, detail="%d %s" % (exc.code, exc.reason),
                          retry_after=rp.parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None))
    # a TLS failure is a configuration to fix, not a server to wait for
    return rp.Verdict(answered=False, retry=isinstance(exc, (URLError, OSError)) and not isinstance(exc, ssl.SSLError)
                      and not isinstance(getattr(exc, "reason", None), ssl.SSLError))


class OntapRest:
    """Basic-auth REST client of one ONTAP cluster management LIF."""

    API = "rest"

    def __init__(self, hostname: str, username: str, password: str, https: bool = True, validate_certs: bool = True,
                 ca_cert: str | None = None, port: int | None = None, timeout: float = 60) -> None:
        scheme = "https" if https else "http"
        self.base = "%s://%s%s" % (scheme, hostname, ":%d" % port if port else "")
        self.username = username
        self.password = password
        self.validate_certs = validate_certs
        self.ca_cert = ca_cert
        self.timeout = timeout
        self.calls = 0
        # the collection's one request policy: 429/5xx/resets retried, unreachable as a state (docs/fleet.md)
        self.policy = rp.RequestPolicy(rp.Health(), system="ONTAP")

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """One GET of /api/<path> (or of an href starting with /api/); returns the decoded JSON."""
        url = path if path.startswith("/api/") else "/api/" + path.lstrip("/")
        if query:
            url += ("&" if "?" in url else "?") + urlencode(query, safe="*|!,.")

        def send() -> bytes:
            self.calls += 1
            resp = open_url(self.base + url, method="GET", headers={"Accept": "application/hal+json"},
                            url_username=self.username, url_password=self.password, force_basic_auth=True,
                            validate_certs=self.validate_certs, ca_path=self.ca_cert, timeout=self.timeout,
                            use_proxy=False)
            return resp.read()

        try:
            return json.loads(self.policy.call(send, _judge, self.base, "GET " + url.split("?")[0]) or b"{}")
        except HTTPError as e:
            raise OntapError(self._explain(e, url), e.code) from e
        except rp.GiveUp as e:
            raise OntapError(e.msg, e.details.get("status")) from e
        except (rp.ServerUnreachable, URLError, ssl.SSLError, OSError) as e:
            raise OntapError("cannot reach ONTAP at %s (%s): check hostname, https/http_port and the certificate "
                             "(validate_certs, ca_cert)" % (self.base, getattr(e, "reason", None) or e)) from e

    def _explain(self, e: HTTPError, url: str) -> str:
        try:
            body = json.loads(e.read() or b"{}")
        except ValueError:
            body = {}
        message = (body.get("error") or {}).get("message") or e.reason
        if e.code == 401:
            return ("ONTAP at %s rejected the credentials (401 Unauthorized): check username and password (the user "
                    "needs the http application with a role that can read volumes)" % self.base)
        return "ONTAP REST GET %s failed (%s): %s" % (url.split("?")[0], e.code, message)

    def get_all(self, path: str, query: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every record of a collection: follows `_links.next.href` and checks each page's num_records."""
        doc = self.get(path, query)
        records: list[dict[str, Any]] = []
        while True:
            page = doc.get("records") or []
            if "num_records" in doc and doc["num_records"] != len(page):
                raise OntapError("ONTAP returned %d records but num_records %s for %s" % (len(page), doc["num_records"], path))
            records.extend(page)
            nxt = ((doc.get("_links") or {}).get("next") or {}).get("href")
            if not nxt:
                return records
            doc = self.get(nxt)

    def version(self) -> str | None:
        doc = self.get("cluster", {"fields": "version"})
        return ((doc.get("version") or {}).get("full"))

    def inventory(self, prefix: str, svm: str | None = None, economy: bool = True,
                  page_size: int = 500) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """(volumes, qtrees, luns) Trident made, as plain dicts."""
        common: dict[str, Any] = {"max_records": page_size}
        if svm:
            common["svm.name"] = svm
        vols = self.get_all("storage/volumes", dict(common, name=prefix + "*",
                                                    fields="name,uuid,size,svm.name,state,type,space.used"))
        volumes = [dict(name=v["name"], uuid=v.get("uuid"), svm=(v.get("svm") or {}).get("name"), size=v.get("size"),
                        used=(v.get("space") or {}).get("used"), state=v.get("state"), type=v.get("type"),
                        kind=kind_of(v["name"], prefix)) for v in vols]
        qtrees, luns = [], []
        if economy and any(v["kind"] == "qtree_pool" for v in volumes):
            query = dict(common, **{"volume.name": prefix + "qtree_pool_*", "name": prefix + "*",
                                    "fields": "name,id,volume.name,svm.name"})
            for q in self.get_all("storage/qtrees", query):
                qtrees.append(dict(name=q["name"], volume=(q.get("volume") or {}).get("name"),
                                   svm=(q.get("svm") or {}).get("name"), id=q.get("id")))
        if economy and any(v["kind"] == "lun_pool" for v in volumes):
            for lun in self.get_all("storage/luns", dict(common, **{
                    "location.volume.name": prefix + "lun_pool_*",
                    "fields": "name,uuid,location.logical_unit,location.volume.name,space.size,svm.name"})):
                loc = lun.get("location") or {}
                name = loc.get("logical_unit") or lun["name"].rsplit("/", 1)[-1]
                if name.startswith(prefix):
                    luns.append(dict(name=name, path=lun["name"], volume=(loc.get("volume") or {}).get("name"),
                                     svm=(lun.get("svm") or {}).get("name"), size=(lun.get("space") or {}).get("size")))
        return volumes, qtrees, luns


# ZAPI --------------------------------------------------------------------------------------------------
if HAS_NETAPP_LIB:
    class _NaServer(zapi.NaServer):
        """netapp-lib's NaServer with a TLS context of our choosing and the Authorization header sent up front.

        netapp-lib builds a plain opener (system CAs only) and waits for a 401 challenge before it sends
        credentials; the netapp.ontap collection overrides the same two methods (OntapZAPICx).
        """

        def __init__(self, host: str, username: str, password: str, ssl_context: ssl.SSLContext | None, **kw: Any) -> None:
            zapi.NaServer.__init__(self, host, username=username, password=password, **kw)
            self._ssl_context = ssl_context
            self._auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()

        def _build_opener(self) -> None:
            handlers = [urllib_request.HTTPSHandler(context=self._ssl_context)] if self._ssl_context else []
            self._opener = urllib_request.build_opener(*handlers)
            self._refresh_conn = False

        def _create_request(self, na_element: Any, enable_tunneling: bool = False) -> tuple[Any, Any]:
            request, element = zapi.NaServer._create_request(self, na_element, enable_tunneling)
            request.add_header("Authorization", self._auth)
            return request, element


def _text(el: Any, *path: str) -> str | None:
    for name in path:
        if el is None:
            return None
        el = el.get_child_by_name(name)
    return el.get_content() if el is not None else None


def _int(text: Any) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


class OntapZapi:
    """ZAPI through netapp-lib (volume-get-iter, qtree-list-iter, lun-get-iter)."""

    API = "zapi"

    def __init__(self, hostname: str, username: str, password: str, https: bool = True, validate_certs: bool = True,
                 ca_cert: str | None = None, port: int | None = None, timeout: float = 60) -> None:
        if not HAS_NETAPP_LIB:
            raise OntapError("netapp-lib is required for ZAPI (use_rest: never): pip install netapp-lib")
        context = None
        if https:
            context = ssl.create_default_context(cafile=ca_cert) if ca_cert else ssl.create_default_context()
            if not validate_certs:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
        host, host_port = split_host_port(hostname)
        port = port or host_port
        self.server = _NaServer(host, username, password, context, transport_type="https" if https else "http")
        if port:
            self.server.set_port(port)
        self.server.set_timeout(timeout)
        self.calls = 0
        self.host = hostname
        self.ontapi: tuple[int | None, int | None] | None = None  # (major, minor) the server answered, once asked

    def negotiate(self) -> tuple[int | None, int | None]:
        """Ask the server's ONTAPI version, then use it (capped at ZAPI_VERSION) for every later call."""
        self.server.set_api_version(*PROBE_VERSION)
        result = self.invoke(zapi.NaElement("system-get-ontapi-version"))
        server = (_int(result.get_child_content("major-version")), _int(result.get_child_content("minor-version")))
        if None in server:
            raise OntapError("ONTAP at %s answered system-get-ontapi-version without major-version and minor-version"
                             % self.host)
        self.ontapi = server
        self.server.set_api_version(*min(server, ZAPI_VERSION))
        return server

    def invoke(self, element: Any) -> Any:
        self.calls += 1
        try:
            return self.server.invoke_successfully(element, True)
        except zapi.NaApiError as e:
            if str(e.code) == "401":
                raise OntapError("ONTAP at %s rejected the credentials (401 Unauthorized): check username and password "
                                 "(the user needs the ontapi application)" % self.host, 401) from e
            raise OntapError("ONTAP ZAPI %s failed: %s" % (element.get_name(), e), e.code) from e

    def _session(self) -> None:
        if self.ontapi is None:
            self.negotiate()

    def version(self) -> str | None:
        self._session()
        return _text(self.invoke(zapi.NaElement("system-get-version")), "version")

    def get_iter(self, api: str, query: dict[str, Any], desired: dict[str, Any], page_size: int) -> list[Any]:
        """Every record element of an *-get-iter / *-list-iter call, following next-tag."""
        self._session()
        records: list[Any] = []
        tag = None
        while True:
            el = zapi.NaElement(api)
            el.translate_struct({"query": query})
            el.translate_struct({"desired-attributes": desired})
            el.add_new_child("max-records", str(page_size))
            if tag:
                el.add_new_child("tag", tag, True)
            result = self.invoke(el)
            attrs = result.get_child_by_name("attributes-list")
            page = attrs.get_children() if attrs is not None else []
            num = _int(result.get_child_content("num-records"))
            if num is not None and num != len(page):
                raise OntapError("ONTAP returned %d records but num-records %s for %s" % (len(page), num, api))
            records.extend(page)
            tag = result.get_child_content("next-tag")
            if not tag:
                return records

    def inventory(self, prefix: str, svm: str | None = None, economy: bool = True,
                  page_size: int = 500) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        id_query = {"name": prefix + "*"}
        if svm:
            id_query["owning-vserver-name"] = svm
        vols = self.get_iter(
            "volume-get-iter", {"volume-attributes": {"volume-id-attributes": id_query}},
            {"volume-attributes": {"volume-id-attributes": {"name": None, "owning-vserver-name": None, "type": None,
                                                            "instance-uuid": None},
                                   "volume-space-attributes": {"size": None, "size-used": None},
                                   "volume-state-attributes": {"state": None}}}, page_size)
        volumes: list[dict[str, Any]]
        volumes = [dict(name=_text(v, "volume-id-attributes", "name"),
                        uuid=_text(v, "volume-id-attributes", "instance-uuid"),
                        svm=_text(v, "volume-id-attributes", "owning-vserver-name"),
                        size=_int(_text(v, "volume-space-attributes", "size")),
                        used=_int(_text(v, "volume-space-attributes", "size-used")),
                        state=_text(v, "volume-state-attributes", "state"),
                        type=_text(v, "volume-id-attributes", "type")) for v in vols]
        for v in volumes:
            v["kind"] = kind_of(v["name"], prefix)
        qtrees, luns = [], []
        if economy and any(v["kind"] == "qtree_pool" for v in volumes):
            query = {"volume": prefix + "qtree_pool_*", "qtree": prefix + "*"}
            if svm:
                query["vserver"] = svm
            for q in self.get_iter("qtree-list-iter", {"qtree-info": query},
                                   {"qtree-info": {"qtree": None, "volume": None, "vserver": None, "id": None}}, page_size):
                qtrees.append(dict(name=_text(q, "qtree"), volume=_text(q, "volume"), svm=_text(q, "vserver"),
                                   id=_int(_text(q, "id"))))
        if economy and any(v["kind"] == "lun_pool" for v in volumes):
            query = {"volume": prefix + "lun_pool_*"}
            if svm:
                query["vserver"] = svm
            for lun in self.get_iter("lun-get-iter", {"lun-info": query},
                                     {"lun-info": {"path": None, "volume": None, "vserver": None, "size": None}}, page_size):
                path = _text(lun, "path") or ""
                name = path.rsplit("/", 1)[-1]
                if name.startswith(prefix):
                    luns.append(dict(name=name, path=path, volume=_text(lun, "volume"), svm=_text(lun, "vserver"),
                                     size=_int(_text(lun, "size"))))
        return volumes, qtrees, luns


def connect(params: Mapping[str, Any]) -> tuple[str, OntapRest | OntapZapi]:
    """(api name, client) for module params: REST unless use_rest=never; auto falls back to ZAPI without REST."""
    kw = dict(hostname=params["hostname"], username=params["username"], password=params["password"],
              https=params["https"], validate_certs=params["validate_certs"], ca_cert=params.get("ca_cert"),
              port=params.get("http_port"), timeout=params["timeout"])
    if params["use_rest"] == "never":
        return "zapi", OntapZapi(**kw)
    rest = OntapRest(**kw)
    if params["use_rest"] == "auto":
        try:
            rest.version()
        except OntapError as e:
            if e.status == 404:  # ONTAP before 9.6 has no REST API
                return "zapi", OntapZapi(**kw)
            raise
    return "rest", rest


# the connection: the auth system "ontap" of the module base (common/auth.py) -------------------------------
# Where the credentials come from: the options fall back to these, so playbooks need not pass the password.
ENV_USERNAME = "ONTAP_USERNAME"
ENV_PASSWORD = "ONTAP_PASSWORD"
ONTAP_AUTH_ARG_SPEC = dict(
    hostname=dict(type="str", required=True),
    username=dict(type="str", aliases=["user"], fallback=(env_fallback, [ENV_USERNAME])),
    password=dict(type="str", no_log=True, aliases=["pass"], fallback=(env_fallback, [ENV_PASSWORD])),
    https=dict(type="bool", default=True),
    validate_certs=dict(type="bool", default=True),
    ca_cert=dict(type="path"),
    http_port=dict(type="int"),
    use_rest=dict(type="str", choices=["always", "never", "auto"], default="auto"),
    timeout=dict(type="int", default=60),
)


def client_from_module(module: Any) -> OntapRest | OntapZapi:
    """The ONTAP client of a module's connection options, after checking that credentials were found."""
    params = module.params
    missing = ["%s (or %s)" % (k, v) for k, v in (("username", ENV_USERNAME), ("password", ENV_PASSWORD)) if not params[k]]
    if missing:
        raise OntapError("no ONTAP credentials: set %s in the environment of the module (the playbooks take them from "
                         "the inventory's ontap_username / ontap_password or the controller's %s / %s)"
                         % (" and ".join(missing), ENV_USERNAME, ENV_PASSWORD))
    return connect(params)[1]


register_auth("ontap", ONTAP_AUTH_ARG_SPEC, client_from_module)


# the ontap_volume_info module ------------------------------------------------------------------------
def refuse_params(params: Mapping[str, Any]) -> None:
    """Fail (OntapError) on options ONTAP cannot page by, before any call."""
    if not params["prefix"]:
        raise OntapError("prefix is empty: give the backend's storagePrefix (Trident's default is trident_)")
    if params["page_size"] < 1:
        raise OntapError("page_size=%d must be at least 1 (ONTAP pages by max_records)" % params["page_size"])


def volume_inventory(params: Mapping[str, Any], client_of: Callable[[str], Any]) -> dict[str, Any]:
    """What the backend's prefix names on ONTAP, and against `expected` what leaked or is missing.

    client_of(system) builds the module's client (the module base's client("ontap"))."""
    refuse_params(params)
    client = client_of("ontap")
    api = client.API
    version = client.version()
    volumes, qtrees, luns = client.inventory(params["prefix"], svm=params["svm"], economy=params["economy"],
                                             page_size=params["page_size"])
    leaked, missing, empty_pools = leak_report(volumes, qtrees, luns, params["expected"], params["prefix"])
    names = sorted([v["name"] for v in volumes if v["kind"] == "volume"] + [q["name"] for q in qtrees]
                   + [lun["name"] for lun in luns])
    return dict(changed=False, api=api, ontap_version=version, volumes=volumes, count=len(volumes), qtrees=qtrees,
                luns=luns, internal_names=names, leaked=leaked, missing=missing, empty_pools=empty_pools,
                requests=client.calls)
