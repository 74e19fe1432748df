"""The ONTAP cluster behind the twin's Trident backends: REST and ZAPI, in the real shapes.

What the collection (plugins/module_utils/trident/ontap.py) and the netapp.ontap collection call:
- REST (ONTAP 9.6+): GET /api/cluster, /api/storage/volumes, /api/storage/qtrees, /api/storage/luns,
  /api/svm/svms and /api/storage/aggregates (the netapp-ontap library's Svm and Aggregate), and single records
  by uuid (/api/storage/volumes/{uuid}, /api/storage/luns/{uuid}, /api/svm/svms/{uuid},
  /api/storage/aggregates/{uuid}; 404 "entry doesn't exist" for an unknown one), with
  query filters on any field (`name=trident_*`, `svm.name=svm0`; `*` wildcard, `|` or, `!` not), `fields=`
  (key fields always come back; `*` for all), `max_records` pages with `_links.next.href`, `num_records`,
  HAL `_links.self`; basic auth, 401 with WWW-Authenticate on a missing or wrong password; 400 with ONTAP's
  error document on an unknown query field. POST /api/storage/volumes creates a FlexVol (202 and a job at
  /api/cluster/jobs/{uuid}, done at once) within ONTAP's size limits (sizes.py: 20MB to 100TB, refused with
  HTTP 500 and ONTAP's message otherwise).
- ZAPI: POST /servlets/netapp.servlets.admin.XMLrequest_filer with `<netapp version="1.X"><api>...</api></netapp>`:
  system-get-ontapi-version (answered at any version), system-get-version, volume-get-iter, qtree-list-iter, lun-get-iter with `query`, `desired-attributes`,
  `max-records` and `tag`, answering `<results status="passed">` with attributes-list, num-records and
  next-tag (an escaped key document, as ONTAP sends it); volume-create within the same size limits; unknown APIs
  fail with errno 13005; a request above the release's highest ONTAPI (ontapi.py: 9.18.1 serves 1.281) fails with
  errno 13010. stats: zapi_calls lists the last calls as [api, version asked].

Under the cluster setting `ontap_serial` (an overloaded ONTAP, see controllers/trident.py) the endpoint answers
one request at a time: the others wait for it, in arrival order (stats: requests.serialized counts them).

The storage itself comes from the twin's Trident (`cluster.trident.volumes`, see inventory()); until that
registry exists, it is derived from the Trident PVs, as Trident names things: FlexVol `<internalName>` for
ontap-nas/ontap-san, a qtree or LUN of that name in `trident_qtree_pool_*` / `trident_lun_pool_*` FlexVols for
the economy drivers.
"""
from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import re
import secrets
import uuid
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web

from .ontapi import highest_ontapi, refusal
from .sizes import MIN_FLEXVOL, ZAPI_ERRNO, flexvol_size_error

if TYPE_CHECKING:
    from ..context import ClusterContext

USERNAME = "admin"
SVM = "svm0"
AGGREGATE = "aggr1"
NODE = "twin-ontap-01"
AGGREGATE_SIZE = 10 << 40  # 10 TiB of usable space on the one data aggregate
VERSION = "NetApp Release 9.18.1P2: Mon Feb 02 12:00:00 UTC 2026"  # the seed's test bed runs 9.18.1P2
VERSION_TUPLE = (9, 18, 1)
ONTAPI = highest_ontapi(VERSION_TUPLE)  # (1, 281)
ZAPI_CALLS_KEPT = 200  # the last ZAPI calls stats() lists
TRIDENT_DRIVER = "csi.trident.netapp.io"
NS = "http://www.netapp.com/filer/admin"
QTREES_PER_FLEXVOL = 200  # Trident's qtreesPerFlexvol default
LUNS_PER_FLEXVOL = 100  # Trident's lunsPerFlexvol default
DUPLICATE = "17"  # EEXIST: a volume name taken in the SVM (unverified for REST)
RESERVED_QUERY = {"fields", "max_records", "return_records", "return_timeout", "order_by", "start.key"}


# the inventory ---------------------------------------------------------------------------------------
def _uid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.md5("/".join(parts).encode()).hexdigest()))


def _pool_suffix(backend: str, index: int) -> str:
    """Trident's pool names end in random upper-case letters; ours are derived so that they stay stable."""
    digest = hashlib.sha1(f"{backend}/{index}".encode()).digest()
    return "".join(chr(ord("A") + b % 26) for b in digest[:10])


def _size(quantity: str | None) -> int:
    if not quantity:
        return 1 << 30
    m = re.match(r"^(\d+(?:\.\d+)?)([KMGTPE]i?)?$", str(quantity))
    if not m:
        return 1 << 30
    mult = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    return int(float(m.group(1)) * mult.get(m.group(2) or "", 1))


class Inventory:
    """Volumes, qtrees and LUNs of one SVM, as plain records the REST and ZAPI views render."""

    def __init__(self) -> None:
        self.volumes: list[dict[str, Any]] = []
        self.qtrees: list[dict[str, Any]] = []
        self.luns: list[dict[str, Any]] = []
        self._pools: dict[str, dict[str, Any]] = {}

    def volume(self, name: str, size: int, svm: str = SVM) -> dict[str, Any]:
        v = {"name": name, "uuid": _uid(svm, name), "svm": svm, "size": size, "used": min(size, 352256),
             "state": "online", "type": "rw"}
        self.volumes.append(v)
        return v

    def pool(self, kind: str, backend: str, index: int, svm: str = SVM) -> dict[str, Any]:
        name = f"trident_{kind}_pool_{re.sub(r'[^A-Za-z0-9_]', '_', backend)}_{_pool_suffix(backend, index)}"
        if name not in self._pools:
            self._pools[name] = self.volume(name, 0, svm)
        return self._pools[name]

    def pool_named(self, name: str, svm: str = SVM) -> dict[str, Any]:
        if name not in self._pools:
            self._pools[name] = self.volume(name, 0, svm)
        return self._pools[name]

    def add(self, internal: str, driver: str, backend: str, size: int, svm: str = SVM, pool: str | None = None) -> None:
        if driver == "ontap-nas-economy" or (pool or "").startswith("trident_qtree_pool"):
            p = self.pool_named(pool, svm) if pool else self.pool(
                "qtree", backend, self._count("qtree", backend) // QTREES_PER_FLEXVOL, svm)
            p["size"] += size
            self.qtrees.append({"name": internal, "volume": p["name"], "svm": svm, "id": 1 + sum(
                1 for q in self.qtrees if q["volume"] == p["name"])})
        elif driver == "ontap-san-economy" or (pool or "").startswith("trident_lun_pool"):
            p = self.pool_named(pool, svm) if pool else self.pool(
                "lun", backend, self._count("lun", backend) // LUNS_PER_FLEXVOL, svm)
            p["size"] += size
            self.luns.append({"name": internal, "path": f"/vol/{p['name']}/{internal}", "volume": p["name"], "svm": svm,
                              "size": size, "uuid": _uid(svm, p["name"], internal)})
        else:
            self.volume(internal, size, svm)

    def svm_names(self) -> list[str]:
        """The data SVMs: the one Trident's backends use, and any other a volume names."""
        return sorted({SVM, *(v["svm"] for v in self.volumes)})

    def _count(self, kind: str, backend: str) -> int:
        items = self.qtrees if kind == "qtree" else self.luns
        tag = f"trident_{kind}_pool_{re.sub(r'[^A-Za-z0-9_]', '_', backend)}_"
        return sum(1 for i in items if i["volume"].startswith(tag))


def inventory(cluster: ClusterContext) -> Inventory:
    inv = Inventory()
    trident = getattr(cluster, "trident", None)
    volumes = getattr(trident, "volumes", None)
    if volumes is not None:
        # twin/controllers/trident.py: .pools {flexvol: {name, svm, size, members}}, .volumes {internal name:
        # {name, pv, size, driver, pool, svm, kind flexvol|qtree|lun}}; economy members live in their pool.
        pools = dict(getattr(trident, "pools", {}) or {})
        for p in pools.values():
            inv.pool_named(p["name"], p.get("svm") or SVM)  # an emptied pool stays listed until Trident deletes it
        for v in list(volumes.values()):
            economy = str(v.get("driver", "")).endswith("economy")
            pool = v.get("pool") if economy or v.get("pool") in pools else None
            inv.add(v["name"], v.get("driver") or "ontap-nas", v.get("backend") or "ontap", int(v.get("size") or 0),
                    v.get("svm") or SVM, pool)
        return inv
    # Without the twin's Trident: what the PVs say (internalName; driver from the class's backendType parameter).
    deleted: set[str] = set()
    for c in getattr(cluster, "controllers", []):
        deleted |= set(getattr(c, "volumes_deleted", ()) or ())
    pv_rt = cluster.store.rt("", "v1", "persistentvolumes")
    for pv in cluster.store.list(pv_rt):
        csi = pv["spec"].get("csi") or {}
        if csi.get("driver") != TRIDENT_DRIVER or pv["metadata"]["name"] in deleted:
            continue
        attrs = csi.get("volumeAttributes") or {}
        internal = attrs.get("internalName") or "trident_" + pv["metadata"]["name"].replace("-", "_")
        inv.add(internal, attrs.get("backendType") or "ontap-nas", attrs.get("backendUUID") or "ontap",
                _size((pv["spec"].get("capacity") or {}).get("storage")), pool=attrs.get("pool"))
    return inv


# REST views ------------------------------------------------------------------------------------------
def rest_volume(v: dict[str, Any]) -> dict[str, Any]:
    return {"uuid": v["uuid"], "name": v["name"], "size": v["size"], "state": v["state"], "type": v["type"],
            "style": "flexvol", "aggregates": [{"name": AGGREGATE, "uuid": _uid(AGGREGATE)}],
            "svm": {"name": v["svm"], "uuid": _uid("svm", v["svm"])},
            "space": {"size": v["size"], "used": v["used"], "available": max(0, v["size"] - v["used"])},
            "nas": {"path": "/" + v["name"]}, "_links": {"self": {"href": f"/api/storage/volumes/{v['uuid']}"}}}


def rest_qtree(q: dict[str, Any]) -> dict[str, Any]:
    vol_uuid = _uid(q["svm"], q["volume"])
    return {"svm": {"name": q["svm"], "uuid": _uid("svm", q["svm"])}, "volume": {"name": q["volume"], "uuid": vol_uuid},
            "id": q["id"], "name": q["name"], "security_style": "unix", "unix_permissions": 777,
            "export_policy": {"name": "default"}, "path": f"/{q['volume']}/{q['name']}",
            "_links": {"self": {"href": f"/api/storage/qtrees/{vol_uuid}/{q['id']}"}}}


def rest_lun(lun: dict[str, Any]) -> dict[str, Any]:
    return {"uuid": lun["uuid"], "name": lun["path"], "svm": {"name": lun["svm"], "uuid": _uid("svm", lun["svm"])},
            "location": {"logical_unit": lun["name"], "volume": {"name": lun["volume"], "uuid": _uid(lun["svm"], lun["volume"])}},
            "space": {"size": lun["size"], "used": 0}, "os_type": "linux", "enabled": True,
            "status": {"state": "online", "mapped": False},
            "_links": {"self": {"href": f"/api/storage/luns/{lun['uuid']}"}}}


def rest_svm(name: str) -> dict[str, Any]:
    """An SVM as /api/svm/svms answers it with fields=*: data protocols Trident uses on, in the Default IPspace."""
    uid = _uid("svm", name)
    return {"uuid": uid, "name": name, "state": "running", "subtype": "default", "language": "c.utf_8",
            "comment": "", "ipspace": {"name": "Default", "uuid": _uid("ipspace", "Default")},
            "aggregates": [{"name": AGGREGATE, "uuid": _uid(AGGREGATE)}], "aggregates_delegated": True,
            "snapshot_policy": {"name": "default", "uuid": _uid("snapshot-policy", "default")},
            "nfs": {"enabled": True, "allowed": True}, "iscsi": {"enabled": True, "allowed": True},
            "cifs": {"enabled": False, "allowed": True}, "fcp": {"enabled": False, "allowed": True},
            "nvme": {"enabled": False, "allowed": True}, "s3": {"enabled": False, "allowed": True},
            "_links": {"self": {"href": f"/api/svm/svms/{uid}"}}}


def rest_aggregate(inv: Inventory) -> dict[str, Any]:
    """The data aggregate every volume lives on; used space is what the volumes take (thick, as Trident's
    default spaceReserve none still counts the FlexVol sizes against the aggregate here)."""
    uid = _uid(AGGREGATE)
    used = min(AGGREGATE_SIZE, sum(v["size"] for v in inv.volumes))
    return {"uuid": uid, "name": AGGREGATE, "state": "online", "snaplock_type": "non_snaplock",
            "create_time": "2026-02-02T12:00:00+00:00",
            "node": {"name": NODE, "uuid": _uid("node", NODE)},
            "home_node": {"name": NODE, "uuid": _uid("node", NODE)},
            "space": {"block_storage": {"size": AGGREGATE_SIZE, "used": used, "available": AGGREGATE_SIZE - used,
                                        "full_threshold_percent": 98},
                      "efficiency": {"savings": 0, "ratio": 1.0, "logical_used": used}},
            "block_storage": {"primary": {"disk_count": 24, "disk_class": "solid_state", "disk_type": "ssd",
                                          "raid_type": "raid_dp", "raid_size": 24},
                              "mirror": {"enabled": False, "state": "unmirrored"}, "hybrid_cache": {"enabled": False}},
            "data_encryption": {"software_encryption_enabled": False, "drive_protection_enabled": False},
            "volume_count": len(inv.volumes),
            "_links": {"self": {"href": f"/api/storage/aggregates/{uid}"}}}


_SAMPLE = {"name": "x", "uuid": _uid("x"), "svm": SVM, "size": 0, "used": 0, "state": "online", "type": "rw",
           "volume": "x", "id": 1, "path": "/vol/x/x"}
REST_COLLECTIONS = {
    # path: (records(inventory), key fields always returned, sort/paging key)
    "storage/volumes": (lambda inv: [rest_volume(v) for v in inv.volumes], ("uuid", "name"),
                        lambda r: (r["svm"]["name"], r["name"])),
    "storage/qtrees": (lambda inv: [rest_qtree(q) for q in inv.qtrees], ("svm", "volume", "id", "name"),
                       lambda r: (r["svm"]["name"], r["volume"]["name"], r["id"])),
    "storage/luns": (lambda inv: [rest_lun(lun) for lun in inv.luns], ("uuid", "name"),
                     lambda r: (r["svm"]["name"], r["name"])),
    "svm/svms": (lambda inv: [rest_svm(n) for n in inv.svm_names()], ("uuid", "name"), lambda r: (r["name"],)),
    "storage/aggregates": (lambda inv: [rest_aggregate(inv)], ("uuid", "name"), lambda r: (r["name"],)),
}


def _lookup(record: dict[str, Any], dotted: str) -> tuple[bool, Any]:
    cur: Any = record
    for part in dotted.split("."):
        if isinstance(cur, list):
            cur = cur[0] if cur else None
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def pattern_match(pattern: str, value: Any) -> bool:
    """ONTAP query semantics: a|b alternatives, !x negation, * wildcard; case-insensitive like ONTAP's CLI."""
    text = "" if value is None else (str(value).lower() if not isinstance(value, bool) else str(value).lower())
    for alt in pattern.split("|"):
        neg = alt.startswith("!")
        alt = alt[1:] if neg else alt
        rx = "^" + ".*".join(re.escape(p) for p in alt.lower().split("*")) + "$"
        hit = re.match(rx, text) is not None
        if hit != neg:
            return True
    return False


def _project(record: dict[str, Any], fields: list[str], keys: tuple[str, ...]) -> dict[str, Any]:
    """The record with only the key fields and the asked ones (dotted paths), as ONTAP's `fields=` does."""
    if any(f in ("*", "**") for f in fields):
        return record
    out: dict[str, Any] = {"_links": record["_links"]}
    for f in list(keys) + fields:
        _copy_path(record, out, f.split("."))
    return out


def _copy_path(src: Any, dst: dict[str, Any], parts: list[str]) -> None:
    head = parts[0]
    if not isinstance(src, dict) or head not in src:
        return
    value = src[head]
    if len(parts) == 1:
        dst[head] = copy.deepcopy(value)
    elif isinstance(value, list):
        items = dst.setdefault(head, [{} for _ in value])
        for s_item, d_item in zip(value, items, strict=False):
            _copy_path(s_item, d_item, parts[1:])
    else:
        _copy_path(value, dst.setdefault(head, {}), parts[1:])


def ontap_error(status: int, message: str, code: str, target: str | None = None) -> web.Response:
    err: dict[str, Any] = {"message": message, "code": code}
    if target:
        err["target"] = target
    headers = {"WWW-Authenticate": 'Basic realm="ONTAP"'} if status == 401 else None
    return web.json_response({"error": err}, status=status, headers=headers)


def _sample_inventory() -> Inventory:
    """One record of each kind: what decides whether a query field exists."""
    inv = Inventory()
    inv.volumes.append(dict(_SAMPLE))
    inv.qtrees.append(dict(_SAMPLE))
    inv.luns.append(dict(_SAMPLE))
    return inv


# ZAPI views ------------------------------------------------------------------------------------------
def zapi_volume(v: dict[str, Any]) -> dict[str, Any]:
    return {"volume-attributes": {
        "volume-id-attributes": {"name": v["name"], "owning-vserver-name": v["svm"], "containing-aggregate-name": AGGREGATE,
                                 "type": v["type"], "style-extended": "flexvol", "instance-uuid": v["uuid"], "uuid": v["uuid"],
                                 "junction-path": "/" + v["name"]},
        "volume-space-attributes": {"size": str(v["size"]), "size-used": str(v["used"]),
                                    "size-available": str(max(0, v["size"] - v["used"]))},
        "volume-state-attributes": {"state": v["state"]}}}


def zapi_qtree(q: dict[str, Any]) -> dict[str, Any]:
    return {"qtree-info": {"qtree": q["name"], "volume": q["volume"], "vserver": q["svm"], "id": str(q["id"]),
                           "security-style": "unix", "status": "normal", "oplocks": "enabled", "export-policy": "default"}}


def zapi_lun(lun: dict[str, Any]) -> dict[str, Any]:
    return {"lun-info": {"path": lun["path"], "volume": lun["volume"], "vserver": lun["svm"], "qtree": "",
                         "size": str(lun["size"]), "size-used": "0", "online": "true", "mapped": "false",
                         "uuid": lun["uuid"], "multiprotocol-type": "linux"}}


ZAPI_ITERS = {
    # api: (records(inventory), key paths of the next-tag document)
    "volume-get-iter": (lambda inv: [zapi_volume(v) for v in inv.volumes],
                        (("volume-attributes", "volume-id-attributes", "owning-vserver-name"),
                         ("volume-attributes", "volume-id-attributes", "name"))),
    "qtree-list-iter": (lambda inv: [zapi_qtree(q) for q in inv.qtrees],
                        (("qtree-info", "vserver"), ("qtree-info", "volume"), ("qtree-info", "qtree"))),
    "lun-get-iter": (lambda inv: [zapi_lun(lun) for lun in inv.luns],
                     (("lun-info", "vserver"), ("lun-info", "path"))),
}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _tree(el: ET.Element) -> Any:
    """An XML element as nested dicts (leaves: text or None); repeated children are not needed for queries."""
    children = list(el)
    if not children:
        return el.text
    return {_local(c.tag): _tree(c) for c in children}


def _get_path(rec: dict[str, Any], path: tuple[str, ...]) -> Any:
    cur: Any = rec
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def zapi_query_match(query: Any, rec: Any) -> bool:
    if isinstance(query, dict):
        if not isinstance(rec, dict):
            return False
        return all(zapi_query_match(q, rec.get(k)) for k, q in query.items())
    if query is None:
        return True
    return rec is not None and not isinstance(rec, dict) and pattern_match(query, rec)


def zapi_desired(desired: Any, rec: Any) -> Any:
    if not isinstance(desired, dict) or not isinstance(rec, dict):
        return rec
    return {k: zapi_desired(d, rec[k]) for k, d in desired.items() if k in rec}


def _to_xml(parent: ET.Element, data: Any) -> None:
    for k, v in data.items():
        child = ET.SubElement(parent, k)
        if isinstance(v, dict):
            _to_xml(child, v)
        elif v is not None:
            child.text = str(v)


def zapi_response(results: ET.Element) -> web.Response:
    root = ET.Element("netapp", {"version": "%d.%d" % ONTAPI, "xmlns": NS})
    root.append(results)
    body = (b"<?xml version='1.0' encoding='UTF-8' ?>\n<!DOCTYPE netapp SYSTEM 'file:/etc/netapp_gx.dtd'>\n"
            + ET.tostring(root, encoding="utf-8"))
    return web.Response(body=body, content_type="text/xml")


def zapi_failed(errno: str, reason: str) -> web.Response:
    return zapi_response(ET.Element("results", {"status": "failed", "errno": errno, "reason": reason}))


def _next_tag(api: str, rec: dict[str, Any]) -> str:
    keys = ZAPI_ITERS[api][1]
    inner = "".join(f"<key-{i}>{_get_path(rec, path)}</key-{i}>" for i, path in enumerate(keys))
    return f"<{api}-key-td>{inner}</{api}-key-td>"


def _tag_key(api: str, tag: str) -> tuple[str, ...] | None:
    found = re.findall(r"<key-\d+>(.*?)</key-\d+>", tag or "")
    return tuple(found) if found else None


# the server ------------------------------------------------------------------------------------------
class Ontap:
    def __init__(self, cluster: ClusterContext) -> None:
        self.cluster = cluster
        self.password = cluster.ontap_password or secrets.token_urlsafe(12)
        self.requests = {"rest": 0, "zapi": 0, "unauthorized": 0, "serialized": 0}
        self.created: list[dict[str, Any]] = []  # volumes made through REST or ZAPI (Trident's come from its registry)
        self.jobs: dict[str, dict[str, Any]] = {}
        self.zapi_calls: list[list[str | None]] = []  # [api, version asked], the last ZAPI_CALLS_KEPT
        self.one_at_a_time = asyncio.Lock()  # held per request under the setting ontap_serial
        app = web.Application(middlewares=[self.serialize])
        app.router.add_get("/api/cluster", self.cluster_info)
        app.router.add_get("/api/{collection:storage/(?:volumes|qtrees|luns|aggregates)|svm/svms}", self.collection)
        app.router.add_get("/api/{collection:storage/(?:volumes|luns|aggregates)|svm/svms}/{uuid}", self.record)
        app.router.add_post("/api/storage/volumes", self.create_volume)
        app.router.add_get("/api/cluster/jobs/{uuid}", self.job)
        app.router.add_post("/servlets/netapp.servlets.admin.XMLrequest_filer", self.zapi)
        self.app = app

    @web.middleware
    async def serialize(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """An overloaded ONTAP (setting ontap_serial, read per request) answers one request at a time."""
        if not (self.cluster.settings or {}).get("ontap_serial"):
            return await handler(request)
        async with self.one_at_a_time:
            self.requests["serialized"] += 1
            return await handler(request)

    def authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        want = "Basic " + base64.b64encode(f"{USERNAME}:{self.password}".encode()).decode()
        if secrets.compare_digest(header, want):
            return True
        self.requests["unauthorized"] += 1
        return False

    async def cluster_info(self, request: web.Request) -> web.Response:
        if not self.authorized(request):
            return ontap_error(401, "not authorized for that command", "6")
        self.requests["rest"] += 1
        g, ma, mi = VERSION_TUPLE
        return web.json_response({"name": "twin-ontap", "uuid": _uid("cluster"),
                                  "version": {"full": VERSION, "generation": g, "major": ma, "minor": mi},
                                  "_links": {"self": {"href": "/api/cluster"}}})

    async def collection(self, request: web.Request) -> web.Response:
        if not self.authorized(request):
            return ontap_error(401, "not authorized for that command", "6")
        self.requests["rest"] += 1
        path = request.match_info["collection"]
        make, keys, sort_key = REST_COLLECTIONS[path]
        q = request.query
        records = sorted(make(self.inventory()), key=sort_key)
        for field, pattern in q.items():
            if field in RESERVED_QUERY:
                continue
            if not _lookup(make(_sample_inventory())[0], field)[0]:
                return ontap_error(400, f'Unexpected argument "{field}".', "262179", field)
            records = [r for r in records if pattern_match(pattern, _lookup(r, field)[1])]
        if q.get("start.key"):
            start = tuple(q["start.key"].split("/"))
            records = [r for r in records if tuple(str(x) for x in sort_key(r)) > start]
        fields = [f for f in (q.get("fields") or "").split(",") if f]
        page = records
        links: dict[str, Any] = {"self": {"href": request.path_qs}}
        try:
            max_records = int(q["max_records"]) if "max_records" in q else None
        except ValueError:
            return ontap_error(400, f'Invalid value "{q["max_records"]}" for "max_records".', "262179", "max_records")
        if max_records is not None and len(records) > max_records:
            page = records[:max_records]
            nxt = {k: v for k, v in q.items() if k != "start.key"}
            nxt["start.key"] = "/".join(str(x) for x in sort_key(page[-1]))
            links["next"] = {"href": f"/api/{path}?" + urlencode(nxt, safe="*|!,./")}
        return web.json_response({"records": [_project(r, fields, keys) for r in page], "num_records": len(page),
                                  "_links": links})

    async def record(self, request: web.Request) -> web.Response:
        """One record by uuid, with `fields=` as on the collection."""
        if not self.authorized(request):
            return ontap_error(401, "not authorized for that command", "6")
        self.requests["rest"] += 1
        make, keys, _ = REST_COLLECTIONS[request.match_info["collection"]]
        uid = request.match_info["uuid"]
        found = [r for r in make(self.inventory()) if r["uuid"] == uid]
        if not found:
            return ontap_error(404, "entry doesn't exist", "4", "uuid")
        fields = [f for f in (request.query.get("fields") or "").split(",") if f]
        # a single GET without fields= answers the record's default view, as ONTAP does: everything
        return web.json_response(_project(found[0], fields, keys) if fields else found[0])

    async def zapi(self, request: web.Request) -> web.Response:
        if not self.authorized(request):
            return web.Response(status=401, text="Unauthorized", headers={"WWW-Authenticate": 'Basic realm="ONTAP"'})
        self.requests["zapi"] += 1
        try:
            root = ET.fromstring(await request.read())
        except ET.ParseError as e:
            return zapi_failed("13001", f"Invalid XML: {e}")
        calls = list(root)
        if _local(root.tag) != "netapp" or len(calls) != 1:
            return zapi_failed("13001", "expected one API call inside <netapp>")
        call = calls[0]
        api = _local(call.tag)
        self.zapi_calls = [*self.zapi_calls, [api, root.get("version")]][-ZAPI_CALLS_KEPT:]
        refused = refusal(api, root.get("version"), VERSION_TUPLE)
        if refused:
            return zapi_failed(*refused)
        if api == "system-get-ontapi-version":
            results = ET.Element("results", {"status": "passed"})
            _to_xml(results, {"major-version": ONTAPI[0], "minor-version": ONTAPI[1]})
            return zapi_response(results)
        if api == "system-get-version":
            results = ET.Element("results", {"status": "passed"})
            g, ma, mi = VERSION_TUPLE
            _to_xml(results, {"build-timestamp": "1770033600", "is-clustered": "true", "version": VERSION,
                              "version-tuple": {"system-version-tuple": {"generation": g, "major": ma, "minor": mi}}})
            return zapi_response(results)
        args = {_local(c.tag): c for c in call}
        if api == "volume-create":
            return self.zapi_volume_create(args)
        if api not in ZAPI_ITERS:
            return zapi_failed("13005", f"Unable to find API: {api}")
        query = _tree(args["query"]) if "query" in args else None
        desired = _tree(args["desired-attributes"]) if "desired-attributes" in args else None
        try:
            max_records = int(args["max-records"].text or "") if "max-records" in args else 20  # ZAPI's default page
        except (TypeError, ValueError):
            return zapi_failed("13115", "Invalid value specified for \"max-records\" element")
        make, key_paths = ZAPI_ITERS[api]
        records = sorted(make(self.inventory()), key=lambda r: tuple(str(_get_path(r, p)) for p in key_paths))
        if query:
            records = [r for r in records if zapi_query_match(query, r)]
        start = _tag_key(api, args["tag"].text or "") if "tag" in args else None
        if start:
            records = [r for r in records if tuple(str(_get_path(r, p)) for p in key_paths) > start]
        page, more = records[:max_records], len(records) > max_records
        results = ET.Element("results", {"status": "passed"})
        if page:
            attrs = ET.SubElement(results, "attributes-list")
            for r in page:
                _to_xml(attrs, zapi_desired(desired, r) if desired else r)
        if more:
            ET.SubElement(results, "next-tag").text = _next_tag(api, page[-1])
        ET.SubElement(results, "num-records").text = str(len(page))
        return zapi_response(results)

    def inventory(self) -> Inventory:
        inv = inventory(self.cluster)
        inv.volumes.extend(dict(v) for v in self.created)
        return inv

    def add_volume(self, name: str, svm: str, size: int) -> tuple[str, str] | dict[str, Any]:
        """A new FlexVol, or ONTAP's (code, message) refusing it: a size out of range (sizes.py), a name taken."""
        refused = flexvol_size_error(size)
        if refused:
            return refused
        if any(v["name"] == name and v["svm"] == svm for v in self.inventory().volumes):
            return DUPLICATE, f'Duplicate volume name {name}.'
        v = Inventory().volume(name, size, svm)
        self.created.append(v)
        return v

    async def create_volume(self, request: web.Request) -> web.Response:
        """POST /api/storage/volumes: 202 with a job (done at once), or the size refusal (HTTP 500, as ONTAP answers)."""
        if not self.authorized(request):
            return ontap_error(401, "not authorized for that command", "6")
        self.requests["rest"] += 1
        try:
            body = await request.json()
        except ValueError:
            return ontap_error(400, "Invalid JSON input.", "262179")
        given = body.get("svm") or {}
        svm = str(given.get("name") or (SVM if given.get("uuid") else ""))
        for field, value in (("name", body.get("name")), ("svm.name", svm), ("aggregates", body.get("aggregates"))):
            if not value:
                return ontap_error(400, f'Missing value for required field "{field}".', "2", field)
        size = body.get("size", MIN_FLEXVOL)  # ONTAP's default size is 20MB
        if isinstance(size, bool) or not isinstance(size, int):
            return ontap_error(400, f'Invalid value "{size}" for "size".', "262179", "size")
        made = self.add_volume(str(body["name"]), svm, size)
        if isinstance(made, tuple):
            return ontap_error(409 if made[0] == DUPLICATE else 500, made[1], made[0])
        uid = _uid("job", made["uuid"])
        self.jobs[uid] = {"uuid": uid, "state": "success", "message": "success", "code": 0,
                          "description": f"POST /api/storage/volumes/{made['uuid']}",
                          "_links": {"self": {"href": f"/api/cluster/jobs/{uid}"}}}
        return web.json_response({"job": {"uuid": uid, "_links": {"self": {"href": f"/api/cluster/jobs/{uid}"}}}},
                                 status=202)

    async def job(self, request: web.Request) -> web.Response:
        if not self.authorized(request):
            return ontap_error(401, "not authorized for that command", "6")
        self.requests["rest"] += 1
        found = self.jobs.get(request.match_info["uuid"])
        return web.json_response(found) if found else ontap_error(404, "entry doesn't exist", "4", "uuid")

    def zapi_volume_create(self, args: dict[str, ET.Element]) -> web.Response:
        """volume-create (volume, containing-aggr-name, size as <number>[k|m|g|t|p] or bytes)."""
        name = (args["volume"].text or "").strip() if "volume" in args else ""
        if not name or "containing-aggr-name" not in args:
            return zapi_failed("13115", "Missing input: volume and containing-aggr-name are required")
        text = (args["size"].text or "").strip().lower() if "size" in args else str(MIN_FLEXVOL)
        m = re.fullmatch(r"(\d+)([kmgtp]?)", text)
        if not m:
            return zapi_failed("13115", f'Invalid value specified for "size" element within "volume-create": "{text}"')
        made = self.add_volume(name, SVM, int(m.group(1)) * 1024 ** ("_kmgtp".index(m.group(2)) if m.group(2) else 0))
        if isinstance(made, tuple):
            return zapi_failed(DUPLICATE if made[0] == DUPLICATE else ZAPI_ERRNO, made[1])
        return zapi_response(ET.Element("results", {"status": "passed"}))

    async def admin(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /_twin/ontap: request counters and what the SVM holds (for tests)."""
        return self.stats(body)

    def stats(self, body: dict[str, Any] | None = None) -> dict[str, Any]:
        inv = self.inventory()
        return {"requests": dict(self.requests), "volumes": len(inv.volumes), "qtrees": len(inv.qtrees),
                "luns": len(inv.luns), "svms": len(inv.svm_names()), "aggregates": 1,
                "zapi_calls": [list(c) for c in self.zapi_calls]}


async def start(cluster: ClusterContext) -> dict[str, Any]:
    """Serve the ONTAP management LIF on its own TLS port; return its cloud.json entry."""
    ontap = Ontap(cluster)
    base = await cluster.serve_app(ontap.app, tls=True)
    cluster.admin_handlers["ontap"] = ontap.admin
    host = base.split("://", 1)[1]
    return {"ontap": {"management_lif": host, "url": base, "username": USERNAME, "password": ontap.password,
                      "svm": SVM, "https": True, "ca_cert": str(cluster.dir / "pki" / "ca.crt")}}
