#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


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
  - "A run that is still measuring is left alone: M(storageperf.k8s.bench_run) holds a C(coordination.k8s.io/v1)
    Lease (C(storageperf-run), labelled with the run id) in the namespace it measures in and renews it every 15s
    (C(leaseDurationSeconds) 60). Runs whose Lease has not expired are skipped and named in RV(live_runs) and the
    message, unless O(force) is on. A run killed without releasing its Lease becomes cleanable once it expires."
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
  force:
    description:
      - Delete the objects of live runs too (their Lease has not expired). The run then reports the steps it was
        measuring as C(disturbed).
    type: bool
    default: false
    version_added: 0.2.0
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
live_runs:
  description: Runs left alone because they are still measuring (their Lease has not expired), by run id.
  returned: always
  type: dict
  sample: {csi_lifecycle-20260620T090000Z-a1b2c3: {namespace: csi-lifecycle-1a2b3c4d-1-1, holder: ctl/4242,
           renewed: "2026-06-20T09:01:00.000000Z", expires_in_s: 51.2}}
msg:
  description: What was done, naming the live runs that were skipped.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup, CleanupTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.lease import live_runs
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8S_AUTH_ARG_SPEC, K8sError, client_from_module


def main():
    spec = dict(
        run_id=dict(type="str"),
        all_runs=dict(type="bool", default=False),
        namespaces=dict(type="list", elements="str"),
        timeout=dict(type="float", default=900.0),
        force=dict(type="bool", default=False),
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
    cleanup = None
    try:
        live = {} if p["force"] else live_runs(client)
        if p["run_id"] and p["run_id"] not in live:
            live = {}
        if p["run_id"] and live:
            msg = _live_message(live)
            module.warn(msg)
            module.exit_json(changed=False, found={}, deleted={}, remaining={}, live_runs=live, msg=msg)
        cleanup = Cleanup(client, run_id=p["run_id"] or None, namespaces=p["namespaces"], timeout=p["timeout"],
                          skip_runs=live)
        found = cleanup.inventory()
        msg = _live_message(live)
        if live:
            module.warn(msg)
        if module.check_mode:
            module.exit_json(changed=bool(found), found=found, remaining=found, live_runs=live,
                             msg=msg or "would delete what was found")
        if not found:
            module.exit_json(changed=False, found={}, deleted={}, remaining={}, live_runs=live,
                             msg=msg or "nothing to delete")
        try:
            done = cleanup.run()
        except CleanupTimeout as e:
            module.fail_json(msg="%s. Check the controllers that should remove them (kubectl describe), then run "
                                 "the cleanup again" % e.msg, found=found, deleted=cleanup.deleted,
                             remaining=cleanup.inventory(), live_runs=live)
        module.exit_json(changed=True, found=found, deleted=done["deleted"], remaining=cleanup.inventory(),
                         live_runs=live, msg=msg or "deleted what was found")
    except K8sError as e:
        module.fail_json(msg="cleanup of %s: %s" % (p["run_id"] or "every storageperf run", e.msg),
                         deleted=cleanup.deleted if cleanup else {})


def _live_message(live):
    if not live:
        return ""
    return ("left %d live run(s) alone, still measuring (Lease renewed, not expired): %s. Run the cleanup after they "
            "finish, or with force=true to delete their objects anyway (they then report disturbed steps)" % (
                len(live), ", ".join("%s (namespace %s, Lease expires in %ss)" % (r, v["namespace"], v["expires_in_s"])
                                     for r, v in sorted(live.items()))))


if __name__ == "__main__":
    main()
