"""bench/sysbench.py: the option checks, the objects, and a repetition's steps from the sysbench Job's log."""
from __future__ import annotations

import json

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import job_run as J
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import sysbench as B

CLASSES = ["alicloud-disk-topology", "csi-pmem-lvm"]
REPORT = {"storageperf": {"test": "oltp_insert", "latency_min_ms": 0.2, "latency_avg_ms": 0.5, "latency_max_ms": 3.0,
                          "events": 1000, "time_total": 2.0, "percentile": 99, "threads": 4}}


def plan(**kw):
    return B.Plan(dict({"storage_classes": CLASSES, "tests": ["oltp_insert"], "threads": 4, "time": 2}, **kw))


def sysbench_json(tps=500.0):
    qps = {"total": tps, "reads": 0, "writes": tps, "other": 0}
    return json.dumps([{"time": 2, "threads": 4, "tps": tps, "qps": qps, "latency": 0.9, "errors": 0, "reconnects": 0}])


def ran(log, end="Complete"):
    return J.JobRun({"name": "job_sysbench", "status": "ok"}, end, "sysbench-abc", "node-1", log)


def test_problems_name_the_field_and_the_fix():
    text = " | ".join(B.problems({"storage_classes": [], "tests": ["oltp_insert", "oltp_insert"], "threads": 0,
                                  "percentile": 100, "database": "sb-test"}))
    assert "storage_classes must list distinct StorageClasses" in text
    assert "tests must list distinct sysbench tests" in text
    assert "threads must be > 0" in text and "percentile must be between 1 and 99" in text
    assert "database must be letters, digits and '_'" in text
    assert B.problems({"storage_classes": CLASSES}) == []
    assert any("pvc_size" in p for p in B.problems({"storage_classes": CLASSES, "pvc_size": "ten gigs"}))
    assert plan().timeout == 1 * (2 + 0) + 600 + 900


def test_each_test_between_its_markers_is_a_step_and_one_that_failed_says_why():
    log = ("### storageperf-begin prepare ###\nCreating table 'sbtest1'...\n### storageperf-end prepare 0 ###\n"
           "### storageperf-begin oltp_point_select ###\nFATAL: connection lost\n"
           "### storageperf-end oltp_point_select 1 ###\n"
           "### storageperf-begin oltp_insert ###\nsysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n"
           + sysbench_json() + "\n" + json.dumps(REPORT) + "\n### storageperf-end oltp_insert 0 ###\n")
    p = plan(tests=["oltp_point_select", "oltp_insert", "oltp_delete"])
    assert B.sections(log, p.tests)["oltp_point_select"] == ("\nFATAL: connection lost\n", "1")
    version, steps = B.steps_of(p, ran(log, end="Failed"))
    assert version == "1.0.20"
    by_name = {s["name"]: s for s in steps}
    assert by_name["oltp_insert"]["status"] == "ok" and by_name["oltp_insert"]["metrics"]["tps"] == 500.0
    assert by_name["oltp_point_select"]["status"] == "failed"
    assert by_name["oltp_point_select"]["reason"] == "sysbench oltp_point_select exited with 1: FATAL: connection lost"
    assert by_name["oltp_delete"]["status"] == "failed"
    assert by_name["oltp_delete"]["reason"].startswith("sysbench never ran oltp_delete (the Job failed")


def test_the_password_comes_from_the_environment_or_is_random_and_only_the_secret_holds_it(monkeypatch):
    monkeypatch.setenv(B.PASSWORD_ENV, "given-one")
    assert B.password() == "given-one"
    monkeypatch.delenv(B.PASSWORD_ENV)
    first, second = B.password(), B.password()
    assert len(first) == 24 and first.isalnum() and first != second
    service, pod = B.database(plan(), "ns", {"l": "v"})
    job = B.sysbench_job(plan(), "ns", {"l": "v"}, "node-1")
    for body in (pod, job):
        assert "given-one" not in json.dumps(body) and first not in json.dumps(body)
    env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MYSQL_PWD"]["valueFrom"] == {"secretKeyRef": {"name": "mysql-pass", "key": "password"}}
    assert env["DB_HOST"]["value"] == "127.0.0.1" and env["TESTS"]["value"] == "oltp_insert"
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "node-1"}
    assert B.sysbench_job(plan(host_network=False), "ns", {}, "n")["spec"]["template"]["spec"]["containers"][0][
        "env"][0]["value"] == "mysql.ns.svc"
