# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The exact command that applies each tuning the advisor names, for one cluster of one inventory.

    add_commands(advice, inventory="inventories/prod.yml", cluster="ack-prod")

adds to every tuning an `apply` dict (the advisor's own fields stay as they are):
- playbook, extra_vars and command: the playbook that applies the tuning alone (with its -e variables), or None
  when none does (the tuning's `apply_with` then names the role, module or reinstall);
- rollout_change and rollout_command: storageperf.k8s.rollout -e change=<change>, the guarded way (canary first,
  checks between waves), or None for a tuning it does not roll out.
Without an inventory or a cluster name the command says <inventory> / <cluster>, for the reader to fill in.
"""
from __future__ import annotations


import json
import shlex
from typing import Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.advice.seeds import TUNINGS
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.changes import CHANGES

# playbooks by their collection name, never a path: `ansible-playbook storageperf.k8s.x` runs wherever the collection
# is installed (an execution environment, ~/.ansible/collections), a repository path only inside a checkout
PLAYBOOK_PREFIX = "storageperf.k8s."
ROLLOUT_PLAYBOOK = PLAYBOOK_PREFIX + "rollout"
# tuning -> the change name of storageperf.k8s.rollout (the rollout's own table names the tuning of each change)
ROLLOUT_CHANGES = {row["tuning"]: change for change, row in CHANGES.items()}
# the -e variables each playbook needs beyond what the inventory holds (ack_cluster_id, k8s_kubeconfig, ONTAP hosts)
# the seed's 25 / 75 / 150
_SNAPSHOT = TUNINGS["snapshot_controller_tuning"]["recommended"]
PLAYBOOK_VARS = {
    ("parallel_attach", "storageperf.k8s.enable_parallel_attach"): {"state": "present"},
    ("trident_concurrency", "storageperf.k8s.tune_trident"): {"state": "present"},
    ("snapshot_controller_tuning", "storageperf.k8s.tune_trident"): {
        "state": "present", "worker_threads": _SNAPSHOT["worker_threads"], "kube_api_qps": _SNAPSHOT["kube_api_qps"],
        "kube_api_burst": _SNAPSHOT["kube_api_burst"]},
    ("csi_sidecar_tuning", "storageperf.k8s.tune_trident"): {"state": "present"},
    ("pmem_storageclasses", "storageperf.k8s.deploy_pmem"): {"state": "present"},
}


def _playbook_of(tuning: Mapping[str, Any]) -> str | None:
    """The playbook in apply_with ("storageperf.k8s.tune_trident (its operator ...)" -> "storageperf.k8s.tune_trident")."""
    words = str(tuning.get("apply_with") or "").split()
    # "role storageperf.k8s.x" and "module storageperf.k8s.x" name no playbook: their first word is the kind
    return words[0] if words and words[0].startswith(PLAYBOOK_PREFIX) else None


def command_line(playbook: str, inventory: str | None, cluster: str | None, extra_vars: Mapping[str, Any]) -> str:
    parts = ["ansible-playbook", "-i", shlex.quote(inventory or "<inventory>"), playbook,
             "-l", shlex.quote(cluster or "<cluster>")]
    for key, value in extra_vars.items():
        if isinstance(value, Mapping):  # a dict goes as JSON, the only form -e takes it in
            parts += ["-e", shlex.quote(json.dumps({key: value}, sort_keys=True))]
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        parts += ["-e", shlex.quote("%s=%s" % (key, text))]
    return " ".join(parts)


def rollout_vars(tuning: Mapping[str, Any], change: str | None) -> dict[str, Any] | None:
    """The rollout's extra vars for the change, or None where it needs parameters the advice cannot give."""
    if not change:
        return None
    required = CHANGES[change].get("required") or []
    given = tuning.get("rollout_parameters") or {}
    if any(k not in given for k in required):
        return None
    return dict({"change": change}, **({"change_parameters": dict(given)} if given else {}))


def apply_entry(tuning: Mapping[str, Any], inventory: str | None = None, cluster: str | None = None) -> dict[str, Any]:
    name = tuning["name"]
    playbook = _playbook_of(tuning)
    extra_vars = dict(PLAYBOOK_VARS.get((name, playbook), {"state": "present"})) if playbook else {}
    change = ROLLOUT_CHANGES.get(name)
    rollout = rollout_vars(tuning, change)
    return {
        "playbook": playbook,
        "extra_vars": extra_vars,
        "command": command_line(playbook, inventory, cluster, extra_vars) if playbook else None,
        "rollout_change": change,
        "rollout_command": command_line(ROLLOUT_PLAYBOOK, inventory, cluster, rollout) if rollout else None,
    }


def add_commands(advice: dict[str, Any], inventory: str | None = None, cluster: str | None = None) -> dict[str, Any]:
    """advice with an `apply` dict on every tuning (in place; returned for chaining)."""
    for tuning in advice.get("tunings") or []:
        tuning["apply"] = apply_entry(tuning, inventory, cluster)
    return advice
