# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the bench_run module does, without Ansible: preflight, measure one repetition, finalize.

  preflight  check the parameters and read the cluster (nothing is created there); open or start
             the result document; return the run id and the plan (node, capped replicas,
             VolumeSnapshotClass, whether volumes need attaching)
  measure    one repetition of one variant in its own owner namespace; every step result is
             written to the document as soon as it is measured; the namespace is cleaned up after
  finalize   give the document its final status (and the reason), with per-variant summaries

bench_run(module) is the module's one call: it checks the options, runs the mode and turns every failure
into a BenchProblem that names the benchmark and what to fix.
"""

import os
import signal

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup, CleanupTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.lease import RunLease
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.progress import ProgressFile
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.results import ResultFile, step_line
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep as S
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable
from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES

# The one table of benchmarks. An entry is the benchmark's module; what differs between benchmarks is its
# attributes, so nothing below branches on a name: PARAMS (the module parameters it reads), DEFAULTS (added
# when a parameter is not given), TITLE and SWEEP_TITLE (% the plan's facts), SHARED_NAMESPACE, problems(params),
# Plan(params), preflight(client, plan), facts(plan), sweep_point(plan), plan_messages(plan, preflight), run(ctx, plan).
BENCHMARKS = {entry.BENCHMARK: entry for entry in (csi_lifecycle, attach_stress)}


class BenchProblem(StoragePerfError):
    """Bad input or a cluster the benchmark cannot run on; nothing was changed."""


def parameters(benchmark, params):
    entry = BENCHMARKS[benchmark]
    # 0 and empty values stay: problems() must see volumes=0 to refuse it
    out = {k: params.get(k) for k in entry.PARAMS if params.get(k) is not None and params.get(k) != ""}
    for key, value in entry.DEFAULTS.items():
        out.setdefault(key, value)
    return out


def make_plan(client, benchmark, params):
    """Validate, then read the cluster. Raises BenchProblem (with what to fix) or K8sError."""
    entry = BENCHMARKS[benchmark]
    bench_params = parameters(benchmark, params)
    found = entry.problems(bench_params)
    if found:
        raise BenchProblem("; ".join(found))
    plan = entry.Plan(bench_params)
    entry.preflight(client, plan)
    return plan


def plan_facts(benchmark, plan):
    return BENCHMARKS[benchmark].facts(plan)


def measured_cluster(client, name=None):
    """The cluster a result document was measured on; name is the inventory host of a fleet run."""
    version = client.server_version() or {}
    nodes, _ = client.list("v1", "Node")
    facts = {"server": client.host, "version": version.get("gitVersion", ""), "nodes": len(nodes)}
    if name:
        facts["name"] = name
    scale = time_scale(client)
    if scale:
        facts["time_scale"] = scale
    return facts


# A cluster that runs its latencies scaled (a simulator) says so in this ConfigMap; the reports then also show
# each time in cluster time (wall / scale). A real cluster has none: nothing is recorded, nothing is shown.
TIME_SCALE_CONFIGMAP = ("kube-public", "cluster-time-scale", "timeScale")


def time_scale(client):
    namespace, name, key = TIME_SCALE_CONFIGMAP
    try:
        cm = client.get("v1", "ConfigMap", name, namespace=namespace, missing_ok=True) or {}
        scale = float((cm.get("data") or {}).get(key) or 0)
    except Exception:  # unreadable (RBAC) or not a number: a report without cluster time, never a failed run
        return None
    return scale if 0 < scale != 1 else None


def title(benchmark, facts):
    entry = BENCHMARKS[benchmark]
    try:
        if facts.get("sweep"):
            return entry.SWEEP_TITLE % dict(facts, sweep=", ".join(str(n) for n in facts["sweep"]))
        return entry.TITLE % facts
    except (KeyError, TypeError):
        return None


def preflight(client, benchmark, params, reports_dir, run_id=None, components=None, notes=None, check_mode=False):
    plan = make_plan(client, benchmark, params)
    facts = plan_facts(benchmark, plan)
    run_id = run_id or D.new_run_id(benchmark)
    problem = L.run_id_problem(run_id)
    if problem:
        raise BenchProblem(problem)
    messages = BENCHMARKS[benchmark].plan_messages(plan, preflight=True)
    rf = ResultFile(reports_dir, run_id)
    changed = False
    if not check_mode:
        rf.open(benchmark, parameters=facts, cluster=measured_cluster(client, params.get("cluster_name")), components=components,
                title=title(benchmark, facts), notes=list(notes or []) + messages)
        rf.write()
        changed = True
    return {"run_id": run_id, "plan": facts, "messages": messages, "result_path": rf.path, "changed": changed}


def measure(client, benchmark, params, reports_dir, run_id, variant, settings=None, options=None,
            cleanup=True, cleanup_timeout=600.0, progress=None, check_mode=False):
    """One repetition. Returns {run_id, variant, repetition, namespace, status, steps, plan, messages}."""
    problem = L.run_id_problem(run_id)
    if problem:
        raise BenchProblem(problem)
    plan = make_plan(client, benchmark, params)
    facts = plan_facts(benchmark, plan)
    # a sweep point is a document variant of its own ("concurrency on · 100 vol") that names its variant and size
    point = BENCHMARKS[benchmark].sweep_point(plan)
    if point:
        point = dict(point, variant=variant)
        variant = S.point_name(variant, point["value"])
    rf = ResultFile(reports_dir, run_id)
    if check_mode:
        return {"run_id": run_id, "variant": variant, "plan": facts, "status": None, "steps": [],
                "messages": BENCHMARKS[benchmark].plan_messages(plan), "result_path": rf.path, "changed": True}
    rf.open(benchmark, parameters=facts, cluster=measured_cluster(client, params.get("cluster_name")), title=title(benchmark, facts))
    _, run = rf.begin_run(variant, settings, sweep_point=point)
    shared = BENCHMARKS[benchmark].SHARED_NAMESPACE
    extra = {}
    if shared:
        # the run's one namespace; kept between repetitions, removed by the run's cleanup (bench_cleanup)
        namespace = L.owner_namespace(run_id, benchmark, 0, 0)
        cleanup = False
        extra["cleanup"] = {"kept": "namespace %s is shared by the run's variants and repetitions; the run's "
                                    "cleanup (bench_cleanup) removes it" % namespace}
    else:
        namespace = L.owner_namespace(run_id, benchmark, rf.variant_index(variant), run["repetition"])
    options = options or Options()
    if progress is not None:
        progress.update(benchmark=benchmark, variant=variant, repetition=run["repetition"], namespace=namespace)
        options.progress = progress
    ctx = Context(client, run_id, benchmark, namespace, options, lambda r: rf.record_step(run, r),
                  variant=None if shared else variant, repetition=None if shared else run["repetition"])
    extra["namespace"] = namespace
    status = None
    # renewed while the repetition runs, so that a cleanup of every run (bench_cleanup all_runs) leaves it alone
    lease = RunLease(client.sibling(), namespace, ctx.labels)
    try:
        ctx.create_namespace()
        lease.acquire()
        options.disturbance = lease.disturbance
        BENCHMARKS[benchmark].run(ctx, plan)
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
        if cleanup:
            try:
                extra["cleanup"] = Cleanup(client, namespaces=[namespace], timeout=cleanup_timeout).run()
            except CleanupTimeout as e:
                extra["cleanup"] = {"error": e.msg, "remaining": e.remaining[:50]}
            except Exception as e:  # noqa: BLE001 - the measurement is written; bench_cleanup can finish the job
                extra["cleanup"] = {"error": "%s: %s" % (type(e).__name__, getattr(e, "msg", e))}
        rf.end_run(run, status=status, extra=extra)
    return {"run_id": run_id, "variant": variant, "repetition": run["repetition"], "namespace": namespace,
            "status": run["status"], "steps": [step_line(s) for s in run["steps"]], "plan": facts,
            "messages": BENCHMARKS[benchmark].plan_messages(plan), "cleanup": extra.get("cleanup"),
            "setup": extra.get("setup"), "result_path": rf.path, "changed": True}


def _mark_unreachable(rf, client, e):
    """Say in the document which server stopped answering and since when (finalize() then keeps the status)."""
    rf.doc["unreachable"] = {"server": client.host, "since": e.details.get("since") or D.now_iso(), "message": e.msg}


def finalize(reports_dir, run_id, status=None, reason=None, check_mode=False):
    rf = ResultFile(reports_dir, run_id)
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


def _interrupt(signum, frame):
    # SIGTERM (ansible-playbook interrupted, AWX cancel) becomes an exception, so the result document
    # records the repetition as interrupted before the process ends
    raise KeyboardInterrupt("signal %d" % signum)


def option_problems(p):
    """Options no mode can run with; each names the option and a valid value."""
    if p["concurrency"] < 1:
        return "concurrency must be at least 1, got %d" % p["concurrency"]
    if p["step_timeout"] <= 0:
        return "step_timeout must be a positive number of seconds, got %s" % p["step_timeout"]
    return None


def _metrics_export():
    # prometheus-client only in the modes that write metrics (measure never loads it)
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import metrics_export

    return metrics_export


def _finalize(module, p):
    """finalize, and with metrics metrics.prom and the push: what metrics_push did in a module run of its own."""
    if p["metrics"] and not p["cluster_name"]:
        raise BenchProblem("metrics needs cluster_name (the metrics' cluster label), e.g. cluster_name: "
                           "\"{{ inventory_hostname }}\"")
    out = finalize(p["reports_dir"], p["run_id"], status=p["status"], reason=p["reason"],
                   check_mode=module.check_mode)
    doc = out.pop("document")
    if p["metrics"]:
        ME = _metrics_export()
        out["metrics"] = ME.export(doc, os.path.dirname(out["result_path"]), p["cluster_name"],
                                   ME.check(p["pushgateway_url"]), p["pushgateway_timeout"],
                                   check_mode=module.check_mode)
        for warning in out["metrics"].pop("warnings", []):  # a Pushgateway that is down: the task stays ok
            module.warn(warning)
    out["summary"] = summarize(doc)
    return out


def _run_mode(module, p):
    if p["mode"] == "finalize":
        return _finalize(module, p)
    if p["mode"] == "preflight" and p["metrics"]:
        # a bad URL or a missing prometheus-client fails before the document is started, not after the benchmark
        _metrics_export().check(p["pushgateway_url"])
    # the bench engine shares the client between its threads: a connection each, and some for the watches
    client = module.client("k8s", pool_maxsize=p["concurrency"] + 8)
    if p["mode"] == "preflight":
        return preflight(client, p["benchmark"], p, p["reports_dir"], run_id=p["run_id"] or None,
                         components=p["components"], notes=p["notes"], check_mode=module.check_mode)
    signal.signal(signal.SIGTERM, _interrupt)
    options = Options(concurrency=p["concurrency"], timeout=p["step_timeout"],
                      give_up_after_warnings=p["give_up_after_warnings"],
                      progress_interval=p["progress_interval"], keep_objects=p["keep_objects"])
    progress = ProgressFile(p["progress_file"]) if p["progress_file"] else None
    try:
        out = measure(client, p["benchmark"], p, p["reports_dir"], p["run_id"], p["variant"],
                      settings=p["variant_settings"], options=options, cleanup=p["cleanup"],
                      cleanup_timeout=p["cleanup_timeout"], progress=progress, check_mode=module.check_mode)
    except K8sUnreachable as e:
        # gone before the repetition began (its plan reads the cluster): the preflight's document says so
        rf = ResultFile(p["reports_dir"], p["run_id"])
        if not module.check_mode and os.path.exists(rf.path):
            rf.doc = D.load(rf.path, check=False)
            if not rf.doc.get("unreachable"):
                _mark_unreachable(rf, client, e)
                rf.write()
        raise
    for message in out.get("messages") or ():
        module.warn(message)
    failed = [s for s in out.get("steps") or () if s.get("status") in BROKEN_STEP_STATUSES]
    return dict(out, failed_steps=len(failed))


def bench_run(module):
    """The bench_run module: preflight, measure or finalize (module.params mode); every failure a BenchProblem."""
    p = module.params
    problem = option_problems(p)
    if problem:
        raise BenchProblem(problem)
    benchmark = p["benchmark"]
    try:
        return _run_mode(module, p)
    except BenchProblem as e:
        raise BenchProblem("%s: %s" % (benchmark, e.msg)) from e
    except K8sUnreachable as e:
        raise BenchProblem("%s: %s" % (benchmark, e.msg), status="unreachable",
                           hint="The run stopped its own work there; what it created carries its run id %s for "
                                "playbooks/cleanup.yml" % p["run_id"],
                           unreachable_since=e.details.get("since"), run_id=p["run_id"]) from e
    except K8sError as e:
        raise BenchProblem("%s: %s" % (benchmark, e.msg), status=e.status) from e
    except (OSError, ValueError) as e:
        raise BenchProblem("%s: cannot read or write the result document under %s: %s" % (benchmark, p["reports_dir"], e),
                           hint="Check reports_dir.") from e
    except KeyboardInterrupt as e:
        raise BenchProblem("%s: interrupted (%s); the result document records what was measured, and bench_cleanup / "
                           "playbooks/cleanup.yml removes what is left (run id %s)" % (benchmark, e, p["run_id"]),
                           run_id=p["run_id"]) from e
