"""The twin's Trident: operator objects, concurrency switch rolled into the controller Deployment, the global
lock (one backend operation at a time) against per-volume locks with at most 20 ONTAP calls in flight,
economy pools and the backend registry."""
from __future__ import annotations

from kubernetes import client

from tests.support.waits import watch_until
from tests.twin.storage_helpers import admin, apply, kube_wait, pvc_manifest, storage, wait_for


def torc(twin):
    return twin.kubectl_json("get", "tridentorchestrator", "trident")


def main_args(twin):
    dep = twin.kubectl_json("get", "deployment", "trident-controller", "-n", "trident")
    containers = {c["name"]: c for c in dep["spec"]["template"]["spec"]["containers"]}
    return containers


def bind_all(twin, sc, prefix, n, mode="ReadWriteMany"):
    apply(twin, *[pvc_manifest(f"{prefix}-{i}", sc, mode=mode) for i in range(n)])
    kube_wait(twin, "jsonpath={.status.phase}=Bound", *(f"pvc/{prefix}-{i}" for i in range(n)))


def test_trident_objects_at_start(twin):
    kube_wait(twin, "jsonpath={.status.status}=Installed", "tridentorchestrator/trident", namespace=None)
    st = torc(twin)["status"]
    assert st["version"] == "26.06.0"
    assert st["currentInstallationParams"]["enableConcurrency"] == "false"
    assert st["currentInstallationParams"]["k8sAPIQPS"] == "100"
    assert torc(twin)["spec"] == {"debug": False, "namespace": "trident", "enableConcurrency": False,
                                  "imagePullPolicy": "IfNotPresent"}
    c = main_args(twin)
    assert "--enable_concurrency=false" in c["trident-main"]["args"]
    assert "--kube-api-qps=25" in c["csi-provisioner"]["args"] and "--kube-api-burst=50" in c["csi-provisioner"]["args"]
    tbcs = twin.kubectl_json("get", "tridentbackendconfigs", "-n", "trident")["items"]
    assert {t["spec"]["storageDriverName"] for t in tbcs} == {"ontap-nas", "ontap-nas-economy", "ontap-san",
                                                              "ontap-san-economy"}
    for t in tbcs:
        assert t["status"]["phase"] == "Bound" and t["status"]["lastOperationStatus"] == "Success"
        assert t["status"]["backendInfo"]["backendName"] == t["spec"]["storageDriverName"]
    scs = {s["metadata"]["name"]: s for s in twin.kubectl_json("get", "sc")["items"]}
    assert scs["ontap-san-economy"]["provisioner"] == "csi.trident.netapp.io"
    assert twin.kubectl_json("get", "tridentversion", "trident", "-n", "trident")["trident_version"] == "26.06.0"
    assert twin.kubectl_json("get", "csidriver", "csi.trident.netapp.io")["spec"]["attachRequired"] is True


def test_global_lock_then_concurrent_core(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    bind_all(twin, "ontap-nas", "serial", 12)
    st = storage(twin, "trident")
    assert st["concurrency"] is False and st["max_inflight"] == 1, st  # one global lock

    twin.kubectl("patch", "tridentorchestrator", "trident", "--type", "merge", "-p", '{"spec":{"enableConcurrency":true}}')
    watch_until(client.CustomObjectsApi(twin.api_client()).list_cluster_custom_object,
                lambda torcs: any((t.get("status") or {}).get("status") == "Installed"
                                  and t["status"].get("currentInstallationParams", {}).get("enableConcurrency") == "true"
                                  for t in torcs), "Installed with concurrency", "trident.netapp.io", "v1",
                "tridentorchestrators")
    c = main_args(twin)
    assert "--enable_concurrency=true" in c["trident-main"]["args"]
    assert "--worker-threads=25" in c["csi-provisioner"]["args"]
    wait_for("controller sees the flag", lambda: storage(twin, "trident")["concurrency"])

    admin(twin, "storage", {"only": ["backends"], "reset": ["trident"]})
    bind_all(twin, "ontap-nas", "parallel", 60)
    st = storage(twin, "trident")
    assert 1 < st["max_inflight"] <= 20, st  # per-volume locks, at most 20 ONTAP calls per management LIF
    assert st["backends"]["ontap-nas"]["max_inflight"] == st["max_inflight"]
    # the busy run (calibration.yaml "Load") counts the calls since the controller last had none in hand: it began
    # again after the 12 serial ones, so it never exceeds this batch, and it holds at least what was in flight
    assert st["max_inflight"] <= st["max_run"]["create_volume"] <= 60, st


def test_economy_volumes_live_in_pool_flexvols(twin):
    bind_all(twin, "ontap-nas-economy", "eco", 3)
    bind_all(twin, "ontap-san-economy", "lun", 2, mode="ReadWriteOnce")
    pvs = [p for p in twin.kubectl_json("get", "pv")["items"] if p["spec"]["storageClassName"].endswith("economy")]
    pools = {p["spec"]["storageClassName"]: set() for p in pvs}
    for p in pvs:
        attrs = p["spec"]["csi"]["volumeAttributes"]
        assert attrs["internalName"] == "trident_" + p["metadata"]["name"].replace("-", "_")
        pools[p["spec"]["storageClassName"]].add(attrs["pool"])
    assert len(pools["ontap-nas-economy"]) == 1 and next(iter(pools["ontap-nas-economy"])).startswith("trident_qtree_pool_")
    assert len(pools["ontap-san-economy"]) == 1 and next(iter(pools["ontap-san-economy"])).startswith("trident_lun_pool_")
    tvols = twin.kubectl_json("get", "tridentvolumes", "-n", "trident")["items"]
    assert {t["metadata"]["name"] for t in tvols} >= {p["metadata"]["name"] for p in pvs}
    st = storage(twin, "trident")
    assert st["pools"] == 2 and st["volumes"] >= 5
