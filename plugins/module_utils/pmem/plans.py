# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PMEM (persistent memory) local volumes of the Alibaba Cloud CSI local plugin: StorageClasses, node
labels and the node-resource-topo ConfigMap, as plans the modules show (diff) and then apply.

What the plugin expects (REFERENCE.md, seed 001):
- provisioner localplugin.csi.alibabacloud.com; StorageClass parameters volumeType PMEM, pmemType lvm
  (default) or direct, lvmType linear (default) or striping, nodeAffinity "true", vgName (lvm; default
  pmemvgregion0), fsType; mountOptions [dax]; volumeBindingMode WaitForFirstConsumer (the volume is made on
  the node the pod lands on).
- nodes labelled pmem.csi.alibabacloud.com and pmem.csi.alibabacloud.com/type: lvm | direct | kmem |
  quotapath; the csi-local-plugin exits on any other type, so an unknown one is refused here before
  anything is written.
- ConfigMap kube-system/node-resource-topo (openyurtio/node-resource-manager docs/configmap.md): keys
  volumegroup, quotapath, memory, each a YAML list of {name, key, operator, value, topology{type: pmem,
  regions[]}}. One entry per node, selected by kubernetes.io/hostname In <node>: lvm nodes get a volume
  group (vgName) on their regions, quotapath nodes a quota path, kmem nodes memory; direct nodes need none.

Ownership, so that state=absent removes exactly what state=present added and nothing else:
- StorageClasses this collection creates carry app.kubernetes.io/managed-by=storageperf.k8s;
- a node gets the annotation storageperf.k8s/pmem-labels listing the labels that were added (labels already
  there are not listed and stay);
- the ConfigMap gets storageperf.k8s/pmem-entries (JSON [[key, name, node], ...] of the entries added) and
  storageperf.k8s/pmem-created when this collection created it.
"""


import copy
import json
import re

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core
    HAS_YAML = False

DRIVER = "localplugin.csi.alibabacloud.com"
NODE_LABEL = "pmem.csi.alibabacloud.com"
TYPE_LABEL = "pmem.csi.alibabacloud.com/type"
HOSTNAME_LABEL = "kubernetes.io/hostname"
NODE_TYPES = ("lvm", "direct", "kmem", "quotapath")
PMEM_TYPES = ("lvm", "direct")
LVM_TYPES = ("linear", "striping")
DEFAULT_VG = "pmemvgregion0"
TOPO_NAMESPACE = "kube-system"
TOPO_NAME = "node-resource-topo"
TOPO_KEYS = ("volumegroup", "quotapath", "memory")
# node type -> the node-resource-topo key that provisions it (direct uses the namespace as it is)
TOPO_KEY_OF = {"lvm": "volumegroup", "quotapath": "quotapath", "kmem": "memory"}
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "storageperf.k8s"
LABELS_ANNOTATION = "storageperf.k8s/pmem-labels"
ENTRIES_ANNOTATION = "storageperf.k8s/pmem-entries"
CREATED_ANNOTATION = "storageperf.k8s/pmem-created"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_REGION = re.compile(r"^region[0-9]+$")


class PmemError(StoragePerfError):
    """Input or cluster state that stops the change; the message names the field and the fix."""


# ------------------------------------------------------------------------------------------------
# StorageClass
# ------------------------------------------------------------------------------------------------
def storageclass_problems(p):
    """Problems with the pmem_storageclass options, each naming the option and the fix."""
    problems = []
    name = p.get("name") or ""
    if not _DNS1123.match(name):
        problems.append("name %r is not a valid StorageClass name: use lower case letters, digits, '-' and '.'" % name)
    if p.get("pmem_type") not in PMEM_TYPES:
        problems.append("pmem_type %r is not a PMEM type the local plugin knows: use one of %s (the csi-local-plugin "
                        "exits on anything else)" % (p.get("pmem_type"), ", ".join(PMEM_TYPES)))
    if p.get("lvm_type") is not None and p.get("lvm_type") not in LVM_TYPES:
        problems.append("lvm_type %r: use one of %s" % (p.get("lvm_type"), ", ".join(LVM_TYPES)))
    if p.get("pmem_type") == "direct":
        for key in ("lvm_type", "vg_name"):
            if p.get(key):
                problems.append("%s only applies to pmem_type lvm: remove it, or set pmem_type to lvm" % key)
    if p.get("volume_binding_mode") not in (None, "WaitForFirstConsumer"):
        problems.append("volume_binding_mode %r: local PMEM volumes are created on the node the pod is scheduled to, so "
                        "only WaitForFirstConsumer works" % p.get("volume_binding_mode"))
    for key, value in (p.get("extra_parameters") or {}).items():
        if key in ("volumeType", "pmemType", "lvmType", "vgName", "nodeAffinity", "fsType"):
            problems.append("extra_parameters.%s is set by its own option (pmem_type, lvm_type, vg_name, node_affinity, "
                            "fs_type): use that option instead" % key)
        if isinstance(value, (dict, list)):
            problems.append("extra_parameters.%s must be a string, StorageClass parameters are strings" % key)
    return problems


def build_storageclass(p):
    """The StorageClass manifest, shaped like the seed's csi-pmem-lvm."""
    params = {"volumeType": "PMEM"}
    if p["pmem_type"] != "lvm":
        params["pmemType"] = p["pmem_type"]
    if p.get("lvm_type"):
        params["lvmType"] = p["lvm_type"]
    if p.get("vg_name"):
        params["vgName"] = p["vg_name"]
    if p.get("node_affinity", True):
        params["nodeAffinity"] = "true"
    if p.get("fs_type"):
        params["fsType"] = p["fs_type"]
    for key, value in (p.get("extra_parameters") or {}).items():
        params[key] = str(value).lower() if isinstance(value, bool) else str(value)
    labels = dict(p.get("labels") or {})
    labels[MANAGED_BY] = MANAGER
    md = {"name": p["name"], "labels": labels}
    if p.get("default_class"):
        md["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": md, "provisioner": DRIVER,
          "parameters": params, "reclaimPolicy": p.get("reclaim_policy") or "Delete",
          "volumeBindingMode": "WaitForFirstConsumer",
          "allowVolumeExpansion": bool(p.get("allow_volume_expansion", True))}
    if p.get("mount_options"):
        sc["mountOptions"] = list(p["mount_options"])
    return sc


IMMUTABLE_SC_FIELDS = ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode", "mountOptions")


def storageclass_changes(existing, desired):
    """(mutable changes, immutable changes) from the existing StorageClass to the desired one.

    Only allowVolumeExpansion, labels and annotations may change in place; the API server refuses the rest
    (ValidateStorageClassUpdate), so those need the class deleted and created again.
    """
    immutable = []
    for f in IMMUTABLE_SC_FIELDS:
        have, want = existing.get(f), desired.get(f)
        if f == "reclaimPolicy":
            have = have or "Delete"
        if f == "parameters":
            have = have or {}
        if f == "mountOptions":
            have = have or []
            want = want or []
        if have != want:
            immutable.append(f)
    mutable = []
    if bool(existing.get("allowVolumeExpansion")) != bool(desired.get("allowVolumeExpansion")):
        mutable.append("allowVolumeExpansion")
    emd, dmd = existing.get("metadata") or {}, desired["metadata"]
    for k, v in (dmd.get("labels") or {}).items():
        if (emd.get("labels") or {}).get(k) != v:
            mutable.append("metadata.labels.%s" % k)
    for k, v in (dmd.get("annotations") or {}).items():
        if (emd.get("annotations") or {}).get(k) != v:
            mutable.append("metadata.annotations.%s" % k)
    return mutable, immutable


def is_managed(obj):
    return ((obj or {}).get("metadata", {}).get("labels") or {}).get(MANAGED_BY) == MANAGER


def sc_view(sc):
    """The fields of a StorageClass a person compares (for diffs), without server bookkeeping."""
    if not sc:
        return {}
    md = sc.get("metadata") or {}
    out = {"metadata": {"name": md.get("name")}}
    if md.get("labels"):
        out["metadata"]["labels"] = md["labels"]
    ann = {k: v for k, v in (md.get("annotations") or {}).items()
               if k != "kubectl.kubernetes.io/last-applied-configuration"}
    if ann:
        out["metadata"]["annotations"] = ann
    for f in ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode", "allowVolumeExpansion", "mountOptions"):
        if sc.get(f) is not None:
            out[f] = sc[f]
    return out


# ------------------------------------------------------------------------------------------------
# node labels and node-resource-topo
# ------------------------------------------------------------------------------------------------
def topology_problems(p):
    problems = []
    if p.get("node_type") not in NODE_TYPES:
        problems.append("node_type %r is not a PMEM node type: use one of %s (the csi-local-plugin exits on any other "
                        "value of the %s label)" % (p.get("node_type"), ", ".join(NODE_TYPES), TYPE_LABEL))
    regions = p.get("regions") or []
    if not regions:
        problems.append("regions is empty: list the node's PMEM regions, for example [region0]")
    for r in regions:
        if not _REGION.match(str(r)):
            problems.append("regions: %r is not a PMEM region name such as region0 (ndctl list -R)" % (r,))
    for n in p.get("nodes") or []:
        if not isinstance(n, str) or not n:
            problems.append("nodes: %r is not a node name" % (n,))
    if p.get("node_type") == "quotapath" and not str(p.get("quotapath") or "").startswith("/"):
        problems.append("quotapath %r must be an absolute path such as /mnt/quotapath.region0" % (p.get("quotapath"),))
    return problems


def node_type_problem(node):
    """The node's own type label, when it holds a value the plugin would exit on."""
    labels = node["metadata"].get("labels") or {}
    value = labels.get(TYPE_LABEL)
    if value is not None and value not in NODE_TYPES:
        return ("node %s is labelled %s=%s, a value the csi-local-plugin exits on: relabel it to one of %s"
                % (node["metadata"]["name"], TYPE_LABEL, value, ", ".join(NODE_TYPES)))
    return None


def select_nodes(all_nodes, names):
    """The PMEM nodes: those named (all must exist), else those already carrying the type label."""
    by_name = {n["metadata"]["name"]: n for n in all_nodes}
    if names:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise PmemError("nodes %s do not exist in the cluster: check the names (kubectl get nodes) in nodes"
                            % ", ".join(missing))
        return [by_name[n] for n in names]
    labelled = [n for n in all_nodes if TYPE_LABEL in (n["metadata"].get("labels") or {})]
    if not labelled:
        raise PmemError("no PMEM nodes: no node is labelled %s; list the nodes with PMEM in nodes "
                        "(pmem_storageclasses_nodes)" % TYPE_LABEL)
    return labelled


def node_label_plan(node, node_type, state):
    """(labels patch, annotations patch, added label keys) for one node, or None when nothing changes."""
    md = node["metadata"]
    labels = md.get("labels") or {}
    ann = md.get("annotations") or {}
    ours = [k for k in (ann.get(LABELS_ANNOTATION) or "").split(",") if k]
    name = md["name"]
    if state == "present":
        have = labels.get(TYPE_LABEL)
        if have is not None and have != node_type and TYPE_LABEL not in ours:
            raise PmemError("node %s is already labelled %s=%s: set node_type to %s, or relabel the node yourself "
                            "(its PMEM may hold volumes of that type)" % (name, TYPE_LABEL, have, have))
        want = {NODE_LABEL: node_type, TYPE_LABEL: node_type}
        patch = {}
        added = list(ours)
        for k, v in want.items():
            if labels.get(k) == v:
                continue
            if k in labels and k not in ours and k == NODE_LABEL:
                continue  # someone else's enable label, whatever its value: leave it
            patch[k] = v
            if k not in added:
                added.append(k)
        if not patch and added == ours:
            return None
        ann_patch = {LABELS_ANNOTATION: ",".join(sorted(added))} if added != ours else {}
        return patch, ann_patch, added
    # absent: remove only the labels this collection added
    if not ours:
        return None
    patch = {k: None for k in ours if k in labels}
    return patch, {LABELS_ANNOTATION: None}, []


def _load_entries(data, key):
    text = (data or {}).get(key)
    if not text:
        return []
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PmemError("ConfigMap %s/%s key %s is not valid YAML (%s): fix or remove it before adding PMEM nodes"
                        % (TOPO_NAMESPACE, TOPO_NAME, key, e)) from None
    entries = (doc or {}).get(key) if isinstance(doc, dict) else doc
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise PmemError("ConfigMap %s/%s key %s must hold a list under %r" % (TOPO_NAMESPACE, TOPO_NAME, key, key))
    return entries


def _dump_entries(key, entries):
    return yaml.safe_dump({key: entries}, default_flow_style=False, sort_keys=False).rstrip("\n")


def topo_entry(node_name, p):
    """The node-resource-topo entry that prepares this node's PMEM for its type."""
    kind = p["node_type"]
    topology = {"type": "pmem", "regions": list(p["regions"])}
    if kind == "lvm":
        name = p.get("vg_name") or DEFAULT_VG
    elif kind == "quotapath":
        name = p.get("quotapath") or "/mnt/quotapath.%s" % p["regions"][0]
        topology = {"type": "pmem", "options": "prjquota", "fstype": "ext4", "regions": list(p["regions"])}
    else:
        name = "pmem-%s" % node_name
    return {"name": name, "key": HOSTNAME_LABEL, "operator": "In", "value": node_name, "topology": topology}


def _same(a, b):
    return (a.get("name"), a.get("key"), a.get("operator"), a.get("value")) == \
        (b.get("name"), b.get("key"), b.get("operator"), b.get("value"))


def topology_plan(cm, node_names, p, state):
    """The ConfigMap as it should be (or None to delete it), and what changes: {added, removed, delete}."""
    exists = cm is not None
    if exists:
        cm = copy.deepcopy(cm)
    else:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": TOPO_NAME, "namespace": TOPO_NAMESPACE},
              "data": {}}
    md = cm["metadata"]
    ann = dict(md.get("annotations") or {})
    data = dict(cm.get("data") or {})
    try:
        ours = [tuple(x) for x in json.loads(ann.get(ENTRIES_ANNOTATION) or "[]")]
    except ValueError:
        ours = []
    added, removed = [], []
    key = TOPO_KEY_OF.get(p.get("node_type"))
    if state == "present" and key:
        entries = _load_entries(data, key)
        changed = False
        for node in node_names:
            want = topo_entry(node, p)
            for e in entries:
                if e.get("key") == HOSTNAME_LABEL and e.get("value") == node and e.get("operator") == "In" and not _same(e, want):
                    raise PmemError("ConfigMap %s/%s already has a %s entry %r for node %s: remove it or set the same "
                                    "name (vg_name / quotapath)" % (TOPO_NAMESPACE, TOPO_NAME, key, e.get("name"), node))
            current = next((e for e in entries if _same(e, want)), None)
            if current is None:
                entries.append(want)
                changed = True
                added.append([key, want["name"], node])
            elif current != want and (key, want["name"], node) in ours:
                entries[entries.index(current)] = want  # ours, but regions changed
                changed = True
                added.append([key, want["name"], node])
        if changed:
            data[key] = _dump_entries(key, entries)
        new_ours = sorted(set(ours) | {tuple(a) for a in added})
        if new_ours != sorted(ours):
            ann[ENTRIES_ANNOTATION] = json.dumps([list(x) for x in new_ours], separators=(",", ":"))
        if not exists and added:
            ann[CREATED_ANNOTATION] = "true"
    elif state == "absent":
        for k in TOPO_KEYS:
            mine = [x for x in ours if x[0] == k]
            if not mine:
                continue
            entries = _load_entries(data, k)
            keep = [e for e in entries if not any(e.get("name") == n and e.get("value") == v and
                                                  e.get("key") == HOSTNAME_LABEL for _, n, v in mine)]
            if len(keep) != len(entries):
                removed += [list(x) for x in mine]
                if keep:
                    data[k] = _dump_entries(k, keep)
                else:
                    data.pop(k, None)
        ann.pop(ENTRIES_ANNOTATION, None)
        if ann.get(CREATED_ANNOTATION) == "true" and not any(data.get(k) for k in TOPO_KEYS) and \
                not [k for k in data if k not in TOPO_KEYS]:
            return None, {"added": [], "removed": removed, "delete": exists}
        ann.pop(CREATED_ANNOTATION, None)
    md["annotations"] = ann
    if not ann:
        md.pop("annotations", None)
    cm["data"] = data
    return cm, {"added": added, "removed": removed, "delete": False}


def cm_view(cm):
    if not cm:
        return {}
    md = cm.get("metadata") or {}
    out = {"metadata": {"name": md.get("name"), "namespace": md.get("namespace")}, "data": cm.get("data") or {}}
    ann = {k: v for k, v in (md.get("annotations") or {}).items() if k.startswith("storageperf.k8s/")}
    if ann:
        out["metadata"]["annotations"] = ann
    return out


def cm_differs(a, b):
    return cm_view(a) != cm_view(b)
