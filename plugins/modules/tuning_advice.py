#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: tuning_advice
short_description: Say which storage tunings a cluster has on, could turn on, or cannot, and what each would bring
version_added: "0.2.0"
description:
  - Reads one cluster and reports, for every tuning this collection applies, whether it is C(on), C(available),
    C(blocked) or C(not_applicable), with the reasons, the settings read, the recommended settings, the figure the
    seed document measured for it and the playbook that applies it. Changes nothing.
  - V(parallel_attach) (seed 000) - with O(cluster_id), the ACK cluster version, the C(csi-plugin) and provisioner
    addon versions (C(managed-csiprovisioner) or C(csi-provisioner), v1.30.4 or later) and their FeatureGates, the
    C(supportConcurrencyAttach) tags of node pools and ECS instances, disks without a serial number (each one
    blocks it), and the instance types' disk limits next to the CSINode limits; the same reads and version check as
    M(storageperf.k8s.ack_cluster_info) and M(storageperf.k8s.ack_parallel_attach). Without O(cluster_id) it is
    C(not_applicable).
  - V(trident_concurrency) (seed 002) - Trident's install method, version, backend drivers and C(--enable_concurrency),
    with the version and driver preflight of M(storageperf.k8s.trident_concurrency) (a tech-preview version counts as
    blocked).
  - V(snapshot_controller_tuning) (seed 002) - the snapshot-controller's C(--worker-threads), C(--kube-api-qps) and
    C(--kube-api-burst) against the seed's 25, 75 and 150 (unset flags count as the binary's defaults 10, 5, 10).
  - V(csi_sidecar_tuning) - the same three flags of every kubernetes-csi sidecar (csi-provisioner, csi-attacher,
    csi-snapshotter, csi-resizer) in the cluster's Deployments, against 25 workers, QPS 25 and burst 50.
  - V(pmem_storageclasses) (seed 001) - nodes labelled C(pmem.csi.alibabacloud.com/type), the local plugin's
    CSIDriver and the PMEM StorageClasses.
  - A failing Kubernetes or Alibaba Cloud API fails the task for this cluster only.
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.alibaba
  - storageperf.k8s.attributes
options:
  cluster_id:
    description:
      - ID of the ACK cluster, to read the ACK and ECS side of V(parallel_attach).
      - When omitted (or empty), no Alibaba Cloud API is called and V(parallel_attach) is C(not_applicable); the
        Alibaba Cloud credential options are then not needed.
    type: str
  trident_namespace:
    description: Namespace Trident runs in. Found from the TridentOrchestrator or the trident-controller Deployment when omitted.
    type: str
  inventory:
    description:
      - The inventory the cluster is in, written into each tuning's C(apply.command) (C(-i)). Only text; nothing
        is read from it.
      - When omitted the command says C(<inventory>).
    type: str
  cluster_name:
    description:
      - The cluster's inventory host, written into each tuning's C(apply.command) (C(-l)).
      - When omitted the command says C(<cluster>).
    type: str
  output_dir:
    description:
      - Also write the advice into this directory, on the host that runs the module (the controller with
        C(connection=local)) - C(advice-<UTC time>.json) (one per run, what the fleet report reads) and C(advice.md),
        C(advice.html) (the latest, for people). Written in check mode too - they describe, they change nothing.
      - One module run instead of the file and copy tasks a playbook would need (docs/performance.md).
    type: path
attributes:
  check_mode:
    support: full
    details: The module only reads, in check mode and outside it alike; C(changed) is always false.
  diff_mode:
    support: none
notes:
  - O(api_retries) applies to both the Kubernetes and the Alibaba Cloud calls.
  - Needs read access to Nodes, StorageClasses, CSIDrivers, CSINodes, Deployments, PersistentVolumes, Pods, Secrets in
    Trident's namespace (Helm releases) and the Trident and snapshot CRDs; with O(cluster_id) the RAM permissions
    of M(storageperf.k8s.ack_cluster_info).
seealso:
  - module: storageperf.k8s.ack_cluster_info
  - module: storageperf.k8s.trident_concurrency
  - module: storageperf.k8s.snapshot_controller_tuning
  - module: storageperf.k8s.csi_sidecar_tuning
  - module: storageperf.k8s.pmem_storageclass
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: What could this cluster turn on? (Kubernetes side only)
  storageperf.k8s.tuning_advice:
    kubeconfig: ~/.kube/prod.yaml
  register: advice

- name: Include the ACK side (credentials from ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET)
  storageperf.k8s.tuning_advice:
    kubeconfig: ~/.kube/ack.yaml
    cluster_id: "{{ ack_cluster_id }}"
    region: cn-hangzhou
  register: advice

- name: List what is available
  ansible.builtin.debug:
    msg: "{{ advice.advice.tunings | selectattr('state', 'equalto', 'available') | map(attribute='name') | list }}"
"""

RETURN = r"""
paths:
  description: Where O(output_dir) got the advice - C(json) (this run's C(advice-<UTC time>.json)), C(md), C(html).
  returned: when output_dir is set
  type: dict
  sample: {json: /srv/reports/ack-prod/advice-20261206T061500Z.json, md: /srv/reports/ack-prod/advice.md,
           html: /srv/reports/ack-prod/advice.html}
advice:
  description:
    - The advice for this cluster. The fleet report reads exactly this shape from the C(advice-*.json) files that
      C(storageperf.k8s.advise) writes.
  returned: success
  type: dict
  contains:
    cluster:
      description:
        - The cluster - C(server) (the API server URL), C(version) (its gitVersion) and C(uid) (the uid of its
          kube-system namespace, the cluster's identity for its life; null where the identity may not read it).
      type: dict
      returned: success
      sample: {server: "https://10.0.0.1:6443", version: v1.32.4-aliyun.1, uid: 9f6c3a3e-1d2b-4c55-8e0a-2f1b7d9c0a11}
    tunings:
      description:
        - One entry per tuning, in this order - V(parallel_attach), V(trident_concurrency),
          V(snapshot_controller_tuning), V(csi_sidecar_tuning), V(pmem_storageclasses).
        - C(name) - the tuning.
        - C(state) - V(on) (the cluster runs with it), V(available) (off, nothing stands in the way),
          V(blocked) (off, and C(reasons) say what stands in the way), V(not_applicable) (the cluster lacks what
          it tunes; C(reasons) say what).
        - C(reasons) - human-readable text - what blocks it (a version too old with the version found and the one
          needed, an unsupported backend driver, disks without a serial number with their count and examples) or
          why it does not apply; entries starting with C(note:) are caveats that block nothing.
        - C(current) - the settings read (per tuning, for example addon versions and FeatureGates, tagged node
          pools and instances, Trident's install and C(--enable_concurrency), flag values and their effective
          values).
        - C(recommended) - the settings the tuning sets.
        - C(expected) - what the seed measured for it.
        - C(expected_speedup) - the same figure as a number (time before / time after), or null where the seed
          has no before/after ratio on one cluster; for Trident the least among the cluster's backend drivers.
        - C(seed) - the seed document the figure comes from (C(000), C(001), C(002)).
        - C(apply_with) - the playbook (or module or command) that applies it.
        - C(apply) - how to apply it on this cluster - C(playbook) and C(extra_vars) (the playbook that applies the
          tuning and its C(-e) variables, or null when none does and C(apply_with) names the role or module),
          C(command) (C(ansible-playbook -i <inventory> <playbook> -l <cluster> -e ...), or null),
          C(rollout_change) and C(rollout_command) (C(storageperf.k8s.rollout -e change=<change>), the guarded
          rollout, or null for a tuning it does not roll out, or whose required change_parameters the advice cannot
          tell - the CSI sidecars of a Deployment other than Trident's).
        - C(rollout_parameters) - on C(csi_sidecar_tuning), the rollout's change_parameters for the Deployment it
          found short (C(csi_deployment), C(csi_namespace), C(storage_class) - one of its driver's).
      type: list
      elements: dict
      returned: success
      sample:
        - name: parallel_attach
          state: available
          reasons: []
          current: {cluster_version: 1.32.4-aliyun.1, provisioner: managed-csiprovisioner, controller_gates: false,
                    node_gates: false, instances_tagged: 0, instances_total: 3, disks_without_serial: 0}
          recommended: {provisioner_feature_gates: {DiskADController: true, DiskParallelAttach: true},
                        csi_plugin_feature_gates: {DiskADController: true},
                        ecs_tags: {supportConcurrencyAttach: "true"}}
          expected: "28 pods x 2 disks on one node: 3m19s -> 37s to start, ~5x (seed 000)"
          expected_speedup: 5.38
          seed: "000"
          apply_with: storageperf.k8s.enable_parallel_attach
          apply: {playbook: storageperf.k8s.enable_parallel_attach, extra_vars: {state: present},
                  command: "ansible-playbook -i fleet.yml storageperf.k8s.enable_parallel_attach -l ack-prod -e state=present",
                  rollout_change: parallel_attach,
                  rollout_command: "ansible-playbook -i fleet.yml storageperf.k8s.rollout -l ack-prod -e change=parallel_attach"}
        - name: trident_concurrency
          state: blocked
          reasons: ["Trident 25.02.1 has no concurrent core (it arrived in 25.06.0 as a tech preview, GA in 26.02.0):
                     upgrade Trident to 26.02.0 or later"]
          current: {install: {method: operator, version: 25.02.1, namespace: trident}, controller_flag: "false"}
          recommended: {enableConcurrency: true}
          expected: "ONTAP NAS +707% (~8.1x); 100 volumes 28m35s -> 3m40s (seed 002)"
          expected_speedup: 8.1
          seed: "002"
          apply_with: storageperf.k8s.tune_trident
    summary:
      description: How many tunings are in each state.
      type: dict
      returned: success
      sample: {"on": 1, available: 2, blocked: 1, not_applicable: 1}
"""

import datetime
from typing import Any, Callable, Dict, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.advice.advisor import tuning_advice
from ansible_collections.storageperf.k8s.plugins.module_utils.advice.commands import add_commands
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def advice_with_commands(p: Mapping[str, Any], client_of: Callable[[str], Any]) -> Dict[str, Any]:
    result = tuning_advice(p, client_of)
    add_commands(result["advice"], p["inventory"], p["cluster_name"])
    if p["output_dir"]:
        # here, not at the top: the reports' renderer loads only when they are written
        from ansible_collections.storageperf.k8s.plugins.module_utils.report.advice_render import write_reports

        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        result["paths"] = write_reports(result["advice"], p["cluster_name"] or "cluster", p["output_dir"], stamp)
    return result


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(cluster_id=dict(type="str"), trident_namespace=dict(type="str"),
                                                  inventory=dict(type="str"), cluster_name=dict(type="str"),
                                                  output_dir=dict(type="path")),
                               auth=("k8s", "alibaba"), supports_check_mode=True)
    module.run(lambda m: advice_with_commands(m.params, m.client))


if __name__ == "__main__":
    main()
