# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PMEM nodes (pmem_node_topology): their type labels and their node-resource-topo entries, planned for
every node first (a refusal for the last node leaves the first untouched), then applied.

The ConfigMap kube-system/node-resource-topo (openyurtio/node-resource-manager docs/configmap.md) has keys
volumegroup, quotapath, memory, each a YAML list of {name, key, operator, value, topology{type: pmem,
regions[]}}. One entry per node, selected by kubernetes.io/hostname In <node>: lvm nodes get a volume group
(vgName) on their regions, quotapath nodes a quota path, kmem nodes memory; direct nodes need none.

Ownership, so that state=absent removes exactly what state=present added:
- a node gets the annotation storageperf.k8s/pmem-labels listing the labels that were added (labels already
  there are not listed and stay);
- the ConfigMap gets storageperf.k8s/pmem-entries (JSON [[key, name, node], ...] of the entries added) and
  storageperf.k8s/pmem-created when this collection created it.
"""
from __future__ import annotations

import copy
import json
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.plugin import (
    DEFAULT_VG,
    NODE_LABEL,
    NODE_TYPES,
    TYPE_LABEL,
    PmemError,
    node_type_problem,
)

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core
    HAS_YAML = False

HOSTNAME_LABEL = "kubernetes.io/hostname"
TOPO_NAMESPACE = "kube-system"
TOPO_NAME = "node-resource-topo"
TOPO_KEYS = ("volumegroup", "quotapath", "memory")
# node type -> the node-resource-topo key that provisions it (direct uses the namespace as it is)
TOPO_KEY_OF = {"lvm": "volumegroup", "quotapath": "quotapath", "kmem": "memory"}
LABELS_ANNOTATION = "storageperf.k8s/pmem-labels"
ENTRIES_ANNOTATION = "storageperf.k8s/pmem-entries"
CREATED_ANNOTATION = "storageperf.k8s/pmem-created"

_REGION = re.compile(r"^region[0-9]+$")

# topology_plan(): the ConfigMap as it should be (None: delete it) and what changes
CmPlan = Tuple[Optional[Dict[str, Any]], Dict[str, Any]]
# node_label_plan(): (labels patch, annotations patch, added label keys)
LabelPlan = Tuple[Dict[str, Any], Dict[str, Any], List[str]]


def topology_problems(p: Mapping[str, Any]) -> list[str]:
    problems = []
    if p.get("node_type") not in NODE_TYPES:
        problems.append("node_type %r is not a PMEM node type: use one of %s (the csi-local-plugin exits on any other "
                        "value of the %s label)" % (p.get("node_type"), ", ".join(NODE_TYPES), TYPE_LABEL))
    regions = p["regions"] or []  # null as well as []
    if not regions:
        problems.append("regions is empty: list the node's PMEM regions, for example [region0]")
    for r in regions:
        if not _REGION.match(str(r)):
            problems.append("regions: %r is not a PMEM region name such as region0 (ndctl list -R)" % (r,))
    for n in p["nodes"] or []:
        if not isinstance(n, str) or not n:
            problems.append("nodes: %r is not a node name" % (n,))
    if p.get("node_type") == "quotapath" and not str(p.get("quotapath") or "").startswith("/"):
        problems.append("quotapath %r must be an absolute path such as /mnt/quotapath.region0" % (p.get("quotapath"),))
    return problems


def select_nodes(all_nodes: list[dict[str, Any]], names: list[str] | None) -> list[dict[str, Any]]:
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


def node_label_plan(node: dict[str, Any], node_type: str, state: str) -> LabelPlan | None:
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
        patch: dict[str, Any] = {}
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


def _load_entries(data: Mapping[str, str] | None, key: str) -> list[dict[str, Any]]:
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


def _dump_entries(key: str, entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump({key: entries}, default_flow_style=False, sort_keys=False).rstrip("\n")


def topo_entry(node_name: str, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("name"), a.get("key"), a.get("operator"), a.get("value")) == \
        (b.get("name"), b.get("key"), b.get("operator"), b.get("value"))


def topology_plan(cm: dict[str, Any] | None, node_names: list[str], p: Mapping[str, Any], state: str) -> CmPlan:
    """The ConfigMap as it should be (or None to delete it), and what changes: {added, removed, delete}."""
    exists = cm is not None
    if exists:
        cm = copy.deepcopy(cm)
    else:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": TOPO_NAME, "namespace": TOPO_NAMESPACE},
              "data": {}}
    md = cm["metadata"]  # type: ignore[index]  # cm is the copy or the new ConfigMap
    ann = dict(md.get("annotations") or {})
    data = dict(cm.get("data") or {})  # type: ignore[union-attr]
    try:
        ours = [tuple(x) for x in json.loads(ann.get(ENTRIES_ANNOTATION) or "[]")]
    except ValueError:
        ours = []
    added, removed = [], []
    key = TOPO_KEY_OF.get(p.get("node_type"))  # type: ignore[arg-type]
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
    cm["data"] = data  # type: ignore[index]
    return cm, {"added": added, "removed": removed, "delete": False}


def cm_view(cm: dict[str, Any] | None) -> dict[str, Any]:
    if not cm:
        return {}
    md = cm.get("metadata") or {}
    out = {"metadata": {"name": md.get("name"), "namespace": md.get("namespace")}, "data": cm.get("data") or {}}
    ann = {k: v for k, v in (md.get("annotations") or {}).items() if k.startswith("storageperf.k8s/")}
    if ann:
        out["metadata"]["annotations"] = ann
    return out


def cm_differs(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return cm_view(a) != cm_view(b)


def ensure_node_topology(client: Any, p: Mapping[str, Any], check_mode: bool = False, diff: bool = False) -> dict[str, Any]:
    """Label the PMEM nodes and describe them in node-resource-topo (state present), or undo exactly that
    (absent); the module's result. Everything is planned and checked before the first write."""
    result = dict(changed=False, nodes=[], topology=dict(added=[], removed=[], delete=False))
    if not HAS_YAML:
        raise PmemError(missing_required_lib("PyYAML"), result=result)
    problems = topology_problems(p) if p["state"] == "present" else []
    if problems:
        raise PmemError("; ".join(problems), result=result, problems=problems)
    try:
        plans, cm, cm_plan = _plan(client, p, result)
        before, after = _apply(client, plans, cm, cm_plan, result, check_mode)
    except StoragePerfError as exc:
        exc.result = dict(result, **exc.result)
        raise
    if diff:
        result["diff"] = dict(before=before, after=after)
    return result


def _plan(client: Any, p: Mapping[str, Any],
          result: dict[str, Any]) -> tuple[list[tuple[dict[str, Any], LabelPlan | None]], dict[str, Any] | None, CmPlan | None]:
    """[(node, label plan)], the ConfigMap read, and (the ConfigMap wanted, what changes) or None."""
    all_nodes, _ = client.list("v1", "Node")
    if p["state"] == "present":
        nodes = select_nodes(all_nodes, p["nodes"])
        bad = [x for x in (node_type_problem(n) for n in nodes) if x]
        if bad:
            raise PmemError("; ".join(bad), problems=bad)
    else:
        names = set(p["nodes"])
        nodes = [n for n in all_nodes if (not names or n["metadata"]["name"] in names)
                 and LABELS_ANNOTATION in (n["metadata"].get("annotations") or {})]
    plans = [(n, node_label_plan(n, p["node_type"], p["state"])) for n in nodes]
    cm = cm_plan = None
    if p["topology"]:
        cm = client.get("v1", "ConfigMap", TOPO_NAME, namespace=TOPO_NAMESPACE, missing_ok=True)
        if p["state"] == "present" or cm is not None:
            cm_plan = topology_plan(cm, [n["metadata"]["name"] for n in nodes], p, p["state"])
            result["topology"] = cm_plan[1]
    return plans, cm, cm_plan


def _apply(client: Any, plans: list[tuple[dict[str, Any], LabelPlan | None]], cm: dict[str, Any] | None, cm_plan: CmPlan | None, result: dict[str, Any],
           check_mode: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Patch the nodes, then write the ConfigMap; (diff before, diff after)."""
    before: dict[str, Any]
    after: dict[str, Any]
    before, after = {"nodes": {}}, {"nodes": {}}
    for node, plan in plans:
        name = node["metadata"]["name"]
        labels = node["metadata"].get("labels") or {}
        pmem_labels = {k: v for k, v in labels.items() if k.startswith(NODE_LABEL)}
        entry = dict(name=name, changed=plan is not None, labels=pmem_labels)
        if plan is not None:
            label_patch, ann_patch, _ = plan
            patch: dict[str, Any] = {"metadata": {}}
            if label_patch:
                patch["metadata"]["labels"] = label_patch
            if ann_patch:
                patch["metadata"]["annotations"] = ann_patch
            client.patch("v1", "Node", name, patch, dry_run=check_mode)
            entry["labels"] = {k: v for k, v in dict(pmem_labels, **label_patch).items() if v is not None}
            before["nodes"][name], after["nodes"][name] = pmem_labels, entry["labels"]
            result["changed"] = True
        result["nodes"].append(entry)
    if cm_plan is not None:
        new_cm, info = cm_plan
        if new_cm is None:
            if not check_mode:
                client.delete("v1", "ConfigMap", TOPO_NAME, namespace=TOPO_NAMESPACE)
            result["changed"] = True
        elif cm is None:
            if info["added"]:
                client.create(new_cm, namespace=TOPO_NAMESPACE, dry_run=check_mode)
                result["changed"] = True
            else:
                new_cm = None
        elif cm_differs(cm, new_cm):
            client.replace(new_cm, dry_run=check_mode)
            result["changed"] = True
        if cm_differs(cm, new_cm):
            before["configmap"], after["configmap"] = cm_view(cm), cm_view(new_cm)
    return before, after
