#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: pmem_storageclass
short_description: A StorageClass for PMEM (persistent memory) local volumes of the Alibaba Cloud CSI local plugin
version_added: 0.1.0
description:
  - Creates a StorageClass for C(localplugin.csi.alibabacloud.com) with C(volumeType=PMEM), shaped like the
    C(csi-pmem-lvm) class of the ACK NVM volume guide - PMEM-LVM (O(pmem_type=lvm), optionally striped over the
    node's regions with O(lvm_type=striping)) or PMEM-direct (O(pmem_type=direct)), C(nodeAffinity "true"), the
    C(dax) mount option and C(volumeBindingMode WaitForFirstConsumer).
  - Every option is checked before the API is called; an unknown PMEM type is refused (the csi-local-plugin exits
    on it), and so are LVM options on a direct class and any binding mode but C(WaitForFirstConsumer).
  - A StorageClass's provisioner, parameters, reclaim policy, binding mode and mount options cannot change in
    place. When an existing class differs in those, the module fails and names the fields, unless O(force=true),
    which deletes and recreates it (volumes already provisioned keep their PVs).
  - Classes it creates carry the label C(app.kubernetes.io/managed-by=storageperf.k8s). O(state=absent) deletes
    only such a class, so a rollback never removes a class someone else made.
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  name:
    description: Name of the StorageClass.
    type: str
    required: true
  state:
    description: C(present) creates or updates the class; C(absent) deletes it if this collection created it.
    type: str
    choices: [present, absent]
    default: present
  pmem_type:
    description:
      - How the plugin carves volumes out of the node's PMEM - C(lvm) (a logical volume in the node's PMEM volume
        group, the default) or C(direct) (a PMEM namespace used directly). Written as C(pmemType) when not C(lvm).
    type: str
    choices: [lvm, direct]
    default: lvm
  lvm_type:
    description:
      - C(lvmType) - C(linear) (the plugin's default) or C(striping) (over every region of the node, the seed's
        C(csi-pmem-lvm)). Only with O(pmem_type=lvm); omitted when null.
    type: str
    choices: [linear, striping]
  vg_name:
    description: C(vgName), the node's PMEM volume group (the plugin's default is C(pmemvgregion0)). Only with O(pmem_type=lvm).
    type: str
  node_affinity:
    description: Write C(nodeAffinity "true") so that the PV is pinned to the node holding it.
    type: bool
    default: true
  fs_type:
    description: C(fsType) of the volumes; omitted when null (the plugin formats ext4).
    type: str
  mount_options:
    description: Mount options of the volumes; C(dax) maps the files straight onto persistent memory.
    type: list
    elements: str
    default: [dax]
  reclaim_policy:
    description: What happens to a volume when its claim is deleted.
    type: str
    choices: [Delete, Retain]
    default: Delete
  allow_volume_expansion:
    description: Allow claims to grow.
    type: bool
    default: true
  volume_binding_mode:
    description: Only C(WaitForFirstConsumer) works for local volumes; the option exists so that another value is refused clearly.
    type: str
    default: WaitForFirstConsumer
  default_class:
    description: Mark the class as the cluster's default (annotation C(storageclass.kubernetes.io/is-default-class)).
    type: bool
    default: false
  labels:
    description: More labels for the class (C(app.kubernetes.io/managed-by) is always set).
    type: dict
    default: {}
  extra_parameters:
    description: Other plugin parameters, as strings. Parameters that have their own option are refused here.
    type: dict
    default: {}
  force:
    description: Delete and recreate an existing class whose immutable fields differ (and take it over).
    type: bool
    default: false
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
attributes:
  check_mode:
    details: Changes are sent with C(dryRun=All), so the API server validates them without storing them.
seealso:
  - module: storageperf.k8s.pmem_node_topology
"""

EXAMPLES = r"""
- name: The seed's PMEM-LVM class
  storageperf.k8s.pmem_storageclass:
    name: csi-pmem-lvm
    lvm_type: striping

- name: PMEM-direct
  storageperf.k8s.pmem_storageclass:
    name: csi-pmem-direct
    pmem_type: direct

- name: Roll back
  storageperf.k8s.pmem_storageclass:
    name: csi-pmem-lvm
    state: absent
"""

RETURN = r"""
storageclass:
  description: The StorageClass after the task (planned, in check mode); empty when absent.
  returned: always
  type: dict
  sample: {metadata: {name: csi-pmem-lvm, labels: {app.kubernetes.io/managed-by: storageperf.k8s}},
           provisioner: localplugin.csi.alibabacloud.com, parameters: {volumeType: PMEM, lvmType: striping,
           nodeAffinity: "true"}, mountOptions: [dax], reclaimPolicy: Delete, volumeBindingMode: WaitForFirstConsumer,
           allowVolumeExpansion: true}
action:
  description: What was (or would be) done - C(created), C(updated), C(recreated), C(deleted), C(none), or C(left)
    (absent requested for a class this collection did not create).
  returned: always
  type: str
  sample: created
changed_fields:
  description: Fields that differ between the existing and the wanted class.
  returned: always
  type: list
  elements: str
  sample: [parameters]
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
# auth="k8s": the Kubernetes client registers its options and client on import (common/auth.py)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import client  # noqa: F401
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.plugin import LVM_TYPES, PMEM_TYPES
from ansible_collections.storageperf.k8s.plugins.module_utils.pmem.storageclass import ensure_storageclass


def main() -> None:
    argument_spec = dict(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        pmem_type=dict(type="str", choices=list(PMEM_TYPES), default="lvm"),
        lvm_type=dict(type="str", choices=list(LVM_TYPES)),
        vg_name=dict(type="str"),
        node_affinity=dict(type="bool", default=True),
        fs_type=dict(type="str"),
        mount_options=dict(type="list", elements="str", default=["dax"]),
        reclaim_policy=dict(type="str", choices=["Delete", "Retain"], default="Delete"),
        allow_volume_expansion=dict(type="bool", default=True),
        volume_binding_mode=dict(type="str", default="WaitForFirstConsumer"),
        default_class=dict(type="bool", default=False),
        labels=dict(type="dict", default={}),
        extra_parameters=dict(type="dict", default={}),
        force=dict(type="bool", default=False),
    )
    module = StoragePerfModule(argument_spec=argument_spec, auth="k8s", supports_check_mode=True)
    module.run(lambda m: ensure_storageclass(m.k8s, m.params, check_mode=m.check_mode, diff=m.diff_mode, warn=m.warn))


if __name__ == "__main__":
    main()
