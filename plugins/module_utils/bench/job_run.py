# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Job on a PVC run to its end, then its pod's log read: how the fio and sysbench benchmarks run their tool.

run_job() is one engine step: it creates the PVC and the Job with one request each (in that order, so the pod
never waits for a claim that is not there yet), waits by watch until the Job has its Complete or Failed
condition, then reads the Job and the log of its pod. The step itself is not a measurement of the storage (the tool
measures that and prints it); its result goes to the run's `job` beside the steps parsed from the log.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options, Step, Submission, Watched
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import run_step
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

ENDS = ("Complete", "Failed")
# the label the Job controller puts on its pods
JOB_NAME_LABEL = "job-name"
# what of a log a failure reason quotes (the end of it: the tool's last words)
LOG_TAIL = 600


def job_end(obj: Mapping[str, Any] | None) -> str | None:
    """'Complete' or 'Failed' once the Job has that condition, else None."""
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") in ENDS and c.get("status") == "True":
            return c["type"]
    return None


def job_ended(job_key: str) -> Callable[[View], str | None]:
    """The terminal-state predicate of a Job (conditions.py's shape): None once it has ended either way."""
    def check(view: View) -> str | None:
        job = view.get(K.JOB.name, job_key)
        if job is None:
            return "Job not seen"
        return None if job_end(job) else "Job running (%s active)" % ((job.get("status") or {}).get("active") or 0)
    return check


def job(name: str, ns: str, labels: Mapping[str, str], container: Mapping[str, Any], volume_claim: str,
        mount_path: str) -> dict[str, Any]:
    """A Job of one pod that runs `container` (a container spec without volumeMounts) once, never retried, with the
    claim mounted at mount_path; the run's labels go on the pod too, so the cleanup by run id finds it."""
    container = dict(container, volumeMounts=[{"name": "data", "mountPath": mount_path}])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"restartPolicy": "Never", "containers": [container],
                         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": volume_claim}}]}}}}


class JobRun:
    """What run_job() found: the step result, how the Job ended (Complete, Failed or None), its pod and the log."""

    def __init__(self, step: dict[str, Any], end: str | None, pod: str | None, node: str | None, log: str) -> None:
        self.step, self.end, self.pod, self.node, self.log = step, end, pod, node, log

    def failure(self) -> str | None:
        """Why the tool's output cannot be trusted whole (the Job did not complete), or None."""
        if self.end == "Complete":
            return None
        if self.end == "Failed":
            return "the Job failed (its pod ended with an error)"
        return self.step.get("reason") or "the Job did not end (step %s)" % self.step.get("status")

    def tail(self) -> str:
        text = (self.log or "").strip()
        return (" Pod log: " + text[-LOG_TAIL:]) if text else ""

    def info(self) -> dict[str, Any]:
        """The run's `job`: the Job step's own figures (time to its end, requests) and where it ran."""
        keys = ("name", "status", "reason", "wall_s", "api_requests")
        return dict({k: self.step.get(k) for k in keys if self.step.get(k) is not None}, end=self.end, pod=self.pod,
                    node=self.node)


def step_options(options: Options, timeout: float) -> Options:
    """The engine options of a step of one object that may take `timeout` seconds (a tool's run, a database's
    start), whatever the run's own step timeout."""
    return Options(concurrency=1, timeout=timeout, give_up_after_warnings=options.give_up_after_warnings,
                   progress=options.progress, progress_interval=options.progress_interval,
                   keep_objects=options.keep_objects, disturbance=options.disturbance)


def run_job(ctx: Context, name: str, pvc: dict[str, Any] | None, body: dict[str, Any], timeout: float, label: str) -> JobRun:
    """Create pvc (None: the Job mounts no claim of its own) then the Job body in ctx's namespace, wait up to timeout
    seconds for its end, read the log."""
    ns = ctx.namespace
    key = ctx.key(name)
    subjects = [(K.JOB.name, key)] + ([(K.PVC.name, ctx.key(pvc["metadata"]["name"]))] if pvc else [])

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        def create(client: Client) -> None:
            if pvc:
                client.create(pvc)
            client.create(body)
        return [Item(name, job_ended(key), subjects=subjects)], [Submission([name], create)]
    step = Step("job_" + name, label, "job", [Watched(K.JOB, ns), Watched(K.EVENT, ns)], make, "Job Complete or Failed")
    result = run_step(ctx.client, step, step_options(ctx.options, timeout))
    found = ctx.client.get(K.JOB.api_version, K.JOB.name, name, namespace=ns, missing_ok=True)
    pods, _ = ctx.client.list("v1", "Pod", namespace=ns, label_selector="%s=%s" % (JOB_NAME_LABEL, name))
    # the pod that ran to its end (a Job of backoffLimit 0 has one); else the newest, for whatever it printed
    pods.sort(key=lambda found_pod: (((found_pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")),
                                     found_pod["metadata"].get("creationTimestamp") or ""))
    pod = pods[-1] if pods else None
    log = ""
    if pod is not None:
        try:
            log = ctx.client.pod_log(pod["metadata"]["name"], ns)
        except K8sError as e:  # a pod that never started has no log: the failure says why, not this
            log = "(no log: %s)" % e.msg
    return JobRun(result, job_end(found), pod["metadata"]["name"] if pod else None,
                  ((pod or {}).get("spec") or {}).get("nodeName"), log)
