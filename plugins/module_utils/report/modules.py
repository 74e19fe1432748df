# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the report modules do: bench_report, bench_compare, fleet_report, reports_upload, bench_history and
metrics_push.

Each function takes the module's params (and check mode) and returns the module's result, or raises a
StoragePerfError naming the option to fix. What they share is here once: reading a result document
given by an option, turning a write error into a message naming where and what to check, and saying
which files were written.
"""
from __future__ import annotations

import contextlib
import datetime
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report.fleet_schema import FleetValidationError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.junit import to_junit
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import ResultValidationError, validate
from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize
from ansible_collections.storageperf.k8s.plugins.module_utils.report.verdict_text import verdict_lines


# shared -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def writing(what: str, hint: str | None = None) -> Iterator[None]:
    """An OSError while writing becomes a StoragePerfError saying what could not be written and what to check."""
    try:
        yield
    except OSError as e:
        raise StoragePerfError("%s: %s" % (what, e), hint=hint) from e


def written(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The result keys of what write_texts() wrote: paths per format, changed_files, changed."""
    changed_files = sorted(f for f, w in files.items() if w["changed"])
    return {"paths": {f: w["path"] for f, w in files.items()}, "changed_files": changed_files,
            "changed": bool(changed_files)}


# bench_report ---------------------------------------------------------------------------------------
def _report_dir(p: Mapping[str, Any], doc: dict[str, Any]) -> str:
    if p["output_dir"]:
        return os.path.abspath(p["output_dir"])
    if p["reports_dir"]:
        return os.path.abspath(os.path.join(p["reports_dir"], doc["run_id"]))
    if p["result"]:
        src = p["result"]
        return os.path.abspath(src if os.path.isdir(src) else os.path.dirname(os.path.abspath(src)))
    raise StoragePerfError("output_dir or reports_dir is required when document is given "
                           "(files go to <output_dir>/ or <reports_dir>/<run_id>/)")


def bench_report(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Render a result document (p["result"] path or p["document"]) as p["formats"] next to it or into a directory."""
    try:
        doc = D.load(p["result"]) if p["result"] else validate(p["document"])
    except ResultValidationError as e:
        raise StoragePerfError("%s: %s" % ("result " + p["result"] if p["result"] else "document", e),
                               problems=e.problems) from e
    except ValueError as e:
        raise StoragePerfError("result: %s" % e, hint="Give the path of a result.json or of its run directory.") from e
    out_dir = _report_dir(p, doc)
    with writing("cannot write the report into %s" % out_dir,
                 hint="Check that the directory is writable (output_dir / reports_dir)."):
        result = written(R.write_reports(doc, out_dir, p["formats"], check_mode=check_mode))
        markdown = R.to_markdown(doc)
    summary = dict(summarize(doc), reports=result["paths"])
    return dict(result, output_dir=out_dir, summary=summary, markdown=markdown)


def _render_one(job: tuple[Mapping[str, Any], str, bool]) -> dict[str, Any]:
    """One path of results rendered next to itself; a failure comes back as its parts (a StoragePerfError with
    keyword arguments does not cross a process boundary whole)."""
    params, path, check_mode = job
    try:
        out = bench_report(dict(params, result=path, document=None), check_mode=check_mode)
    except StoragePerfError as e:
        return dict(error=e.msg, hint=e.hint, result=e.result, details=e.details)
    return dict(result=path, output_dir=out["output_dir"], paths=out["paths"], changed_files=out["changed_files"])


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS): every CPU
        return os.cpu_count() or 1


def render_each(params: Mapping[str, Any], check_mode: bool = False, workers: int | None = None) -> dict[str, Any]:
    """Every path of results rendered next to itself, in this one module run: in a pool of forked processes, one
    per CPU (at most one per path), each importing matplotlib once; one path, or one CPU, stays in this process.
    The first failure in the order of results fails the run, as it did one after the other."""
    jobs = [(params, path, check_mode) for path in params["results"]]
    workers = min(len(jobs), workers or _cpus())
    if workers <= 1:
        reports = [_render_one(job) for job in jobs]
    else:
        # fork: the workers inherit this module's imports (an AnsiballZ run imports from its zip, which a spawned
        # interpreter would not find)
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            reports = list(pool.map(_render_one, jobs))
    for report in reports:
        if "error" in report:
            raise StoragePerfError(report["error"], hint=report["hint"], result=report["result"], **report["details"])
    return dict(changed=any(r["changed_files"] for r in reports), reports=reports)


# bench_compare --------------------------------------------------------------------------------------
def _load(option: str, path: str) -> dict[str, Any]:
    try:
        return D.load(path)
    except ValueError as e:  # unreadable, not JSON, or a ResultValidationError (with its problems)
        raise StoragePerfError("%s: %s" % (option, e), problems=getattr(e, "problems", [])) from e


def bench_compare(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Judge a candidate run (against a baseline run, or its own variants) by tolerances; optionally write JUnit."""
    docs = {name: _load(name, p[name]) if p[name] is not None else None for name in ("baseline", "candidate")}
    verdict = C.compare(docs["baseline"], docs["candidate"], p["tolerances"])  # type: ignore[arg-type]  # candidate is required
    result = dict(changed=False, verdict="fail" if verdict["failed"] else "pass",
                  failed_checks=verdict["failed"], checks=verdict["checks"], failures=verdict["failures"],
                  rows=verdict["rows"], message=verdict["message"], lines=verdict_lines(verdict))
    if p["junit_path"]:
        path = result["junit_path"] = os.path.abspath(p["junit_path"])
        if not check_mode:
            with writing("junit_path: cannot write %s" % path):
                result["changed"] = D.write_text_atomic(path, to_junit(verdict))
    return result


# fleet_report ---------------------------------------------------------------------------------------
def default_fleet_name() -> str:
    return "fleet-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def fleet_report(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Put every cluster's entry side by side in <reports_dir>/<name>/fleet.json|md|html."""
    name = p["name"] or default_fleet_name()
    try:
        fleet = F.build_fleet(p["entries"], name, kind=p["kind"], title=p["title"])
    except FleetValidationError as e:  # a bug in fleet.py rather than bad input: say so with the details
        raise StoragePerfError("the fleet document does not match its schema: %s" % e, problems=e.problems) from e
    out_dir = os.path.abspath(os.path.join(p["reports_dir"], name))
    with writing("cannot write the fleet report into %s" % out_dir, hint="Check that reports_dir is writable."):
        result = written(FR.write_fleet(fleet, p["reports_dir"], check_mode=check_mode))
    summary = dict(fleet["summary"], kind=fleet["kind"], name=name)
    return dict(result, output_dir=out_dir, name=name, kind=fleet["kind"], summary=summary,
                table=FR.table_lines(fleet))


# reports_upload -------------------------------------------------------------------------------------
def _s3_upload() -> Any:
    # boto3 (s3_upload imports it) takes about 0.1 s to import: only the modules that talk to S3 pay for it
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload

    return s3_upload


def reports_upload(p: Mapping[str, Any], check_mode: bool = False, diff: bool = False) -> dict[str, Any]:
    """Upload the files of a report directory that the bucket lacks or holds in another version."""
    s3 = _s3_upload().client_from_params(p)
    result = _s3_upload().sync(s3, p["src"], p["bucket"], p["prefix"], check_mode=check_mode, endpoint_url=p["endpoint_url"])
    keys = sorted(result["uploaded"] + result["unchanged"])
    out = dict(changed=bool(result["uploaded"]), uploaded=result["uploaded"], unchanged=result["unchanged"],
               bucket=p["bucket"], urls=["s3://%s/%s" % (p["bucket"], k) for k in keys])
    if diff and result["uploaded"]:
        out["diff"] = result["diff"]
    return out


# bench_history --------------------------------------------------------------------------------------
def bench_history(p: Mapping[str, Any], check_mode: bool = False,
                  warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every result document of reports_dir (and of the bucket) in time order, regressions flagged; history.* and the
    state of what was reported (history-state.json), which the next history reads so as not to report it again."""
    reports_dir = os.path.abspath(p["reports_dir"]) if p["reports_dir"] else None
    if not p["bucket"] and not (reports_dir and os.path.isdir(reports_dir)):
        raise StoragePerfError("reports_dir %s is not a directory: give the reports_dir the benchmarks wrote into "
                               "(<reports_dir>/<cluster>/<run_id>/result.json), or a bucket" % (p["reports_dir"] or "(empty)"))
    out_dir = os.path.abspath(p["output_dir"] or os.path.join(reports_dir or "", HR.DIRNAME))
    if not p["output_dir"] and not reports_dir:
        raise StoragePerfError("output_dir is required when reports_dir is not given (the history goes to "
                               "<reports_dir>/history/ by default)")
    for old in ("tolerances", "baseline_runs"):
        if p.get(old) is not None and warn is not None:
            warn("bench_history: %s is no longer used and is ignored: a regression is now a change point at max_pvalue "
                 "at least min_effect_pct worse (docs/history.md); remove %s" % (old, old))
    H.check_settings(p["max_pvalue"], p["min_effect_pct"])  # before anything is read
    state_path = os.path.join(out_dir, HR.FILENAMES["state"])
    state = None
    if os.path.exists(state_path):
        try:
            with open(state_path, "rb") as f:
                state = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            raise StoragePerfError("cannot read the history state %s: %s" % (state_path, e),
                                   hint="Remove it to start the state again (every regression is then reported once more).") from e
    entries = H.find_results(reports_dir) if reports_dir else []
    source = {"reports_dir": reports_dir}
    if p["bucket"]:
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_results as S3R  # boto3: above

        entries += S3R.find_results(_s3_upload().client_from_params(p), p["bucket"], p["prefix"], endpoint_url=p["endpoint_url"])
        source.update(bucket=p["bucket"], prefix=p["prefix"])
    if not entries:
        raise StoragePerfError("no result document under %s: the history reads <cluster>/<run_id>/result.json; check "
                               "reports_dir%s" % (" and ".join(x for x in (reports_dir, p["bucket"] and "s3://%s/%s" % (
                                   p["bucket"], p["prefix"])) if x), " and bucket/prefix" if p["bucket"] else ""))
    try:
        history = H.build_history(entries, p["max_pvalue"], p["min_effect_pct"], state=state, source=source)
    except H.HistoryError as e:
        raise H.HistoryError("%s (%s)" % (e.msg, state_path)) from e
    with writing("cannot write the history into %s" % out_dir, hint="Check that output_dir / reports_dir is writable."):
        result = written(HR.write_history(history, out_dir, check_mode=check_mode))
    return dict(result, output_dir=out_dir, summary=history["summary"], regressions=history["regressions"],
                known_regressions=history["known_regressions"], baseline=history["baseline"], tolerances={},
                table=HR.table_lines(history))


# metrics_push ---------------------------------------------------------------------------------------
def metrics_push(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """Write <run dir>/metrics.prom from a result document and push the same families to a Pushgateway.

    Without p["result"] only the URL and the library are checked. bench_plan checks and bench_finish writes
    them itself (bench_plan option metrics); the bench roles that do not use them call this module.
    A push that fails is a warning (result["warnings"]), never a failure: the run and the text file stay.
    """
    # prometheus-client only where metrics are written (not in bench_report, fleet_report...)
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import metrics_export as ME

    url = ME.check(p["pushgateway_url"])
    if not p["result"]:
        return dict(changed=False, pushed=False, pushgateway_url=url)
    doc = _load("result", p["result"])
    run_dir = _report_dir(dict(p, output_dir=None, reports_dir=None), doc)
    return ME.export(doc, run_dir, p["cluster"], url, p["timeout"], check_mode=check_mode)
