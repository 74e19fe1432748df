# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seed 001's sysbench benchmark on the bench engine: MySQL/MariaDB on a PVC of each StorageClass, sysbench next to it.

A variant is a StorageClass (its name is the variant's), measured in its own owner namespace. One repetition:
  1. the scripts (ConfigMap) and the root password (Secret: from STORAGEPERF_SYSBENCH_PASSWORD in the module's
     environment, else random; never a module argument, never in a log or the document);
  2. the database: a PVC of the class, a headless Service and a pod of db_image with its data on the PVC, awaited by
     watch until it runs (an engine step);
  3. sysbench: a Job on the database's node (job_run.py) that waits until the database accepts connections, prepares
     the tables and runs each test, every test's output between markers in the one pod log; each test's section is
     parsed (sysbench_output.py) into a step;
  4. the database is stopped and awaited gone, also after a failure: two hostNetwork databases on one node would both
     want the port.
"""
from __future__ import annotations

import os
import re
import secrets
import string
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import job_run as J
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import sysbench_output as S
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Step, StepError, Submission, Watched
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import run_step
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import storage_classes as SC
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.options import complete
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.sysbench_scripts import CONFIGMAP, RUN_SH
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.conditions import Predicate
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

BENCHMARK = "sysbench"
SHARED_NAMESPACE = False  # every class and repetition in its own namespace, deleted after it (cleanup)
PASSWORD_ENV = "STORAGEPERF_SYSBENCH_PASSWORD"
# the OLTP tests the wrapper runs on prepared tables (bulk_insert makes its own)
TEST_CHOICES = ("oltp_insert", "oltp_point_select", "oltp_read_write", "oltp_read_only", "oltp_write_only",
                "oltp_update_index", "oltp_update_non_index", "oltp_delete", "select_random_points",
                "select_random_ranges")
# bench_plan's sysbench suboptions: the one place their defaults are written
OPTIONS = {
    **SC.CLASS_OPTIONS,
    "tests": dict(type="list", elements="str", choices=list(TEST_CHOICES), default=["oltp_point_select", "oltp_insert"]),
    "tables": dict(type="int", default=32),
    "table_size": dict(type="int", default=10000),
    "threads": dict(type="int", default=150),
    "time": dict(type="int", default=100),
    "warmup_time": dict(type="int", default=0),
    "percentile": dict(type="int", default=99),
    "db_image": dict(type="str", default="mysql:5.6"),
    "db_args": dict(type="list", elements="str", default=[]),
    "host_network": dict(type="bool", default=True),
    "db_port": dict(type="int", default=3306),
    "database": dict(type="str", default="sbtest"),
    "mysql_user": dict(type="str", default="root"),
    "image": dict(type="str", default="severalnines/sysbench"),
    "db_timeout": dict(type="int", default=600),
}
# the maxima of its options (docs/limits.md), checked by bench_plan
LIMITS = {**SC.CLASS_LIMITS, "tests": L.SYSBENCH_TESTS, "tables": L.SYSBENCH_TABLES,
          "table_size": L.SYSBENCH_TABLE_SIZE, "threads": L.SYSBENCH_THREADS, "time": L.TIMEOUT,
          "warmup_time": L.TIMEOUT, "percentile": L.PERCENTILE, "db_port": L.PORT, "db_timeout": L.TIMEOUT}
# the help of each option: bench_plan's docs are generated from DOCS, OPTIONS and LIMITS (tests/support/bench_yaml.py)
DOC_TITLE = "sysbench"
DOCS = {
    **SC.CLASS_DOCS,
    "tests": [
        "sysbench OLTP tests to run, in this order, on the same tables.",
    ],
    "tables": [
        "Number of tables (C(--tables)).",
    ],
    "table_size": [
        "Rows per table (C(--table-size)).",
    ],
    "threads": [
        "Client threads (C(--threads)).",
    ],
    "time": [
        "Seconds each test runs (C(--time)).",
    ],
    "warmup_time": [
        "Seconds each test runs first with its figures thrown away (sysbench 1.0 has no C(--warmup-time)).",
    ],
    "percentile": [
        "The latency percentile sysbench reports itself (C(--percentile)); the histogram gives p50/p90/p99 anyway.",
    ],
    "db_image": [
        "MySQL or MariaDB image (official image conventions - C(MYSQL_ROOT_PASSWORD), C(MYSQL_DATABASE), data in "
        "C(/var/lib/mysql)).",
    ],
    "db_args": [
        "Extra mysqld options, for example C([\"--innodb-buffer-pool-size=1G\"]).",
    ],
    "host_network": [
        "Run the database and sysbench with hostNetwork on the same node (the seed's setup; sysbench uses "
        "127.0.0.1).",
    ],
    "db_port": [
        "Port the database listens on (3306 in the official images).",
    ],
    "database": [
        "Database sysbench uses (created by the image from C(MYSQL_DATABASE)).",
    ],
    "mysql_user": [
        "User sysbench connects as.",
    ],
    "image": [
        "Image with sysbench 1.0.x and a shell.",
    ],
    "db_timeout": [
        "Seconds to wait for the database pod to run and accept connections.",
    ],
    "timeout": [
        "Seconds to wait for one class's sysbench Job; 0 = tests x (time + warmup) + db_timeout + 900.",
    ],
    "cleanup": [
        "After each class, delete its namespace (database, PVC, Job) and wait until it is gone.",
    ],
}
READ_BY_PREFLIGHT = ("classes",)
SWEEP_PARAMETER = None  # sysbench has no sweep
SWEEP_TITLE = None
DB = "mysql"  # the database's PVC, Service and pod (one of each per owner namespace)
JOB = "sysbench"
SCRIPTS = "sysbench-scripts"
SECRET = "mysql-pass"
_DATABASE = re.compile(r"^[A-Za-z0-9_]+$")


TITLE = SC.titled("sysbench")


class Plan:
    # set from the options by name in __init__
    tables: int
    table_size: int
    threads: int
    time: int
    warmup_time: int
    percentile: int
    db_port: int
    db_timeout: int

    def __init__(self, params: Mapping[str, Any] | None) -> None:
        params = complete(OPTIONS, params)
        self.storage_classes = list(params["storage_classes"])
        self.baseline = params["baseline"] or (self.storage_classes[0] if self.storage_classes else None)
        self.tests = list(params["tests"])
        for name in ("tables", "table_size", "threads", "time", "warmup_time", "percentile", "db_port", "db_timeout"):
            setattr(self, name, int(params[name]))
        self.db_image = params["db_image"]
        self.db_args = list(params["db_args"])
        self.host_network = bool(params["host_network"])
        self.database = params["database"]
        self.mysql_user = params["mysql_user"]
        self.pvc_size = params["pvc_size"]
        self.image = params["image"]
        # 0: every test's time and warm-up, the database's start, and 15 minutes for preparing the tables
        self.timeout = int(params["timeout"]) or len(self.tests) * (self.time + self.warmup_time) + self.db_timeout + 900
        self.classes: dict[str, dict[str, Any]] = {}  # read by preflight(): {class: {provisioner, parameters}}


def problems(params: Mapping[str, Any] | None) -> list[str]:
    """Bad options, each naming the field and the fix (nothing is created when there are any)."""
    params = complete(OPTIONS, params)
    out = SC.problems(params)
    if not params["tests"] or len(set(params["tests"])) != len(params["tests"]):
        out.append("tests must list distinct sysbench tests, at least one (the seed runs oltp_point_select, oltp_insert)")
    for name in ("tables", "table_size", "threads", "time"):
        if int(params[name]) <= 0:
            out.append("%s must be > 0" % name)
    if not 0 < int(params["percentile"]) < 100:
        out.append("percentile must be between 1 and 99")
    if not _DATABASE.match(params["database"] or ""):
        out.append("database must be letters, digits and '_' (the seed uses sbtest)")
    return out


def facts(plan: Plan) -> dict[str, Any]:
    """The plan as the result document's parameters and the module's `plan`."""
    return {"storage_classes": plan.storage_classes, "baseline": plan.baseline, "tests": plan.tests,
            "tables": plan.tables, "table_size": plan.table_size, "threads": plan.threads, "time": plan.time,
            "warmup_time": plan.warmup_time, "percentile": plan.percentile, "db_image": plan.db_image,
            "db_args": plan.db_args, "host_network": plan.host_network, "image": plan.image,
            "pvc_size": plan.pvc_size, "timeout": plan.timeout}


sweep_point = SC.sweep_point
cleans_up = SC.cleans_up


def plan_messages(plan: Plan, preflight: bool = False) -> list[str]:
    if preflight:
        return [SC.baseline_note(plan.baseline),  # type: ignore[arg-type]  # problems() refused no classes
                "tps of oltp_insert is inserts per second, the seed's figure; latency is per transaction."]
    return []


def preflight(client: Client, plan: Plan) -> Plan:
    """Read every StorageClass (provisioner and parameters go into each variant's settings)."""
    plan.classes = SC.read(client, plan.storage_classes)
    return plan


def password() -> str:
    """The root password: the one the role put in the module's environment, else a random one for this class."""
    return os.environ.get(PASSWORD_ENV) or "".join(secrets.choice(string.ascii_letters + string.digits)
                                                   for _ in range(24))


# the objects -------------------------------------------------------------------------------------------------------
def _secret_env(name: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": SECRET, "key": "password"}}}


def database(plan: Plan, ns: str, labels: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Service, pod): the database with its data on the DB claim, the root password from the Secret."""
    pod_labels = dict(labels, app=DB)
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": DB, "namespace": ns, "labels": dict(labels)},
               "spec": {"clusterIP": "None", "selector": {"app": DB}, "ports": [{"name": "mysql", "port": plan.db_port}]}}
    container = {"name": "mysql", "image": plan.db_image, "args": list(plan.db_args),
                 "env": [_secret_env("MYSQL_ROOT_PASSWORD"), {"name": "MYSQL_DATABASE", "value": plan.database}],
                 "ports": [{"name": "mysql", "containerPort": plan.db_port}],
                 "readinessProbe": {"tcpSocket": {"port": plan.db_port}, "periodSeconds": 2},
                 "volumeMounts": [{"name": "mysql", "mountPath": "/var/lib/mysql"}]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": DB, "namespace": ns, "labels": pod_labels},
           "spec": {"hostNetwork": plan.host_network, "containers": [container],
                    "volumes": [{"name": "mysql", "persistentVolumeClaim": {"claimName": DB}}]}}
    return service, pod


def sysbench_job(plan: Plan, ns: str, labels: Mapping[str, str], node: str) -> dict[str, Any]:
    host = "127.0.0.1" if plan.host_network else "%s.%s.svc" % (DB, ns)
    env = [{"name": k, "value": str(v)} for k, v in (
        ("DB_HOST", host), ("DB_PORT", plan.db_port), ("DB_USER", plan.mysql_user), ("DB_NAME", plan.database),
        ("TABLES", plan.tables), ("TABLE_SIZE", plan.table_size), ("THREADS", plan.threads), ("TIME", plan.time),
        ("WARMUP", plan.warmup_time), ("PERCENTILE", plan.percentile), ("TESTS", " ".join(plan.tests)),
        ("WAIT", plan.db_timeout))] + [_secret_env("MYSQL_PWD")]
    container = {"name": "sysbench", "image": plan.image, "command": ["sh", "-c", RUN_SH], "env": env,
                 "volumeMounts": [{"name": "scripts", "mountPath": "/etc/storageperf"}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": JOB, "namespace": ns, "labels": dict(labels)},
            "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": dict(labels)}, "spec": {
                "restartPolicy": "Never", "hostNetwork": plan.host_network,
                "nodeSelector": {"kubernetes.io/hostname": node}, "containers": [container],
                "volumes": [{"name": "scripts", "configMap": {"name": SCRIPTS}}]}}}}


# the steps ---------------------------------------------------------------------------------------------------------
def _pod_running(key: str) -> Predicate:
    def check(view: View) -> str | None:
        pod = view.get(K.POD.name, key)
        if pod is None:
            return "pod not seen"
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        return None if phase == "Running" else "pod %s" % phase
    return check


def _pod_gone(key: str) -> Predicate:
    return lambda view: None if view.get(K.POD.name, key) is None else "pod still there"


def _db_step(ctx: Context, name: str, label: str, check: Callable[[str], Predicate], call: Callable[[Client], object],
             terminal: str) -> Step:
    ns = ctx.namespace
    key = ctx.key(DB)

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        return [Item(DB, check(key), subjects=[(K.POD.name, key), (K.PVC.name, key)])], [Submission([DB], call)]
    return Step(name, label, "pod", [Watched(K.POD, ns), Watched(K.EVENT, ns)], make, terminal)


def start_database(ctx: Context, plan: Plan, labels: Mapping[str, str], cls: str) -> tuple[dict[str, Any], str | None]:
    pvc = M.pvc(DB, ctx.namespace, cls, plan.pvc_size, labels)
    service, pod = database(plan, ctx.namespace, labels)

    def create(client: Client) -> None:
        for body in (pvc, service, pod):
            client.create(body)
    step = _db_step(ctx, "database_" + DB, "database on %s" % cls, _pod_running, create, "pod Running")
    result = run_step(ctx.client, step, J.step_options(ctx.options, plan.db_timeout))
    found = ctx.client.get("v1", "Pod", DB, namespace=ctx.namespace, missing_ok=True) or {}
    return result, (found.get("spec") or {}).get("nodeName")


def stop_database(ctx: Context, plan: Plan) -> dict[str, Any]:
    """Delete the database pod and wait until it is gone (its port is free for the next class's)."""
    step = _db_step(ctx, "database_stop", "stop the database", _pod_gone,
                    lambda client: client.delete("v1", "Pod", DB, namespace=ctx.namespace), "pod gone")
    return run_step(ctx.client, step, J.step_options(ctx.options, plan.db_timeout))


def sections(log: str, tests: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """{test: (output, exit code or None when the test never ended)} of the tests whose begin marker is in the log."""
    out: dict[str, tuple[str, str | None]] = {}
    for test in tests:
        begin, end = "### storageperf-begin %s ###" % test, "### storageperf-end %s " % test
        if begin not in log:
            continue
        rest = log.split(begin, 1)[1]
        if end in rest:
            text, tail = rest.split(end, 1)
            out[test] = (text, tail.split(" ", 1)[0])
        else:
            out[test] = (rest, None)
    return out


def steps_of(plan: Plan, ran: J.JobRun) -> tuple[str | None, list[dict[str, Any]]]:
    """(sysbench version, the repetition's steps): one per test, each failed with why when it did not end well."""
    found = sections(ran.log or "", plan.tests)
    version: str | None = None
    steps: list[dict[str, Any]] = []
    for test in plan.tests:
        text, code = found.get(test, (None, None))
        if code == "0":
            try:
                summary = S.parse(text, name=test)
                version = version or summary["sysbench_version"]
                steps.append(summary["step"])
                continue
            except S.SysbenchError as e:
                reason = "sysbench %s printed no result: %s" % (test, e)
        elif text is not None:
            code = code or "no end (the Job ended first)"
            reason = "sysbench %s exited with %s: %s" % (test, code, text.strip()[-500:])
        else:
            reason = "sysbench never ran %s (%s).%s" % (test, ran.failure() or "the Job ended", ran.tail())
        steps.append(_failed_step(test, reason))
    return version, steps


def _failed_step(test: str, reason: str) -> dict[str, Any]:
    return {"name": S.step_name(test), "label": test.replace("_", " "), "status": "failed", "reason": reason}


def _failed(plan: Plan, reason: str) -> list[dict[str, Any]]:
    return [_failed_step(t, reason) for t in plan.tests]


def run(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    """Measure the variant's StorageClass: the database, then sysbench's tests, each test's section of the log a step."""
    cls, labels = SC.measured(ctx, plan)
    ctx.settings["image"] = plan.db_image
    ns = ctx.namespace
    try:
        ctx.client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": SCRIPTS, "namespace": ns, "labels": dict(labels)}, "data": dict(CONFIGMAP)})
        ctx.client.create({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {
            "name": SECRET, "namespace": ns, "labels": dict(labels)}, "stringData": {"password": password()}})
        try:
            db, node = start_database(ctx, plan, labels, cls)
            ctx.info["database"] = {k: db.get(k) for k in ("status", "reason", "wall_s") if db.get(k) is not None}
            if db["status"] != "ok" or not node:
                steps = _failed(plan, "the database did not run: %s" % (db.get("reason") or "no node"))
            else:
                ran = J.run_job(ctx, JOB, None, sysbench_job(plan, ns, labels, node), plan.timeout,
                                "sysbench on %s" % cls)
                ctx.info["job"] = ran.info()
                ctx.settings["node"] = ran.node or node
                version, steps = steps_of(plan, ran)
                if version:
                    ctx.components["sysbench"] = version
        finally:
            stop_database(ctx, plan)
    except K8sUnreachable:
        raise
    except (StepError, K8sError) as e:  # nothing measured: every test of this class is failed, with why
        steps = _failed(plan, "sysbench on %s could not run: %s" % (cls, getattr(e, "msg", e)))
    for step in steps:
        ctx.record(step)
    return steps
