# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switching Trident's concurrent core on or off the way its install needs (the trident_concurrency module).

discover -> preflight (state present) -> per install method:
- tridentctl: nothing can be switched in place; refuse with the reinstall command unless it already matches;
- operator / Helm: one merge patch of the TridentOrchestrator spec (dryRun=All in check mode), the Helm upgrade
  that persists it when the release values disagree, then a wait for the operator's echo and the controller's
  rollout, both within one deadline.
What the knowledge of versions, drivers and installs is lives in trident/concurrency.py.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError, WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import Deadline
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.watch_wait import wait_for, wait_for_rollout
from ansible_collections.storageperf.k8s.plugins.module_utils.trident.concurrency import (
    CONTROLLER_NAMES,
    TRIDENT_API,
    Install,
    TridentError,
    as_bool,
    controller_has_flag,
    desired_spec,
    discover,
    helm_advice,
    list_backends,
    observed,
    orchestrator_done,
    preflight,
    support_for,
    tridentctl_message,
)

WAIT_HINT = ("Check the operator's status (kubectl get torc -o yaml) and logs; re-run to wait again, or roll back with "
             "state=absent")


def spec_text(values: Mapping[str, Any]) -> str:
    return "".join("%s: %s\n" % (k, "null" if v is None else str(v).lower() if isinstance(v, bool) else v)
                   for k, v in sorted(values.items()))


def spec_diff(install: Install, patch: dict[str, Any]) -> dict[str, str]:
    """Ansible diff of the TridentOrchestrator spec keys the patch sets (enableConcurrency always shown)."""
    spec = install.orchestrator.get("spec") or {}  # type: ignore[union-attr]  # operator and Helm installs have one
    old = {k: spec.get(k) for k in set(patch) | {"enableConcurrency"}}
    header = "TridentOrchestrator %s spec" % install.orchestrator["metadata"]["name"]  # type: ignore[index]
    return {"before_header": header, "after_header": header, "before": spec_text(old),
            "after": spec_text(dict(old, **patch))}


def planned_after(before: dict[str, Any], patch: dict[str, Any], enable: bool) -> dict[str, Any]:
    """What the cluster will say once the patch is in (check mode, or wait=false)."""
    after = dict(before)
    if "enableConcurrency" in patch:
        after["spec_enable_concurrency"] = enable
    if "k8sAPIQPS" in patch:
        after["spec_k8s_api_qps"] = patch["k8sAPIQPS"]
    return after


def refuse_tridentctl_change(install: Install, before: dict[str, Any], enable: bool, k8s_api_qps: int | None) -> None:
    """A tridentctl install is fixed at install time: refuse a change with the reinstall that makes it."""
    if as_bool(before["controller_flag"]) != enable:
        raise TridentError(tridentctl_message(install, enable))
    if k8s_api_qps is not None and str(before["controller_k8s_api_qps"]) != str(k8s_api_qps):
        flag = " --enable-concurrency" if enable else ""
        raise TridentError("k8s_api_qps cannot be changed on a tridentctl install in place: reinstall with "
                           "`tridentctl install -n %s --k8s-api-qps %d%s`" % (install.namespace, k8s_api_qps, flag))


class ConcurrencySwitch:
    """One run of trident_concurrency; result holds what the module reports, also when it fails."""

    # what _run found and planned: set before anything reads them
    install: Install
    patch: dict[str, Any]

    def __init__(self, client: Any, params: dict[str, Any], check_mode: bool = False, diff: bool = False,
                 warn: Callable[[str], None] | None = None) -> None:
        self.client, self.params, self.check_mode, self.diff = client, params, check_mode, diff
        self.enable = params["state"] == "present"
        self.warn = warn or (lambda msg: None)
        self.install = self.patch = None  # type: ignore[assignment]
        self.result: dict[str, Any] = dict(changed=False)

    def run(self) -> dict[str, Any]:
        try:
            return self._run()
        except StoragePerfError as exc:
            if isinstance(exc, WaitTimeout):
                self.result["after"] = observed(self.install)
                exc.hint = exc.hint or WAIT_HINT
            exc.result = dict(self.result, **exc.result)
            raise

    def _run(self) -> dict[str, Any]:
        p = self.params
        if p["k8s_api_qps"] is not None and p["k8s_api_qps"] <= 0:
            raise TridentError("k8s_api_qps=%s must be > 0 (Trident's default is 100): give a positive QPS or omit it"
                               % p["k8s_api_qps"])
        install = self.install = discover(self.client, p["namespace"])
        self.result["install"] = install.summary()
        before = self.result["before"] = observed(install)
        if self.enable:
            backends = self.result["backends"] = list_backends(self.client, install.namespace)
            for warning in preflight(install, backends, p["allow_tech_preview"]):
                self.warn(warning)
            # preflight refused an unknown version or one without support
            self.result["supported_drivers"] = list(support_for(install.version)[2])  # type: ignore[arg-type, index]
        if install.method == "tridentctl":
            refuse_tridentctl_change(install, before, self.enable, p["k8s_api_qps"])
            self.result.update(after=before, enable_concurrency=str(as_bool(before["controller_flag"])).lower())
            return self.result
        self._switch_orchestrator(install)
        if self.check_mode or not p["wait"]:
            self.result.update(after=planned_after(before, self.patch, self.enable),
                               enable_concurrency=before["current_enable_concurrency"])
            return self.result
        self._wait(install, p["wait_timeout"])
        after = self.result["after"] = observed(install)
        self.result["enable_concurrency"] = after["current_enable_concurrency"]
        return self.result

    def _switch_orchestrator(self, install: Install) -> None:
        self.patch = desired_spec(install, self.enable, self.params["k8s_api_qps"])
        self.result["changed"] = bool(self.patch)
        if self.diff:
            self.result["diff"] = spec_diff(install, self.patch)
        if self.patch:
            self.client.patch(TRIDENT_API, "TridentOrchestrator", install.orchestrator["metadata"]["name"],  # type: ignore[index]
                              {"spec": self.patch}, patch_type="merge", dry_run=self.check_mode)
        command, release_value = helm_advice(install, self.enable)
        if command:
            self.result["helm_command"] = command
            self.warn("Trident's Helm release %s still has enableConcurrency=%s in its values: the TridentOrchestrator "
                      "is switched now, but the next helm upgrade would render the old value. Persist it with: %s"
                      % (install.helm_release["name"], str(release_value).lower(), command))  # type: ignore[index]

    def _wait(self, install: Install, timeout: float) -> None:
        """The operator's echo, then the controller's rollout with the flag; one deadline for both."""
        deadline = Deadline(timeout)
        install.orchestrator = wait_for(
            self.client, TRIDENT_API, "TridentOrchestrator", install.orchestrator["metadata"]["name"], None,  # type: ignore[index]
            orchestrator_done(self.enable, self.params["k8s_api_qps"]), timeout,
            "status Installed with enableConcurrency=%s" % str(self.enable).lower())
        ctrl_name = (install.controller or {}).get("metadata", {}).get("name") or CONTROLLER_NAMES[0]
        install.controller = wait_for_rollout(self.client, ctrl_name, install.namespace, max(1, deadline.remaining()),
                                              extra=controller_has_flag(self.enable))


def switch_concurrency(client: Any, params: dict[str, Any], check_mode: bool = False, diff: bool = False,
                       warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The trident_concurrency module's result; a StoragePerfError carries the partial result."""
    return ConcurrencySwitch(client, params, check_mode=check_mode, diff=diff, warn=warn).run()
