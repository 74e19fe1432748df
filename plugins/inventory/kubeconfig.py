# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
name: kubeconfig
short_description: Kubernetes clusters from kubeconfig files, one host per context
version_added: "0.2.0"
description:
  - Makes every context of every kubeconfig file a host in the group O(cluster_group) (default C(k8s_clusters)), which
    the collection's playbooks target. The hosts run on the controller and reach their cluster through the host vars
    C(k8s_kubeconfig) and C(k8s_context).
  - Reads the files as YAML and never connects to a cluster.
  - The host name is the context name with every character other than letters, digits, C(_), C(.) and C(-) replaced
    by C(_) (C(kubernetes-admin@kubernetes) becomes C(kubernetes-admin_kubernetes)). When two contexts end up with
    the same name (the same context name in two files), the later one gets C(_2), C(_3), and so on, in the order of
    O(kubeconfigs).
  - Host vars - C(k8s_kubeconfig) (absolute path of the file), C(k8s_context) (the context name as written),
    C(k8s_cluster) (the cluster entry the context uses), C(k8s_server) (its API server URL), C(k8s_namespace) (the
    context's namespace, else C(default)).
  - The configuration file's name must end in C(.kubeconfig.yml) or C(.kubeconfig.yaml), or its C(plugin) key
    must name this plugin (the C(auto) inventory plugin then loads it whatever its name).
extends_documentation_fragment:
  - constructed
  - inventory_cache
  - storageperf.k8s.cluster_inventory
options:
  plugin:
    description: Marks this file as a source for this plugin.
    type: str
    required: true
    choices: [storageperf.k8s.kubeconfig]
  kubeconfigs:
    description:
      - Kubeconfig files to read, in order. C(~) is expanded; a relative path is relative to the directory of this
        inventory file.
      - Default - the files of the E(KUBECONFIG) environment variable (separated by C(:)), else C(~/.kube/config),
        as kubectl reads them.
    type: list
    elements: path
  contexts:
    description:
      - Only the contexts whose name matches one of these shell-style patterns (C(prod-*), C(*@ack-*)).
      - Default - every context.
    type: list
    elements: str
requirements:
  - PyYAML (installed with ansible-core)
seealso:
  - plugin: storageperf.k8s.ack
    plugin_type: inventory
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
# clusters.kubeconfig.yml - every context of ~/.kube/config (or of $KUBECONFIG)
plugin: storageperf.k8s.kubeconfig

---
# fleet.kubeconfig.yml - the prod and lab contexts of three files, grouped by file and by API server host
plugin: storageperf.k8s.kubeconfig
kubeconfigs:
  - ~/.kube/prod-hangzhou.yaml
  - ~/.kube/prod-beijing.yaml
  - kubeconfigs/lab.yaml          # next to this file
contexts:
  - "prod-*"
  - "lab-*"
keyed_groups:
  - key: k8s_kubeconfig | basename | splitext | first
    prefix: kubeconfig
  - key: k8s_server | urlsplit('hostname')
    prefix: server
groups:
  lab: k8s_context is search('lab')
compose:
  # a virtualenv with the kubernetes client instead of the controller's Python
  ansible_python_interpreter: "'/opt/k8s-venv/bin/python'"

---
# Keep the listing in a JSON file cache for an hour (the files are read again when they change)
plugin: storageperf.k8s.kubeconfig
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/storageperf-inventory
cache_timeout: 3600
"""

import fnmatch
import os
from typing import Any, Iterable, Mapping

import yaml  # an ansible-core dependency
from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.storageperf.k8s.plugins.plugin_utils.cluster_inventory import ClusterInventory, host_name


def default_kubeconfigs(environ: Mapping[str, str] | None = None) -> list[str]:
    """What kubectl reads: the KUBECONFIG list, else ~/.kube/config."""
    env = os.environ if environ is None else environ
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    return listed or [os.path.join(os.path.expanduser("~"), ".kube", "config")]


def _named(items: object, what: str, path: str) -> dict[str, dict[str, Any]]:
    """{name: body} of a kubeconfig list such as clusters (each entry {name, cluster})."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise AnsibleParserError("kubeconfig %s: %ss must be a list, got %s" % (path, what, type(items).__name__))
    out = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item.get("name"):
            raise AnsibleParserError("kubeconfig %s: %ss[%d] has no name" % (path, what, i))
        body = item.get(what)
        if not isinstance(body, dict):
            raise AnsibleParserError("kubeconfig %s: %s %r has no %s mapping" % (path, what, item["name"], what))
        if item["name"] in out:
            raise AnsibleParserError("kubeconfig %s: %s %r is defined twice" % (path, what, item["name"]))
        out[item["name"]] = body
    return out


def read_contexts(path: str) -> list[dict[str, str]]:
    """[{context, cluster, server, namespace}] of one kubeconfig file, in file order; bad files raise naming the
    file and what is wrong."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise AnsibleParserError("kubeconfig %s cannot be read: %s" % (path, e.strerror or to_native(e)))
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise AnsibleParserError("kubeconfig %s is not valid YAML: %s" % (path, to_native(e)))
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise AnsibleParserError("kubeconfig %s is not a kubeconfig: expected a mapping with clusters and contexts, "
                                 "got a %s" % (path, type(doc).__name__))
    if doc.get("kind") not in (None, "Config"):
        raise AnsibleParserError("kubeconfig %s is a %s, not a kubeconfig (kind: Config)" % (path, doc.get("kind")))
    clusters = _named(doc.get("clusters"), "cluster", path)
    out = []
    for name, ctx in _named(doc.get("contexts"), "context", path).items():
        cluster = ctx.get("cluster")
        if not cluster:
            raise AnsibleParserError("kubeconfig %s: context %r names no cluster" % (path, name))
        if cluster not in clusters:
            raise AnsibleParserError("kubeconfig %s: context %r uses cluster %r, which is not in clusters (%s)"
                                     % (path, name, cluster, ", ".join(sorted(clusters)) or "none"))
        server = clusters[cluster].get("server")
        if not server:
            raise AnsibleParserError("kubeconfig %s: cluster %r has no server" % (path, cluster))
        out.append({"context": name, "cluster": cluster, "server": str(server),
                    "namespace": str(ctx.get("namespace") or "default")})
    return out


def unique_names(names: Iterable[str]) -> list[str]:
    """The same names with clashes numbered _2, _3... after the first, never clashing with another name."""
    taken = set()
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in taken:
            n += 1
            candidate = "%s_%d" % (name, n)
        taken.add(candidate)
        out.append(candidate)
    return out


def _signature(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


class InventoryModule(ClusterInventory, BaseInventoryPlugin, Constructable, Cacheable):

    NAME = "storageperf.k8s.kubeconfig"
    CONFIG_SUFFIXES = (".kubeconfig.yml", ".kubeconfig.yaml")

    def _paths(self, source: str) -> list[str]:
        configured = self.get_option("kubeconfigs")
        if configured:
            base = os.path.dirname(os.path.abspath(source))
            paths = [os.path.join(base, os.path.expanduser(str(p))) for p in configured]
        else:
            paths = [os.path.abspath(os.path.expanduser(p)) for p in default_kubeconfigs()]
        seen, out = set(), []
        for p in paths:
            real = os.path.realpath(p)
            if real not in seen:
                seen.add(real)
                out.append(os.path.normpath(p))
        return out

    def _list(self, paths: list[str], patterns: list[str], source: str) -> list[dict[str, str]]:
        found = []
        for path in paths:
            if not self.get_option("kubeconfigs") and not os.path.exists(path):
                raise AnsibleParserError("kubeconfig %s (the default: KUBECONFIG, else ~/.kube/config) does not exist: "
                                         "set kubeconfigs in %s" % (path, source))
            contexts = read_contexts(path)
            if not contexts:
                self.display.warning("kubeconfig %s has no contexts" % path)
            for entry in contexts:
                if patterns and not any(fnmatch.fnmatchcase(entry["context"], p) for p in patterns):
                    continue
                entry["kubeconfig"] = path
                found.append(entry)
        return found

    def parse(self, inventory: Any, loader: Any, path: str, cache: bool = True) -> None:
        super().parse(inventory, loader, path)
        self._read_config_data(path)
        paths = self._paths(path)
        patterns = [str(p) for p in self.get_option("contexts") or []]
        # a file that changed (mtime or size) is read again even within cache_timeout
        query = {"files": [[p, _signature(p)] for p in paths], "contexts": patterns}
        listing = self.cached_listing(path, cache, query, lambda: self._list(paths, patterns, path))
        names = unique_names([host_name(e["context"]) for e in listing])
        for name, entry in zip(names, listing):
            self.add_cluster(name, {
                "k8s_kubeconfig": entry["kubeconfig"],
                "k8s_context": entry["context"],
                "k8s_cluster": entry["cluster"],
                "k8s_server": entry["server"],
                "k8s_namespace": entry["namespace"],
            })
