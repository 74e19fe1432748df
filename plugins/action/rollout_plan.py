# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of storageperf.k8s.rollout_plan: change_parameters are checked on the controller by the argument
spec of the role or module that applies each (plugins/plugin_utils/change_specs.py) before the module plans; a
problem fails the task naming the parameter, so a check run fails too (documentation: plugins/modules/rollout_plan.py)."""

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.storageperf.k8s.plugins.plugin_utils import change_specs

MODULE = "storageperf.k8s.rollout_plan"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        change = args.get("change")
        try:
            parameters, problems = change_specs.check(str(change), args.get("change_parameters"))
        except Exception as e:  # noqa: BLE001 - an unknown change: the module names it with the choices
            parameters, problems = args.get("change_parameters"), []
            if change in change_specs.CH.CHANGES:
                problems = ["change_parameters cannot be checked: %s" % e]
        if problems:
            result.update(failed=True, changed=False, problems=problems,
                          msg="%s. Nothing was planned or changed; docs/rollout.md, \"Changes\", lists each change's "
                              "parameters." % "; ".join(problems))
            return result
        if parameters is not None:
            args["change_parameters"] = parameters
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        return result
