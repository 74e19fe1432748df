# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_check filter; documentation in fleet_check.yml.

A fleet run may only touch clusters somebody named. Ansible goes on after an inventory source fails to
parse (a warning, then only the implicit localhost), and localhost reaches whatever cluster KUBECONFIG or
K8S_AUTH_* point to: on an operator's laptop or an AWX node that is a production cluster nobody named.
"""


import os
from typing import Any, Callable, Iterable, Mapping

import yaml
from ansible.errors import AnsibleFilterError

# Ansible's own default inventory: a run that names no other source is a run with no inventory.
BUILTIN_DEFAULT_SOURCE = "/etc/ansible/hosts"
# Inventory plugins that add no host of their own (they group the hosts of the sources before them).
NO_HOST_PLUGINS = ("constructed", "ansible.builtin.constructed", "generator", "ansible.builtin.generator")
# What each kind of playbook accepts as a cluster host's own connection.
CONNECTION_VARS = {
    "k8s": ("k8s_kubeconfig", "k8s_context"),
    "ack": ("k8s_kubeconfig", "k8s_context", "ack_cluster_id"),
}


def _adds_no_hosts(source: str) -> bool:
    """True for a source file that configures a plugin which only groups other sources' hosts."""
    if not os.path.isfile(source) or os.path.getsize(source) > 1 << 20:
        return False
    try:
        with open(source) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "plugin":
                    return value.strip().strip("'\"") in NO_HOST_PLUGINS
    except (OSError, UnicodeDecodeError):
        return False
    return False


def _holds_only_vars(source: str) -> bool:
    """True for a YAML inventory file that parses and whose groups give variables only (a layered source, such as a
    vaulted file of group vars beside the hosts): it yields no host of its own by design, not by failing."""
    if not os.path.isfile(source) or os.path.getsize(source) > 1 << 20:
        return False
    try:
        with open(source) as f:
            data = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    if not isinstance(data, dict) or not data or "plugin" in data:
        return False
    return all(isinstance(g, dict) and not g.get("hosts") and not g.get("children") for g in data.values())


def _yielded_hosts(source: str, origins: Iterable[str]) -> bool:
    """Did any host come from this source (a file, or a file below this directory)?"""
    prefix = source.rstrip(os.sep) + os.sep
    return any(o == source or o.startswith(prefix) for o in origins)


def _var(hostvars: Mapping[str, Any], host: str, name: str) -> str | None:
    try:
        value = hostvars[host].get(name)
    except Exception:  # an undefined or failing template is no connection
        return None
    return value if isinstance(value, str) and value.strip() else None


def limit_problem(limit: str, play_hosts: Iterable[str], members: list[str], cluster_group: str) -> str | None:
    """A --limit that names no cluster: the hosts it left (those of the guard play, which under a limit targets every
    host) hold no member of the cluster group. Every later play would say "skipping: no hosts matched", rc 0."""
    left = list(play_hosts or [])
    if any(h in members for h in left):
        return None
    shown = ", ".join(members[:5]) + (", ..." if len(members) > 5 else "")
    return ("The limit %r names no cluster of the group %r (%s): it leaves only %s. Name clusters of that group with "
            "-l (the Limit of an AWX job template), or name their group with -e cluster_group=NAME."
            % (limit, cluster_group, shown or "no member", ", ".join(left) or "no host"))


def fleet_check(groups: Mapping[str, Any], hostvars: Mapping[str, Any], sources: Iterable[str], cluster_group: str = "k8s_clusters",
                needs: str = "k8s", limit: str | None = None, play_hosts: Iterable[str] | None = None) -> dict[str, Any]:
    """{'problems': [...], 'fallback': bool}: what makes this inventory unsafe, and whether localhost is the one
    cluster (no inventory given, or one that lists only localhost). Given the run's --limit (ansible_limit) and the
    hosts it left (ansible_play_hosts_all of a play on every host), also a limit that names no cluster."""
    out = _inventory_check(groups, hostvars, sources, cluster_group, needs)
    if limit and not out["problems"]:
        members = ["localhost"] if out["fallback"] else list(groups.get(cluster_group) or [])
        problem = limit_problem(limit, play_hosts or [], members, cluster_group)
        if problem:
            out["problems"].append(problem)
    return out


def _inventory_check(groups: Mapping[str, Any], hostvars: Mapping[str, Any], sources: Iterable[str], cluster_group: str,
                     needs: str) -> dict[str, Any]:
    if needs not in CONNECTION_VARS:
        raise AnsibleFilterError("fleet_check: needs must be one of %s, got %r" % (", ".join(CONNECTION_VARS), needs))
    if not isinstance(groups, dict):
        raise AnsibleFilterError("fleet_check: the input must be the magic variable groups, got %r" % type(groups))
    given = [s for s in (sources or []) if s != BUILTIN_DEFAULT_SOURCE]
    hosts = list(groups.get("all") or [])
    members = list(groups.get(cluster_group) or [])
    if not given:
        return {"problems": [], "fallback": not members}
    problems = []
    origins = [_var(hostvars, h, "inventory_file") or "" for h in hosts]
    for source in given:
        if not (_adds_no_hosts(source) or _holds_only_vars(source) or _yielded_hosts(source, origins)):
            problems.append(
                "The inventory source %s yielded no host: it does not exist, failed to parse (see the [WARNING] "
                "lines above) or lists no host. Fix the source; to run on the one cluster of KUBECONFIG / "
                "K8S_AUTH_*, run without -i." % source)
    if problems:
        return {"problems": problems, "fallback": False}
    if not members:
        if hosts in ([], ["localhost"]):
            return {"problems": [], "fallback": True}
        return {"problems": [
            "The inventory (%s) names no host in the group %r, so no cluster was named. Put the clusters in that "
            "group, or name their group with -e cluster_group=NAME." % (", ".join(given), cluster_group)],
            "fallback": False}
    wanted = CONNECTION_VARS[needs]
    for host in members:
        if host != "localhost" and not any(_var(hostvars, host, v) for v in wanted):
            problems.append(
                "The cluster host %s has no connection of its own (none of %s is set), so it would reach "
                "whatever cluster KUBECONFIG / K8S_AUTH_* point to. Set k8s_kubeconfig (and k8s_context) for it "
                "in the inventory, or list the clusters with the storageperf.k8s.kubeconfig inventory plugin."
                % (host, ", ".join(wanted)))
    return {"problems": problems, "fallback": False}


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"fleet_check": fleet_check}
