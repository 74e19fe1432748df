# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin storageperf.k8s.check_extra_vars: warn about extra vars no playbook of the run reads.

Ansible ignores a variable nothing reads, so `-e volumse=10` used to run 100 volumes without a word. Extra vars
cannot be told apart from other variables in task_vars; they are the dictionary the variable manager loaded from
the command line (ansible.utils.vars.load_extra_vars, which caches what it parsed from context.CLIARGS, -e and
-e @file alike, and which AWX and ansible-runner fill from their extravars). The playbooks of the run are
context.CLIARGS['args'].
"""

import difflib
import os
from typing import Any, Iterable, Sequence

import yaml
from ansible import context
from ansible.plugins.action import ActionBase
from ansible.utils.vars import load_extra_vars

from ansible_collections.storageperf.k8s.plugins.plugin_utils import known_vars as K

# documentation: plugins/modules/check_extra_vars.py
ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles")


def role_variables(roles_dir: str = ROLES) -> set[str]:
    """Every variable of every role's argument specs."""
    names: set[str] = set()
    if not os.path.isdir(roles_dir):
        return names
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            specs = (yaml.safe_load(f) or {}).get("argument_specs") or {}
        for spec in specs.values():
            names.update((spec or {}).get("options") or {})
    return names


def playbook_names(args: Iterable[object] | None) -> list[str]:
    """The collection's playbooks among the command line's: paths (playbooks/x.yml) and names (storageperf.k8s.x)."""
    out = []
    for arg in args or ():
        base = os.path.basename(str(arg))
        name = base[:-4] if base.endswith((".yml", ".yaml")) else base.rpartition(".")[2]
        name = name[:-1] if base.endswith(".yaml") else name
        if name in K.PLAYBOOKS and (os.sep in str(arg) or base.endswith((".yml", ".yaml")) or
                                    str(arg).startswith("storageperf.k8s.")):
            out.append(name)
    return out


def unknown_extra_vars(extra: Iterable[str], playbooks: Iterable[str], roles: Iterable[str] | None = None) -> dict[str, str | None]:
    """{name: nearest known name or None} for each extra var the playbooks do not read."""
    own = sorted({n for p in playbooks for n in K.PLAYBOOKS[p]})
    known = set(own) | set(K.INVENTORY) | set(K.OUTPUTS) | set(K.MAGIC) | set(roles if roles is not None else role_variables())
    out: dict[str, str | None] = {}
    for name in sorted(extra):
        if name in known or name.startswith(K.PREFIXES):
            continue
        # the playbook's own short names first: a typo of `volumes` should not be matched to a role's long name
        near = difflib.get_close_matches(name, own, n=1, cutoff=0.6) or \
            difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        out[name] = near[0] if near else None
    return out


def warning(name: str, near: str | None, playbooks: Sequence[str]) -> str:
    what = "extra var %s is not a variable of %s: it is ignored" % (name, " or ".join("%s.yml" % p for p in playbooks))
    return what + ("; did you mean %s?" % near if near else " (docs/<playbook>.md lists the variables)")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("playbooks",))

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        args = self._task.args.get("playbooks")
        playbooks = playbook_names(args if args is not None else context.CLIARGS.get("args"))
        result.update(changed=False, playbooks=playbooks, unknown={})
        if not playbooks:
            result["skipped_reason"] = "not a playbook of storageperf.k8s: its variables are unknown here"
            return result
        unknown = unknown_extra_vars(load_extra_vars(self._loader), playbooks)
        result["unknown"] = unknown
        if unknown:
            result["warnings"] = [warning(n, near, playbooks) for n, near in unknown.items()]
        return result
