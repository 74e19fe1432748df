#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: cluster_info
short_description: Storage facts of a Kubernetes cluster, the preflight of every storageperf role
version_added: 0.1.0
description:
  - Reads the server version, the nodes with their labels and allocatable resources, StorageClasses,
    CSIDrivers, per-node CSI volume limits, VolumeSnapshotClasses, and whether the external-snapshotter
    CRDs and the NetApp Trident CRDs are installed.
  - Makes only read requests; safe in check mode.
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  include_nodes:
    description: Also list nodes and CSINodes. Turn off on clusters with thousands of nodes when not needed.
    type: bool
    default: true
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
"""

EXAMPLES = r"""
- name: Read the cluster's storage facts
  storageperf.k8s.cluster_info:
    kubeconfig: ~/.kube/config
  register: cluster

- name: Refuse to benchmark snapshots without the snapshot CRDs
  ansible.builtin.assert:
    that: cluster.snapshot_crds_installed
    fail_msg: Install the external-snapshotter CRDs and snapshot-controller first.
"""

RETURN = r"""
server_version:
  description: Version of the API server.
  returned: always
  type: dict
  sample: {git_version: v1.32.4, major: "1", minor: "32", platform: linux/amd64}
api_host:
  description: URL of the API server that answered.
  returned: always
  type: str
nodes:
  description: Nodes with labels, provider id, instance type, readiness and allocatable resources.
  returned: always
  type: list
  elements: dict
  sample: [{name: node-1, ready: true, instance_type: ecs.g7se.16xlarge, provider_id: cn-hangzhou.i-abc,
            labels: {}, allocatable: {cpu: "63"}, unschedulable: false, kubelet_version: v1.32.4}]
node_count:
  description: Number of nodes.
  returned: always
  type: int
csi_node_limits:
  description: Per node, the volume count each CSI driver may attach there (CSINode allocatable), null when unpublished.
  returned: always
  type: dict
  sample: {node-1: {diskplugin.csi.alibabacloud.com: 55}}
storage_classes:
  description: StorageClasses with provisioner, parameters, binding mode, reclaim policy and default flag.
  returned: always
  type: list
  elements: dict
default_storage_class:
  description: Name of the default StorageClass, if one is marked.
  returned: always
  type: str
csi_drivers:
  description: CSIDriver objects with attachRequired and podInfoOnMount.
  returned: always
  type: list
  elements: dict
volume_snapshot_classes:
  description: VolumeSnapshotClasses, empty when the CRDs are missing.
  returned: always
  type: list
  elements: dict
snapshot_crds:
  description: Which external-snapshotter kinds the API server serves.
  returned: always
  type: dict
  sample: {VolumeSnapshot: true, VolumeSnapshotContent: true, VolumeSnapshotClass: true}
snapshot_crds_installed:
  description: Whether all three snapshot kinds are served.
  returned: always
  type: bool
trident_crds:
  description: Which Trident kinds the API server serves.
  returned: always
  type: dict
trident_installed:
  description: Whether the TridentOrchestrator and TridentBackendConfig kinds are served.
  returned: always
  type: bool
api_requests:
  description: Number of API requests this module made, retries included.
  returned: always
  type: int
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
# auth="k8s": the Kubernetes client registers its options and client on import (common/auth.py)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import client  # noqa: F401
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.storage_facts import gather


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(include_nodes=dict(type="bool", default=True)),
                               auth="k8s", supports_check_mode=True)
    module.run(lambda m: dict(gather(m.k8s, include_nodes=m.params["include_nodes"]), changed=False,
                              api_requests=m.k8s.requests))


if __name__ == "__main__":
    main()
