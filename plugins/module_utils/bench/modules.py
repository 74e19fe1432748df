# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three bench modules' one call each: one module per job, each taking only the options its job reads.

  bench_plan     checks the options and the cluster once, starts the result document and stores the plan in it
                 (its `plan`: the benchmark's options, what the preflight read, the run's engine settings,
                 variants, repetitions and metrics target)
  bench_measure  one repetition of one variant of the stored plan: run id and variant (a sweep point too);
                 it neither rebuilds the plan nor reads the cluster's preflight facts again
  bench_finish   the document's final status, metrics.prom and its push, the reports: in bench/finish.py, whose
                 module process loads neither this file's runner nor the kubernetes client

Every failure becomes a BenchProblem that names the benchmark (or the run) and what to fix.
"""
from __future__ import annotations

import os
import signal
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Mapping, NoReturn

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import runner
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.finish import RUN_ARG_SPEC, bench_finish, metrics_export
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.progress import ProgressFile
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.runner import BENCHMARKS, BenchProblem
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

__all__ = ["RUN_ARG_SPEC", "bench_plan", "bench_measure", "bench_finish"]


def _guarded(what: Callable[[], str], run_id: str | None, reports_dir: str, job: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """job(), its failures as BenchProblems that start with what() (the benchmark, once known)."""
    try:
        return job()
    except BenchProblem as e:
        raise BenchProblem("%s: %s" % (what(), e.msg), hint=e.hint, result=e.result, **e.details) from e
    except K8sUnreachable as e:
        raise BenchProblem("%s: %s" % (what(), e.msg), status="unreachable",
                           hint="The run stopped its own work there; what it created carries its run id %s for "
                                "storageperf.k8s.cleanup" % run_id,
                           unreachable_since=e.details.get("since"), run_id=run_id) from e
    except K8sError as e:
        raise BenchProblem("%s: %s" % (what(), e.msg), status=e.status) from e
    except (OSError, ValueError) as e:
        raise BenchProblem("%s: cannot read or write the result document under %s: %s" % (what(), reports_dir, e),
                           hint="Check reports_dir.") from e
    except KeyboardInterrupt as e:
        raise BenchProblem("%s: interrupted (%s); the result document records what was measured, and bench_cleanup / "
                           "storageperf.k8s.cleanup removes what is left (run id %s)" % (what(), e, run_id),
                           run_id=run_id) from e


def _engine_problem(p: Mapping[str, Any]) -> str | None:
    if p["concurrency"] < 1:
        return "concurrency must be at least 1, got %d" % p["concurrency"]
    if p["step_timeout"] <= 0:
        return "step_timeout must be a positive number of seconds, got %s" % p["step_timeout"]
    if p["repeat"] < 1:
        return "repeat must be at least 1, got %d" % p["repeat"]
    if len(set(p["variants"])) != len(p["variants"]):
        return "variants must name each variant once, got %s" % ", ".join(p["variants"])
    return None


def bench_plan(p: Mapping[str, Any], client_of: Callable[..., Client], check_mode: bool = False) -> dict[str, Any]:
    """client_of(system, **options): the module base's client()."""
    benchmark = next(name for name in BENCHMARKS if p[name] is not None)

    def plan() -> dict[str, Any]:
        problem = _engine_problem(p)
        if problem:
            raise BenchProblem(problem)
        metrics = None
        if p["metrics"]:
            if not p["cluster_name"]:
                raise BenchProblem("metrics needs cluster_name (the metrics' cluster label), e.g. cluster_name: "
                                   "\"{{ inventory_hostname }}\"")
            # a bad URL or a missing prometheus-client fails before the document is started, not after the benchmark
            metrics_export().check(p["pushgateway_url"])
            metrics = {"pushgateway_url": p["pushgateway_url"], "pushgateway_timeout": p["pushgateway_timeout"]}
        run = {"engine": {"concurrency": p["concurrency"], "timeout": p["step_timeout"],
                          "give_up_after_warnings": p["give_up_after_warnings"], "keep_objects": p["keep_objects"]},
               "variants": p["variants"], "repeat": p["repeat"], "metrics": metrics}
        return runner.preflight(client_of("k8s"), benchmark, p[benchmark], p["reports_dir"],
                                run_id=p["run_id"] or None, cluster_name=p["cluster_name"],
                                components=p["components"], notes=p["notes"], run=run, check_mode=check_mode)
    return _guarded(lambda: benchmark, p["run_id"], p["reports_dir"], plan)


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    # SIGTERM (ansible-playbook interrupted, AWX cancel) becomes an exception, so the result document
    # records the repetition as interrupted before the process ends
    raise KeyboardInterrupt("signal %d" % signum)


def bench_measure(p: Mapping[str, Any], client_of: Callable[..., Client], check_mode: bool = False,
                  warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """client_of(system, **options): the module base's client(); warn: the module's warn()."""
    seen = {"benchmark": "run %s" % p["run_id"]}

    def measure() -> dict[str, Any]:
        if check_mode and not os.path.exists(runner.ResultFile(p["reports_dir"], p["run_id"]).path):
            # bench_plan wrote nothing in check mode: there is no stored plan to measure, only the variant to name
            variant = p["variant"] if p["sweep_point"] is None else S.point_name(p["variant"], p["sweep_point"])
            return {"run_id": p["run_id"], "variant": variant, "status": None, "steps": [], "changed": True,
                    "messages": ["check mode: run %s has no stored plan (bench_plan writes it outside check mode)"
                                 % p["run_id"]]}
        rf, stored = runner.load_plan(p["reports_dir"], p["run_id"])
        seen["benchmark"] = stored["benchmark"]
        signal.signal(signal.SIGTERM, _interrupt)
        # the bench engine shares the client between its threads: a connection each, and some for the watches
        client = client_of("k8s", pool_maxsize=stored["engine"]["concurrency"] + 8)
        progress = ProgressFile(p["progress_file"]) if p["progress_file"] else None
        return runner.measure(client, rf, stored, p["variant"], settings=p["variant_settings"],
                              point=p["sweep_point"], progress=progress, progress_interval=p["progress_interval"],
                              check_mode=check_mode)
    out = _guarded(lambda: seen["benchmark"], p["run_id"], p["reports_dir"], measure)
    for message in out.get("messages") or ():
        if warn is not None:
            warn(message)
    failed = [s for s in out.get("steps") or () if s.get("status") in BROKEN_STEP_STATUSES]
    return dict(out, failed_steps=len(failed))
