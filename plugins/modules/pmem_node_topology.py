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
  - storageperf.k8s.attributes.check_diff
attributes:
  check_mode:
    details: Changes are sent with C(dryRun=All).
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

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
# auth="k8s": the Kubernetes client registers its options and client on import (common/auth.py)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import client  # noqa: F401
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.plugin import DEFAULT_VG, NODE_TYPES
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.topology import ensure_node_topology


def main() -> None:
    argument_spec = dict(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        nodes=dict(type="list", elements="str", default=[]),
        node_type=dict(type="str", choices=list(NODE_TYPES), default="lvm"),
        regions=dict(type="list", elements="str", default=["region0"]),
        vg_name=dict(type="str", default=DEFAULT_VG),
        quotapath=dict(type="str"),
        topology=dict(type="bool", default=True),
    )
    module = StoragePerfModule(argument_spec=argument_spec, auth="k8s", supports_check_mode=True)
    module.run(lambda m: ensure_node_topology(m.k8s, m.params, check_mode=m.check_mode, diff=m.diff_mode))


if __name__ == "__main__":
    main()
