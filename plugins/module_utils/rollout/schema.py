# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout's JSON Schema: one cluster's record (clusters/<cluster>.json) and the assembled rollout.json.

docs/rollout.schema.json is generated from ROLLOUT_SCHEMA (``python -m ...rollout.schema``; a unit test fails when
it is stale). The record and the gate's verdict are $defs that the document refers to. The checker is
report/schema.py's (jsonschema when installed, else its built-in subset), fed a copy with the $refs inlined, since
the built-in one does not follow $ref; so both paths judge a record alike.
"""
from __future__ import annotations

import json
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema as S

SCHEMA_VERSION = 1
DECISIONS = ("promoted", "rolled_back", "failed", "skipped", "pending", "aborted")
# The write-ahead log of one cluster (docs/rollout.md, "Interrupted runs"): each state is recorded before the step it
# names is taken, so a rerun knows where a killed run stopped. planned and baseline_measured: nothing changed yet;
# applying .. rolling_back: the change may be on and is not decided; promoted, rolled_back, failed, skipped and
# aborted end the cluster's turn.
STEPS = ("planned", "baseline_measured", "applying", "applied", "after_measured", "rolling_back", "rolled_back",
         "promoted", "failed", "skipped", "aborted")
# states in which the change may be on because of this rollout (what a rerun must never call skipped)
CHANGED_STEPS = ("applying", "applied", "after_measured", "rolling_back", "promoted")
# failures in the sense of max_fail_percentage
FAILED_DECISIONS = ("rolled_back", "failed")
# skipped: every member of the wave was skipped (a wave after the halt); done: the last wave, finished with failures
# above the limit (it halts nothing); aborted: the rollout's abort rolled it back
WAVE_VERDICTS = ("passed", "halted", "pending", "skipped", "done", "aborted")
STATES = ("present", "absent")
HISTORY_MAX = 20

_NAME = {"type": "string", "minLength": 1}
_ID = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]*$"}
# the inventory host name, also the record's file name: no path separator, no leading dot or dash
_CLUSTER = {"type": "string", "pattern": r"^[A-Za-z0-9_][^/\\]*$"}
_ISO = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"}
_ISO_OR_NULL = dict(_ISO, type=["string", "null"])
_NUM_OR_NULL = {"type": ["number", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_COUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 0}
_STRINGS = {"type": "array", "items": {"type": "string"}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": "#/$defs/" + name}


ROLLOUT = {
    "type": "object",
    "description": "Which change the rollout makes, with what, and how many failures a wave may have.",
    "required": ["id", "change", "state", "parameters", "max_fail_percentage"],
    "properties": {
        "id": _ID,
        "change": _NAME,
        "state": {"enum": list(STATES)},
        "parameters": {"type": "object", "description": "The change's variables."},
        "max_fail_percentage": {"type": "number", "minimum": 0,
                                "description": "0 to 100: a wave halts when more than this percentage of it failed."},
    },
    "additionalProperties": True,
}

GATE_VERDICT = {
    "type": "object",
    "description": "What rollout_gate returned: passed, and the reasons (one sentence each, with figures) when not.",
    "required": ["passed", "reasons"],
    "properties": {
        "passed": {"type": "boolean"},
        "reasons": _STRINGS,
        "gain": {
            "type": ["object", "null"],
            "properties": {
                "expected_speedup": _NUM_OR_NULL, "min_gain_fraction": _NUM_OR_NULL, "required_speedup": _NUM_OR_NULL,
                "observed_speedup": _NUM_OR_NULL, "ci_low": _NUM_OR_NULL, "ci_high": _NUM_OR_NULL,
                "confidence": _NUM_OR_NULL, "p_value": _NUM_OR_NULL, "test": {"type": "string"},
                "samples": {"type": "object", "additionalProperties": _COUNT_OR_NULL},
            },
            "additionalProperties": True,
        },
        "steps": {"type": "array", "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": _NAME, "baseline_p50": _NUM_OR_NULL, "candidate_p50": _NUM_OR_NULL,
                           "speedup": _NUM_OR_NULL, "change_pct": _NUM_OR_NULL, "tolerance_pct": _NUM_OR_NULL,
                           "worse": {"type": "boolean"}},
            "additionalProperties": True,
        }},
        "failed_operations": {"type": "object", "properties": {"baseline": _COUNT_OR_NULL, "candidate": _COUNT_OR_NULL},
                              "additionalProperties": True},
        "new_warnings": _STRINGS,
        "baseline_run": {"type": ["string", "null"]},
        "candidate_run": {"type": ["string", "null"]},
    },
    "additionalProperties": True,
}

_PROBE = {
    "result": {"type": "string", "description": "Path of the probe's result.json."},
    "run_id": {"type": "string"},
    "finished": _ISO_OR_NULL,
}

HISTORY_ENTRY = {
    "type": "object",
    "required": ["decision", "reason", "updated"],
    "properties": {"decision": {"enum": list(DECISIONS)}, "reason": {"type": "string"}, "updated": _ISO,
                   "state": {"enum": list(STEPS)}},
    "additionalProperties": False,
}

RECORD = {
    "type": "object",
    "description": "One cluster's state in the rollout: <rollout_dir>/clusters/<cluster>.json. A promoted or "
                   "rolled_back record carries the gate's verdict (checked by rollout/document.py).",
    "required": ["schema_version", "rollout", "cluster", "wave", "decision", "reason", "updated", "applied", "history"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "rollout": _ref("rollout"),
        "cluster": _CLUSTER,
        "wave": {"type": "integer", "minimum": 1},
        "decision": {"enum": list(DECISIONS)},
        "reason": _NAME,
        "updated": _ISO,
        "baseline": {"type": ["object", "null"], "properties": dict(_PROBE, reused={"type": "boolean"}),
                     "additionalProperties": True},
        "after": {"type": ["object", "null"], "properties": dict(_PROBE), "additionalProperties": True},
        "gate": {"oneOf": [_ref("gate_verdict"), {"type": "null"}]},
        "applied": {"type": "boolean", "description": "The change was applied in the run that wrote this record."},
        "state": {"enum": list(STEPS), "description": "The step of the write-ahead log: recorded before it is taken."},
        "identity": {"type": ["object", "null"], "required": ["server", "uid"],
                     "properties": {"server": {"type": "string"}, "uid": {"type": "string"}},
                     "additionalProperties": False,
                     "description": "The cluster the record is about: its API server and kube-system uid."},
        "resumed_from": {"type": ["string", "null"],
                         "description": "The state an earlier, interrupted run left, from which this run went on."},
        "drift": {"type": ["string", "null"],
                  "description": "What the cluster read against what an earlier record said."},
        "rollback": {"type": ["object", "null"], "required": ["done", "verified"],
                     "properties": {"done": {"type": "boolean"}, "verified": {"type": "boolean"},
                                    "detail": {"type": "string"}},
                     "additionalProperties": False},
        "history": {"type": "array", "items": _ref("history_entry"),
                    "description": "The cluster's earlier records, oldest first (at most %d)." % HISTORY_MAX},
    },
    "additionalProperties": False,
}

WAVE = {
    "type": "object",
    "required": ["wave", "clusters", "failed", "verdict"],
    "properties": {
        "wave": {"type": "integer", "minimum": 1},
        "clusters": {"type": "array", "items": _CLUSTER},
        "failed": dict(_COUNT, description="Members rolled back or failed."),
        "verdict": {"enum": list(WAVE_VERDICTS)},
    },
    "additionalProperties": False,
}

_DEFS = {"rollout": ROLLOUT, "gate_verdict": GATE_VERDICT, "record": RECORD, "history_entry": HISTORY_ENTRY,
         "wave": WAVE}

ROLLOUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://storageperf.k8s/rollout.schema.json",
    "title": "storageperf.k8s rollout document",
    "description": "The guarded rollout of one change over the clusters, assembled from the per-cluster records "
                   "($defs.record) by rollout_report.",
    "type": "object",
    "required": ["schema_version", "rollout", "generated", "max_fail_percentage", "waves", "halted", "clusters",
                 "summary", "sources"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "title": {"type": "string"},
        "rollout": _ref("rollout"),
        "generated": dict(_ISO, description="The newest record's time, so that the same records give the same file."),
        "max_fail_percentage": {"type": "number", "minimum": 0, "description": "The limit the waves were judged by."},
        "waves": {"type": "array", "items": _ref("wave")},
        "halted": {"type": ["object", "null"], "required": ["wave", "reason"],
                   "properties": {"wave": {"type": "integer", "minimum": 1}, "reason": _NAME},
                   "additionalProperties": False},
        "clusters": {"type": "object", "additionalProperties": _ref("record")},
        "summary": {"type": "object", "required": list(DECISIONS),
                    "properties": {d: {"type": "array", "items": _NAME} for d in DECISIONS},
                    "additionalProperties": False},
        "sources": _STRINGS,
        "paused": {"type": "object", "required": ["after_wave", "left"],
                   "description": "The run stopped after a wave on purpose (pause_after_wave); left: the clusters "
                                  "of the later waves, which a rerun takes up.",
                   "properties": {"after_wave": {"type": "integer", "minimum": 1}, "left": _STRINGS},
                   "additionalProperties": False},
        "problems": {"type": "array", "description": "Record files that were left out, with why.",
                     "items": {"type": "object", "required": ["source", "error"],
                               "properties": {"source": {"type": "string"}, "error": {"type": "string"}},
                               "additionalProperties": False}},
    },
    "additionalProperties": False,
    "$defs": _DEFS,
}


class RecordValidationError(S.DocumentValidationError):
    """A cluster's record does not match $defs.record."""

    what = "rollout record"
    described_in = "docs/rollout.schema.json"


class RolloutValidationError(S.DocumentValidationError):
    """An assembled rollout document does not match ROLLOUT_SCHEMA."""

    what = "rollout document"
    described_in = "docs/rollout.schema.json"


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """node with every {"$ref": "#/$defs/x"} replaced by defs[x] (the built-in checker does not follow $ref)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


_DOCUMENT = _inline(ROLLOUT_SCHEMA, _DEFS)
DEFS = {name: _inline(d, _DEFS) for name, d in _DEFS.items()}


def validate_record(record: dict[str, Any], use_jsonschema: bool | None = None) -> dict[str, Any]:
    """Raise RecordValidationError naming every bad field; return the record when it is valid."""
    return S.check_against(DEFS["record"], record, RecordValidationError, use_jsonschema)


def problems_of(name: str, value: object, where: str = "") -> list[str]:
    """The problems of value against $defs[name], each field named from where ('rollout' -> 'rollout.id: ...')."""
    try:
        S.check_against(DEFS[name], value, RecordValidationError)
    except RecordValidationError as e:
        return [_at(where, p) for p in e.problems]
    return []


def _at(where: str, problem: str) -> str:
    root = S.field_path([])
    if not where:
        return problem
    if problem.startswith(root):
        return where + problem[len(root):]
    return where + ("" if problem.startswith("[") else ".") + problem


def validate_rollout(doc: dict[str, Any], use_jsonschema: bool | None = None) -> dict[str, Any]:
    """Raise RolloutValidationError naming every bad field; return the document when it is valid."""
    return S.check_against(_DOCUMENT, doc, RolloutValidationError, use_jsonschema)


def schema_json() -> str:
    """The schema as the text of docs/rollout.schema.json."""
    return json.dumps(ROLLOUT_SCHEMA, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # regenerate docs/rollout.schema.json: python -m <this module> > file
    print(schema_json(), end="")
