#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: ack_cluster_info
short_description: Read what parallel disk attach depends on from an ACK cluster
version_added: "0.1.0"
description:
  - Reports an ACK cluster as the ACK and ECS APIs see it - cluster version, addons with version, state and
    FeatureGate, which provisioner addon the cluster has (C(managed-csiprovisioner) or C(csi-provisioner)), node
    pools with their scaling group tags, nodes with their ECS tags, instance type and disk limit
    (C(DiskQuantity)), and disks without a serial number - and whether parallel disk attach is enabled.
  - With Kubernetes access (O(kubeconfig), O(host), E(K8S_AUTH_KUBECONFIG) or E(K8S_AUTH_HOST)) it also reads the
    cluster's Kubernetes side - the C(csi-plugin) DaemonSet and C(csi-provisioner) Deployment in C(kube-system), their
    pods, readiness and C(--feature-gates) - and looks up the disks of the CSI disk PersistentVolumes, naming the
    PV, PVC and pods that use each disk without a serial number. Without it, the disks attached to the cluster's
    instances are checked.
  - Reads only; large clusters are read 100 nodes per page and 50 instances per tag query, in parallel.
extends_documentation_fragment:
  - storageperf.k8s.alibaba
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
options:
  cluster_id:
    description: ID of the ACK cluster (C(c) followed by 32 lowercase hex digits), checked before any API call.
    type: str
    required: true
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
notes:
  - O(api_retries) applies to both the Alibaba Cloud and the Kubernetes calls.
seealso:
  - module: storageperf.k8s.ack_parallel_attach
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Preflight for parallel disk attach
  storageperf.k8s.ack_cluster_info:
    cluster_id: "{{ ack_cluster_id }}"
    kubeconfig: ~/.kube/ack.yaml
  register: ack

- name: Stop when a disk without a serial number is in use
  ansible.builtin.assert:
    that: ack.disks_without_serial | length == 0
    fail_msg: "{{ ack.disks_without_serial | map(attribute='pv') | list }} use disks without a serial number"
"""

RETURN = r"""
cluster:
  description: The cluster (DescribeClusterDetail).
  returned: always
  type: dict
  sample: {cluster_id: c8155823d057948c69a, name: prod, region: cn-hangzhou, version: 1.32.4-aliyun.1,
           type: ManagedKubernetes, state: running}
addons:
  description:
    - Installed addons by name with version and state.
    - The CSI addons also with C(feature_gate) (the string) and C(feature_gates) (parsed).
  returned: always
  type: dict
  sample: {csi-plugin: {version: v1.30.4-8c2e0b1-aliyun, state: active, feature_gate: "DiskADController=true",
                        feature_gates: {DiskADController: true}}}
provisioner:
  description: The provisioner addon (C(managed-csiprovisioner) on managed clusters, else C(csi-provisioner)), or null.
  returned: always
  type: str
node_pools:
  description: Node pools with C(nodepool_id), C(name), C(instance_types), C(state) and scaling group C(tags) as a dict.
  returned: always
  type: list
  elements: dict
nodes:
  description:
    - Nodes with C(node_name), C(instance_id), C(nodepool_id), C(instance_type), C(is_aliyun_node), ECS C(tags)
      and C(disk_quantity).
  returned: always
  type: list
  elements: dict
instance_types:
  description: Per instance type of the cluster, C(disk_quantity) (how many disks one instance attaches), C(cpu), C(memory_gib).
  returned: always
  type: dict
  sample: {ecs.g7se.16xlarge: {disk_quantity: 56, cpu: 64, memory_gib: 256.0}}
disks_without_serial:
  description:
    - Disks without a serial number (created before 2020-06-10; the controller cannot attach them), with the
      C(instance_id) and C(node_name) they are attached to and, with Kubernetes access, the C(pv), C(pvc),
      C(namespace) and C(pods) using them.
  returned: always
  type: list
  elements: dict
parallel_attach:
  description:
    - Summary - C(controller_gates) (provisioner has DiskADController and DiskParallelAttach), C(node_gates)
      (csi-plugin has DiskADController), C(detach_gate), tagged node pools and instances against the totals, and
      C(enabled) when all of these hold.
  returned: always
  type: dict
kubernetes:
  description:
    - The Kubernetes side, null without Kubernetes access. C(csi) has, for C(csi-plugin) and C(csi-provisioner), the
      workload's C(desired), C(pods), C(ready), C(generation), C(observed_generation), C(feature_gates_on_all_pods)
      (gates with the same value on every pod) and C(pod_feature_gates) (pod name to its --feature-gates value);
      null for a workload that does not exist (a managed provisioner runs outside the cluster).
  returned: always
  type: dict
api_calls:
  description: Alibaba Cloud calls made, by C(product:Action).
  returned: always
  type: dict
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.cluster import report_ack_cluster
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
# auth="k8s": the Kubernetes client registers its options and client on import (common/auth.py)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import client  # noqa: F401


def main() -> None:
    # k8s first: its api_retries is the one both APIs use
    module = StoragePerfModule(argument_spec=dict(cluster_id=dict(type="str", required=True)),
                               auth=("k8s", "alibaba"), supports_check_mode=True)
    module.run(lambda m: report_ack_cluster(m.params, m.client))


if __name__ == "__main__":
    main()
