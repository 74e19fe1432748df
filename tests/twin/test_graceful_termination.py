"""Graceful pod termination as the kubelet 1.34 does it (twin/controllers/kubelet.py, the rule of what a container
does on SIGTERM in twin/controllers/kubelet_runtime.py term_exit): a pod deleted gets deletionTimestamp = now +
grace and shows Terminating; a container whose PID 1 ignores TERM (a shell running `sleep`) is SIGKILLed when the
grace period of cluster time is over (137), one that traps TERM exits with its own code at once; a preStop hook
runs first; a later DELETE may shorten the grace; `--grace-period=0 --force` removes the object at once; a PVC
in use stays (kubernetes.io/pvc-protection) until the pod is gone.

Cluster time is read from the twin's own timestamps: at TIME_SCALE a grace of GRACE cluster seconds lasts 3 wall
seconds, so RFC 3339's whole seconds resolve it; every assertion is a lower bound the twin's scheduling implies
(a killed container cannot finish before its deadline) or an order of events, never how long something took.
"""
from __future__ import annotations

import os
import shutil
from datetime import datetime

import pytest
from kubernetes import client, watch

from tests.support.twin import Twin
from tests.twin.storage_helpers import apply, kube_wait, pvc_manifest
from twin.host import exec_runner

needs_host = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root and nsenter, unshare, ip, mount, chroot")

TIME_SCALE = 0.05
GRACE = 60  # cluster seconds: 3 wall seconds at TIME_SCALE
IGNORES_TERM = ["/bin/sh", "-c", "sleep 3600"]  # sh as PID 1 has no TERM handler
TRAPS_TERM = ["/bin/sh", "-c", "trap 'exit 3' TERM; while true; do sleep 1; done"]


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("graceful") / "twin", nodes=1, time_scale=TIME_SCALE) as t:
        yield t


@pytest.fixture(scope="module")
def core(twin):
    return client.CoreV1Api(twin.api_client())


def pod(name: str, command: list[str], grace: int | None = GRACE, claim: str | None = None,
        pre_stop: dict | None = None) -> dict:
    c: dict = {"name": "c", "image": "busybox:1.36", "command": command}
    spec: dict = {"containers": [c]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if claim:
        c["volumeMounts"] = [{"name": "v", "mountPath": "/v"}]
        spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]
    if pre_stop:
        c["lifecycle"] = {"preStop": pre_stop}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def running(twin: Twin, *manifests: dict) -> None:
    apply(twin, *manifests)
    for m in manifests:
        if m["kind"] == "Pod":
            kube_wait(twin, "condition=Ready", f"pod/{m['metadata']['name']}")


def since(core, name: str) -> str:
    """The resourceVersion to follow the pod from, read before it is deleted (it may be gone in milliseconds)."""
    listed = core.list_namespaced_pod("default", field_selector=f"metadata.name={name}")
    assert listed.items, f"pod {name} is not there"
    return listed.metadata.resource_version


def last_state(core, name: str, rv: str, bound: int = 300) -> dict:
    """Watch the pod from rv until it is gone; return its last state (the DELETED event's object) as a dict."""
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", field_selector=f"metadata.name={name}",
                       resource_version=rv, timeout_seconds=bound):
        if ev["type"] == "DELETED":
            w.stop()
            return core.api_client.sanitize_for_serialization(ev["object"])
    raise AssertionError(f"pod {name} not gone within {bound} s")


def ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def terminated(last: dict) -> dict:
    [cs] = last["status"]["containerStatuses"]
    return cs["state"]["terminated"]


def killing_time(twin: Twin, name: str) -> float:
    evs = [e for e in twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name}")["items"]
           if e["reason"] == "Killing"]
    assert evs and evs[0]["message"] == "Stopping container c"
    return ts(evs[0]["firstTimestamp"])


def test_a_container_that_ignores_term_is_killed_when_its_grace_period_is_over(twin, core):
    running(twin, pod("ignores", IGNORES_TERM))
    rv = since(core, "ignores")
    twin.kubectl("delete", "pod", "ignores", "--wait=false")
    md = twin.kubectl_json("get", "pod", "ignores")["metadata"]
    assert md["deletionGracePeriodSeconds"] == GRACE
    table = twin.kubectl("get", "pod", "ignores").stdout.splitlines()
    assert table[0].split()[:3] == ["NAME", "READY", "STATUS"] and table[1].split()[2] == "Terminating"

    last = last_state(core, "ignores", rv)
    term = terminated(last)
    assert (term["exitCode"], term["reason"]) == (137, "Error")  # SIGKILL: TERM was ignored
    # not before the grace period (cluster time) was over: finished no earlier than the deletionTimestamp
    assert ts(term["finishedAt"]) >= ts(md["deletionTimestamp"]) - 1
    # the API server's deletionTimestamp is when the grace period ends: now + 60 cluster seconds (3 wall s)
    assert ts(md["deletionTimestamp"]) - killing_time(twin, "ignores") >= GRACE * TIME_SCALE - 1
    assert ts(term["finishedAt"]) - killing_time(twin, "ignores") >= GRACE * TIME_SCALE - 1


def test_a_container_that_traps_term_exits_with_its_own_code_at_once(twin, core):
    running(twin, pod("traps", TRAPS_TERM))
    rv = since(core, "traps")
    deadline = core.delete_namespaced_pod("traps", "default").metadata.deletion_timestamp.timestamp()
    term = terminated(last_state(core, "traps", rv))
    assert (term["exitCode"], term["reason"]) == (3, "Error")
    assert ts(term["finishedAt"]) < deadline  # well inside its 3 wall seconds of grace


def test_the_default_grace_is_the_pods_and_a_later_delete_may_only_shorten_it(twin, core):
    running(twin, pod("shortened", IGNORES_TERM, grace=3600))
    rv = since(core, "shortened")
    core.delete_namespaced_pod("shortened", "default")
    first = core.read_namespaced_pod("shortened", "default").metadata
    assert first.deletion_grace_period_seconds == 3600  # spec.terminationGracePeriodSeconds
    core.delete_namespaced_pod("shortened", "default", grace_period_seconds=7200)
    assert core.read_namespaced_pod("shortened", "default").metadata.deletion_grace_period_seconds == 3600
    core.delete_namespaced_pod("shortened", "default", grace_period_seconds=GRACE)
    later = core.read_namespaced_pod("shortened", "default").metadata
    assert later.deletion_grace_period_seconds == GRACE
    assert later.deletion_timestamp < first.deletion_timestamp  # brought forward by the difference
    term = terminated(last_state(core, "shortened", rv))
    assert term["exitCode"] == 137
    assert ts(term["finishedAt"]) < first.deletion_timestamp.timestamp()  # 3 s, not the 3 minutes of 3600


def test_a_grace_period_of_0_removes_the_pod_at_once(twin, core):
    running(twin, pod("forced", IGNORES_TERM, grace=3600))
    out = twin.kubectl("delete", "pod", "forced", "--grace-period=0", "--force")
    assert 'pod "forced" force deleted' in out.stdout
    gone = twin.kubectl("get", "pod", "forced", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr
    # a pod whose own grace is 0 goes the same way on a plain DELETE (the pod strategy's CheckGracefulDelete)
    running(twin, pod("no-grace", IGNORES_TERM, grace=0))
    deleted = core.delete_namespaced_pod("no-grace", "default")
    assert deleted.metadata.name == "no-grace"
    assert core.list_namespaced_pod("default", field_selector="metadata.name=no-grace").items == []


def test_a_prestop_hook_runs_first_and_counts_against_the_grace_period(twin, core):
    hook = {"sleep": {"seconds": GRACE // 2}}  # 1.5 wall seconds
    running(twin, pod("hooked", ["/bin/sh", "-c", "trap exit TERM; while true; do sleep 1; done"], pre_stop=hook))
    rv = since(core, "hooked")
    twin.kubectl("delete", "pod", "hooked", "--wait=false")
    term = terminated(last_state(core, "hooked", rv))
    assert (term["exitCode"], term["reason"]) == (0, "Completed")  # TERM after the hook, trapped
    assert ts(term["finishedAt"]) - killing_time(twin, "hooked") >= GRACE // 2 * TIME_SCALE - 1

    # a hook longer than the grace period: cut at the grace, the container then gets the kubelet's minimum
    # 2 s to stop; a TERM-ignoring one is killed then
    running(twin, pod("overlong", IGNORES_TERM, pre_stop={"exec": {"command": ["sh", "-c", "sleep 7200"]}}))
    rv = since(core, "overlong")
    deadline = core.delete_namespaced_pod("overlong", "default").metadata.deletion_timestamp.timestamp()
    term = terminated(last_state(core, "overlong", rv))
    assert term["exitCode"] == 137
    assert deadline - 1 <= ts(term["finishedAt"]) < deadline + 7200 * TIME_SCALE


def test_a_claim_in_use_is_released_only_when_its_pod_is_gone(twin, core):
    running(twin, pvc_manifest("held", "ontap-san"), pod("user", IGNORES_TERM, claim="held"))
    rv = since(core, "user")
    twin.kubectl("delete", "pvc", "held", "--wait=false")
    twin.kubectl("delete", "pod", "user", "--wait=false")
    pvc = twin.kubectl_json("get", "pvc", "held")
    assert pvc["metadata"]["deletionTimestamp"] and "kubernetes.io/pvc-protection" in pvc["metadata"]["finalizers"]
    assert twin.kubectl("get", "pvc", "held").stdout.splitlines()[1].split()[1] == "Terminating"
    # the pod was still terminating when the claim was seen held (its grace runs 3 s)
    assert twin.kubectl_json("get", "pod", "user")["metadata"]["deletionTimestamp"]
    last_state(core, "user", rv)
    kube_wait(twin, "delete", "pvc/held")
    assert twin.kubectl_json("get", "volumeattachments")["items"] == []


def first_log_line(twin: Twin, name: str) -> str:
    """`kubectl logs -f`'s first line: the container's shell has run up to its echo (its trap is set)."""
    import subprocess

    with subprocess.Popen(["kubectl", "logs", "-f", name], env=twin.env(), stdout=subprocess.PIPE, text=True) as p:
        try:
            return p.stdout.readline().strip() if p.stdout else ""
        finally:
            p.kill()


@needs_host
def test_host_run_containers_get_a_real_sigterm_only_when_their_pid_1_handles_it(twin, core):
    """Shell images run by the host's /bin/sh (exec_shell_images): the trap runs on a real SIGTERM; a shell that
    would ignore it as PID 1 gets none and is SIGKILLed when the grace period is over."""
    twin.twin_cmd("settings", "--set", '{"exec_shell_images": true}')
    running(twin, pod("host-traps", ["/bin/sh", "-c", "trap 'exit 3' TERM; echo ready; while true; do sleep 1; done"]),
            pod("host-ignores", ["/bin/sh", "-c", "echo ready; sleep 3600"]))
    assert first_log_line(twin, "host-traps") == "ready" and first_log_line(twin, "host-ignores") == "ready"
    rv = since(core, "host-traps")
    deadline = core.delete_namespaced_pod("host-traps", "default").metadata.deletion_timestamp.timestamp()
    core.delete_namespaced_pod("host-ignores", "default")
    term = terminated(last_state(core, "host-traps", rv))
    assert term["exitCode"] == 3 and ts(term["finishedAt"]) < deadline
    killed = terminated(last_state(core, "host-ignores", rv))
    assert killed["exitCode"] == 137 and ts(killed["finishedAt"]) - killing_time(twin, "host-ignores") >= \
        GRACE * TIME_SCALE - 1
