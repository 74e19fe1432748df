# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The limit_problems and limited_variables filters; documentation in limit_problems.yml and limited_variables.yml,
the maxima in module_utils/common/limits.py."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.common.limits import ROLE_VARIABLES, role_problems


def limit_problems(values: Any) -> list[str]:
    """{role variable: value} -> one message per value above its maximum (naming it, the maximum and why)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError("limit_problems: expected a dict of role variables, got %s" % type(values).__name__)
    try:
        return role_problems(dict(values))
    except KeyError as e:
        raise AnsibleFilterError("limit_problems: %s" % e.args[0])


def limited_variables(role: Any) -> list[str]:
    """'bench_fio' -> the names of that role's variables that have a maximum, sorted."""
    if not isinstance(role, str) or not role:
        raise AnsibleFilterError("limited_variables: expected a role name, e.g. 'bench_fio', got %r" % (role,))
    return sorted(name for name in ROLE_VARIABLES if name.startswith(role + "_"))


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"limit_problems": limit_problems, "limited_variables": limited_variables}
