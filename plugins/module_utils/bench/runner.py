# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the bench_run module does, without Ansible: preflight, measure one repetition, finalize.

  preflight  check the parameters and read the cluster (nothing is created there); open or start
             the result document; return the run id and the plan (node, capped replicas,
             VolumeSnapshotClass, whether volumes need attaching)
  measure    one repetition of one variant in its own owner namespace; every step result is
             written to the document as soon as it is measured; the namespace is cleaned up after
  finalize   give the document its final status (and the reason), with per-variant summaries
"""


from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup, CleanupTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.lease import RunLease
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.results import ResultFile, step_line
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

BENCHMARKS = {"csi_lifecycle": csi_lifecycle, "attach_stress": attach_stress}
TITLES = {
    "csi_lifecycle": "CSI lifecycle at %(volumes)s volumes (%(pods)s pods x %(pvcs_per_pod)s PVCs)",
    "attach_stress": "Attach stress: %(replicas)s pods x %(volumes_per_pod)s disks on one node",
}
CSI_PARAMS = ("volumes", "pvcs_per_pod", "size", "storage_class", "snapshot_class", "access_modes", "pod_image", "steps")
ATTACH_PARAMS = ("replicas", "node", "storage_class", "provisioner", "disk_type", "volumes_per_pod", "size",
                 "pod_image", "disk_limit", "statefulset", "prewarm", "create_storage_class")


class BenchProblem(StoragePerfError):
    """Bad input or a cluster the benchmark cannot run on; nothing was changed."""


def parameters(benchmark, params):
    keys = CSI_PARAMS if benchmark == "csi_lifecycle" else ATTACH_PARAMS
    # 0 and empty values stay: problems() must see volumes=0 to refuse it
    out = {k: params.get(k) for k in keys if params.get(k) is not None and params.get(k) != ""}
    if benchmark == "attach_stress":
        out.setdefault("storage_class", "alibabacloud-disk")
    return out


def make_plan(client, benchmark, params):
    """Validate, then read the cluster. Raises BenchProblem (with what to fix) or K8sError."""
    mod = BENCHMARKS[benchmark]
    bench_params = parameters(benchmark, params)
    found = mod.problems(bench_params)
    if found:
        raise BenchProblem("; ".join(found))
    plan = mod.Plan(bench_params)
    mod.preflight(client, plan)
    return plan


def plan_facts(benchmark, plan):
    if benchmark == "csi_lifecycle":
        return {"volumes": plan.volumes, "pods": len(plan.pods), "pvcs_per_pod": plan.per_pod, "size": plan.size,
                "storage_class": plan.storage_class, "provisioner": plan.provisioner,
                "attach_required": plan.attach_required, "snapshot_class": plan.snapshot_class,
                "snapshot_steps_skipped": plan.snapshot_skip, "steps": plan.steps}
    return {"replicas": plan.replicas, "replicas_requested": plan.replicas_requested, "node": plan.node_name,
            "volumes_per_pod": plan.volumes_per_pod, "storage_class": plan.storage_class,
            "provisioner": plan.provisioner, "attach_required": plan.attach_required,
            "disk_limit": plan.disk_limit, "disk_limit_source": plan.disk_limit_source,
            "attached_before": plan.attached_before, "instance_type": plan.instance_type, "size": plan.size,
            "prewarm": plan.prewarm}


def cluster_facts(client, name=None):
    """The cluster a result document was measured on; name is the inventory host of a fleet run."""
    version = client.server_version() or {}
    nodes, _ = client.list("v1", "Node")
    facts = {"server": client.host, "version": version.get("gitVersion", ""), "nodes": len(nodes)}
    if name:
        facts["name"] = name
    return facts


def title(benchmark, facts):
    try:
        return TITLES[benchmark] % facts
    except (KeyError, TypeError):
        return None


def preflight(client, benchmark, params, reports_dir, run_id=None, components=None, notes=None, check_mode=False):
    plan = make_plan(client, benchmark, params)
    facts = plan_facts(benchmark, plan)
    run_id = run_id or D.new_run_id(benchmark)
    problem = L.run_id_problem(run_id)
    if problem:
        raise BenchProblem(problem)
    messages = list(getattr(plan, "messages", []))
    if benchmark == "csi_lifecycle" and plan.snapshot_skip:
        messages.append("snapshot steps will be skipped: %s" % plan.snapshot_skip)
    rf = ResultFile(reports_dir, run_id)
    changed = False
    if not check_mode:
        rf.open(benchmark, parameters=facts, cluster=cluster_facts(client, params.get("cluster_name")), components=components,
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
    rf = ResultFile(reports_dir, run_id)
    if check_mode:
        return {"run_id": run_id, "variant": variant, "plan": facts, "status": None, "steps": [],
                "messages": list(getattr(plan, "messages", [])), "result_path": rf.path, "changed": True}
    rf.open(benchmark, parameters=facts, cluster=cluster_facts(client, params.get("cluster_name")), title=title(benchmark, facts))
    _, run = rf.begin_run(variant, settings)
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
            "messages": list(getattr(plan, "messages", [])), "cleanup": extra.get("cleanup"),
            "setup": extra.get("setup"), "result_path": rf.path, "changed": True}


def finalize(reports_dir, run_id, status=None, reason=None, check_mode=False):
    rf = ResultFile(reports_dir, run_id)
    rf.doc = D.load(rf.path, check=False)
    if status == "ok":
        status = None  # ok only when every step is: finalize() decides from the steps
    D.finalize(rf.doc, status=status, reason=reason)
    if not check_mode:
        rf.write(check=True)
    return {"run_id": run_id, "status": rf.doc["status"], "result_path": rf.path, "document": rf.doc,
            "changed": not check_mode}
