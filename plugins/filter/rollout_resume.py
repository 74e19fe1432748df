# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout_resume filter; documentation in rollout_resume.yml."""


from typing import Any, Callable, Mapping

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import resume as RESUME


def rollout_resume(record: Mapping[str, Any] | None, on: object, identity: Mapping[str, Any] | None = None,
                   applies: object = True, retry_rolled_back: object = False, baseline_max_age: object = 86400,
                   abort: object = False) -> dict[str, Any]:
    """Where a cluster's turn starts: resume.start() (or resume.abort() with abort=true)."""
    if record is not None and not isinstance(record, Mapping):
        raise AnsibleFilterError("rollout_resume: the input must be the cluster's record (a dict) or none, got %r"
                                 % type(record).__name__)
    try:
        age = float(baseline_max_age)  # type: ignore[arg-type]  # checked right here
    except (TypeError, ValueError):
        raise AnsibleFilterError("rollout_resume: baseline_max_age must be a number of seconds, got %r"
                                 % (baseline_max_age,))
    ident = dict(identity) if identity and (identity.get("uid") or identity.get("server")) else None
    if _bool(abort):
        return RESUME.abort(record, _bool(on), ident)
    return RESUME.start(record, _bool(on), ident, applies=_bool(applies), retry_rolled_back=_bool(retry_rolled_back),
                        baseline_max_age=age)


def _bool(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"rollout_resume": rollout_resume}
