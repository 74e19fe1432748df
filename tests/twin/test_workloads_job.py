"""The twin's Job controller with the kubelet's simulated containers (their exit codes and logs)."""
from __future__ import annotations

import pytest
import yaml

from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("job") / "twin", nodes=2, time_scale=0.005) as t:
        yield t


def job(name: str, script: str, **spec) -> str:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": dict(spec, template={"spec": {"restartPolicy": "Never", "containers": [
                {"name": "work", "image": "busybox:1.36", "command": ["sh", "-c", script]}]}})}
    return yaml.safe_dump(body)


def test_job_runs_pods_until_completions_succeed(twin):
    from kubernetes import client, watch

    core = client.CoreV1Api(twin.api_client())
    rv = core.list_namespaced_pod("default", label_selector="job-name=ok").metadata.resource_version
    twin.kubectl("apply", "-f", "-", input=job("ok", "echo done; exit 0", completions=5, parallelism=2))
    twin.kubectl("wait", "--for=condition=complete", "job/ok", "--timeout=120s")

    j = twin.kubectl_json("get", "job", "ok")
    st = j["status"]
    assert st["succeeded"] == 5 and "failed" not in st and "active" not in st
    assert st["startTime"] and st["completionTime"]
    conds = {c["type"]: c["status"] for c in st["conditions"]}
    assert conds == {"SuccessCriteriaMet": "True", "Complete": "True"}
    pods = twin.kubectl_json("get", "pods", "-l", "job-name=ok")["items"]
    assert len(pods) == 5
    for p in pods:
        assert p["status"]["phase"] == "Succeeded"
        term = p["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (term["exitCode"], term["reason"]) == (0, "Completed")
        assert p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == j["metadata"]["uid"]
        assert not p["metadata"].get("finalizers")  # the tracking finalizer goes once the pod is counted
    assert twin.kubectl("logs", pods[0]["metadata"]["name"]).stdout == "done\n"

    # parallelism 2: never more than 2 pods running at once (from the pods' watch events)
    running: set[str] = set()
    done: set[str] = set()
    peak = 0
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", label_selector="job-name=ok",
                       resource_version=rv, timeout_seconds=30):
        pod = ev["object"]
        if ev["type"] != "DELETED" and pod.status.phase not in ("Succeeded", "Failed"):
            running.add(pod.metadata.name)
        else:
            running.discard(pod.metadata.name)
            done.add(pod.metadata.name)
        peak = max(peak, len(running))
        if len(done) == 5:
            w.stop()
    assert peak == 2


def test_job_fails_after_backoff_limit_with_the_containers_exit_code(twin):
    twin.kubectl("apply", "-f", "-", input=job("bad", "echo broken; exit 3", backoffLimit=2))
    twin.kubectl("wait", "--for=condition=failed", "job/bad", "--timeout=120s")

    st = twin.kubectl_json("get", "job", "bad")["status"]
    assert st["failed"] == 3 and "succeeded" not in st
    failed = next(c for c in st["conditions"] if c["type"] == "Failed")
    assert (failed["status"], failed["reason"]) == ("True", "BackoffLimitExceeded")
    pods = twin.kubectl_json("get", "pods", "-l", "job-name=bad")["items"]
    assert len(pods) == 3
    for p in pods:
        assert p["status"]["phase"] == "Failed"
        term = p["status"]["containerStatuses"][0]["state"]["terminated"]
        assert (term["exitCode"], term["reason"]) == (3, "Error")
    reasons = {e["reason"] for e in twin.kubectl_json("get", "events", "--field-selector", "involvedObject.name=bad")["items"]}
    assert {"SuccessfulCreate", "BackoffLimitExceeded"} <= reasons


def test_indexed_job_completes_every_index(twin):
    twin.kubectl("apply", "-f", "-", input=job("idx", "exit 0", completions=3, parallelism=3, completionMode="Indexed"))
    twin.kubectl("wait", "--for=condition=complete", "job/idx", "--timeout=120s")
    st = twin.kubectl_json("get", "job", "idx")["status"]
    assert st["completedIndexes"] == "0-2" and st["succeeded"] == 3
    pods = twin.kubectl_json("get", "pods", "-l", "job-name=idx")["items"]
    assert sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods) == ["0", "1", "2"]


def test_deleting_a_job_deletes_its_pods(twin):
    twin.kubectl("apply", "-f", "-", input=job("del", "exit 0", completions=2))
    twin.kubectl("wait", "--for=condition=complete", "job/del", "--timeout=120s")
    twin.kubectl("delete", "job", "del")
    twin.kubectl("wait", "--for=delete", "pod", "-l", "job-name=del", "--timeout=120s")
    assert twin.kubectl_json("get", "pods", "-l", "job-name=del")["items"] == []
