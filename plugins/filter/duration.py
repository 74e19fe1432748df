# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The duration filter; documentation in duration.yml."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.stats import format_duration


def duration(seconds: Any) -> str:
    """417 -> '6m 57s', 18052 -> '5h 00m 52s', None -> '—'."""
    if seconds is None:
        return format_duration(None)
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise AnsibleFilterError("duration: expected a number of seconds, got %r (%s)"
                                 % (seconds, type(seconds).__name__))
    return format_duration(value)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"duration": duration}
