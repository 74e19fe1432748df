# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark side of the result document (format: docs/results.md, functions: module_utils/report).

One document per run id at <reports_dir>/<run_id>/result.json. bench_plan starts it (with the plan in it),
each bench_measure call adds one repetition to its variant, and rewrites it atomically after every step, so a
run killed half way leaves every step it measured on disk, under status "interrupted". Only
finalize() (bench_finish, called by the roles at the very end, also after a failure)
gives the document its final status.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D

# step result keys that add_step() takes; everything else is kept on the step as it is
_ADD_STEP_KEYS = ("status", "count", "wall_s", "unit", "rate", "latency", "objects", "errors", "unfinished",
                  "api_requests", "metrics", "reason", "label", "parameter", "started")


class ResultFile:
    def __init__(self, reports_dir: str, run_id: str) -> None:
        self.reports_dir = reports_dir
        self.run_id = run_id
        self.path = D.result_path(reports_dir, run_id)
        self.doc: dict[str, Any] = None  # type: ignore[assignment]  # open() or the caller sets it before any use

    def open(self, benchmark: str, parameters: dict[str, Any] | None = None, cluster: dict[str, Any] | None = None,
             components: dict[str, Any] | None = None, title: str | None = None, notes: Iterable[str] | None = None) -> dict[str, Any]:
        """Load the run's document, or start it. A document of another benchmark under this run id is an error."""
        if os.path.exists(self.path):
            doc = D.load(self.path, check=False)
            if doc.get("benchmark") != benchmark:
                raise ValueError("%s belongs to benchmark %s, not %s: give another run_id"
                                 % (self.path, doc.get("benchmark"), benchmark))
            doc["parameters"] = dict(doc.get("parameters") or {}, **(parameters or {}))
            doc["cluster"] = dict(doc.get("cluster") or {}, **(cluster or {}))
            doc["components"] = dict(doc.get("components") or {}, **{k: str(v) for k, v in (components or {}).items()})
        else:
            doc = D.new_result(benchmark, run_id=self.run_id, parameters=parameters, cluster=cluster,
                               components=components, title=title)
        for note in notes or ():
            doc.setdefault("notes", [])
            if note not in doc["notes"]:
                doc["notes"].append(note)
        self.doc = doc
        return doc

    def begin_run(self, variant_name: str, settings: dict[str, Any] | None = None,
                  sweep_point: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Append a repetition to the variant (created on first use); the document is interrupted until finalize.

        sweep_point {variant, parameter, value}: the variant is one size of a sweep (report/sweep.py).
        """
        try:
            variant = D.get_variant(self.doc, variant_name)
            if settings:
                variant["settings"] = dict(variant.get("settings") or {}, **settings)
        except KeyError:
            variant = D.add_variant(self.doc, variant_name, settings=settings, sweep_point=sweep_point)
        run = D.add_run(variant)
        self.doc["status"] = "interrupted"
        self.doc["finished"] = None
        self.doc.pop("reason", None)
        self.write()
        return variant, run

    def variant_index(self, variant_name: str) -> int:
        for i, v in enumerate(self.doc["variants"]):
            if v["name"] == variant_name:
                return i + 1
        return len(self.doc["variants"]) + 1

    def record_step(self, run: dict[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
        """Add one step result to the run and write the document at once."""
        kwargs = {k: result[k] for k in _ADD_STEP_KEYS if result.get(k) is not None}
        step = D.add_step(run, result["name"], **kwargs)
        for k, v in result.items():
            if k not in _ADD_STEP_KEYS and k != "name" and v is not None:
                step[k] = v
        self.write()
        return step

    def end_run(self, run: dict[str, Any], status: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        for k, v in (extra or {}).items():
            run[k] = v
        D.finish_run(run, status=status)
        self.write()

    def finalize(self, status: str | None = None, reason: str | None = None) -> str:
        D.finalize(self.doc, status=status, reason=reason)
        return self.write(check=True)

    def write(self, check: bool = False) -> str:
        # mid-run writes skip validation: a partial document must land on disk whatever it holds
        return D.write_atomic(self.doc, self.reports_dir, check=check)


def step_line(step: Mapping[str, Any]) -> dict[str, Any]:
    """The compact form of a step that the module returns (no per-object timings)."""
    keys = ("name", "label", "status", "count", "unit", "wall_s", "rate", "reason", "api_requests")
    out = {k: step.get(k) for k in keys if step.get(k) is not None}
    if step.get("latency"):
        out["latency"] = {k: round(v, 6) for k, v in step["latency"].items()}
    if step.get("errors"):
        out["errors"] = len(step["errors"])
        out["first_errors"] = step["errors"][:5]
    if step.get("unfinished"):
        out["unfinished"] = len(step["unfinished"])
    if step.get("metrics"):
        out["metrics"] = step["metrics"]
    return out
