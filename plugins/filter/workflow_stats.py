# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workflow_stats filter; documentation in workflow_stats.yml."""


from typing import Any, Callable, Iterable

from ansible.errors import AnsibleFilterError


def workflow_stats(received: object, host: str, value: object, play_hosts: Iterable[str] | None, first: bool = False) -> dict[str, Any]:
    """What one host publishes under a per-cluster set_stats key (aggregate: true) in an AWX workflow.

    AWX hands a job its workflow's earlier artifacts as extra vars and keeps only the newest job's value of each
    key, so the entries of clusters this job does not run are carried forward. Those of the play's other hosts
    are left out: each publishes its own, and a stale copy merged after it would win. first=True keeps an entry
    the cluster already has (the workflow's first benchmark, its baseline).
    """
    if received is None or received == "":
        received = {}
    if not isinstance(received, dict):
        raise AnsibleFilterError("workflow_stats: the artifact handed over must be a mapping by cluster, got %s: check "
                                 "the extra var of that name (an AWX workflow passes the earlier job's set_stats)"
                                 % type(received).__name__)
    hosts = set(play_hosts or ())
    out = {k: v for k, v in received.items() if k not in hosts}
    out[host] = received[host] if first and host in received else value
    return out


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"workflow_stats": workflow_stats}
