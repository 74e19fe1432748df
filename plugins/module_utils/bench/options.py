# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A benchmark's options, declared once: the argument spec that bench_plan takes as the benchmark's suboption.

Each benchmark file holds OPTIONS, an Ansible argument spec whose defaults are the only place those defaults are
written (the module's docs and the roles' defaults are checked against it by the unit suite). complete() gives a
plan the values Ansible would have filled in, so code outside a module run (unit tests, the stored plan of an
older document) reads every option without a default of its own.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping


def complete(spec: Mapping[str, Any], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """given (a dict of options, possibly partial) with every missing, None or empty-string option at its spec
    default ("" is how a role leaves an option to the module: `default(omit, true)` needs no second default)."""
    out: dict[str, Any] = {}
    for name, option in spec.items():
        value = (given or {}).get(name)
        out[name] = copy.deepcopy(option.get("default")) if value is None or value == "" else value
    return out
