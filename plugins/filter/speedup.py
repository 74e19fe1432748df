# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The speedup and required_speedup filters; documentation in speedup.yml and required_speedup.yml."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate_rule


def _seconds(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AnsibleFilterError("speedup: %s must be a number of seconds, got %r" % (name, value))


def _number(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AnsibleFilterError("required_speedup: %s must be a number, got %r" % (name, value))


def speedup(baseline_seconds: object, candidate_seconds: object, text: bool = False, approx: bool = False) -> float | str | None:
    """417 | speedup(41) -> 10.17; with text=true -> '10.2×'. None when either time is missing or zero."""
    if baseline_seconds is None or candidate_seconds is None:
        value = None
    else:
        value = stats.speedup(_seconds("the input (baseline time)", baseline_seconds),
                              _seconds("the argument (candidate time)", candidate_seconds))
    if text:
        return stats.format_ratio(value, approx=approx)
    return None if value is None else round(value, 3)


def required_speedup(expected_speedup: object, min_gain_fraction: object) -> float | None:
    """8.1 | required_speedup(0.25) -> 2.775: the speedup the rollout gate asks for (rollout/gate_rule.py). None
    without an expected speedup (the gate then tests no gain)."""
    if expected_speedup is None:
        return None
    return round(gate_rule.required_speedup(_number("the input (expected_speedup)", expected_speedup),
                                            _number("min_gain_fraction", min_gain_fraction)), 4)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"speedup": speedup, "required_speedup": required_speedup}
