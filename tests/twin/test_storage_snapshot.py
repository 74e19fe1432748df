"""The twin's snapshot-controller + csi-snapshotter: the VolumeSnapshot lifecycle with the real finalizers, and
the client-go token bucket that the snapshot-controller Deployment's args set (QPS 5 / burst 10 by default)."""
from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.support.twin import Twin
from tests.support.waits import watch_until
from tests.twin.storage_helpers import admin, apply, kube_wait, pvc_manifest, storage, wait_for
from twin.controllers.tokenbucket import TokenBucket, parse_args

G = "snapshot.storage.kubernetes.io/"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("snap") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def snapshot(name, claim, cls="trident-snapshotclass"):
    return {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot", "metadata": {"name": name},
            "spec": {"volumeSnapshotClassName": cls, "source": {"persistentVolumeClaimName": claim}}}


def ready(twin, name):
    kube_wait(twin, "jsonpath={.status.readyToUse}=true", f"volumesnapshot/{name}")
    return twin.kubectl_json("get", "volumesnapshot", name)


def test_snapshot_controller_deployment_runs_at_the_defaults(twin):
    dep = twin.kubectl_json("get", "deployment", "snapshot-controller", "-n", "kube-system")
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--v=5", "--leader-election=true"]
    th = storage(twin, "throttles")["snapshot-controller"]
    assert (th["qps"], th["burst"], th["workers"]) == (5.0, 10, 10)


def test_snapshot_lifecycle_delete_policy(twin):
    apply(twin, pvc_manifest("data", "ontap-nas", mode="ReadWriteMany"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/data")
    before = storage(twin, "trident")["snapshots"]
    apply(twin, snapshot("data-snap", "data"))
    vs = ready(twin, "data-snap")
    st = vs["status"]
    assert set(vs["metadata"]["finalizers"]) == {G + "volumesnapshot-as-source-protection",
                                                 G + "volumesnapshot-bound-protection"}
    assert st["boundVolumeSnapshotContentName"] == f"snapcontent-{vs['metadata']['uid']}"
    assert st["restoreSize"] == "1Gi" and st["creationTime"]
    content = twin.kubectl_json("get", "volumesnapshotcontent", st["boundVolumeSnapshotContentName"])
    assert content["metadata"]["finalizers"] == [G + "volumesnapshotcontent-bound-protection"]
    assert content["spec"]["deletionPolicy"] == "Delete" and content["spec"]["driver"] == "csi.trident.netapp.io"
    assert content["spec"]["volumeSnapshotRef"]["uid"] == vs["metadata"]["uid"]
    pv = twin.kubectl_json("get", "pvc", "data")["spec"]["volumeName"]
    assert content["spec"]["source"]["volumeHandle"] == pv
    assert content["status"]["snapshotHandle"].startswith(pv + "/") and content["status"]["readyToUse"] is True
    assert content["status"]["restoreSize"] == 1024 ** 3 and isinstance(content["status"]["creationTime"], int)
    assert G + "volumesnapshot-being-created" not in (content["metadata"].get("annotations") or {})
    claim = twin.kubectl_json("get", "pvc", "data")
    assert G + "pvc-as-source-protection" not in claim["metadata"]["finalizers"]  # released once ready
    assert storage(twin, "trident")["snapshots"] == before + 1

    twin.kubectl("delete", "volumesnapshot", "data-snap", "--wait=false")
    kube_wait(twin, "delete", "volumesnapshot/data-snap")
    kube_wait(twin, "delete", "volumesnapshotcontent/" + st["boundVolumeSnapshotContentName"], namespace=None)
    assert storage(twin, "trident")["snapshots"] == before


def test_snapshot_lifecycle_retain_policy(twin):
    apply(twin, {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotClass",
                 "metadata": {"name": "trident-retain"}, "driver": "csi.trident.netapp.io", "deletionPolicy": "Retain"},
          pvc_manifest("kept-src", "ontap-nas", mode="ReadWriteMany"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/kept-src")
    apply(twin, snapshot("kept-snap", "kept-src", "trident-retain"))
    content_name = ready(twin, "kept-snap")["status"]["boundVolumeSnapshotContentName"]
    snaps = storage(twin, "trident")["snapshots"]
    twin.kubectl("delete", "volumesnapshot", "kept-snap")
    kube_wait(twin, "delete", "volumesnapshot/kept-snap")
    content = twin.kubectl_json("get", "volumesnapshotcontent", content_name)
    assert content["spec"]["deletionPolicy"] == "Retain" and not content["metadata"].get("finalizers")
    assert storage(twin, "trident")["snapshots"] == snaps  # the ONTAP snapshot stays


class StoppedClockBucket(TokenBucket):
    """The bucket on a clock the test moves: reservations then depend on the arithmetic alone, not on how much
    real time a loaded machine let pass between two calls."""

    clock = 1000.0

    def _now(self) -> float:
        return self.clock


def test_token_bucket_starts_full_then_refills_at_qps():
    b = StoppedClockBucket(qps=5, burst=10, time_scale=1.0)
    waits = [b.reserve() for _ in range(15)]
    assert waits[:10] == [0.0] * 10
    # the 11th..15th wait 0.2, 0.4, ... s: one token every 1/qps seconds
    assert waits[10:] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    # two seconds later the debt of 5 tokens is paid and 5 are back; never more than burst
    b.clock += 2.0
    assert [b.reserve() for _ in range(6)] == pytest.approx([0.0] * 5 + [0.2])
    b.clock += 3600.0
    assert [b.reserve() for _ in range(11)] == pytest.approx([0.0] * 10 + [0.2])
    assert parse_args(["--v=5", "--kube-api-qps", "75", "--leader-election"]) == {
        "v": "5", "kube-api-qps": "75", "leader-election": "true"}


def pacing(log, burst):
    """Calls per cluster second of the snapshot clientset after the first `burst` calls of a batch."""
    times = [t for t, client, _ in log if client == "snapshot"][burst:burst + 50]
    return (len(times) - 1) / (times[-1] - times[0])


def test_snapshot_controller_paced_by_its_deployment_args(twin_factory):
    # QPS 0.5 then 1.5 (a float flag, like client-go's). The pacing is read from the times the calls went out, so
    # it shows the bucket only while the twin issues calls faster than the bucket lets them through: at time
    # scale 0.03 that is 17 and 50 calls per wall second (at 0.01 it was 150, which a busy twin may not reach, and
    # the ratio then measured the CPU); the ratio is what the test is about
    tw = twin_factory(nodes=2, time_scale=0.03)
    apply(tw, *[pvc_manifest(f"d{i}", "alicloud-disk-essd", "20Gi") for i in range(24)])
    kube_wait(tw, "jsonpath={.status.phase}=Bound", *(f"pvc/d{i}" for i in range(24)))
    rates = []
    for batch, qps in ((range(0, 12), 0.5), (range(12, 24), 1.5)):
        args = ["--v=5", "--leader-election=true", f"--kube-api-qps={qps}"]
        tw.kubectl("patch", "deployment", "snapshot-controller", "-n", "kube-system", "--type", "json", "-p",
                   json.dumps([{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]))
        wait_for(f"qps {qps} in force", lambda q=qps: storage(tw, "throttles")["snapshot-controller"]["qps"] == q)
        since = admin(tw, "storage", {"only": ["throttles"], "log": True})["throttles"]["snapshot-controller"]["log"]
        start = since[-1][0] + 1e-6 if since else 0.0
        apply(tw, *[snapshot(f"s{i}", f"d{i}", "alibabacloud-disk-snapshot") for i in batch])
        for i in batch:
            ready(tw, f"s{i}")
        log = admin(tw, "storage", {"only": ["throttles"], "log": True, "since": start})
        log = log["throttles"]["snapshot-controller"]["log"]
        rates.append(pacing(log, 10))
    watch_until(client.CoreV1Api(tw.api_client()).list_namespaced_persistent_volume_claim, lambda pvcs: not any(
        G + "pvc-as-source-protection" in (p.metadata.finalizers or []) for p in pvcs), "source claims released", "default")
    calls = storage(tw, "throttles")["snapshot-controller"]["calls"]
    assert calls == {"snapshot": 9 * 24, "kube": 6 * 24}  # #1344: ~9 calls per snapshot on the snapshot clientset
    # after the initial burst the calls follow qps: 1.5 / 0.5 = 3, measured in one run
    assert 2.4 < rates[1] / rates[0] < 3.6, rates
