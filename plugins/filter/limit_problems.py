# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The limit_problems filter; documentation in limit_problems.yml, the maxima in module_utils/common/limits.py."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.common.limits import role_problems


def limit_problems(values: Any) -> list[str]:
    """{role variable: value} -> one message per value above its maximum (naming it, the maximum and why)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError("limit_problems: expected a dict of role variables, got %s" % type(values).__name__)
    try:
        return role_problems(dict(values))
    except KeyError as e:
        raise AnsibleFilterError("limit_problems: %s" % e.args[0])


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"limit_problems": limit_problems}
