# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tuning engine of the modules that set a controller's worker threads, API QPS and burst.

snapshot_controller_tuning and csi_sidecar_tuning differ only in how they find the Deployment and pick
its containers; the rest is this one ladder:

  read the Deployment -> pick the containers -> validate against the values in place -> plan the edits
  -> one guarded JSON patch (re-read and re-planned on a 409/422 conflict) -> wait for the rollout
  -> check that the rolled-out Deployment runs the values set (an operator may have rewritten them).

Every failure (a ContainerArgsError for refused settings, whose details list every refusal as errors, or
the K8sError/WaitTimeout met on the way) carries the partial result, so the module reports what it planned or
did before it failed.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError, WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT, retry
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client, K8sError
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    ContainerArgsError,
    apply_plan,
    plan_diff,
    plan_edits,
    running_values,
    tuning_values,
    tuning_wanted,
    validate_tuning,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.watch_wait import wait_for_rollout

# A concurrent writer makes the resourceVersion test of the patch fail (409, or 422 for a failed "test" op):
# re-read and re-plan. client-go's retry.RetryOnConflict tries 5 times 10 ms apart; three reads are enough
# here because each one plans from the newest version.
CONFLICT_STATUSES = (409, 422)
PATCH_ATTEMPTS = 3


class Tunable:
    """One container to tune: key names it in the result, pick(deployment) -> (index, container),
    settings holds the wanted values by option name (None = leave as is), where prefixes its messages."""

    def __init__(self, key: str, pick: Callable[..., tuple[int, dict[str, Any]]], settings: Mapping[str, Any], where: str = "") -> None:
        self.key = key
        self.pick = pick
        self.settings = settings
        self.where = where


def refuse_settings(tunables: Iterable[Tunable], state: str) -> None:
    """Fail before any request on values that are wrong whatever the container holds now."""
    if state != "present":
        return
    errors = [e for t in tunables for e in validate_tuning(t.settings, where=t.where)]
    if errors:
        raise ContainerArgsError("; ".join(errors), errors=errors)


def is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, K8sError) and exc.status in CONFLICT_STATUSES


class DeploymentTuning:
    """One run of the ladder.

    find(client) returns the Deployment (or raises ContainerArgsError); report(outcome) shapes the outcome
    (the Deployment, per tunable key its plan and running values, changed, rollout, diff) into the module's
    result; on_patched(deployment, outcome) runs once the patch is accepted, before the wait.
    """

    def __init__(self, client: Client, find: Callable[[Client], dict[str, Any]], tunables: list[Tunable], state: str, check_mode: bool = False,
                 diff: bool = False, report: Callable[[dict[str, Any]], dict[str, Any]] = dict,
                 on_patched: Callable[[dict[str, Any], dict[str, Any]], object] | None = None) -> None:
        self.client, self.find, self.tunables, self.state = client, find, tunables, state
        self.check_mode, self.diff = check_mode, diff
        self.report, self.on_patched = report, on_patched
        self.outcome: dict[str, Any] = dict(changed=False, rollout="skipped", deployment=None, containers={})

    def _plan_and_patch(self) -> dict[str, Any]:
        dep = self.find(self.client)
        md = dep["metadata"]
        self.outcome["deployment"] = dict(namespace=md["namespace"], name=md["name"])
        picked = [(t, t.pick(dep)) for t in self.tunables]
        if self.state == "present":
            errors = [e for t, (_, c) in picked
                      for e in validate_tuning(t.settings, where=t.where, current=tuning_values(c))]
            if errors:
                raise ContainerArgsError("; ".join(errors), errors=errors)
        plan = plan_edits(dep, [(pc, tuning_wanted(t.settings, self.state)) for t, pc in picked])
        self.outcome["containers"] = {t.key: dict(container=step["name"], changed=step["changed"], before=step["before"],
                                                  after=step["after"], args=step["new"])
                                      for (t, _), step in zip(picked, plan)}
        self.outcome["changed"] = any(step["changed"] for step in plan)
        if self.diff:
            self.outcome["diff"] = plan_diff(plan)
        apply_plan(self.client, dep, plan, check_mode=self.check_mode)
        return dep

    def _check_running(self, deployment: dict[str, Any]) -> None:
        """Read the values back from the rolled-out Deployment; refuse when something rewrote them."""
        reverted = []
        for step in self.outcome["containers"].values():
            step["running"] = running_values(deployment, step["container"])
            if step["running"] != step["after"]:
                reverted.append("%s runs with %s, not %s" % (step["container"], step["running"], step["after"]))
        if reverted:
            raise ContainerArgsError("after the rollout %s: something else (the Deployment's operator, GitOps) "
                                     "rewrote its arguments" % "; ".join(reverted))

    def run(self, wait: bool = True, wait_timeout: float = DEFAULT_WAIT_TIMEOUT) -> dict[str, Any]:
        """The module's result; a StoragePerfError raised on the way carries it as its partial result."""
        try:
            dep = retry(self._plan_and_patch, is_conflict, PATCH_ATTEMPTS, first=0.01, cap=0.1)
            if self.on_patched is not None:
                self.on_patched(dep, self.outcome)
            if wait and not self.check_mode:
                done = wait_for_rollout(self.client, dep["metadata"]["name"], dep["metadata"]["namespace"], wait_timeout)
                self.outcome["rollout"] = "successfully rolled out"
                self._check_running(done)
        except StoragePerfError as exc:
            if isinstance(exc, WaitTimeout):
                exc.hint = exc.hint or "The new arguments are in place: re-run the task to wait again"
            exc.result = dict(self.report(self.outcome), **exc.result)
            raise
        return self.report(self.outcome)
