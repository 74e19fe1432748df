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
  state:
    description: C(present) sets the given flags; C(absent) removes all three flags from the listed sidecars.
    type: str
    choices: [present, absent]
    default: present
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
        description: C(--worker-threads).
        type: int
      kube_api_qps:
        description: C(--kube-api-qps).
        type: float
      kube_api_burst:
        description: C(--kube-api-burst), at least O(sidecars[].kube_api_qps).
        type: int
  wait:
    description: Wait for the rollout to finish.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for the rollout.
    type: int
    default: 300
extends_documentation_fragment:
  - storageperf.k8s.k8s_auth
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    TUNING_FLAGS,
    ContainerArgsError,
    apply_plan,
    operator_managed,
    pick_container,
    plan_diff,
    plan_edits,
    running_values,
    tuning_values,
    tuning_wanted,
    validate_tuning,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import (
    K8S_AUTH_ARG_SPEC,
    K8sError,
    client_from_module,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.rollout import WaitTimeout, wait_for_rollout


def main():
    argument_spec = dict(
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
        wait_timeout=dict(type="int", default=300),
    )
    argument_spec.update(K8S_AUTH_ARG_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params
    names = [s["name"] for s in p["sidecars"]]
    if not names:
        module.fail_json(msg="sidecars is empty: list at least one sidecar, e.g. [{name: csi-provisioner, worker_threads: 25}]")
    if len(set(names)) != len(names):
        module.fail_json(msg="sidecars names the same sidecar twice (%s): merge its settings into one entry" % ", ".join(names))
    errors = []
    if p["state"] == "present":
        for s in p["sidecars"]:
            errors.extend(validate_tuning(s, where="sidecars[%s]" % s["name"]))
            if all(s.get(opt) is None for opt, _ in TUNING_FLAGS):
                errors.append("sidecars[%s] sets nothing: give worker_threads, kube_api_qps or kube_api_burst, or "
                              "use state=absent to remove them" % s["name"])
    if errors:
        module.fail_json(msg="; ".join(errors), errors=errors, changed=False)

    client = client_from_module(module)
    result = dict(changed=False, rollout="skipped", sidecars={})
    try:
        for attempt in range(3):
            dep = client.get("apps/v1", "Deployment", p["name"], namespace=p["namespace"], missing_ok=True)
            if dep is None:
                raise ContainerArgsError("Deployment %s/%s not found: give the name and namespace of the CSI controller "
                                         "Deployment (kubectl get deploy -A | grep csi)" % (p["namespace"], p["name"]))
            edits = []
            for s in p["sidecars"]:
                index, container = pick_container(dep, [s["name"]], image_hint=s["name"])
                if p["state"] == "present":
                    errors.extend(validate_tuning(s, where="sidecars[%s]" % s["name"], current=tuning_values(container)))
                edits.append(((index, container), tuning_wanted(s, p["state"])))
            if errors:
                module.fail_json(msg="; ".join(errors), errors=errors, **result)
            plan = plan_edits(dep, edits)
            for i, step in enumerate(plan):  # plan follows the order of p["sidecars"]
                result["sidecars"][p["sidecars"][i]["name"]] = dict(
                    container=step["name"], changed=step["changed"], before=step["before"], after=step["after"],
                    args=step["new"])
            result["changed"] = any(step["changed"] for step in plan)
            if module._diff:
                result["diff"] = plan_diff(plan)
            try:
                apply_plan(client, dep, plan, check_mode=module.check_mode)
                break
            except K8sError as e:
                if e.status not in (409, 422) or attempt == 2:
                    raise
        if result["changed"] and operator_managed(dep):
            module.warn("Deployment %s/%s is managed by an operator (ownerReferences or Trident labels); it may revert "
                        "these arguments. For Trident, set k8s_api_qps with storageperf.k8s.trident_concurrency."
                        % (p["namespace"], p["name"]))
        if p["wait"] and not module.check_mode:
            done = wait_for_rollout(client, p["name"], p["namespace"], p["wait_timeout"])
            result["rollout"] = "successfully rolled out"
            for side in result["sidecars"].values():
                side["running"] = running_values(done, side["container"])
            reverted = [n for n, side in result["sidecars"].items() if side["running"] != side["after"]]
            if reverted:
                module.fail_json(msg="after the rollout %s run with other values than set (%s): the Deployment's owner "
                                     "(an operator?) rewrote them" % (", ".join(reverted), "; ".join(
                                         "%s %s" % (n, result["sidecars"][n]["running"]) for n in reverted)), **result)
    except ContainerArgsError as e:
        module.fail_json(msg=str(e), **result)
    except WaitTimeout as e:
        module.fail_json(msg=e.msg + " (the new arguments are in place; re-run to wait again)", **result)
    except K8sError as e:
        module.fail_json(msg=e.msg, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
