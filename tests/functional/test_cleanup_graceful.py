"""playbooks/cleanup.yml on a cluster where deletion takes time: the run's pods ignore SIGTERM, so each stays
Terminating through its grace period until the kubelet kills it, and its claims stay (pvc-protection) until then;
the volumes detach after that. The cleanup waits for all of it and leaves nothing behind."""
from __future__ import annotations

import threading

from kubernetes import client, watch

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from tests.support.twin import REPO
from twin.controllers.kubelet_runtime import term_exit
from tests.twin.storage_helpers import apply, kube_wait, pvc_manifest

CLEANUP = REPO / "playbooks" / "cleanup.yml"
RUN_ID = "attach_stress-20261206T080000Z-abc123"
NS = "sp-graceful"
GRACE = 300  # cluster seconds: 3 wall seconds at the twin fixture's time scale 0.01


def pod(name: str, claim: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": GRACE,
                     "containers": [{"name": "c", "image": "busybox:1.36", "command": ["/bin/sh", "-c", "sleep 3600"],
                                     "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                     "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}}


def test_cleanup_waits_for_pods_that_take_their_grace_period(twin):
    labels = {"storageperf.k8s/run-id": RUN_ID, "storageperf.k8s/benchmark": "attach_stress"}
    claims = [dict(pvc_manifest(f"data-{i}", "ontap-san"), metadata={"name": f"data-{i}", "namespace": NS})
              for i in range(2)]
    apply(twin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": labels}},
          *claims, pod("app-0", "data-0"), pod("app-1", "data-1"))
    kube_wait(twin, "condition=Ready", "pod/app-0", "pod/app-1", namespace=NS)
    assert twin.kubectl_json("get", "volumeattachments")["items"], "the claims' volumes are attached"

    core = client.CoreV1Api(twin.api_client())
    listed = core.list_namespaced_pod(NS)
    ended: dict[str, dict] = {}
    w = watch.Watch()

    def follow() -> None:  # each pod's last state, from its DELETED event
        for ev in w.stream(core.list_namespaced_pod, NS, resource_version=listed.metadata.resource_version,
                           timeout_seconds=600):
            if ev["type"] == "DELETED":
                ended[ev["object"].metadata.name] = ev["object"].status.container_statuses[0].state.terminated
                if len(ended) == 2:
                    w.stop()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    run = twin.playbook(CLEANUP, extra_vars={"run_id": RUN_ID})
    assert run.rc == 0, run.stdout[-3000:]
    follower.join(60)
    # the pods did take their grace period: TERM was ignored, the kubelet killed them at its end
    assert sorted(ended) == ["app-0", "app-1"] and {t.exit_code for t in ended.values()} == {137}
    result = run.task("Delete the run's objects")["result"]
    assert result["deleted"]["Pod"] == 2 and result["remaining"] == {}
    assert twin.kubectl_json("get", "namespaces", "-l", f"storageperf.k8s/run-id={RUN_ID}")["items"] == []
    assert [pv for pv in twin.kubectl_json("get", "pv")["items"]
            if (pv["spec"].get("claimRef") or {}).get("namespace") == NS] == []
    assert twin.kubectl_json("get", "volumeattachments")["items"] == []


def test_the_pods_the_benchmarks_create_exit_on_sigterm():
    """Their deletion is timed (unpublish, scale_down): each container must exit on TERM, never wait out its grace
    period - the seed's `trap exit TERM` loop (seed 000, as the seed's own manifest has it) or pause."""
    labels = {"storageperf.k8s/run-id": RUN_ID}
    sts = M.attach_stress_statefulset("attach-stress", NS, "node-0", "sc", labels)
    pods = [M.pod("p", NS, ["c"], labels), M.pod("p", NS, ["c"], labels, image=M.SEED_BUSYBOX),
            {"spec": sts["spec"]["template"]["spec"]}]
    for p in pods:
        for c in p["spec"]["containers"]:
            assert term_exit(c) == 0, c
