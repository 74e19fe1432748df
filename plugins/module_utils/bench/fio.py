# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seed 001's fio benchmark on the bench engine: fio on a PVC of each StorageClass, side by side.

A variant is a StorageClass (its name is the variant's): the report compares classes, and each class is measured
on its own volume, in its own owner namespace (the engine's variant and repetition). One repetition is one Job
(job_run.py): the PVC and a Job whose pod runs every fio job one after the other (stonewall) with JSON output to a
file on the volume, then prints the file; the pod log is parsed (fio_output.py) into one step per fio job, with IOPS,
bandwidth and completion latency. A class that could not be measured records each fio job as failed, with why.

The first variant is the baseline the report's ratios are computed against: the role measures bench_fio_baseline
first, and `baseline` names it in the document's notes.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import fio_output as F
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import job_run as J
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import storage_classes as SC
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.options import complete
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import StepError
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

BENCHMARK = "fio"
SHARED_NAMESPACE = False  # every class and repetition in its own namespace, deleted after it (cleanup)
SEED_JOBS = [
    {"name": "randwrite_4k", "rw": "randwrite", "bs": "4k", "numjobs": 50, "iodepth": 1},
    {"name": "randread_4k", "rw": "randread", "bs": "4k", "numjobs": 50, "iodepth": 1},
    {"name": "latency_randwrite_4k", "rw": "randwrite", "bs": "4k", "numjobs": 1, "iodepth": 1},
]
# bench_plan's fio suboptions: the one place their defaults are written (storage_classes has none: problems()
# refuses it empty with what to give)
OPTIONS = {
    **SC.CLASS_OPTIONS,
    "jobs": dict(type="list", elements="dict", default=SEED_JOBS),
    "global": dict(type="dict", default={"ioengine": "psync", "direct": 1, "thread": True, "group_reporting": True,
                                         "time_based": True}),
    "size": dict(type="str", default="10G"),
    "runtime": dict(type="int", default=180),
    "image": dict(type="str", default="registry.cn-hangzhou.aliyuncs.com/eric-dev/sysbench:fio"),
    "mount_path": dict(type="str", default="/data"),
}
# the maxima of its options (docs/limits.md), checked by bench_plan
LIMITS = {**SC.CLASS_LIMITS, "jobs": L.FIO_JOBS, "size": L.FIO_SIZE, "runtime": L.TIMEOUT}
# the help of each option: bench_plan's docs are generated from DOCS, OPTIONS and LIMITS (tests/support/bench_yaml.py)
DOC_TITLE = "fio"
DOCS = {
    **SC.CLASS_DOCS,
    "jobs": [
        "fio jobs, run one after the other (each its own group); each a dict of fio options with a C(name).",
        "C(gtod_reduce) is refused (it turns off the latency the report needs).",
    ],
    "global": [
        "fio options of every job (V(true) = a flag such as C(thread)).",
    ],
    "size": [
        "Size of the test file (fio C(size)), shared by the threads of a job.",
    ],
    "runtime": [
        "Seconds each job runs (fio C(runtime), with C(time_based)).",
    ],
    "image": [
        "Image with fio and a shell (the seed's image by default).",
    ],
    "mount_path": [
        "Where the volume is mounted in the pod; fio's file and JSON output go there.",
    ],
    "timeout": [
        "Seconds to wait for one class's Job; 0 = runtime x number of jobs + 600.",
    ],
    "cleanup": [
        "After each class, delete its namespace (the PVC and the Job) and wait until it is gone.",
    ],
}
READ_BY_PREFLIGHT = ("classes",)
SWEEP_PARAMETER = None  # fio has no sweep
SWEEP_TITLE = None
NAME = "fio"  # the PVC and the Job (one of each per owner namespace)
OUTPUT = "storageperf-fio.json"
DATA_FILE = "storageperf-fio.dat"
EXIT_LINE = re.compile(r"^storageperf: fio exit code (\d+)$")
# fio writes its JSON report to a file on the volume (errors can be mixed into stdout), then the file is printed:
# the pod log holds fio's own messages, the exit line and the document
SCRIPT = ('out="%s/' + OUTPUT + '"; fio --output-format=json --output="$out" "$@"; rc=$?; '
          'echo "storageperf: fio exit code $rc"; cat "$out"; exit $rc')
_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


TITLE = SC.titled("fio")


def _flags(options: Mapping[str, Any]) -> list[str]:
    """fio's command-line options of one section: `true` is a flag (thread, time_based), false and null are left out;
    in key order, as fio reads them whatever the order."""
    out: list[str] = []
    for key, value in sorted(options.items(), key=lambda kv: kv[0].lower()):
        if value is True:
            out.append("--%s" % key)
        elif value is not False and value is not None:
            out.append("--%s=%s" % (key, value))
    return out


def fio_args(plan: Plan) -> list[str]:
    """fio's arguments: the global options, then one section per job; each job waits for the previous one
    (stonewall) and reports as its own group."""
    args = _flags(dict(plan.global_options, directory=plan.mount_path, filename=DATA_FILE, size=plan.size,
                       runtime=plan.runtime))
    for job in plan.jobs:
        args.append("--name=%s" % job["name"])
        args += _flags({k: v for k, v in job.items() if k != "name"})
        if "stonewall" not in job and "new_group" not in job:
            args.append("--stonewall")
    return args


class Plan:
    def __init__(self, params: Mapping[str, Any] | None) -> None:
        params = complete(OPTIONS, params)
        self.storage_classes = list(params["storage_classes"])
        self.baseline = params["baseline"] or (self.storage_classes[0] if self.storage_classes else None)
        self.jobs = [dict(j) for j in params["jobs"]]
        self.global_options = dict(params["global"])
        self.size = params["size"]
        self.runtime = int(params["runtime"])
        self.pvc_size = params["pvc_size"]
        self.image = params["image"]
        self.mount_path = params["mount_path"]
        # 0: every job's runtime plus 10 minutes for the volume, the image and fio's layout of its file
        self.timeout = int(params["timeout"]) or self.runtime * len(self.jobs) + 600
        # read from the cluster by preflight(): {class: {provisioner, parameters}}
        self.classes: dict[str, dict[str, Any]] = {}

    @property
    def command(self) -> str:
        return "fio " + " ".join(fio_args(self))


def problems(params: Mapping[str, Any] | None) -> list[str]:
    """Bad options, each naming the field and the fix (nothing is created when there are any)."""
    params = complete(OPTIONS, params)
    out = SC.problems(params)
    jobs = params["jobs"]
    names = [j.get("name") for j in jobs]
    if not jobs or None in names or len(set(names)) != len(names) \
            or any(not _JOB_NAME.match(str(n)) for n in names if n is not None):
        out.append("jobs must be a non-empty list of fio jobs, each with a unique name of letters, digits, '_', '.' "
                   "and '-' (for example {name: randwrite_4k, rw: randwrite, bs: 4k})")
    if any("gtod_reduce" in section for section in list(jobs) + [params["global"]]):
        out.append("gtod_reduce must not be set in jobs or global: it turns off the completion latency the report "
                   "needs")
    if int(params["runtime"]) <= 0:
        out.append("runtime must be > 0 seconds (the seed runs 180)")
    if int(params["timeout"]) < 0:
        out.append("timeout must be 0 (runtime x jobs + 600) or a number of seconds")
    return out


def facts(plan: Plan) -> dict[str, Any]:
    """The plan as the result document's parameters and the module's `plan`."""
    return {"storage_classes": plan.storage_classes, "baseline": plan.baseline, "jobs": plan.jobs,
            "global": plan.global_options, "size": plan.size, "runtime": plan.runtime, "pvc_size": plan.pvc_size,
            "image": plan.image, "command": plan.command, "timeout": plan.timeout}


sweep_point = SC.sweep_point
cleans_up = SC.cleans_up


def plan_messages(plan: Plan, preflight: bool = False) -> list[str]:
    if preflight:
        return [SC.baseline_note(plan.baseline)]  # type: ignore[arg-type]  # problems() refused no classes
    return []


def preflight(client: Client, plan: Plan) -> Plan:
    """Read every StorageClass (provisioner and parameters go into each variant's settings)."""
    plan.classes = SC.read(client, plan.storage_classes)
    return plan


def _job(ctx: Context, plan: Plan, labels: Mapping[str, str]) -> dict[str, Any]:
    container = {"name": "fio", "image": plan.image, "command": ["sh", "-c", SCRIPT % plan.mount_path, "fio"],
                 "args": fio_args(plan)}
    return J.job(NAME, ctx.namespace, labels, container, NAME, plan.mount_path)


def _failed_steps(plan: Plan, reason: str) -> list[dict[str, Any]]:
    return [{"name": F.step_name(j["name"]), "label": j["name"], "status": "failed", "reason": reason}
            for j in plan.jobs]


def steps_of(plan: Plan, ran: J.JobRun) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The repetition's steps from what the Job printed: one per fio job, or each failed with why."""
    try:
        summary = F.parse(ran.log)
    except F.FioError as e:
        return None, _failed_steps(plan, "%s; %s.%s" % (ran.failure() or "fio ran", e, ran.tail()))
    steps = summary["steps"]
    failure = ran.failure()
    if failure:
        reason = "fio exited with an error: %s" % ("; ".join(summary["errors"]) or failure)
        for s in steps:
            s["status"], s["reason"] = "failed", s.get("reason") or reason
            s["errors"] = [{"object": NAME, "reason": reason}]
    return summary, steps


def run(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    """Measure the variant's StorageClass: the Job to its end, its log parsed into one step per fio job."""
    cls, labels = SC.measured(ctx, plan)
    pvc = M.pvc(NAME, ctx.namespace, cls, plan.pvc_size, labels)
    try:
        ran = J.run_job(ctx, NAME, pvc, _job(ctx, plan, labels), plan.timeout, "fio on %s" % cls)
    except K8sUnreachable:
        raise
    except (StepError, K8sError) as e:  # nothing ran: every fio job of this class is failed, with why
        steps = _failed_steps(plan, "fio on %s could not run: %s" % (cls, getattr(e, "msg", e)))
        for step in steps:
            ctx.record(step)
        return steps
    ctx.info["job"] = ran.info()
    ctx.settings["node"] = ran.node or ""
    summary, steps = steps_of(plan, ran)
    if summary is not None:
        noise = [line for line in summary["noise"] if not EXIT_LINE.match(line.strip())]
        ctx.variant_facts.update(fio_version=summary["fio_version"], noise=noise[-20:])
        if summary["fio_version"]:
            ctx.components["fio"] = summary["fio_version"]
        if noise:
            ctx.notes.append("fio printed other lines on %s; see the pod log." % cls)
    for step in steps:
        ctx.record(step)
    return steps
