#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: csi_sidecar_tuning
short_description: Set worker threads, API QPS and burst of CSI sidecars in a CSI controller Deployment
version_added: 0.1.0
description:
  - The kubernetes-csi sidecars of a CSI controller Deployment (csi-provisioner, csi-attacher,
    csi-snapshotter, ...) each have C(--worker-threads), C(--kube-api-qps) and C(--kube-api-burst).
    Their defaults (csi-provisioner 100 workers, QPS 5, burst 10; csi-attacher and csi-snapshotter
    10 workers) throttle a CSI driver that can work concurrently.
  - For every sidecar listed in O(sidecars) the module replaces the values of those flags wherever they are
    written (C(--flag=value) or C(--flag value)), appends missing ones and keeps every other argument in its
    place, in one patch, then waits for the rollout. The editing is the same as
    M(storageperf.k8s.snapshot_controller_tuning).
  - Deployments that an operator reconciles (Trident's C(trident-controller) is owned by the Trident
    operator) get their edits reverted by that operator; the module warns. For Trident use
    M(storageperf.k8s.trident_concurrency) with O(storageperf.k8s.trident_concurrency#module:k8s_api_qps);
    from 26.06 the operator derives the sidecars' QPS from it.
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  name:
    description: Name of the CSI controller Deployment.
    type: str
    required: true
  namespace:
    description: Namespace of the Deployment.
    type: str
    required: true
  sidecars:
    description:
      - The sidecars to tune. A sidecar is found by container name, else by image name (C(.../csi-provisioner:v5.2.0)).
      - Unset (null) settings are left as they are.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Container name (or image base name) of the sidecar, e.g. C(csi-provisioner).
        type: str
        required: true
      worker_threads:
        description:
          - C(--worker-threads).
          - At most 500 - 5x the CSI sidecars' largest default (csi-provisioner 100); each worker is a goroutine
            holding API requests.
        type: int
      kube_api_qps:
        description:
          - C(--kube-api-qps).
          - At most 5000 - 50x Trident's own default of 100 and above what the API server's 600 requests in flight
            serve at sub-second latency.
        type: float
      kube_api_burst:
        description:
          - C(--kube-api-burst), at least O(sidecars[].kube_api_qps).
          - At most 10000 - twice the largest kube_api_qps, client-go's usual burst ratio.
        type: int
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.state
  - storageperf.k8s.wait
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
    support: full
    details: The patch is sent with C(dryRun=All).
  diff_mode:
    description: Returns details on what has changed (or would change in check mode) with C(--diff).
    support: full
seealso:
  - module: storageperf.k8s.snapshot_controller_tuning
"""

EXAMPLES = r"""
- name: Let the external-provisioner and -snapshotter keep up with a concurrent driver
  storageperf.k8s.csi_sidecar_tuning:
    name: ebs-csi-controller
    namespace: kube-system
    sidecars:
      - name: csi-provisioner
        worker_threads: 100
        kube_api_qps: 50
        kube_api_burst: 100
      - name: csi-snapshotter
        worker_threads: 25
        kube_api_qps: 25
        kube_api_burst: 50

- name: Remove the tuning again
  storageperf.k8s.csi_sidecar_tuning:
    name: ebs-csi-controller
    namespace: kube-system
    state: absent
    sidecars:
      - name: csi-provisioner
      - name: csi-snapshotter
"""

RETURN = r"""
sidecars:
  description: Per sidecar (by the name given), the container edited and the settings before and after.
  returned: always
  type: dict
  sample:
    csi-provisioner:
      container: csi-provisioner
      changed: true
      before: {worker_threads: null, kube_api_qps: null, kube_api_burst: null}
      after: {worker_threads: "100", kube_api_qps: "50", kube_api_burst: "100"}
      args: ["--csi-address=$(ADDRESS)", "--worker-threads=100", "--kube-api-qps=50", "--kube-api-burst=100"]
      running: {worker_threads: "100", kube_api_qps: "50", kube_api_burst: "100"}
rollout:
  description: The rollout's final status message; C(skipped) in check mode or with O(wait=false).
  returned: always
  type: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.csi_sidecars import tune_sidecars


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        sidecars=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            worker_threads=dict(type="int"),
            kube_api_qps=dict(type="float"),
            kube_api_burst=dict(type="int"),
        )),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=DEFAULT_WAIT_TIMEOUT),
    ), auth="k8s", supports_check_mode=True, limits={
        "sidecars.worker_threads": L.WORKER_THREADS, "sidecars.kube_api_qps": L.KUBE_API_QPS,
        "sidecars.kube_api_burst": L.KUBE_API_BURST, "wait_timeout": L.TIMEOUT})
    module.run(lambda m: tune_sidecars(m.k8s, m.params, check_mode=m.check_mode, diff=m.diff_mode, warn=m.warn))


if __name__ == "__main__":
    main()
