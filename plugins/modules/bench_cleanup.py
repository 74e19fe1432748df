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
  - "A run that is still measuring is left alone: M(storageperf.k8s.bench_measure) holds a C(coordination.k8s.io/v1)
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
    description:
      - Seconds to wait; then the module fails and lists what is left.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
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
  - module: storageperf.k8s.bench_plan
  - module: storageperf.k8s.bench_measure
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

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import bench_cleanup
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def main() -> None:
    spec = dict(
        run_id=dict(type="str"),
        all_runs=dict(type="bool", default=False),
        namespaces=dict(type="list", elements="str"),
        timeout=dict(type="float", default=900.0),
        force=dict(type="bool", default=False),
    )
    module = StoragePerfModule(argument_spec=spec, auth="k8s", supports_check_mode=True,
                               limits={"timeout": L.TIMEOUT})
    module.run(lambda m: bench_cleanup(m.k8s, m.params, check_mode=m.check_mode, warn=m.warn))


if __name__ == "__main__":
    main()
