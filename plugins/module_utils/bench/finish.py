# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench_finish's one call, in a module of its own: it reads no cluster, so its process loads neither the bench
engine (bench/runner.py) nor the kubernetes client, which the runner's imports bring (0.45 CPU-s of a module
process that ran from its AnsiballZ zip, where nothing is compiled ahead; docs/performance.md).

  finalize      the result document's final status and per-variant summaries (runner.finalize)
  bench_finish  finalize, then metrics.prom and its push when the plan asked for metrics, then the reports the
                role asked for (report.md, report.html: what bench_report renders), all in this module's run
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.results import ResultFile
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize

# the run that bench_plan started, as bench_measure and bench_finish take it (doc fragment storageperf.k8s.bench_run_id)
RUN_ARG_SPEC = {"run_id": dict(type="str", required=True), "reports_dir": dict(type="path", required=True)}


def metrics_export() -> ModuleType:
    # prometheus-client only in the modules that check or write metrics (bench_measure never loads it)
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import metrics_export as ME

    return ME


def finalize(reports_dir: str, run_id: str, status: str | None = None, reason: str | None = None,
             check_mode: bool = False) -> dict[str, Any]:
    rf = ResultFile(reports_dir, run_id)
    if not os.path.exists(rf.path):
        raise StoragePerfError("no result document at %s: give the run_id and reports_dir of a run that bench_plan "
                               "started" % rf.path)
    rf.doc = D.load(rf.path, check=False)
    if status == "ok":
        status = None  # ok only when every step is: finalize() decides from the steps
    if rf.doc.get("unreachable") and status in (None, "failed"):
        status = "unreachable"  # measure() recorded it; the role only knows that a task failed
    D.finalize(rf.doc, status=status, reason=reason)
    if not check_mode:
        rf.write(check=True)
    return {"run_id": run_id, "status": rf.doc["status"], "result_path": rf.path, "document": rf.doc,
            "changed": not check_mode}


def _render(doc: dict[str, Any], out_dir: str, formats: list[str], check_mode: bool) -> dict[str, Any]:
    """What bench_report returns for the document, rendered next to result.json (its import only when asked)."""
    from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import bench_report

    return bench_report({"result": None, "document": doc, "formats": formats, "output_dir": out_dir,
                         "reports_dir": None}, check_mode=check_mode)


def _finish(p: Mapping[str, Any], seen: dict[str, str], check_mode: bool, warn: Callable[[str], None] | None) -> dict[str, Any]:
    out = finalize(p["reports_dir"], p["run_id"], status=p["status"], reason=p["reason"], check_mode=check_mode)
    doc = out.pop("document")
    seen["benchmark"] = doc.get("benchmark") or seen["benchmark"]
    metrics = (doc.get("plan") or {}).get("metrics")
    if metrics:
        ME = metrics_export()
        out["metrics"] = ME.export(doc, os.path.dirname(out["result_path"]), (doc.get("cluster") or {}).get("name"),
                                   ME.check(metrics["pushgateway_url"]), metrics["pushgateway_timeout"],
                                   check_mode=check_mode)
        for warning in out["metrics"].pop("warnings", []):  # a Pushgateway that is down: the task stays ok
            if warn is not None:
                warn(warning)
    out["summary"] = summarize(doc)
    if p.get("formats"):
        out["report"] = _render(doc, os.path.dirname(out["result_path"]), p["formats"], check_mode)
    return out


def bench_finish(p: Mapping[str, Any], check_mode: bool = False, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """finalize, with the plan's metrics metrics.prom and the push, and the asked reports (warn: the module's)."""
    seen = {"benchmark": "run %s" % p["run_id"]}
    try:
        return _finish(p, seen, check_mode, warn)
    except StoragePerfError as e:
        raise StoragePerfError("%s: %s" % (seen["benchmark"], e.msg), hint=e.hint, result=e.result, **e.details) from e
    except (OSError, ValueError) as e:
        raise StoragePerfError("%s: cannot read or write the result document under %s: %s"
                               % (seen["benchmark"], p["reports_dir"], e), hint="Check reports_dir.") from e
