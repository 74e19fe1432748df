#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: pmem_node_topology
short_description: Label PMEM nodes and describe their persistent memory in the node-resource-topo ConfigMap
version_added: 0.1.0
description:
  - Prepares nodes with persistent memory for the Alibaba Cloud CSI local plugin - labels each node
    C(pmem.csi.alibabacloud.com=<type>) and C(pmem.csi.alibabacloud.com/type=<type>), and writes one entry per node
    into the ConfigMap C(kube-system/node-resource-topo) read by node-resource-manager - a volume group on the
    node's regions for C(lvm) (key C(volumegroup)), a quota path for C(quotapath) (key C(quotapath)), memory for
    C(kmem) (key C(memory)); C(direct) needs no entry.
  - Everything is checked before anything is written - the type (the csi-local-plugin exits on an unknown one),
    the region names, that every listed node exists, that no node already carries another PMEM type or an invalid
    one, and that the ConfigMap has no conflicting entry for a node.
  - The nodes are O(nodes); when that is empty, the nodes already labelled C(pmem.csi.alibabacloud.com/type).
  - Remembers what it added (annotation C(storageperf.k8s/pmem-labels) on each node, C(storageperf.k8s/pmem-entries)
    and C(storageperf.k8s/pmem-created) on the ConfigMap), so O(state=absent) removes exactly that - labels that
    were there before, other entries and a ConfigMap someone else created stay.
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  state:
    description: C(present) labels and describes the nodes; C(absent) removes what C(present) added.
    type: str
    choices: [present, absent]
    default: present
  nodes:
    description: Names of the nodes with PMEM. Empty means the nodes already labelled C(pmem.csi.alibabacloud.com/type).
    type: list
    elements: str
    default: []
  node_type:
    description: How the plugin uses the PMEM of these nodes (value of C(pmem.csi.alibabacloud.com/type)).
    type: str
    choices: [lvm, direct, kmem, quotapath]
    default: lvm
  regions:
    description: The nodes' PMEM regions (C(ndctl list -R)) the volume group, quota path or memory is made of.
    type: list
    elements: str
    default: [region0]
  vg_name:
    description: Volume group name for C(lvm) nodes; StorageClasses refer to it as C(vgName).
    type: str
    default: pmemvgregion0
  quotapath:
    description: Mount path for C(quotapath) nodes; default C(/mnt/quotapath.<first region>).
    type: str
  topology:
    description: Write the node-resource-topo ConfigMap entries (turn off when node-resource-manager is not used).
    type: bool
    default: true
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
attributes:
  check_mode:
    support: full
    details: Changes are sent with C(dryRun=All).
  diff_mode:
    support: full
seealso:
  - module: storageperf.k8s.pmem_storageclass
"""

EXAMPLES = r"""
- name: Two PMEM-LVM nodes
  storageperf.k8s.pmem_node_topology:
    nodes: [cn-hangzhou.192.168.0.1, cn-hangzhou.192.168.0.2]
    node_type: lvm
    regions: [region0]

- name: Undo it
  storageperf.k8s.pmem_node_topology:
    nodes: [cn-hangzhou.192.168.0.1, cn-hangzhou.192.168.0.2]
    state: absent
"""

RETURN = r"""
nodes:
  description: The PMEM nodes and the labels set (or removed) on each; C(changed) says whether that node changed.
  returned: always
  type: list
  elements: dict
  sample: [{name: cn-hangzhou.192.168.0.1, changed: true, labels: {pmem.csi.alibabacloud.com: lvm,
            pmem.csi.alibabacloud.com/type: lvm}}]
topology:
  description:
    - Entries added to or removed from C(kube-system/node-resource-topo) as C([key, name, node]), and whether
      the ConfigMap was deleted.
  returned: always
  type: dict
  sample: {added: [[volumegroup, pmemvgregion0, cn-hangzhou.192.168.0.1]], removed: [], delete: false}
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import (
    K8S_AUTH_ARG_SPEC,
    K8sError,
    client_from_module,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem import plans as pmem


def main():
    argument_spec = dict(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        nodes=dict(type="list", elements="str", default=[]),
        node_type=dict(type="str", choices=list(pmem.NODE_TYPES), default="lvm"),
        regions=dict(type="list", elements="str", default=["region0"]),
        vg_name=dict(type="str", default=pmem.DEFAULT_VG),
        quotapath=dict(type="str"),
        topology=dict(type="bool", default=True),
    )
    argument_spec.update(K8S_AUTH_ARG_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not pmem.HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML"))
    p = module.params
    result = dict(changed=False, nodes=[], topology=dict(added=[], removed=[], delete=False))
    problems = pmem.topology_problems(p) if p["state"] == "present" else []
    if problems:
        module.fail_json(msg="; ".join(problems), problems=problems, **result)

    client = client_from_module(module)
    try:
        all_nodes, _ = client.list("v1", "Node")
        if p["state"] == "present":
            nodes = pmem.select_nodes(all_nodes, p["nodes"])
            bad = [x for x in (pmem.node_type_problem(n) for n in nodes) if x]
            if bad:
                module.fail_json(msg="; ".join(bad), problems=bad, **result)
        else:
            names = set(p["nodes"])
            nodes = [n for n in all_nodes if (not names or n["metadata"]["name"] in names)
                     and pmem.LABELS_ANNOTATION in (n["metadata"].get("annotations") or {})]
        # plan everything first: a refusal for the last node must leave the first untouched
        plans = [(n, pmem.node_label_plan(n, p["node_type"], p["state"])) for n in nodes]
        cm = None
        cm_plan = None
        if p["topology"]:
            cm = client.get("v1", "ConfigMap", pmem.TOPO_NAME, namespace=pmem.TOPO_NAMESPACE, missing_ok=True)
            if p["state"] == "present" or cm is not None:
                new_cm, info = pmem.topology_plan(cm, [n["metadata"]["name"] for n in nodes], p, p["state"])
                cm_plan = (new_cm, info)
                result["topology"] = info
    except pmem.PmemError as e:
        module.fail_json(msg=str(e), **result)
    except K8sError as e:
        module.fail_json(msg=e.msg, **result)

    diff_before, diff_after = {"nodes": {}}, {"nodes": {}}
    try:
        for node, plan in plans:
            name = node["metadata"]["name"]
            labels = node["metadata"].get("labels") or {}
            pmem_labels = {k: v for k, v in labels.items() if k.startswith(pmem.NODE_LABEL)}
            entry = dict(name=name, changed=plan is not None, labels=pmem_labels)
            if plan is not None:
                label_patch, ann_patch, _ = plan
                patch = {"metadata": {}}
                if label_patch:
                    patch["metadata"]["labels"] = label_patch
                if ann_patch:
                    patch["metadata"]["annotations"] = ann_patch
                client.patch("v1", "Node", name, patch, dry_run=module.check_mode)
                after = dict(pmem_labels)
                for k, v in label_patch.items():
                    if v is None:
                        after.pop(k, None)
                    else:
                        after[k] = v
                entry["labels"] = after
                diff_before["nodes"][name], diff_after["nodes"][name] = pmem_labels, after
                result["changed"] = True
            result["nodes"].append(entry)
        if cm_plan is not None:
            new_cm, info = cm_plan
            if new_cm is None:
                client.delete("v1", "ConfigMap", pmem.TOPO_NAME, namespace=pmem.TOPO_NAMESPACE) \
                    if not module.check_mode else None
                result["changed"] = True
            elif cm is None:
                if info["added"]:
                    client.create(new_cm, namespace=pmem.TOPO_NAMESPACE, dry_run=module.check_mode)
                    result["changed"] = True
                else:
                    new_cm = None
            elif pmem.cm_differs(cm, new_cm):
                client.replace(new_cm, dry_run=module.check_mode)
                result["changed"] = True
            if pmem.cm_differs(cm, new_cm):
                diff_before["configmap"], diff_after["configmap"] = pmem.cm_view(cm), pmem.cm_view(new_cm)
    except K8sError as e:
        module.fail_json(msg=e.msg, **result)
    if module._diff:
        result["diff"] = dict(before=diff_before, after=diff_after)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
