"""The twin's external-provisioner and PV controller, driven through kubectl: Immediate, WaitForFirstConsumer,
PMEM local volumes, clones from a snapshot and from a PVC, reclaim Delete and Retain, pvc-protection."""
from __future__ import annotations

import pytest

from tests.support.twin import Twin
from tests.twin.storage_helpers import DISK, admin, apply, events, gone, kube_wait, phase, pvc_manifest, storage, wait_event


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("prov") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def bound(twin, name, ns="default"):
    kube_wait(twin, "jsonpath={.status.phase}=Bound", f"pvc/{name}", namespace=ns)
    pvc = twin.kubectl_json("get", "pvc", name, "-n", ns)
    return pvc, twin.kubectl_json("get", "pv", pvc["spec"]["volumeName"])


def pod(name, claims, node=None):
    spec = {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1d"],
                            "volumeMounts": [{"name": f"v{i}", "mountPath": f"/v{i}"} for i in range(len(claims))]}],
            "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_immediate_disk_claim_is_provisioned_with_the_class_parameters(twin):
    apply(twin, pvc_manifest("essd", "alicloud-disk-essd", "20Gi"))
    pvc, pv = bound(twin, "essd")
    csi = pv["spec"]["csi"]
    assert csi["driver"] == DISK and csi["volumeHandle"].startswith("d-") and csi["fsType"] == "ext4"
    assert csi["volumeAttributes"]["type"] == "cloud_essd"
    assert pv["metadata"]["name"] == f"pvc-{pvc['metadata']['uid']}"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"] and pv["status"]["phase"] == "Bound"
    assert set(pv["metadata"]["finalizers"]) == {"kubernetes.io/pv-protection",
                                                 "external-provisioner.volume.kubernetes.io/finalizer"}
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == DISK
    term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term["key"] == "topology.diskplugin.csi.alibabacloud.com/zone"
    assert "kubernetes.io/pvc-protection" in pvc["metadata"]["finalizers"]
    assert pvc["status"]["capacity"]["storage"] == "20Gi"
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    msgs = [e["message"] for e in events(twin, "ProvisioningSucceeded")]
    assert any(pv["metadata"]["name"] in m for m in msgs)
    assert admin(twin, "cloud")["disks"] >= 1


def test_wait_for_first_consumer_provisions_on_the_selected_node(twin):
    apply(twin, pvc_manifest("wffc", "alicloud-disk-topology"))
    wait_event(twin, "wffc", "WaitForFirstConsumer")
    assert phase(twin, "pvc", "wffc") == "Pending"
    assert not twin.kubectl_json("get", "pvc", "wffc")["spec"].get("volumeName")
    apply(twin, pod("wffc-user", ["wffc"]))
    pvc, pv = bound(twin, "wffc")
    node = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    zone = twin.kubectl_json("get", "node", node)["metadata"]["labels"]["topology.kubernetes.io/zone"]
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [zone]
    kube_wait(twin, f"jsonpath={{.spec.nodeName}}={node}", "pod/wffc-user")


def test_pmem_local_volume_needs_no_attachment(twin):
    pmem_node = twin.label_pmem_node()
    apply(twin, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-pmem-lvm"},
                 "provisioner": "localplugin.csi.alibabacloud.com", "reclaimPolicy": "Delete",
                 "volumeBindingMode": "WaitForFirstConsumer", "mountOptions": ["dax"],
                 "parameters": {"lvmType": "striping", "nodeAffinity": "true", "volumeType": "PMEM"}},
          pvc_manifest("pmem", "csi-pmem-lvm", "100Gi"), pod("pmem-user", ["pmem"]))
    pvc, pv = bound(twin, "pmem")
    attrs = pv["spec"]["csi"]["volumeAttributes"]
    assert attrs["volumeType"] == "PMEM" and attrs["lvmType"] == "striping" and attrs["pmemType"] == "lvm"
    assert pv["spec"]["mountOptions"] == ["dax"]
    node = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    assert node == pmem_node
    expr = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert expr == {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
    kube_wait(twin, "condition=Ready", "pod/pmem-user")
    assert not [v for v in twin.kubectl_json("get", "volumeattachments")["items"]
                if v["spec"]["source"]["persistentVolumeName"] == pv["metadata"]["name"]]


def test_clone_from_snapshot_and_from_pvc(twin):
    apply(twin, pvc_manifest("origin", "ontap-nas", mode="ReadWriteMany"))
    _, origin_pv = bound(twin, "origin")
    apply(twin, {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot", "metadata": {"name": "origin-snap"},
                 "spec": {"volumeSnapshotClassName": "trident-snapshotclass",
                          "source": {"persistentVolumeClaimName": "origin"}}})
    kube_wait(twin, "jsonpath={.status.readyToUse}=true", "volumesnapshot/origin-snap")
    apply(twin, pvc_manifest("from-snap", "ontap-nas", mode="ReadWriteMany", source={
        "apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "origin-snap"}),
        pvc_manifest("from-pvc", "ontap-nas", mode="ReadWriteMany", source={
            "kind": "PersistentVolumeClaim", "name": "origin"}))
    _, snap_pv = bound(twin, "from-snap")
    _, pvc_pv = bound(twin, "from-pvc")
    for pv in (snap_pv, pvc_pv):
        attrs = pv["spec"]["csi"]["volumeAttributes"]
        assert attrs["internalName"] == "trident_" + pv["metadata"]["name"].replace("-", "_")
        assert attrs["backendUUID"] and attrs["backendType"] == "ontap-nas"
    origin = twin.kubectl_json("get", "pvc", "origin")
    assert "provisioner.storage.kubernetes.io/cloning-protection" not in origin["metadata"].get("finalizers", [])
    assert storage(twin, "trident")["ops"]["clone_volume"] == 2


def test_a_clone_from_a_missing_snapshot_fails_until_it_exists(twin):
    apply(twin, pvc_manifest("early", "ontap-nas", mode="ReadWriteMany", source={
        "apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "not-yet"}))
    failed = wait_event(twin, "early", "ProvisioningFailed")
    assert "not-yet" in failed[0]["message"]
    assert phase(twin, "pvc", "early") == "Pending"


def test_reclaim_delete_removes_backend_volume_and_pv(twin):
    apply(twin, pvc_manifest("short-lived", "ontap-san"))
    _, pv = bound(twin, "short-lived")
    volumes = storage(twin, "trident")["volumes"]
    twin.kubectl("delete", "pvc", "short-lived", "--wait=false")
    kube_wait(twin, "delete", "pv/" + pv["metadata"]["name"], namespace=None)
    assert storage(twin, "trident")["volumes"] == volumes - 1
    assert gone(twin, "tridentvolume", pv["metadata"]["name"], "trident")


def test_reclaim_retain_keeps_a_released_pv(twin):
    apply(twin, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "essd-retain"},
                 "provisioner": DISK, "parameters": {"type": "cloud_essd"}, "reclaimPolicy": "Retain"},
          pvc_manifest("kept", "essd-retain", "20Gi"))
    _, pv = bound(twin, "kept")
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    twin.kubectl("delete", "pvc", "kept")
    kube_wait(twin, "jsonpath={.status.phase}=Released", "pv/" + pv["metadata"]["name"], namespace=None)
    assert not gone(twin, "pv", pv["metadata"]["name"], None)


def test_pvc_protection_holds_a_claim_in_use(twin):
    apply(twin, pvc_manifest("in-use", "alicloud-disk-essd", "20Gi"), pod("holder", ["in-use"]))
    _, pv = bound(twin, "in-use")
    kube_wait(twin, "condition=Ready", "pod/holder")
    twin.kubectl("delete", "pvc", "in-use", "--wait=false")
    pvc = twin.kubectl_json("get", "pvc", "in-use")
    assert pvc["metadata"].get("deletionTimestamp") and "kubernetes.io/pvc-protection" in pvc["metadata"]["finalizers"]
    twin.kubectl("delete", "pod", "holder", "--wait=false")
    kube_wait(twin, "delete", "pvc/in-use")
    kube_wait(twin, "delete", "pv/" + pv["metadata"]["name"], namespace=None)
