#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: snapshot_controller_tuning
short_description: Set the snapshot-controller's worker threads, API QPS and burst
version_added: 0.1.0
description:
  - The external-snapshotter's snapshot-controller talks to the API server through client-go's token
    bucket, by default C(--kube-api-qps=5) and C(--kube-api-burst=10) with C(--worker-threads=10). That
    throttles snapshot creation and deletion of any fast CSI driver (kubernetes-csi/external-snapshotter
    issue 1344 - 80 snapshots took 143 s at the defaults and 17 s tuned). NetApp's Trident concurrent-core
    benchmark sets C(--worker-threads=25), C(--kube-api-qps=75), C(--kube-api-burst=150); those are this
    module's defaults.
  - Finds the snapshot-controller Deployment (see O(name)), replaces the values of the three flags wherever
    they are written (C(--flag=value) or C(--flag value)), appends missing ones, keeps every other argument
    in its place, and waits for the rollout (observedGeneration, updated and ready replicas).
  - O(state=absent) removes the three flags again, so the controller runs with its upstream defaults
    (10 workers, QPS 5, burst 10).
  - With O(wait=true) it waits for the rollout also when nothing changed, so a re-run finishes an interrupted rollout.
  - Validates before anything changes - O(worker_threads) > 0, O(kube_api_qps) > 0 and
    O(kube_api_burst) >= O(kube_api_qps) (also against a value left in place).
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  name:
    description:
      - Name of the snapshot-controller Deployment.
      - When omitted, the module looks for a Deployment labelled C(app.kubernetes.io/name=snapshot-controller),
        then C(app=snapshot-controller) (in O(namespace) if given, else in every namespace), then for
        C(snapshot-controller) in C(kube-system). More than one match is an error that lists them.
    type: str
  namespace:
    description: Namespace of the Deployment. Required with O(name) unless it is C(kube-system).
    type: str
  container:
    description: Container to edit. Default is the container named C(snapshot-controller), else the only container.
    type: str
  worker_threads:
    description:
      - C(--worker-threads), parallel workers for snapshots and contents.
      - At most 500 - 5x the CSI sidecars' largest default (csi-provisioner 100); each worker is a goroutine holding
        API requests.
    type: int
    default: 25
  kube_api_qps:
    description:
      - C(--kube-api-qps), sustained API requests per second.
      - At most 5000 - 50x Trident's own default of 100 and above what the API server's 600 requests in flight serve
        at sub-second latency.
    type: float
    default: 75
  kube_api_burst:
    description:
      - C(--kube-api-burst), the token bucket size; at least O(kube_api_qps).
      - At most 10000 - twice the largest kube_api_qps, client-go's usual burst ratio.
    type: int
    default: 150
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.state
  - storageperf.k8s.wait
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
    support: full
    details: The patch is sent with C(dryRun=All), so the API server validates it without storing it.
  diff_mode:
    description: Returns details on what has changed (or would change in check mode) with C(--diff).
    support: full
seealso:
  - module: storageperf.k8s.csi_sidecar_tuning
  - module: storageperf.k8s.trident_concurrency
"""

EXAMPLES = r"""
- name: Un-throttle snapshots (the seed's values)
  storageperf.k8s.snapshot_controller_tuning:
    kubeconfig: ~/.kube/config

- name: More workers and a faster client in a named Deployment
  storageperf.k8s.snapshot_controller_tuning:
    name: snapshot-controller
    namespace: kube-system
    worker_threads: 50
    kube_api_qps: 150
    kube_api_burst: 300

- name: Back to the upstream defaults
  storageperf.k8s.snapshot_controller_tuning:
    state: absent
"""

RETURN = r"""
deployment:
  description: Namespace and name of the Deployment found.
  returned: always
  type: dict
  sample: {namespace: kube-system, name: snapshot-controller}
container:
  description: Name of the container edited.
  returned: always
  type: str
  sample: snapshot-controller
before:
  description: The three settings before the task; null means unset (the program's default).
  returned: always
  type: dict
  sample: {worker_threads: null, kube_api_qps: null, kube_api_burst: null}
after:
  description: The three settings after the task (planned, in check mode).
  returned: always
  type: dict
  sample: {worker_threads: "25", kube_api_qps: "75", kube_api_burst: "150"}
args:
  description: The container's full argument list after the task (planned, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["--v=5", "--leader-election=true", "--worker-threads=25", "--kube-api-qps=75", "--kube-api-burst=150"]
rollout:
  description: The rollout's final status message; C(skipped) in check mode or with O(wait=false).
  returned: always
  type: str
  sample: successfully rolled out
running:
  description:
    - The three settings read from the rolled-out Deployment (the module fails when they differ from RV(after)).
  returned: when it waited for the rollout
  type: dict
  sample: {worker_threads: "25", kube_api_qps: "75", kube_api_burst: "150"}
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.snapshot_controller import tune


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        name=dict(type="str"),
        namespace=dict(type="str"),
        container=dict(type="str"),
        worker_threads=dict(type="int", default=25),
        kube_api_qps=dict(type="float", default=75),
        kube_api_burst=dict(type="int", default=150),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=DEFAULT_WAIT_TIMEOUT),
    ), auth="k8s", supports_check_mode=True, limits={
        "worker_threads": L.WORKER_THREADS, "kube_api_qps": L.KUBE_API_QPS, "kube_api_burst": L.KUBE_API_BURST,
        "wait_timeout": L.TIMEOUT})
    module.run(lambda m: tune(m.k8s, m.params, check_mode=m.check_mode, diff=m.diff_mode))


if __name__ == "__main__":
    main()
