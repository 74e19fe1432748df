# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet document's JSON Schema (fleet_schema_version 1) and validate_fleet(doc).

A fleet document puts one benchmark (or one advice run) of every cluster side by side; fleet.py
builds it, docs/fleet.md describes it, docs/fleet.schema.json is generated from FLEET_SCHEMA
(``python -m ...report.fleet_schema``; a unit test fails when the file is stale). The checker is
schema.py's, so a fleet document is validated the same way with or without jsonschema.
"""
from __future__ import annotations

import json
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema as S

FLEET_SCHEMA_VERSION = 1
KINDS = ("bench", "advice")
# a cluster's row: "error" = no document at all (host failed, unreachable, unreadable file)
CLUSTER_STATUSES = S.RUN_STATUSES + ("error",)
ADVICE_STATES = ("on", "available", "blocked", "not_applicable")

_NUM_OR_NULL = {"type": ["number", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}
_NAME = {"type": "string", "minLength": 1}
_COUNT = {"type": "integer", "minimum": 0}

STEP_FIGURES = {
    "type": "object",
    "description": "One step of one variant on one cluster: medians over the ok repetitions.",
    "required": ["name", "status"],
    "properties": {
        "name": _NAME,
        "status": {"enum": list(S.STEP_STATUSES) + ["missing"]},
        "wall_s": _NUM_OR_NULL,
        "rate": _NUM_OR_NULL,
        "unit": {"type": "string"},
        "count": _COUNT,
        "runs": _COUNT,
        "ok_runs": _COUNT,
        "text": {"type": "string", "description": "The report cell: '41s · 2.44 vol/s', or the status."},
        "seed_s": {"type": "number", "description": "The seed's own figure for this step and variant, in seconds, "
                                                    "where the run repeats a seed's experiment (seed_figures.py)."},
    },
    "additionalProperties": False,
}

VARIANT_FIGURES = {
    "type": "object",
    "required": ["name", "steps", "sum_wall_s"],
    "properties": {
        "name": _NAME,
        "sum_wall_s": _NUM_OR_NULL,
        "steps": {"type": "array", "items": STEP_FIGURES},
    },
    "additionalProperties": False,
}

SPEEDUP = {
    "type": ["object", "null"],
    "description": "First variant (baseline) vs last variant (candidate): throughput ratios, >1 = faster.",
    "required": ["baseline", "candidate", "overall", "steps"],
    "properties": {
        "baseline": _NAME,
        "candidate": _NAME,
        "overall": _NUM_OR_NULL,
        "steps": {"type": "object", "additionalProperties": _NUM_OR_NULL},
    },
    "additionalProperties": False,
}

TUNING_CELL = {
    "type": "object",
    "required": ["name", "state", "reasons"],
    "properties": {
        "name": _NAME,
        "state": {"enum": list(ADVICE_STATES)},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "expected": {"type": "string"},
        "expected_speedup": {"type": "number"},
        "command": {"type": "string"},
        "rollout_command": {"type": "string"},
        "apply_with": {"type": "string"},
    },
    "additionalProperties": False,
}

CLUSTER_ROW = {
    "type": "object",
    "required": ["cluster", "status", "error", "source"],
    "properties": {
        "cluster": _NAME,
        "status": {"enum": list(CLUSTER_STATUSES)},
        "error": _STR_OR_NULL,
        "source": _STR_OR_NULL,
        "server": {"type": "string"},
        "version": {"type": "string"},
        "time_scale": {"type": "number",
                       "description": "The cluster's time scale (a twin's; absent on a real cluster): cluster time = "
                                      "wall_s / time_scale."},
        # bench
        "run_id": {"type": "string"},
        "benchmark": {"type": "string"},
        "reason": {"type": "string"},
        "started": _STR_OR_NULL,
        "finished": _STR_OR_NULL,
        "variants": {"type": "array", "items": VARIANT_FIGURES},
        "speedup": SPEEDUP,
        # advice
        "tunings": {"type": "array", "items": TUNING_CELL},
        "counts": {"type": "object", "additionalProperties": _COUNT},
    },
    "additionalProperties": False,
}

FLEET_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://storageperf.k8s/fleet.schema.json",
    "title": "storageperf.k8s fleet report document",
    "description": "One benchmark or advice run per cluster, side by side. See docs/fleet.md.",
    "type": "object",
    "required": ["fleet_schema_version", "kind", "name", "clusters", "summary"],
    "properties": {
        "fleet_schema_version": {"const": FLEET_SCHEMA_VERSION},
        "kind": {"enum": list(KINDS)},
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]*$"},
        "title": {"type": "string"},
        "benchmark": _STR_OR_NULL,
        "variants": {"type": "array", "items": _NAME, "description": "Variant names, column order."},
        "steps": {
            "type": "array",
            "items": {"type": "object", "required": ["name", "label"],
                      "properties": {"name": _NAME, "label": {"type": "string"}}, "additionalProperties": False},
        },
        "tunings": {"type": "array", "items": _NAME, "description": "Tuning names, column order."},
        "summary": {
            "type": "object",
            "required": ["clusters", "ok", "failed"],
            "properties": {
                "clusters": _COUNT,
                "ok": _COUNT,
                "failed": _COUNT,
                "failed_clusters": {"type": "array", "items": {"type": "string"}},
                "states": {"type": "object", "additionalProperties": _COUNT},
            },
            "additionalProperties": False,
        },
        "clusters": {"type": "array", "items": CLUSTER_ROW},
    },
    "additionalProperties": False,
}


class FleetValidationError(S.DocumentValidationError):
    """A fleet document does not match FLEET_SCHEMA; `problems` lists 'field.path: message'."""

    what = "fleet document"
    described_in = "docs/fleet.md"


def validate_fleet(doc: dict[str, Any], use_jsonschema: bool | None = None) -> dict[str, Any]:
    """Raise FleetValidationError naming every bad field; return the doc when it is valid."""
    return S.check_against(FLEET_SCHEMA, doc, FleetValidationError, use_jsonschema)


def schema_json() -> str:
    """The schema as the text of docs/fleet.schema.json."""
    return json.dumps(FLEET_SCHEMA, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # regenerate docs/fleet.schema.json: python -m <this module> > file
    print(schema_json(), end="")
