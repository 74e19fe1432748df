# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the bench modules do, without Ansible: plan once, measure one repetition of the stored plan, finalize.

  preflight  (bench_plan) check the options and read the cluster (nothing is created there); open or start
             the result document and store the plan in it (`plan`); return the run id and the plan's facts
             (node, capped replicas, VolumeSnapshotClass, whether volumes need attaching)
  measure    (bench_measure) one repetition of one variant of the stored plan in its own owner namespace;
             every step result is written to the document as soon as it is measured
  finalize   (bench_finish) give the document its final status (and the reason), with per-variant summaries

bench/modules.py holds the modules' one call each.
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Union

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle, fio, sysbench
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup, CleanupTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.finish import finalize  # noqa: F401 (bench_finish's)
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.lease import RunLease
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.options import complete
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.results import ResultFile, step_line
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sUnreachable
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import sweep as SW

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.progress import ProgressFile
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

    # one benchmark's Plan (Union: an alias is an expression, and the modules' Python 3.8 has no X | Y there)
    Plan = Union[csi_lifecycle.Plan, attach_stress.Plan, fio.Plan, sysbench.Plan]

# The one table of benchmarks. An entry is the benchmark's module; what differs between benchmarks is its
# attributes, so nothing below branches on a name: OPTIONS (bench_plan's suboption of that name: the argument spec,
# where each default is written), READ_BY_PREFLIGHT (the plan attributes preflight reads, stored with the plan),
# SWEEP_PARAMETER, TITLE and SWEEP_TITLE (% the plan's facts; TITLE may be a function of them), SHARED_NAMESPACE,
# problems(options), Plan(options), preflight(client, plan), facts(plan), sweep_point(plan), cleans_up(options, last),
# plan_messages(plan, preflight), run(ctx, plan) (what it learns beyond its steps goes on ctx: context.py).
BENCHMARKS: dict[str, ModuleType] = {entry.BENCHMARK: entry for entry in (csi_lifecycle, attach_stress, fio, sysbench)}


class BenchProblem(StoragePerfError):
    """Bad input or a cluster the benchmark cannot run on; nothing was changed."""


def make_plan(client: Client, benchmark: str, options: Mapping[str, Any] | None) -> Plan:
    """Validate, then read the cluster. Raises BenchProblem (with what to fix) or K8sError."""
    entry = BENCHMARKS[benchmark]
    found = entry.problems(options)
    if found:
        raise BenchProblem("; ".join(found))
    plan = entry.Plan(options)
    entry.preflight(client, plan)
    return plan


def plan_facts(benchmark: str, plan: Plan) -> dict[str, Any]:
    return BENCHMARKS[benchmark].facts(plan)


def measured_cluster(client: Client, name: str | None = None) -> dict[str, Any]:
    """The cluster a result document was measured on; name is the inventory host of a fleet run."""
    version = client.server_version() or {}
    nodes, _ = client.list("v1", "Node")
    facts: dict[str, Any] = {"server": client.host, "version": version.get("gitVersion", ""), "nodes": len(nodes)}
    if name:
        facts["name"] = name
    scale = time_scale(client)
    if scale:
        facts["time_scale"] = scale
    return facts


# A cluster that runs its latencies scaled (a simulator) says so in this ConfigMap; the reports then also show
# each time in cluster time (wall / scale). A real cluster has none: nothing is recorded, nothing is shown.
TIME_SCALE_CONFIGMAP = ("kube-public", "cluster-time-scale", "timeScale")


def time_scale(client: Client) -> float | None:
    namespace, name, key = TIME_SCALE_CONFIGMAP
    try:
        cm = client.get("v1", "ConfigMap", name, namespace=namespace, missing_ok=True) or {}
        scale = float((cm.get("data") or {}).get(key) or 0)
    except Exception:  # unreadable (RBAC) or not a number: a report without cluster time, never a failed run
        return None
    return scale if 0 < scale != 1 else None


def title(benchmark: str, facts: Mapping[str, Any]) -> str | None:
    entry = BENCHMARKS[benchmark]
    if callable(entry.TITLE):  # a title that is more than the facts put in a sentence (fio: "a vs b")
        return entry.TITLE(facts)
    try:
        if facts.get("sweep"):
            return entry.SWEEP_TITLE % dict(facts, sweep=", ".join(str(n) for n in facts["sweep"]))
        return entry.TITLE % facts
    except (KeyError, TypeError):
        return None


def stored_plan(benchmark: str, options: Mapping[str, Any] | None, plan: Plan, run: Mapping[str, Any]) -> dict[str, Any]:
    """What bench_plan keeps in the document (its `plan`) so that every repetition runs this plan without reading
    the cluster again: the benchmark's options, what preflight read, and the run's own settings (run: engine,
    variants, repeat, metrics)."""
    entry = BENCHMARKS[benchmark]
    read = {name: getattr(plan, name) for name in entry.READ_BY_PREFLIGHT}
    return dict(run, benchmark=benchmark, options=complete(entry.OPTIONS, options), read=read)


def restored_plan(stored: Mapping[str, Any], point: int | None = None) -> Plan:
    """The plan bench_plan made, at sweep point `point` (the value of the benchmark's SWEEP_PARAMETER)."""
    entry = BENCHMARKS[stored["benchmark"]]
    options = dict(stored["options"])
    sizes = SW.ordered(options.get("sweep"))
    if point is None and sizes:
        raise BenchProblem("sweep_point is required: the run sweeps %s %s, give the size this repetition measures"
                           % (entry.SWEEP_PARAMETER, ", ".join(str(n) for n in sizes)))
    if point is not None and point not in sizes:
        raise BenchProblem("sweep_point %s is not one of the run's sizes (%s): %s" % (
            point, ", ".join(str(n) for n in sizes) or "it has no sweep",
            "give one of them" if sizes else "leave sweep_point out"))
    if point is not None:
        options[entry.SWEEP_PARAMETER] = point
    plan = entry.Plan(options)
    for name, value in stored["read"].items():
        setattr(plan, name, value)
    return plan


def preflight(client: Client, benchmark: str, options: Mapping[str, Any] | None, reports_dir: str,
              run_id: str | None = None, cluster_name: str | None = None, components: dict[str, Any] | None = None,
              notes: Iterable[str] | None = None, run: Mapping[str, Any] | None = None,
              check_mode: bool = False) -> dict[str, Any]:
    """bench_plan: check, read the cluster once, and start the document with the plan stored in it."""
    plan = make_plan(client, benchmark, options)
    facts = plan_facts(benchmark, plan)
    run_id = run_id or D.new_run_id(benchmark)
    problem = L.run_id_problem(run_id)
    if problem:
        raise BenchProblem(problem)
    messages = BENCHMARKS[benchmark].plan_messages(plan, preflight=True)
    rf = ResultFile(reports_dir, run_id)
    changed = False
    if not check_mode:
        rf.open(benchmark, parameters=facts, cluster=measured_cluster(client, cluster_name), components=components,
                title=title(benchmark, facts), notes=list(notes or []) + messages)
        rf.doc["plan"] = stored_plan(benchmark, options, plan, run or {})
        rf.write()
        changed = True
    return {"run_id": run_id, "plan": facts, "messages": messages, "result_path": rf.path, "changed": changed}


def load_plan(reports_dir: str, run_id: str) -> tuple[ResultFile, dict[str, Any]]:
    """The run's document and the plan bench_plan stored in it."""
    problem = L.run_id_problem(run_id)
    if problem:
        raise BenchProblem(problem)
    rf = ResultFile(reports_dir, run_id)
    if not os.path.exists(rf.path):
        raise BenchProblem("no result document at %s: start the run with bench_plan (same run_id and reports_dir)"
                           % rf.path)
    rf.doc = D.load(rf.path, check=False)
    if not rf.doc.get("plan"):
        raise BenchProblem("%s holds no stored plan (it was not started by bench_plan): start a new run with "
                           "bench_plan" % rf.path)
    return rf, rf.doc["plan"]


def _repetition(rf: ResultFile, stored: Mapping[str, Any], variant: str,
                point: int | None) -> tuple[str, dict[str, Any] | None, bool]:
    """(document variant name, its sweep point, the repetition's number, whether it is the run's last)."""
    variants, repeat = stored.get("variants") or [], stored.get("repeat") or 1
    if variants and variant not in variants:
        raise BenchProblem("variant %r is not one of the run's variants (%s): give one of them, or plan the run with "
                           "it (bench_plan variants)" % (variant, ", ".join(variants)))
    entry = BENCHMARKS[stored["benchmark"]]
    sizes = SW.ordered(stored["options"].get("sweep"))
    name, sweep_point = variant, None
    if point is not None and sizes:
        # a sweep point is a document variant of its own ("concurrency on · 100 vol") that names its variant and size
        sweep_point = {"variant": variant, "parameter": entry.SWEEP_PARAMETER, "value": point}
        name = S.point_name(variant, point)
    done = next((len(v.get("runs") or ()) for v in rf.doc.get("variants") or () if v["name"] == name), 0)
    if done >= repeat:
        raise BenchProblem("variant %r has its %d repetition(s) already (bench_plan repeat): start a new run to "
                           "measure it again" % (name, repeat))
    last = done + 1 == repeat and (not variants or variant == variants[-1]) and (not sizes or point == sizes[-1])
    return name, sweep_point, last


def measure(client: Client, rf: ResultFile, stored: Mapping[str, Any], variant: str,
            settings: dict[str, Any] | None = None, point: int | None = None, progress: ProgressFile | None = None,
            progress_interval: float = 2.0, check_mode: bool = False) -> dict[str, Any]:
    """One repetition of the stored plan. Returns {run_id, variant, repetition, namespace, status, steps, plan, messages}."""
    benchmark = stored["benchmark"]
    entry = BENCHMARKS[benchmark]
    plan = restored_plan(stored, point)
    facts = plan_facts(benchmark, plan)
    variant, sweep_point, last = _repetition(rf, stored, variant, point)
    run_id = rf.run_id
    if check_mode:
        return {"run_id": run_id, "variant": variant, "plan": facts, "status": None, "steps": [],
                "messages": entry.plan_messages(plan), "result_path": rf.path, "changed": True}
    measured, run = rf.begin_run(variant, settings, sweep_point=sweep_point)
    extra: dict[str, Any] = {}
    cleanup = entry.cleans_up(stored["options"], last)
    if entry.SHARED_NAMESPACE:
        # the run's one namespace; kept between repetitions, removed by the run's cleanup (bench_cleanup)
        namespace = L.owner_namespace(run_id, benchmark, 0, 0)
        extra["cleanup"] = {"kept": "namespace %s is shared by the run's variants and repetitions; the run's "
                                    "cleanup (bench_cleanup) removes it" % namespace}
    else:
        namespace = L.owner_namespace(run_id, benchmark, rf.variant_index(variant), run["repetition"])
    options = Options(progress_interval=progress_interval, **stored["engine"])
    if progress is not None:
        progress.update(benchmark=benchmark, variant=variant, repetition=run["repetition"], namespace=namespace)
        options.progress = progress
    ctx = Context(client, run_id, benchmark, namespace, options, lambda r: rf.record_step(run, r),
                  variant=None if entry.SHARED_NAMESPACE else variant,
                  repetition=None if entry.SHARED_NAMESPACE else run["repetition"])
    extra["namespace"] = namespace
    status: str | None = None
    # renewed while the repetition runs, so that a cleanup of every run (bench_cleanup all_runs) leaves it alone
    lease = RunLease(client.sibling(), namespace, ctx.labels)
    try:
        ctx.create_namespace()
        lease.acquire()
        options.disturbance = lease.disturbance
        entry.run(ctx, plan)
    except K8sUnreachable as e:
        # a state of the run, not a timeout: keep the step as far as it got, stop, and leave the labelled objects
        # to playbooks/cleanup.yml (nothing can delete them while the server does not answer)
        status, cleanup = "unreachable", False
        if getattr(e, "result", None):
            ctx.record(e.result)
        extra["reason"] = e.msg
        _mark_unreachable(rf, client, e)
        raise
    except BaseException as e:
        interrupted = isinstance(e, (KeyboardInterrupt, SystemExit))
        status = "interrupted" if interrupted else "failed"
        extra["reason"] = "%s: %s" % (type(e).__name__, getattr(e, "msg", e))
        # interrupted (SIGTERM/SIGINT from ansible-playbook or an AWX cancel): leave quickly, labelled;
        # the bench_cleanup module / playbooks/cleanup.yml removes what is left
        cleanup = cleanup and not interrupted
        raise
    finally:
        lease.release()
        extra.update(ctx.info)
        _learned(rf.doc, measured, ctx)
        if cleanup:
            extra["cleanup"] = _clean(client, namespace, stored["options"]["cleanup_timeout"])
        rf.end_run(run, status=status, extra=extra)
    return {"run_id": run_id, "variant": variant, "repetition": run["repetition"], "namespace": namespace,
            "status": run["status"], "steps": [step_line(s) for s in run["steps"]], "plan": facts,
            "messages": entry.plan_messages(plan), "cleanup": extra.get("cleanup"),
            "setup": extra.get("setup"), "result_path": rf.path, "changed": True}


def _learned(doc: dict[str, Any], variant: dict[str, Any], ctx: Context) -> None:
    """What the repetition learned beyond its steps (Context: settings, variant_facts, components, notes)."""
    variant["settings"] = dict(variant.get("settings") or {}, **ctx.settings)
    variant.update(ctx.variant_facts)
    doc["components"] = dict(doc.get("components") or {}, **{k: str(v) for k, v in ctx.components.items()})
    for note in ctx.notes:
        doc.setdefault("notes", [])
        if note not in doc["notes"]:
            doc["notes"].append(note)


def _clean(client: Client, namespace: str, timeout: float) -> dict[str, Any]:
    try:
        return Cleanup(client, namespaces=[namespace], timeout=timeout).run()
    except CleanupTimeout as e:
        return {"error": e.msg, "remaining": e.remaining[:50]}
    except Exception as e:  # noqa: BLE001 - the measurement is written; bench_cleanup can finish the job
        return {"error": "%s: %s" % (type(e).__name__, getattr(e, "msg", e))}


def _mark_unreachable(rf: ResultFile, client: Client, e: K8sUnreachable) -> None:
    """Say in the document which server stopped answering and since when (finalize() then keeps the status)."""
    rf.doc["unreachable"] = {"server": client.host, "since": e.details.get("since") or D.now_iso(), "message": e.msg}
