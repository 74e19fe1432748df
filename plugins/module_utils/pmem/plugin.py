# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the Alibaba Cloud CSI local plugin expects of PMEM (persistent memory) nodes and classes.

From docs/reference/pmem.md (seed 001):
- provisioner localplugin.csi.alibabacloud.com; StorageClass parameters volumeType PMEM, pmemType lvm
  (default) or direct, lvmType linear (default) or striping, nodeAffinity "true", vgName (lvm; default
  pmemvgregion0), fsType; mountOptions [dax]; volumeBindingMode WaitForFirstConsumer (the volume is made on
  the node the pod lands on). pmem/storageclass.py builds such classes.
- nodes labelled pmem.csi.alibabacloud.com and pmem.csi.alibabacloud.com/type: lvm | direct | kmem |
  quotapath; the csi-local-plugin exits on any other type, so an unknown one is refused before anything
  is written. pmem/topology.py labels the nodes and describes them in node-resource-topo.

Ownership, so that state=absent removes exactly what state=present added and nothing else: what this
collection adds carries a mark (the managed-by label, or the storageperf.k8s/pmem-* annotations of pmem/topology.py).
"""
from __future__ import annotations

from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

DRIVER = "localplugin.csi.alibabacloud.com"
NODE_LABEL = "pmem.csi.alibabacloud.com"
TYPE_LABEL = "pmem.csi.alibabacloud.com/type"
NODE_TYPES = ("lvm", "direct", "kmem", "quotapath")
PMEM_TYPES = ("lvm", "direct")
LVM_TYPES = ("linear", "striping")
DEFAULT_VG = "pmemvgregion0"
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "storageperf.k8s"


class PmemError(StoragePerfError):
    """Input or cluster state that stops the change; the message names the field and the fix."""


def node_type_problem(node: dict[str, Any]) -> str | None:
    """The node's own type label, when it holds a value the plugin would exit on."""
    labels = node["metadata"].get("labels") or {}
    value = labels.get(TYPE_LABEL)
    if value is not None and value not in NODE_TYPES:
        return ("node %s is labelled %s=%s, a value the csi-local-plugin exits on: relabel it to one of %s"
                % (node["metadata"]["name"], TYPE_LABEL, value, ", ".join(NODE_TYPES)))
    return None
