# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rollout's change_parameters checked by the argument spec of what applies each one: the change's role
(roles/<role>/meta/argument_specs.yml) or module (its DOCUMENTATION), never a copy (rollout/changes.py maps each
parameter to that option), then against its maximum (common/limits.py) and, for worker threads, QPS and burst, by
the tuning engine's own rule (burst at least QPS). Runs on the controller, in the rollout_plan action, before the
plan is made; a problem names change_parameters.<name> and the fix."""
from __future__ import annotations

import os
from typing import Any, Mapping

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.utils.plugin_docs import read_docstring

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import validate_tuning
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import changes as CH

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_SPEC_KEYS = ("type", "elements", "choices", "options", "required", "no_log")


def _as_spec(option: Mapping[str, Any]) -> dict[str, Any]:
    """A documented option (role spec or module docs) as an argument spec entry: suboptions are options."""
    out = {k: v for k, v in option.items() if k in _SPEC_KEYS}
    subs = option.get("options") or option.get("suboptions")
    if subs:
        out["options"] = {name: _as_spec(sub) for name, sub in subs.items()}
    out.pop("required", None)  # the change's own defaults fill in what is missing
    return out


def option_spec(kind: str, owner: str, option: str, root: str = ROOT) -> dict[str, Any]:
    """The argument spec entry of option `option` of role or module `owner`."""
    if kind == "role":
        with open(os.path.join(root, "roles", owner, "meta", "argument_specs.yml"), encoding="utf-8") as f:
            options = (yaml.safe_load(f)["argument_specs"]["main"]).get("options") or {}
    else:
        options = read_docstring(os.path.join(root, "plugins", "modules", owner + ".py"))["doc"]["options"]
    return _as_spec(options[option])


def check(change: str, given: Mapping[str, Any] | None, root: str = ROOT) -> tuple[dict[str, Any], list[str]]:
    """(the given parameters as their specs convert them, problems); names and defaults are changes.py's."""
    row = CH.get(change)
    given = dict(given or {})
    unknown = sorted(set(given) - set(row["parameters"]))
    if unknown:
        return given, ["change_parameters has %s, which %s does not take: its parameters are %s"
                       % (", ".join(unknown), change, ", ".join(sorted(row["parameters"])))]
    spec = {name: option_spec(*row["spec"][name], root=root) for name in given if name in row.get("spec", {})}
    result = ArgumentSpecValidator(spec).validate({k: v for k, v in given.items() if k in spec})
    problems = ["change_parameters.%s" % e.replace("argument '", "").replace("'", "", 1)
                if e.startswith("argument '") else "change_parameters: %s" % e
                for e in (str(x) for x in result.errors.messages)]
    out = dict(given, **{k: v for k, v in result.validated_parameters.items() if k in given})
    if problems:
        return out, problems
    # the maxima of the role variables the parameters become, said in the parameters' names
    maxima = {n: L.ROLE_VARIABLES[row["spec"][n][2]] for n in out
              if n in row.get("spec", {}) and row["spec"][n][0] == "role" and row["spec"][n][2] in L.ROLE_VARIABLES}
    problems += ["change_parameters.%s" % p for p in L.problems({n: out[n] for n in maxima}, maxima)]
    if row.get("rates"):
        merged = dict(row["parameters"], **out)
        problems += ["change_parameters: %s" % e for e in validate_tuning({k: merged[k] for k in row["rates"]})]
    return out, problems
