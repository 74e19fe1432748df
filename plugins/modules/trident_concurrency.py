#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: trident_concurrency
short_description: Switch NetApp Trident's concurrent core on or off, after a version and driver preflight
version_added: 0.1.0
description:
  - Trident's concurrent core replaces the controller's global lock with per-resource locks, so
    provisioning, publishing and snapshot operations run in parallel (NetApp measured 4x to 8x the
    throughput at 100 and 1000 volumes).
  - Finds how Trident was installed and switches it the way that install needs.
    B(Operator) (a TridentOrchestrator CR) - sets C(spec.enableConcurrency) on the CR.
    B(Helm) (the trident-operator chart, which creates the TridentOrchestrator from its values) - sets
    C(spec.enableConcurrency) on that CR, so the change takes effect now, and, when the release values still
    say otherwise, warns and returns in RV(helm_command) the C(helm upgrade --reuse-values --set enableConcurrency=...)
    that persists it (without it, the next C(helm upgrade) renders the old value again).
    B(tridentctl) (a trident-controller Deployment without a TridentOrchestrator) - concurrency is fixed at
    install time; the module fails with the C(tridentctl install --enable-concurrency) reinstall command,
    unless the install already has the wanted setting.
  - Preflight before anything changes (O(state=present)) - the Trident version must have the concurrent
    core (25.06 and later); before 26.02 it is a tech preview and needs O(allow_tech_preview=true); every
    TridentBackendConfig and TridentBackend must use a driver supported with concurrency by B(that) version
    (25.06 ontap-san; 25.10 adds ontap-nas; 26.02 ontap-nas, ontap-san, google-cloud-netapp-volumes; 26.06 adds
    ontap-nas-economy, ontap-san-economy, azure-netapp-files, solidfire-san). An unsupported driver fails the
    task naming the backend; nothing is changed.
  - Then waits for the operator to report C(status.status=Installed) with
    C(status.currentInstallationParams.enableConcurrency) matching, and for the trident-controller rollout
    with C(--enable_concurrency=true) (or false) on its trident-main container; O(wait_timeout) bounds both
    together, and the wait happens also when nothing changed.
  - O(state=present) enables the concurrent core; O(state=absent) disables it.
author:
  - storageperf.k8s maintainers (@storageperf)
options:
  namespace:
    description: Namespace Trident runs in. Found from the TridentOrchestrator or the trident-controller Deployment when omitted.
    type: str
  allow_tech_preview:
    description: Enable concurrency on Trident 25.06 to 26.01, where it is a tech preview.
    type: bool
    default: false
  k8s_api_qps:
    description:
      - C(spec.k8sAPIQPS) of the TridentOrchestrator, the QPS of Trident's controller towards the API server
        (Trident's default 100, burst twice that). From 26.06 the operator derives the CSI sidecars' QPS from it
        (max(QPS/4, 10)). Left as it is when omitted, also with O(state=absent).
      - At most 5000 - 50x Trident's own default of 100 and above what the API server's 600 requests in flight serve
        at sub-second latency.
    type: int
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
  - storageperf.k8s.state
  - storageperf.k8s.wait
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
    support: full
    details: Runs the whole preflight; the CR patch is sent with C(dryRun=All). Use it as a preflight.
  diff_mode:
    description: Returns details on what has changed (or would change in check mode) with C(--diff).
    support: full
seealso:
  - module: storageperf.k8s.snapshot_controller_tuning
  - name: Trident controller scalability (concurrent core)
    description: NetApp's documentation of the feature and its supported drivers.
    link: https://docs.netapp.com/us-en/trident/trident-reco/concurrency.html
"""

EXAMPLES = r"""
- name: Preflight only (nothing changes; fails on an unsupported backend driver)
  storageperf.k8s.trident_concurrency:
  check_mode: true

- name: Enable Trident's concurrent core
  storageperf.k8s.trident_concurrency:
    state: present
  register: trident

- name: Show what the operator reports
  ansible.builtin.debug:
    msg: "enableConcurrency reported as {{ trident.enable_concurrency }}"

- name: Try the tech preview on 25.10 with a higher controller QPS
  storageperf.k8s.trident_concurrency:
    allow_tech_preview: true
    k8s_api_qps: 200

- name: Roll back
  storageperf.k8s.trident_concurrency:
    state: absent
"""

RETURN = r"""
install:
  description: How Trident was found installed.
  returned: always
  type: dict
  sample: {method: operator, namespace: trident, version: 26.06.0, version_source: TridentOrchestrator status.version,
           orchestrator: trident, controller: trident-controller}
backends:
  description: The backends checked by the preflight, with their drivers.
  returned: when state=present and Trident was found
  type: list
  elements: dict
  sample: [{kind: TridentBackendConfig, name: trident/backend-ontap-nas, backend: ontap-nas, driver: ontap-nas}]
unsupported_backends:
  description: Backends whose driver this Trident version cannot run concurrently (the task failed).
  returned: on preflight failure
  type: list
  elements: dict
supported_drivers:
  description: Drivers supported with concurrency by the installed version.
  returned: when state=present and the version has the concurrent core
  type: list
  elements: str
before:
  description: The CR's wish, the operator's echo and the controller's flag before the task.
  returned: when Trident was found
  type: dict
  sample: {spec_enable_concurrency: false, orchestrator_status: Installed, current_enable_concurrency: "false",
           controller_flag: "false", spec_k8s_api_qps: null, controller_k8s_api_qps: null}
after:
  description: The same after the task (and after the wait); the planned CR values in check mode.
  returned: when Trident was found
  type: dict
enable_concurrency:
  description:
    - C(status.currentInstallationParams.enableConcurrency) as the operator reports it - the string C("true") or
      C("false") - after the task; for tridentctl installs the trident-main flag's value.
  returned: when Trident was found
  type: str
  sample: "true"
helm_command:
  description: The helm upgrade that persists the setting in the Helm release values (Helm installs whose values differ).
  returned: when the install method is helm and its values disagree
  type: str
  sample: >-
    helm upgrade trident netapp-trident/trident-operator -n trident --reuse-values --version 100.2606.0
    --set enableConcurrency=true
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT
from ansible_collections.storageperf.k8s.plugins.module_utils.trident.switch import switch_concurrency


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(
        state=dict(type="str", choices=["present", "absent"], default="present"),
        namespace=dict(type="str"),
        allow_tech_preview=dict(type="bool", default=False),
        k8s_api_qps=dict(type="int"),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=DEFAULT_WAIT_TIMEOUT),
    ), auth="k8s", supports_check_mode=True,
        limits={"k8s_api_qps": L.KUBE_API_QPS, "wait_timeout": L.TIMEOUT})
    module.run(lambda m: switch_concurrency(m.k8s, m.params, check_mode=m.check_mode, diff=m.diff_mode, warn=m.warn))


if __name__ == "__main__":
    main()
