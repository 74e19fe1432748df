# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
name: ack
short_description: Alibaba Cloud ACK clusters of an account as inventory hosts
version_added: "0.2.0"
description:
  - Lists the ACK clusters of the account (CS API C(DescribeClustersV1), every page) and makes each a host in the
    group O(cluster_group) (default C(k8s_clusters)), which the collection's playbooks target. The hosts run on the
    controller.
  - Host vars - C(ack_cluster_id), C(ack_cluster_name), C(ack_region), C(ack_cluster_type), C(ack_cluster_spec),
    C(ack_state), C(k8s_version) (C(current_version)), C(ack_node_count) (C(size)), C(ack_tags) (a dict); with
    O(fetch_kubeconfig) C(k8s_kubeconfig) and C(ack_kubeconfig_expiration); with O(addon_versions)
    C(ack_addon_versions) (addon name to version); with O(endpoint) C(ack_cs_endpoint), with O(ecs_endpoint)
    C(ack_ecs_endpoint). The C(ack_parallel_attach) role and the C(ack_*) modules read these names.
  - Credentials are never options of this plugin, so they never end up in an inventory file. They come from the
    environment as the Alibaba Cloud default credential chain reads it - E(ALIBABA_CLOUD_ACCESS_KEY_ID),
    E(ALIBABA_CLOUD_ACCESS_KEY_SECRET) and, for STS, E(ALIBABA_CLOUD_SECURITY_TOKEN); else the aliyun CLI profile in
    C(~/.aliyun/config.json) named by E(ALIBABA_CLOUD_PROFILE) (else its current profile), in mode C(AK) or
    C(StsToken).
  - The configuration file's name must end in C(.ack.yml) or C(.ack.yaml), or its C(plugin) key must name this
    plugin (the C(auto) inventory plugin then loads it whatever its name).
extends_documentation_fragment:
  - constructed
  - inventory_cache
  - storageperf.k8s.cluster_inventory
options:
  plugin:
    description: Marks this file as a source for this plugin.
    type: str
    required: true
    choices: [storageperf.k8s.ack]
  regions:
    description:
      - Regions to list, one listing each (C(region_id)). Empty lists the clusters of every region in one listing.
    type: list
    elements: str
    default: []
  endpoint:
    description:
      - CS (ACK) API endpoint, as C(host[:port]) or C(http(s)://host[:port]); a bare host means HTTPS. Use it for a
        VPC or private endpoint (C(cs-vpc.cn-hangzhou.aliyuncs.com)). Default C(cs.aliyuncs.com).
      - Also set as the host var C(ack_cs_endpoint), so the modules and roles run against a host call the same one.
    type: str
  ecs_endpoint:
    description:
      - ECS API endpoint of the clusters' region, set as the host var C(ack_ecs_endpoint) for the modules and roles
        that call ECS. This plugin does not call ECS.
    type: str
  filters:
    description:
      - Which clusters become hosts. Every given filter must match.
      - C(name) - a shell-style pattern for the whole cluster name (C(prod-*)); its longest literal part is also
        sent to the API's C(name) filter (a substring match) to shorten the listing.
      - C(tags) - a dict of tag key to value; a cluster must carry every pair. A value of C(null) matches any value
        of that key.
      - C(cluster_type) - for example C(ManagedKubernetes), C(Kubernetes), C(ExternalKubernetes); sent to the API.
      - C(cluster_spec) - for example C(ack.pro.small); sent to the API.
      - C(state) - a state or a list of states (C(running), C(updating), C(failed), ...). Default C(running); an
        empty list takes every state.
    type: dict
    default: {}
  hostnames:
    description: What names a host - the cluster C(name) (sanitised; clusters sharing a name get C(_<cluster_id>))
      or the C(cluster_id).
    type: str
    choices: [name, cluster_id]
    default: name
  fetch_kubeconfig:
    description:
      - Also fetch each cluster's kubeconfig (C(DescribeClusterUserKubeconfig)) into O(kubeconfig_dir) as
        C(<cluster_id>.kubeconfig) and point C(k8s_kubeconfig) at it. One call per cluster.
      - The files are created with mode 0600 (written to a 0600 temporary file in the same directory, then renamed);
        the directory is created with mode 0700. The kubeconfig's content never becomes a variable.
    type: bool
    default: false
  kubeconfig_dir:
    description:
      - Where O(fetch_kubeconfig) writes the kubeconfig files.
      - A directory its group or others can write to, or a C(*.kubeconfig) in it they can read, is refused with the
        fix (C(chmod 700 <dir>), C(chmod 600 <file>)) before any call; a cached listing is checked the same way.
    type: path
    default: ~/.kube/storageperf
  kubeconfig_private_ip:
    description: With O(fetch_kubeconfig), the kubeconfig for the API server's internal (VPC) address
      (C(PrivateIpAddress=true)).
    type: bool
    default: false
  kubeconfig_minutes:
    description:
      - With O(fetch_kubeconfig), a temporary kubeconfig valid this many minutes (C(TemporaryDurationMinutes),
        15 to 4320). Default - the API's own lifetime.
      - A cached listing whose kubeconfigs expire within 5 minutes, or whose files are gone, is listed anew.
    type: int
  addon_versions:
    description: Also read the installed addons' versions (C(ListClusterAddonInstances)) into
      C(ack_addon_versions). One call per cluster.
    type: bool
    default: false
  api_timeout:
    description: Seconds one API call may take.
    type: int
    default: 30
  api_retries:
    description: Attempts per call on throttling and transient server errors, with capped, jittered backoff.
    type: int
    default: 6
  concurrency:
    description: How many calls run at once (listing pages after the first, per-cluster calls).
    type: int
    default: 8
notes:
  - O(addon_versions) reads C(ListClusterAddonInstances), as the C(storageperf.k8s.ack_cluster_info) module does;
    the deprecated C(DescribeClusterAddonsVersion) is no longer called.
  - The RAM policy needs C(cs:DescribeClustersV1) (listing), C(cs:GetUserConfig) (O(fetch_kubeconfig)) and
    C(cs:ListClusterAddonInstances) (O(addon_versions)).
requirements:
  - aliyun-python-sdk-core >= 2.13 (Python library, on the controller)
seealso:
  - plugin: storageperf.k8s.kubeconfig
    plugin_type: inventory
  - module: storageperf.k8s.ack_cluster_info
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
# prod.ack.yml - the running clusters of two regions, grouped by region, Kubernetes version and cluster type,
# with a kubeconfig each. Credentials: ALIBABA_CLOUD_ACCESS_KEY_ID / ALIBABA_CLOUD_ACCESS_KEY_SECRET.
plugin: storageperf.k8s.ack
regions:
  - cn-hangzhou
  - cn-beijing
filters:
  tags:
    env: prod
fetch_kubeconfig: true
keyed_groups:
  - key: ack_region
    prefix: region          # region_cn_hangzhou
  - key: k8s_version
    prefix: k8s             # k8s_1_32_4_aliyun_1
  - key: ack_cluster_type
    prefix: type            # type_ManagedKubernetes
  - key: ack_tags
    prefix: tag             # tag_env_prod
groups:
  big: ack_node_count >= 50

---
# all.ack.yml - every cluster in any state, named by id, through a VPC endpoint, cached for 10 minutes
plugin: storageperf.k8s.ack
endpoint: cs-vpc.cn-hangzhou.aliyuncs.com
filters:
  state: []
hostnames: cluster_id
addon_versions: true
groups:
  old_csi: ack_addon_versions['csi-plugin'] | default('v9') is version('v1.30', '<')
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/storageperf-inventory
cache_timeout: 600
"""

import errno
import fnmatch
import os
import re
import stat
import tempfile
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from ansible.errors import AnsibleError, AnsibleParserError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.api import list_addons, list_clusters, user_kubeconfig
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.credentials import (
    ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, ENV_PROFILE, ENV_SECURITY_TOKEN)
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.errors import AliyunError
from ansible_collections.storageperf.k8s.plugins.plugin_utils.cluster_inventory import ClusterInventory, host_name

FILTER_KEYS = ("name", "tags", "cluster_type", "cluster_spec", "state")
EXPIRY_MARGIN = timedelta(minutes=5)
ERRORS_SHOWN = 5


def longest_literal(pattern: str) -> str:
    """The longest run of a shell pattern without wildcards: what the API's substring `name` filter can take."""
    parts = re.split(r"[*?\[\]]", pattern)
    return max(parts, key=len) if parts else ""


def tags_dict(tags: Iterable[Any] | None) -> dict[str, str]:
    """ACK's [{key, value}] -> {key: value}."""
    out = {}
    for t in tags or []:
        if isinstance(t, dict) and t.get("key") is not None:
            out[str(t["key"])] = "" if t.get("value") is None else str(t["value"])
    return out


def states_of(filters: Mapping[str, Any]) -> list[str]:
    state = filters.get("state", "running")
    if state is None:
        return []
    return [str(s) for s in (state if isinstance(state, list) else [state])]


def matches(cluster: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether a DescribeClustersV1 item passes every filter (the API filters only some, and name loosely)."""
    if filters.get("name") and not fnmatch.fnmatchcase(str(cluster.get("name", "")), str(filters["name"])):
        return False
    for key in ("cluster_type", "cluster_spec"):
        if filters.get(key) and str(cluster.get(key, "")) != str(filters[key]):
            return False
    states = states_of(filters)
    if states and str(cluster.get("state", "")) not in states:
        return False
    tags = tags_dict(cluster.get("tags"))
    for key, value in (filters.get("tags") or {}).items():
        if str(key) not in tags or (value is not None and tags[str(key)] != str(value)):
            return False
    return True


def host_vars(cluster: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "ack_cluster_id": str(cluster.get("cluster_id", "")),
        "ack_cluster_name": str(cluster.get("name", "")),
        "ack_region": str(cluster.get("region_id", "")),
        "ack_cluster_type": str(cluster.get("cluster_type", "")),
        "ack_cluster_spec": str(cluster.get("cluster_spec", "")),
        "ack_state": str(cluster.get("state", "")),
        "k8s_version": str(cluster.get("current_version", "")),
        "ack_node_count": int(cluster.get("size") or 0),
        "ack_tags": tags_dict(cluster.get("tags")),
    }


def addon_versions(addons: Mapping[str, Any] | None) -> dict[str, str]:
    """ListClusterAddonInstances' addons ({name: {version, state}}) -> {name: version} of the installed ones."""
    return {str(name): str(a["version"]) for name, a in (addons or {}).items() if isinstance(a, dict) and a.get("version")}


def write_private(path: str, text: str) -> None:
    """Write `text` to `path` with mode 0600 from the first byte: a 0600 temporary file beside it, then a rename."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), 0o600)  # mkstemp's mode already; said again so that it never depends on it
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def private_dir(path: str) -> None:
    """Create `path` and any missing parent with mode 0700 (os.makedirs gives parents the umask's mode)."""
    missing = []
    head = path
    while head and not os.path.isdir(head):
        missing.append(head)
        head = os.path.dirname(head)
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except OSError as e:
            if e.errno != errno.EEXIST or not os.path.isdir(d):
                raise AnsibleError("kubeconfig_dir %s cannot be created: %s" % (path, e.strerror or to_native(e)))


def refuse_shared(path: str) -> None:
    """Refuse a kubeconfig_dir others can write to, or a kubeconfig in it others can read (AnsibleError, with the fix).

    Whoever can write the directory can swap a kubeconfig for one that sends the play to their own API server; a
    group- or world-readable kubeconfig hands out the cluster's credentials. The directory is created 0700 and the
    files 0600, so this finds a directory someone else made or loosened, e.g. a shared /tmp path.
    """
    if not os.path.isdir(path):
        return
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o022:
        raise AnsibleError("kubeconfig_dir %s is writable by %s (mode %04o): whoever can write there can replace a "
                           "kubeconfig with one for their own API server. Run `chmod 700 %s` or give a kubeconfig_dir "
                           "only you can write" % (path, "others" if mode & 0o002 else "its group", mode, path))
    for name in sorted(os.listdir(path)):
        file = os.path.join(path, name)
        if name.endswith(".kubeconfig") and os.path.isfile(file):
            fmode = stat.S_IMODE(os.stat(file).st_mode)
            if fmode & 0o077:
                raise AnsibleError("kubeconfig %s holds a cluster's credentials and is open to %s (mode %04o). Run "
                                   "`chmod 600 %s` (or delete it: it is fetched again)"
                                   % (file, "others" if fmode & 0o007 else "its group", fmode, file))


def parse_expiration(text: object) -> datetime | None:
    try:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return None


def kubeconfigs_usable(listing: Iterable[Mapping[str, Any]], now: datetime | None = None) -> bool:
    """A cached listing is only reused while every kubeconfig it points at is there and not about to expire."""
    now = now or datetime.now(timezone.utc)
    for item in listing:
        path = item.get("kubeconfig")
        if path is None:
            continue
        if not os.path.isfile(path):
            return False
        expires = parse_expiration(item.get("expiration"))
        if expires is not None and expires - EXPIRY_MARGIN <= now:
            return False
    return True


def unique_names(records: list[dict[str, Any]], hostnames: str | None) -> list[str]:
    """Host names: ids as they are, or sanitised names with `_<cluster_id>` on every cluster sharing a name."""
    if hostnames == "cluster_id":
        return [r["cluster"]["cluster_id"] for r in records]
    names = [host_name(r["cluster"].get("name") or r["cluster"]["cluster_id"]) for r in records]
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n if counts[n] == 1 else "%s_%s" % (n, r["cluster"]["cluster_id"]) for n, r in zip(names, records)]


class InventoryModule(ClusterInventory, BaseInventoryPlugin, Constructable, Cacheable):

    NAME = "storageperf.k8s.ack"
    CONFIG_SUFFIXES = (".ack.yml", ".ack.yaml")

    # options ------------------------------------------------------------------------------------
    def _filters(self) -> dict[str, Any]:
        filters = self.get_option("filters") or {}
        if not isinstance(filters, dict):
            raise AnsibleParserError("filters must be a dict with any of %s" % ", ".join(FILTER_KEYS))
        unknown = sorted(set(filters) - set(FILTER_KEYS))
        if unknown:
            raise AnsibleParserError("unknown filters %s: use %s" % (", ".join(unknown), ", ".join(FILTER_KEYS)))
        if filters.get("tags") is not None and not isinstance(filters["tags"], dict):
            raise AnsibleParserError("filters.tags must be a dict of tag key to value, e.g. {env: prod}")
        state = filters.get("state", "running")
        if state is not None and not isinstance(state, (str, list)):
            raise AnsibleParserError("filters.state must be a state or a list of states, e.g. running")
        return filters

    def _query(self) -> dict[str, Any]:
        minutes = self.get_option("kubeconfig_minutes")
        if minutes is not None and not 15 <= int(minutes) <= 4320:
            raise AnsibleParserError("kubeconfig_minutes must be between 15 and 4320, got %s" % minutes)
        fetch = bool(self.get_option("fetch_kubeconfig"))
        return {
            "regions": [str(r) for r in self.get_option("regions") or []],
            "endpoint": self.get_option("endpoint") or "",
            "filters": self._filters(),
            "fetch_kubeconfig": fetch,
            "kubeconfig_dir": os.path.abspath(os.path.expanduser(self.get_option("kubeconfig_dir"))) if fetch else "",
            "kubeconfig_private_ip": bool(self.get_option("kubeconfig_private_ip")) if fetch else False,
            "kubeconfig_minutes": int(minutes) if fetch and minutes is not None else None,
            "addon_versions": bool(self.get_option("addon_versions")),
        }

    def _client(self, query: Mapping[str, Any]) -> AliyunClient:
        params = {
            "region": query["regions"][0] if query["regions"] else None,
            "cs_endpoint": query["endpoint"] or None,
            "api_timeout": self.get_option("api_timeout"),
            "api_retries": self.get_option("api_retries"),
            "concurrency": self.get_option("concurrency"),
        }
        try:
            return AliyunClient(params)
        except AliyunError as e:
            if e.code == "MissingCredentials":
                raise AnsibleError(
                    "storageperf.k8s.ack found no Alibaba Cloud credentials: set %s and %s (and %s for STS) in the "
                    "environment, or make an AK or StsToken profile in ~/.aliyun/config.json and name it with %s"
                    % (ENV_ACCESS_KEY_ID, ENV_ACCESS_KEY_SECRET, ENV_SECURITY_TOKEN, ENV_PROFILE))
            raise AnsibleError("storageperf.k8s.ack: %s" % e.msg)

    # the listing ----------------------------------------------------------------------------------
    def _list_region(self, client: AliyunClient, region: str | None, filters: Mapping[str, Any]) -> list[dict[str, Any]]:
        literal = longest_literal(str(filters["name"])) if filters.get("name") else ""
        return list_clusters(client, region=region or None, name=literal or None,
                             cluster_type=str(filters["cluster_type"]) if filters.get("cluster_type") else None,
                             cluster_spec=str(filters["cluster_spec"]) if filters.get("cluster_spec") else None)

    def _per_cluster(self, client: AliyunClient, query: Mapping[str, Any], clusters: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Kubeconfigs and addon versions, one cluster at a time on the client's thread pool."""
        directory = query["kubeconfig_dir"]
        if query["fetch_kubeconfig"]:
            private_dir(directory)

        def one(cluster: dict[str, Any]) -> dict[str, Any]:
            cid = cluster["cluster_id"]
            out: dict[str, Any] = {}
            if query["fetch_kubeconfig"]:
                doc = user_kubeconfig(client, cid, private_ip=query["kubeconfig_private_ip"],
                                      minutes=query["kubeconfig_minutes"] or None)
                path = os.path.join(directory, "%s.kubeconfig" % cid)
                write_private(path, doc["config"])
                out["kubeconfig"] = path
                out["expiration"] = doc.get("expiration")
            if query["addon_versions"]:
                out["addon_versions"] = addon_versions(list_addons(client, cid))
            return out

        results = client.parallel(one, clusters)
        failed = [(c, e) for c, _r, e in results if e is not None]
        if failed:
            shown = "; ".join("%s (%s): %s" % (c.get("name"), c["cluster_id"], e.msg) for c, e in failed[:ERRORS_SHOWN])
            raise AnsibleError("storageperf.k8s.ack: %d of %d clusters could not be read: %s%s"
                               % (len(failed), len(clusters), shown, " ..." if len(failed) > ERRORS_SHOWN else ""))
        return [r for _c, r, _e in results]  # type: ignore[misc]  # no error: every item has its result

    def _fetch(self, query: Mapping[str, Any]) -> list[dict[str, Any]]:
        client = self._client(query)
        filters = query["filters"]
        seen, clusters = set(), []
        try:
            for region in query["regions"] or [None]:
                for c in self._list_region(client, region, filters):
                    # a cluster created while paging shifts the pages: one may come twice
                    if isinstance(c, dict) and c.get("cluster_id") and c["cluster_id"] not in seen and matches(c, filters):
                        seen.add(c["cluster_id"])
                        clusters.append(c)
            clusters.sort(key=lambda c: (str(c.get("name", "")), c["cluster_id"]))
            extra = self._per_cluster(client, query, clusters) if (query["fetch_kubeconfig"] or query["addon_versions"]) \
                else [{} for _c in clusters]
        except AliyunError as e:
            raise AnsibleError("storageperf.k8s.ack: %s" % e.msg)
        self.display.vvv("storageperf.k8s.ack: %d clusters, calls %s" % (len(clusters), client.stats()["calls"]))
        keep = ("cluster_id", "name", "region_id", "cluster_type", "cluster_spec", "state", "current_version", "size",
                "tags")
        return [dict(e, cluster={k: c.get(k) for k in keep}) for c, e in zip(clusters, extra)]

    def parse(self, inventory: Any, loader: Any, path: str, cache: bool = True) -> None:
        super().parse(inventory, loader, path)
        self._read_config_data(path)
        query = self._query()
        if query["fetch_kubeconfig"]:
            # a cached listing points at the files too: check them before it is used
            refuse_shared(query["kubeconfig_dir"])
        listing = self.cached_listing(path, cache, query, lambda: self._fetch(query),
                                      still_valid=kubeconfigs_usable)
        endpoint, ecs_endpoint = self.get_option("endpoint"), self.get_option("ecs_endpoint")
        for name, record in zip(unique_names(listing, self.get_option("hostnames")), listing):
            hv = host_vars(record["cluster"])
            if endpoint:
                hv["ack_cs_endpoint"] = endpoint
            if ecs_endpoint:
                hv["ack_ecs_endpoint"] = ecs_endpoint
            if "kubeconfig" in record:
                hv["k8s_kubeconfig"] = record["kubeconfig"]
                hv["ack_kubeconfig_expiration"] = record.get("expiration") or ""
            if "addon_versions" in record:
                hv["ack_addon_versions"] = record["addon_versions"]
            self.add_cluster(name, hv)
