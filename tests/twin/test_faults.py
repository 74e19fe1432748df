"""Fault injection through `python -m twin fault`: failing and hanging storage operations, API errors,
stalled controllers."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest

from tests.support.twin import Twin
from tests.twin.storage_helpers import apply, events, kube_wait, phase, pvc_manifest, storage, wait_event


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("faults") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def fault(twin, name, rule=None):
    if rule is None:
        return twin.twin_cmd("fault", "--clear", "--name", name)
    return twin.twin_cmd("fault", "--name", name, "--rule", json.dumps(rule))


def test_a_fraction_of_provisions_fail_then_succeed_on_retry(twin):
    fault(twin, "provision", {"fraction": 0.5, "count": 3, "driver": "diskplugin.csi.alibabacloud.com"})
    apply(twin, *[pvc_manifest(f"flaky-{i}", "alicloud-disk-essd", "20Gi") for i in range(10)])
    kube_wait(twin, "jsonpath={.status.phase}=Bound", *(f"pvc/flaky-{i}" for i in range(10)))
    failed = [e for e in events(twin, "ProvisioningFailed") if e["involvedObject"]["name"].startswith("flaky-")]
    assert len(failed) == 3  # `count` bounds the injected failures
    assert all("injected fault: provision failed" in e["message"] and "code = Internal" in e["message"] for e in failed)
    assert storage(twin, "faults")["hits"]["provision"] == 3
    fault(twin, "provision")


def test_sticky_failures_keep_failing_the_same_claim(twin):
    fault(twin, "provision", {"fraction": 1.0, "sticky": True, "match": "doomed"})
    apply(twin, pvc_manifest("doomed", "alicloud-disk-essd", "20Gi"), pvc_manifest("fine", "alicloud-disk-essd", "20Gi"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/fine")
    wait_event(twin, "doomed", "ProvisioningFailed", count=2)
    assert phase(twin, "pvc", "doomed") == "Pending"
    fault(twin, "provision")
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/doomed")


def test_a_timed_out_provision_reports_deadline_exceeded(twin):
    fault(twin, "provision", {"mode": "timeout", "seconds": 15, "count": 1, "match": "slow"})
    apply(twin, pvc_manifest("slow", "ontap-san"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/slow")
    failed = [e for e in events(twin, "ProvisioningFailed") if e["involvedObject"]["name"] == "slow"]
    assert len(failed) == 1 and "code = DeadlineExceeded" in failed[0]["message"]


def test_attach_and_snapshot_faults_surface_in_status_and_events(twin):
    fault(twin, "attach", {"count": 2})
    fault(twin, "snapshot", {"count": 1})
    apply(twin, pvc_manifest("att", "ontap-nas", mode="ReadWriteMany"),
          {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "att-user"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                    "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "att"}}]}})
    kube_wait(twin, "condition=Ready", "pod/att-user")
    failed = [e for e in events(twin, "FailedAttachVolume") if e["involvedObject"]["name"] == "att-user"]
    assert len(failed) == 2 and all("injected fault: attach failed" in e["message"] for e in failed)
    apply(twin, {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot", "metadata": {"name": "att-snap"},
                 "spec": {"volumeSnapshotClassName": "trident-snapshotclass", "source": {"persistentVolumeClaimName": "att"}}})
    kube_wait(twin, "jsonpath={.status.readyToUse}=true", "volumesnapshot/att-snap")
    assert list(events(twin, "SnapshotCreationFailed"))
    assert storage(twin, "faults")["hits"]["snapshot"] == 1


def raw_get(twin, path):
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(twin.server + path, headers={"Authorization": f"Bearer {twin.token}"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_api_errors_for_a_fraction_of_requests(twin):
    fault(twin, "api", {"fraction": 1.0, "code": 429, "path_contains": "/configmaps"})
    p = twin.kubectl("get", "configmaps", "--request-timeout=5s", check=False)
    assert p.returncode != 0
    assert raw_get(twin, "/api/v1/namespaces/default/configmaps") == 429
    assert raw_get(twin, "/api/v1/namespaces/default/secrets") == 200  # outside the rule
    fault(twin, "api", {"fraction": 0.5, "code": 500, "path_contains": "/secrets"})
    codes = [raw_get(twin, "/api/v1/namespaces/default/secrets") for _ in range(40)]
    assert codes.count(500) > 0 and codes.count(200) > 0 and set(codes) == {200, 500}
    fault(twin, "api")
    assert raw_get(twin, "/api/v1/namespaces/default/configmaps") == 200


def test_api_fault_stops_after_its_count(twin):
    fault(twin, "api", {"fraction": 1.0, "code": 500, "path_contains": "/secrets", "count": 3})
    codes = [raw_get(twin, "/api/v1/namespaces/default/secrets") for _ in range(6)]
    fault(twin, "api")
    assert codes == [500, 500, 500, 200, 200, 200]


def test_a_stalled_provisioner_takes_no_work_until_cleared(twin):
    fault(twin, "stall:csi-provisioner", {})
    apply(twin, pvc_manifest("held", "alicloud-disk-essd", "20Gi"))
    # the PV controller is not stalled: it protects and annotates the claim while the provisioner waits
    kube_wait(twin, "jsonpath={.metadata.annotations.volume\\.kubernetes\\.io/storage-provisioner}", "pvc/held")
    assert not [e for e in events(twin, "Provisioning") if e["involvedObject"]["name"] == "held"]
    assert phase(twin, "pvc", "held") == "Pending"
    fault(twin, "stall:csi-provisioner")
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/held")


def test_fraction_rules_draw_the_same_coin_flips_for_the_same_seed():
    """A cluster's fault draws are seeded (its name): a fraction rule hits the same attempts on every run, so a test
    that counts hits does not pass or fail by chance."""
    from twin.faults import Faults

    def hits(seed: str) -> list[bool]:
        f = Faults(seed=seed)
        f.set("provision", {"fraction": 0.5})
        return [f.op_fault("provision", f"default/pvc-{i}", "x") is not None for i in range(40)]

    assert hits("faults/twin") == hits("faults/twin")
    assert hits("faults/twin") != hits("faults/twin-2")  # fleet members draw apart
    assert 5 < sum(hits("faults/twin")) < 35
