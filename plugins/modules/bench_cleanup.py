#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function


DOCUMENTATION = r"""
---
module: bench_cleanup
short_description: Delete everything a storageperf benchmark run created
version_added: "0.1.0"
description:
  - Deletes what one benchmark run (O(run_id)) or every storageperf run (O(all_runs)) left in a Kubernetes
    cluster, also after a failed or interrupted run. A run's objects are its owner namespaces (label
    C(storageperf.k8s/run-id)) with everything in them, objects labelled with the run id elsewhere (the
    StorageClass of attach_stress), the PersistentVolumes of claims in those namespaces, their
    VolumeAttachments and the VolumeSnapshotContents of snapshots there.
  - "Order: StatefulSets and pods first; VolumeSnapshots (and their contents) before the PVCs; PVCs, then PVs
    that outlive them (reclaimPolicy Retain: only the API object is deleted, the backend keeps the volume);
    waits until the PVs and VolumeAttachments are gone; labelled StorageClasses; the namespaces last."
  - Idempotent; nothing to delete reports C(changed=false).
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.attributes
options:
  run_id:
    description: The run whose objects to delete. Exactly one of O(run_id) and O(all_runs) is required.
    type: str
  all_runs:
    description: Delete the objects of every storageperf run (every object carrying the C(storageperf.k8s/run-id) label).
    type: bool
    default: false
  namespaces:
    description: Limit the cleanup to these owner namespaces of the run (the benchmark's own per-repetition cleanup).
    type: list
    elements: str
  timeout:
    description: Seconds to wait; then the module fails and lists what is left.
    type: float
    default: 900
attributes:
  check_mode:
    support: full
    details: Lists what would be deleted.
  diff_mode:
    support: none
seealso:
  - module: storageperf.k8s.bench_run
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Remove what run csi_lifecycle-20260620T090000Z-a1b2c3 left behind
  storageperf.k8s.bench_cleanup:
    run_id: csi_lifecycle-20260620T090000Z-a1b2c3

- name: Remove every storageperf run from the cluster
  storageperf.k8s.bench_cleanup:
    all_runs: true
    timeout: 1800
"""

RETURN = r"""
found:
  description: What belonged to the run(s) before the cleanup, by kind.
  returned: always
  type: dict
  sample: {Namespace: [csi-lifecycle-1a2b3c4d-1-1], PersistentVolumeClaim: [csi-lifecycle-1a2b3c4d-1-1/vol-0000]}
deleted:
  description: Delete requests sent, per kind (objects that went away on their own, e.g. PVs, are not counted).
  returned: when not in check mode
  type: dict
  sample: {Namespace: 1, PersistentVolumeClaim: 100, Pod: 25}
remaining:
  description: What is still there (empty after a successful cleanup).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup, CleanupTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import K8S_AUTH_ARG_SPEC, K8sError, client_from_module


def main():
    spec = dict(
        run_id=dict(type="str"),
        all_runs=dict(type="bool", default=False),
        namespaces=dict(type="list", elements="str"),
        timeout=dict(type="float", default=900.0),
    )
    spec.update(K8S_AUTH_ARG_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    p = module.params
    if bool(p["run_id"]) == bool(p["all_runs"]):
        module.fail_json(msg="give exactly one of run_id (one run) and all_runs=true (every storageperf run)")
    if p["run_id"]:
        problem = L.run_id_problem(p["run_id"])
        if problem:
            module.fail_json(msg=problem)
    client = client_from_module(module)
    cleanup = Cleanup(client, run_id=p["run_id"] or None, namespaces=p["namespaces"], timeout=p["timeout"])
    try:
        found = cleanup.inventory()
        if module.check_mode:
            module.exit_json(changed=bool(found), found=found, remaining=found)
        if not found:
            module.exit_json(changed=False, found={}, deleted={}, remaining={})
        try:
            done = cleanup.run()
        except CleanupTimeout as e:
            module.fail_json(msg="%s. Check the controllers that should remove them (kubectl describe), then run "
                                 "the cleanup again" % e.msg, found=found, deleted=cleanup.deleted,
                             remaining=cleanup.inventory())
        module.exit_json(changed=True, found=found, deleted=done["deleted"], remaining=cleanup.inventory())
    except K8sError as e:
        module.fail_json(msg="cleanup of %s: %s" % (p["run_id"] or "every storageperf run", e.msg),
                         deleted=cleanup.deleted)


if __name__ == "__main__":
    main()
