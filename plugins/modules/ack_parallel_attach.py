#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: ack_parallel_attach
short_description: Enable or disable parallel cloud disk attach on an ACK cluster
version_added: "0.1.0"
description:
  - Makes an ACK cluster attach several cloud disks to one node at the same time (or back to one at a time).
  - With O(state=present) it checks the versions (cluster 1.26 or later, C(csi-plugin) and the provisioner addon
    C(v1.30.4) or later, vendor suffixes such as C(-8c2e0b1-aliyun) ignored) and fails without changing anything when
    one is too old; tags every node pool's scaling group and every existing ECS instance of the cluster with
    C(supportConcurrencyAttach=true) (and C(supportConcurrencyDetach=true) with O(detach)); then adds
    C(DiskADController=true,DiskParallelAttach=true) (and C(DiskParallelDetach=true)) to the FeatureGate of the
    provisioner addon (C(managed-csiprovisioner) or C(csi-provisioner)), waits for it to be active, and adds
    C(DiskADController=true) to C(csi-plugin) and waits again - controller first, then node, as the CSI driver
    requires. Every other gate, tag and config key is kept.
  - With O(state=absent) it removes exactly those gates and tags, node first (C(csi-plugin)), then the
    provisioner, then the tags.
  - With O(state=present) and O(parallel=false) it sets the state between the two - C(DiskADController=true) on the
    provisioner, then on C(csi-plugin), with C(DiskParallelAttach) and C(DiskParallelDetach) removed from the
    provisioner, then the C(supportConcurrencyAttach) / C(supportConcurrencyDetach) tags removed - so the
    provisioner attaches disks instead of the node's C(csi-plugin), still one at a time per node. It is the middle
    variant of the attach-stress benchmark's attribution mode; disks without a serial number cannot be attached
    in it either.
  - Only what differs is changed, so a second run makes no write call, and a run that stopped half-way is
    completed by the next run. Tagging runs C(TagResources) for 50 instances per call, up to O(concurrency)
    calls at a time, and retries throttling with backoff; every failed call is reported, and no addon is changed
    while any instance could not be tagged.
  - Warns about disks without a serial number (created before 2020-06-10; the controller cannot attach them)
    attached to the cluster's instances, and about instance types that attach few disks.
extends_documentation_fragment:
  - storageperf.k8s.alibaba
  - storageperf.k8s.attributes
  - storageperf.k8s.state
options:
  cluster_id:
    description: ID of the ACK cluster (C(c) followed by 32 lowercase hex digits), checked before any API call.
    type: str
    required: true
  detach:
    description:
      - Also enable parallel detach (C(DiskParallelDetach=true) on the provisioner, tag C(supportConcurrencyDetach=true)).
      - Only read with O(state=present); O(state=absent) always removes both.
    type: bool
    default: false
  parallel:
    description:
      - With O(state=present), V(false) turns on controller attach (C(DiskADController)) without parallel attach
        (C(DiskParallelAttach)) and removes the whitelist tags, which serial attach does not need.
      - V(false) with O(detach=true) is refused before any call.
      - Not read with O(state=absent).
    type: bool
    default: true
    version_added: "0.2.0"
  wait_timeout:
    description:
      - Seconds to wait for each addon to become active after its config change.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: int
    default: 600
  disk_quantity_warning:
    description:
      - Warn about instance types that can attach at most this many disks (C(DescribeInstanceTypes DiskQuantity)).
      - At most 64 - the most data disks an ECS instance takes.
    type: int
    default: 16
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
notes:
  - The RAM user needs C(cs:DescribeClusterDetail), C(cs:ListClusterAddonInstances), C(cs:GetClusterAddonInstance),
    C(cs:ModifyClusterAddon), C(cs:DescribeClusterNodePools), C(cs:ModifyClusterNodePool), C(cs:DescribeClusterNodes),
    C(ecs:TagResources), C(ecs:UntagResources), C(ecs:ListTagResources), C(ecs:DescribeDisks) and
    C(ecs:DescribeInstanceTypes).
  - ECS tags are sent with C(ResourceType=instance), the documented lower-case value.
seealso:
  - module: storageperf.k8s.ack_cluster_info
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Enable parallel disk attach (credentials from the default chain, e.g. ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET)
  storageperf.k8s.ack_parallel_attach:
    cluster_id: c8155823d057948c69a****

- name: Enable parallel attach and detach, 16 tagging calls at a time, with vaulted keys in the task environment
  storageperf.k8s.ack_parallel_attach:
    cluster_id: "{{ ack_cluster_id }}"
    region: cn-hangzhou
    detach: true
    concurrency: 16
  environment:
    ALIBABA_CLOUD_ACCESS_KEY_ID: "{{ vault_ack_key_id }}"
    ALIBABA_CLOUD_ACCESS_KEY_SECRET: "{{ vault_ack_key_secret }}"

- name: Let the controller attach disks, still one at a time per node (DiskADController without DiskParallelAttach)
  storageperf.k8s.ack_parallel_attach:
    cluster_id: "{{ ack_cluster_id }}"
    parallel: false

- name: Roll back to serial attach
  storageperf.k8s.ack_parallel_attach:
    cluster_id: "{{ ack_cluster_id }}"
    state: absent
"""

RETURN = r"""
cluster:
  description: The cluster as DescribeClusterDetail reports it.
  returned: always
  type: dict
  sample: {cluster_id: c8155823d057948c69a, region: cn-hangzhou, version: 1.32.4-aliyun.1, type: ManagedKubernetes}
provisioner:
  description: The provisioner addon of the cluster (C(managed-csiprovisioner) or C(csi-provisioner)), or null.
  returned: always
  type: str
node_pools:
  description:
    - Node pools whose scaling group tags differ (or differed) from the wanted ones, with the whole tag list
      before and after.
  returned: success
  type: list
  elements: dict
  sample: [{nodepool_id: np1f3, name: default, state: active, tags_before: [],
            tags_after: [{key: supportConcurrencyAttach, value: "true"}]}]
node_pools_changed:
  description: IDs of the node pools this run changed (in check mode, would change).
  returned: always
  type: list
  elements: str
node_pools_total:
  description: Node pools of the cluster.
  returned: success
  type: int
instances_total:
  description: ECS instances of the cluster (nodes that are not ECS instances are not counted).
  returned: success
  type: int
instances_to_change:
  description: Instances that lacked (or, for V(absent), carried) the tags when the run started.
  returned: success
  type: int
instances_changed:
  description: Instances this run tagged or untagged (in check mode, would).
  returned: always
  type: int
non_ecs_nodes:
  description: Nodes that are not ECS instances (C(is_aliyun_node) false); they are skipped.
  returned: success
  type: list
  elements: str
addons:
  description: The CSI addons in the order they are changed, with FeatureGate before and after and the final state.
  returned: success
  type: list
  elements: dict
  sample:
    - {name: managed-csiprovisioner, role: controller, feature_gate_before: "",
       feature_gate_after: "DiskADController=true,DiskParallelAttach=true", changed: true, state: active}
    - {name: csi-plugin, role: node, feature_gate_before: "", feature_gate_after: "DiskADController=true",
       changed: true, state: active}
disks_without_serial:
  description: Disks attached to the cluster's instances that have no serial number (O(state=present) only).
  returned: when state is present
  type: list
  elements: dict
low_disk_quantity_instance_types:
  description: Instance types of the cluster that attach at most O(disk_quantity_warning) disks.
  returned: when state is present
  type: list
  elements: str
instance_types:
  description: Per instance type of the cluster, its disk limit (DiskQuantity), CPU and memory.
  returned: when state is present
  type: dict
failures:
  description: Every call that failed, with the error (the run stops before the addons when tagging fails).
  returned: on failure
  type: list
  elements: dict
api_calls:
  description:
    - Alibaba Cloud calls this run made, by C(product:Action), with the number of write calls, retries and
      throttled calls.
  returned: always
  type: dict
  sample: {calls: {"ecs:TagResources": 10, "cs:DescribeClusterNodes": 5}, total: 31, writes: 14, retried: {}, throttled: {}}
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.parallel_attach import apply_parallel_attach
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(
        cluster_id=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        detach=dict(type="bool", default=False),
        parallel=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=DEFAULT_WAIT_TIMEOUT),
        disk_quantity_warning=dict(type="int", default=16),
    ), auth="alibaba", supports_check_mode=True,
        limits={"wait_timeout": L.TIMEOUT, "disk_quantity_warning": L.DISK_WARNING})
    module.run(lambda m: apply_parallel_attach(m.alibaba, m.params, check_mode=m.check_mode, diff_wanted=m.diff_mode,
                                               warn=m.warn))


if __name__ == "__main__":
    main()
