# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result document's JSON Schema (schema_version 1) and validate(doc).

docs/result.schema.json is generated from RESULT_SCHEMA (``python -m ...report.schema``
or tests/unit/plugins/module_utils/test_report_schema.py, which fails when it is stale).
Human documentation of every field: docs/results.md.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

try:
    import jsonschema

    HAS_JSONSCHEMA = True
except ImportError:  # targets without jsonschema get the built-in subset validator below
    jsonschema = None  # type: ignore[assignment]  # optional library: validate() then uses the built-in checker
    HAS_JSONSCHEMA = False

SCHEMA_VERSION = 1
# unreachable: the cluster's API server stopped answering mid-run; the run stopped its own work there (the document's
# `unreachable` says which server and since when). Added within schema_version 1: earlier documents stay valid.
RUN_STATUSES = ("ok", "failed", "interrupted", "unreachable")
# disturbed: the step's objects were deleted or changed by someone else while it ran (not a measurement)
STEP_STATUSES = ("ok", "failed", "skipped", "timeout", "disturbed", "unreachable")
# step statuses that make a run failed (or unreachable), worst first as summaries order them
BROKEN_STEP_STATUSES = ("unreachable", "disturbed", "failed", "timeout")

_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_NAME = {"type": "string", "minLength": 1}
_ISO = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"}
# nullable variants: "required"/"pattern" only apply to objects/strings, so null passes and a
# bad object is reported field by field (oneOf would report "is not of type 'null'")
_ISO_OR_NULL = dict(_ISO, type=["string", "null"])


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema, type=[schema["type"], "null"])


LATENCY = {
    "type": "object",
    "description": "Per-object latency summary in seconds; extra percentiles (p95) are allowed.",
    "required": ["min", "p50", "p90", "p99", "max", "mean"],
    "properties": dict.fromkeys(("min", "p50", "p90", "p99", "max", "mean"), _NUM),
    "additionalProperties": _NUM,
}

SPREAD = {
    "type": "object",
    "description": "Median and spread of one figure across repetitions.",
    "required": ["n", "median", "min", "max"],
    "properties": {"n": _COUNT, "median": _NUM, "min": _NUM, "max": _NUM, "q1": _NUM, "q3": _NUM},
    "additionalProperties": False,
}

OBJECT_TIMING = {
    "type": "object",
    "description": "One object's interval, seconds since the step's clock start (client clock).",
    "required": ["name"],
    "properties": {
        "name": _NAME,
        "start": _NUM_OR_NULL,
        "end": _NUM_OR_NULL,
        "latency": _NUM_OR_NULL,
        "server_times": {
            "type": "object",
            "description": "Server-side timestamps (informational; second precision, another clock).",
            "additionalProperties": {"type": ["number", "string", "null"]},
        },
    },
    "additionalProperties": True,
}

PARAMETER = {
    "type": "object",
    "description": "The numeric parameter this step was measured at, for metric-vs-parameter charts.",
    "required": ["name", "value"],
    "properties": {"name": _NAME, "value": _NUM, "series": {"type": "string"}},
    "additionalProperties": False,
}

STEP = {
    "type": "object",
    "required": ["name", "status"],
    "properties": {
        "name": _NAME,
        "label": {"type": "string", "description": "Display name, e.g. 'Publish (Attach)'."},
        "status": {"enum": list(STEP_STATUSES)},
        "reason": {"type": "string", "description": "Why the step was skipped, failed, timed out or disturbed."},
        "started": _ISO,
        "count": _COUNT,
        "wall_s": {"type": ["number", "null"], "minimum": 0},
        "rate": {"type": ["number", "null"], "minimum": 0},
        "unit": {"type": "string", "description": "What count counts, singular: vol, pod, snapshot."},
        "latency": _nullable(LATENCY),
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["object", "reason"],
                "properties": {"object": {"type": "string"}, "reason": {"type": "string"}},
                "additionalProperties": True,
            },
        },
        "unfinished": {"type": "array", "items": {"type": "string"}},
        "warned_objects": dict(_COUNT, description="Objects of the step that received Warning events."),
        "warnings": {
            "type": "array",
            "description": "The step's Warning events by reason: objects hit, events, latest message, example objects.",
            "items": {
                "type": "object",
                "required": ["reason", "objects", "events"],
                "properties": {"reason": {"type": "string"}, "objects": _COUNT, "events": _COUNT,
                               "message": {"type": "string"}, "examples": {"type": "array", "items": {"type": "string"}}},
                "additionalProperties": True,
            },
        },
        "api_requests": _COUNT,
        "parameter": PARAMETER,
        "metrics": {
            "type": "object",
            "description": "Free numeric metrics: iops, bw_bytes, tps, qps, handshake_s, volumes ...",
            "additionalProperties": _NUM_OR_NULL,
        },
        "objects": {"type": "array", "items": OBJECT_TIMING},
    },
    "additionalProperties": True,
}

RUN = {
    "type": "object",
    "required": ["repetition", "steps"],
    "properties": {
        "repetition": {"type": "integer", "minimum": 1},
        "status": {"enum": list(RUN_STATUSES)},
        "started": _ISO,
        "finished": _ISO_OR_NULL,
        "steps": {"type": "array", "items": STEP},
    },
    "additionalProperties": True,
}

STEP_SUMMARY = {
    "type": "object",
    "required": ["name", "runs", "ok_runs"],
    "properties": {
        "name": _NAME,
        "label": {"type": "string"},
        "unit": {"type": "string"},
        "count": _COUNT,
        "runs": _COUNT,
        "ok_runs": _COUNT,
        "status": {"enum": list(STEP_STATUSES)},
        "parameter": PARAMETER,
        "wall_s": _nullable(SPREAD),
        "rate": _nullable(SPREAD),
        "latency": {"type": "object", "additionalProperties": SPREAD},
        "metrics": {"type": "object", "additionalProperties": SPREAD},
        "errors": _COUNT,
        "unfinished": _COUNT,
    },
    "additionalProperties": True,
}

SWEEP_POINT = {
    "type": "object",
    "description": "This variant is one size of a scaling sweep: the variant it measures and at which value.",
    "required": ["variant", "parameter", "value"],
    "properties": {"variant": _NAME, "parameter": _NAME, "value": {"type": "integer", "minimum": 1}},
    "additionalProperties": True,
}

_RATE_FIGURES = {"count": _COUNT, "wall_s": _NUM_OR_NULL, "rate": _NUM_OR_NULL}

SWEEP = {
    "type": "object",
    "description": "Written by finalize() when variants carry `sweep`: every (variant, value) with its figures.",
    "required": ["parameter", "values", "variants", "points"],
    "properties": {
        "parameter": _NAME,
        "values": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        "variants": {"type": "array", "items": _NAME},
        "points": {"type": "array", "items": {
            "type": "object",
            "required": ["variant", "value", "name", "steps", "lifecycle"],
            "properties": {
                "variant": _NAME,
                "value": {"type": "integer", "minimum": 1},
                "name": _NAME,
                "status": {"enum": list(STEP_STATUSES)},
                "steps": {"type": "array", "items": {
                    "type": "object",
                    "required": ["name", "status"],
                    "properties": dict(_RATE_FIGURES, name=_NAME, label={"type": "string"}, unit={"type": "string"},
                                       status={"enum": list(STEP_STATUSES)}),
                    "additionalProperties": True,
                }},
                "lifecycle": {
                    "type": "object",
                    "description": "Operations per second through every timed step: count / wall_s.",
                    "required": ["count", "wall_s", "rate"],
                    "properties": dict(_RATE_FIGURES, steps=_COUNT, complete={"type": "boolean"}),
                    "additionalProperties": True,
                },
            },
            "additionalProperties": True,
        }},
    },
    "additionalProperties": True,
}

VARIANT = {
    "type": "object",
    "required": ["name", "runs"],
    "properties": {
        "name": _NAME,
        "settings": {"type": "object"},
        "sweep": SWEEP_POINT,
        "runs": {"type": "array", "items": RUN},
        "summary": {
            "type": "object",
            "description": "Written by finalize(): per step, median and spread across repetitions.",
            "properties": {
                "steps": {"type": "array", "items": STEP_SUMMARY},
                "sum_wall_s": _NUM_OR_NULL,
            },
            "additionalProperties": True,
        },
    },
    "additionalProperties": True,
}

PLAN = {
    "type": "object",
    "description": ("The run's plan, made once and stored before the first measurement (bench_plan; the gluster "
                    "benchmark's first gluster_bench_report): what later repetitions and writes run, not read by the "
                    "reports. Added within schema_version 1 as an optional, open field: earlier documents stay valid."),
    "required": ["benchmark"],
    "properties": {
        "benchmark": {"type": "string", "description": "The document's benchmark."},
        "options": {"type": "object", "description": "The benchmark's options, defaults filled in."},
        "read": {"type": "object", "description": "What the preflight read (cluster facts, component versions)."},
        "variants": {"type": "array", "items": {"type": "string"}, "description": "Variant names in order."},
        "repeat": {"type": "integer", "minimum": 1},
        "engine": {"type": "object", "description": "Bench engine settings (benchmarks whose steps watch objects)."},
        "metrics": {"type": ["object", "null"], "description": "Where bench_finish pushes metrics, or null."},
    },
    "additionalProperties": True,
}

RESULT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://storageperf.k8s/result.schema.json",
    "title": "storageperf.k8s benchmark result document",
    "description": "One benchmark run: variants x repetitions x steps. See docs/results.md.",
    "type": "object",
    "required": ["schema_version", "run_id", "benchmark", "status", "started", "variants"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "run_id": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]*$"},
        "benchmark": {"type": "string", "pattern": r"^[a-z][a-z0-9_]*$"},
        "title": {"type": "string"},
        "status": {"enum": list(RUN_STATUSES)},
        "reason": {"type": "string", "description": "Why the run failed or was interrupted."},
        "started": _ISO,
        "finished": _ISO_OR_NULL,
        "cluster": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The cluster's inventory host name (fleet runs)."},
                "server": {"type": "string"},
                "version": {"type": "string"},
                "nodes": _COUNT,
            },
            "additionalProperties": True,
        },
        "components": {"type": "object", "additionalProperties": {"type": "string"}},
        "unreachable": {
            "type": "object",
            "description": "Set when status is unreachable: the server that stopped answering, its last answer.",
            "required": ["server", "since"],
            "properties": {"server": {"type": "string"}, "since": _ISO, "message": {"type": "string"}},
            "additionalProperties": False,
        },
        "parameters": {"type": "object"},
        "variants": {"type": "array", "items": VARIANT},
        "sweep": SWEEP,
        "plan": PLAN,
        "notes": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": True,
}


class DocumentValidationError(StoragePerfError, ValueError):
    """A document does not match its schema. `problems` lists 'field.path: message'; subclasses name the
    document (`what`) and the page that describes it (`described_in`)."""

    what = "document"
    described_in = "docs/results.md"

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        shown = "; ".join(self.problems[:5])
        more = " (and %d more)" % (len(self.problems) - 5) if len(self.problems) > 5 else ""
        super().__init__("invalid %s: %s%s. The format is described in %s." % (self.what, shown, more, self.described_in))


class ResultValidationError(DocumentValidationError):
    """A result document does not match the schema."""

    what = "result document"


def field_path(parts: Sequence[str | int]) -> str:
    """['variants', 0, 'runs'] -> 'variants[0].runs' (the way docs/results.md names fields)."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        else:
            out += ("." if out else "") + str(p)
    return out or "(document)"


def validate(doc: dict[str, Any], use_jsonschema: bool | None = None) -> dict[str, Any]:
    """Raise ResultValidationError naming every bad field; return the doc when it is valid.

    Uses jsonschema when installed, else the built-in checker for the same schema subset
    (type, const, enum, required, properties, additionalProperties, items, minimum,
    minLength, pattern, oneOf), so both paths agree on what is valid.
    """
    return check_against(RESULT_SCHEMA, doc, ResultValidationError, use_jsonschema)


def _path_order(err: Any) -> list[tuple[bool, str | int]]:
    # positions sort as numbers, names as text; one level is never both (a list or an object)
    return [(isinstance(p, str), p) for p in err.absolute_path]


def check_against(schema: dict[str, Any], doc: Any, error: type[DocumentValidationError], use_jsonschema: bool | None = None) -> Any:
    """Raise error(problems) naming every field of doc that schema refuses; return doc when it is valid."""
    if use_jsonschema is None:
        use_jsonschema = HAS_JSONSCHEMA
    if use_jsonschema:
        validator = jsonschema.Draft202012Validator(schema)
        problems = ["%s: %s" % (field_path(err.absolute_path), _short(err))
                    for err in sorted(validator.iter_errors(doc), key=_path_order)]
    else:
        problems = list(_check(doc, schema, []))
    if problems:
        raise error(problems)
    return doc


def problems(doc: Any) -> list[str]:
    """All validation problems as a list of strings (empty when valid)."""
    try:
        validate(doc)
    except ResultValidationError as e:
        return e.problems
    return []


def _short(err: Any) -> str:
    # oneOf errors from jsonschema are long; the best sub-error names the real problem
    if err.validator == "oneOf" and err.context:
        best = jsonschema.exceptions.best_match(err.context)
        return best.message
    return err.message


# --- fallback validator -----------------------------------------------------------------
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _check(value: Any, schema: dict[str, Any], path: list[str | int]) -> Iterator[str]:
    if "oneOf" in schema:
        results = [list(_check(value, s, path)) for s in schema["oneOf"]]
        if not any(not r for r in results):
            # report the alternative that got furthest (fewest problems)
            for p in min(results, key=len):
                yield p
        return
    where = field_path(path)
    if "const" in schema and value != schema["const"]:
        yield "%s: %r was expected, got %r" % (where, schema["const"], value)
        return
    if "enum" in schema and value not in schema["enum"]:
        yield "%s: %r is not one of %r" % (where, value, schema["enum"])
        return
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_TYPES[t](value) for t in types):
            yield "%s: %r is not of type %s" % (where, value, " or ".join(repr(t) for t in types))
            return
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "minimum" in schema:
        if value < schema["minimum"]:
            yield "%s: %r is less than the minimum of %r" % (where, value, schema["minimum"])
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            yield "%s: %r is too short" % (where, value)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            yield "%s: %r does not match %r" % (where, value, schema["pattern"])
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                yield "%s: %r is a required property" % (where, key)
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                for p in _check(item, props[key], path + [key]):
                    yield p
            elif extra is False:
                yield "%s: additional property %r is not allowed" % (where, key)
            elif isinstance(extra, dict):
                for p in _check(item, extra, path + [key]):
                    yield p
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            for p in _check(item, schema["items"], path + [i]):
                yield p


def schema_json() -> str:
    """The schema as the text of docs/result.schema.json."""
    return json.dumps(RESULT_SCHEMA, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # regenerate docs/result.schema.json: python -m <this module> > file
    print(schema_json(), end="")
