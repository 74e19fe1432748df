# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one module base: every module of the collection is a StoragePerfModule.

It brings what each module otherwise wrote again: the auth argument specs of the systems the module
speaks to (auth="k8s", "alibaba" or both; each system registers them in common/auth.py when the module
imports it), one cached client per system, check mode and diff helpers,
one way to fail (fail_from_exception) that keeps the partial result and the hint of a
StoragePerfError, and a watchdog on the ansible-playbook that runs the module (common/controller.py): once that
process is gone (kill -9, a lost AWX execution node), the module is interrupted as by Ctrl-C, within seconds.
A module is then its argument spec, its docs and a call into module_utils:

    module = StoragePerfModule(argument_spec=spec, auth=("k8s",), supports_check_mode=True)
    module.run(lambda m: tune(m.k8s, m.params, check_mode=m.check_mode))
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Mapping

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.storageperf.k8s.plugins.module_utils.common import auth as AUTH
from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as CONTROLLER
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as LIMITS
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError


class StoragePerfModule(AnsibleModule):
    """AnsibleModule with the collection's auth specs, cached clients and one failure path."""

    def __init__(self, argument_spec: dict[str, Any], auth: str | Iterable[str] = (), limits: Mapping[str, LIMITS.Limit] | None = None,
                 **kwargs: Any) -> None:
        """limits: {option: common.limits.Limit}, the maxima checked before the module does anything."""
        self.auth = (auth,) if isinstance(auth, str) else tuple(auth)
        spec = copy.deepcopy(argument_spec)
        limits = dict(limits or {})
        for system in self.auth:
            # The shared options (api_retries) are the same dict in both specs; the module's own win.
            for name, option in AUTH.system(system)[0].items():
                if name not in spec and name in LIMITS.AUTH_OPTIONS:
                    limits.setdefault(name, LIMITS.AUTH_OPTIONS[name])
                spec.setdefault(name, copy.deepcopy(option))
        super().__init__(argument_spec=spec, **kwargs)
        self._clients: dict[str, Any] = {}
        # argument specs have no maximum: a typo such as volumes=100000000 fails here, before any work
        found = LIMITS.param_problems(self.params, limits)
        if found:
            self.fail_json(msg="; ".join(found), changed=False)
        # {pid, start, host} of the ansible-playbook running this module, None when not run by Ansible on Linux
        self.controller = CONTROLLER.controller()
        if self.controller is not None:
            # the workers of a killed ansible-playbook are not signalled: without this the module works on, orphaned,
            # and its worker outlives it
            workers = CONTROLLER.forks()
            CONTROLLER.watchdog(self.controller, lambda: CONTROLLER.orphaned(workers))

    # clients ----------------------------------------------------------------------------------
    def client(self, system: str, **options: Any) -> Any:
        """The one client of a system for this run; fails the module clearly when the SDK or login is missing.

        options (the k8s client's pool_maxsize) apply when this call builds the client, the first for the system.
        """
        if system not in self.auth:
            raise ValueError("this module did not declare auth=%r" % system)
        if system not in self._clients:
            self._clients[system] = AUTH.system(system)[1](self, **options)
        return self._clients[system]

    @property
    def k8s(self) -> Any:
        return self.client("k8s")

    @property
    def alibaba(self) -> Any:
        return self.client("alibaba")

    # check mode and diff ---------------------------------------------------------------------
    @property
    def diff_mode(self) -> bool:
        """Whether the play asked for a diff (--diff): what module_utils get, instead of AnsibleModule's _diff."""
        return self._diff

    def add_diff(self, result: dict[str, Any], before: Any, after: Any) -> dict[str, Any]:
        """Put a diff in the result when the play asked for one (--diff), and changed when they differ."""
        if before != after:
            result["changed"] = True
        if self.diff_mode:
            result["diff"] = {"before": before, "after": after}
        return result

    # one way to end -----------------------------------------------------------------------------
    def fail_from_exception(self, exc: BaseException, result: Mapping[str, Any] | None = None, **extra: Any) -> None:
        """Fail with the error's message and hint, its partial result merged under the caller's, and its details."""
        out = {}
        if isinstance(exc, StoragePerfError):
            out.update(exc.result)
            out.update(result or {})
            for key, value in exc.details.items():
                out.setdefault(key, value)
            if exc.hint:
                out.setdefault("hint", exc.hint)
            msg = exc.message()
        else:
            out.update(result or {})
            msg = str(exc)
        out.update(extra)
        out.setdefault("changed", False)
        self.fail_json(msg=msg, **out)

    def run(self, logic: Callable[[StoragePerfModule], dict[str, Any]]) -> None:
        """exit_json(**logic(self)); a StoragePerfError fails through fail_from_exception.

        The logic's `warnings` (a list, e.g. a Pushgateway that is down) become the task's warnings: passing them to
        exit_json is deprecated in ansible-core 2.19."""
        try:
            result = logic(self)
        except StoragePerfError as exc:
            self.fail_from_exception(exc)
        for warning in result.pop("warnings", []):
            self.warn(warning)
        self.exit_json(**result)
