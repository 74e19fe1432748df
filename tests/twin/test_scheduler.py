"""The twin's scheduler: node affinity and selectors, taints, CSI volume limits, WaitForFirstConsumer."""
from __future__ import annotations

import pytest
import yaml

from tests.support.twin import Twin

PREEMPTION = "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("sched") / "twin", nodes=3, time_scale=0.005) as t:
        yield t


@pytest.fixture(scope="module")
def nodes(twin) -> list[str]:
    return twin.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()


def pod(name: str, *, selector: dict | None = None, terms: list[dict] | None = None, tolerations: list | None = None,
        claims: list[str] = ()) -> str:
    spec: dict = {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "inf"]}]}
    if selector:
        spec["nodeSelector"] = selector
    if terms:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": terms}]}}}
    if tolerations:
        spec["tolerations"] = tolerations
    if claims:
        spec["volumes"] = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"test": name}},
                           "spec": spec})


def claim(name: str, sc: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                                    "resources": {"requests": {"storage": "1Gi"}}}})


def node_of(twin, name: str) -> str:
    return twin.kubectl_json("get", "pod", name)["spec"].get("nodeName", "")


def unschedulable(twin, name: str) -> str:
    """Wait for PodScheduled=False and return its message (the FailedScheduling event says the same)."""
    twin.kubectl("wait", "--for=condition=PodScheduled=False", f"pod/{name}", "--timeout=120s")
    cond = next(c for c in twin.kubectl_json("get", "pod", name)["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["reason"] == "Unschedulable"
    events = twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name},reason=FailedScheduling")
    assert cond["message"] in [e["message"] for e in events["items"]]
    return cond["message"]


def ready(twin, *names: str) -> None:
    twin.kubectl("wait", "--for=condition=Ready", *(f"pod/{n}" for n in names), "--timeout=120s")


def test_node_selector_and_required_node_affinity(twin, nodes):
    n1, n2, n3 = nodes
    twin.kubectl("label", "node", n2, "disk=ssd")
    docs = [pod("in-host", terms=[{"key": "kubernetes.io/hostname", "operator": "In", "values": [n1]}]),
            pod("ssd", selector={"disk": "ssd"}),
            pod("has-disk", terms=[{"key": "disk", "operator": "Exists"}]),
            pod("no-disk", terms=[{"key": "disk", "operator": "DoesNotExist"},
                                  {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [n3]}]),
            pod("hdd", selector={"disk": "hdd"})]
    docs += [pod(f"not-n1-{i}", terms=[{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [n1]}])
             for i in range(4)]
    twin.kubectl("apply", "-f", "-", input="---\n".join(docs))
    ready(twin, "in-host", "ssd", "has-disk", "no-disk", *(f"not-n1-{i}" for i in range(4)))

    assert node_of(twin, "in-host") == n1
    assert node_of(twin, "ssd") == node_of(twin, "has-disk") == n2
    assert node_of(twin, "no-disk") == n1
    assert {node_of(twin, f"not-n1-{i}") for i in range(4)} == {n2, n3}  # spread over both allowed nodes
    msg = unschedulable(twin, "hdd")
    assert msg == f"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}"
    scheduled = twin.kubectl_json("get", "events", "--field-selector", "involvedObject.name=ssd,reason=Scheduled")
    assert [e["message"] for e in scheduled["items"]] == [f"Successfully assigned default/ssd to {n2}"]

    # a node change lets the waiting pod fit: it is retried and lands there
    twin.kubectl("label", "node", n3, "disk=hdd")
    ready(twin, "hdd")
    assert node_of(twin, "hdd") == n3


def test_taints_keep_pods_without_a_toleration_away(twin, nodes):
    n1 = nodes[0]
    twin.kubectl("taint", "node", n1, "dedicated=db:NoSchedule")
    try:
        pin = {"kubernetes.io/hostname": n1}
        tol = [{"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]
        docs = [pod("tainted-no-tol", selector=pin), pod("tainted-tol", selector=pin, tolerations=tol),
                pod("tainted-exists", selector=pin, tolerations=[{"operator": "Exists"}])]
        docs += [pod(f"free-{i}") for i in range(6)]
        twin.kubectl("apply", "-f", "-", input="---\n".join(docs))
        ready(twin, "tainted-tol", "tainted-exists", *(f"free-{i}" for i in range(6)))
        assert node_of(twin, "tainted-tol") == node_of(twin, "tainted-exists") == n1
        assert n1 not in {node_of(twin, f"free-{i}") for i in range(6)}
        msg = unschedulable(twin, "tainted-no-tol")
        assert msg == ("0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, "
                       f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}")
    finally:
        twin.kubectl("taint", "node", n1, "dedicated=db:NoSchedule-")


def set_disk_limit(twin, node: str, count: int) -> None:
    drivers = twin.kubectl_json("get", "csinode", node)["spec"]["drivers"]
    i = next(i for i, d in enumerate(drivers) if d["name"] == "diskplugin.csi.alibabacloud.com")
    twin.kubectl("patch", "csinode", node, "--type=json",
                 "-p", f'[{{"op":"replace","path":"/spec/drivers/{i}/allocatable/count","value":{count}}}]')


def test_csi_volume_limit_keeps_a_pod_pending_until_the_node_has_room(twin, nodes):
    n3 = nodes[2]
    set_disk_limit(twin, n3, 3)
    pin = [{"key": "kubernetes.io/hostname", "operator": "In", "values": [n3]}]
    docs = [claim(f"lim-{i}", "alicloud-disk-topology") for i in range(4)]
    docs += [pod("lim-a", terms=pin, claims=["lim-0", "lim-1"])]
    twin.kubectl("apply", "-f", "-", input="---\n".join(docs))
    ready(twin, "lim-a")
    twin.kubectl("apply", "-f", "-", input=pod("lim-b", terms=pin, claims=["lim-2", "lim-3"]))
    msg = unschedulable(twin, "lim-b")
    assert msg == ("0/3 nodes are available: 1 node(s) exceed max volume count, "
                   f"2 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}")
    # its claims wait for a consumer that has no node yet
    anns = twin.kubectl_json("get", "pvc", "lim-2")["metadata"].get("annotations") or {}
    assert "volume.kubernetes.io/selected-node" not in anns

    set_disk_limit(twin, n3, 4)  # the CSINode change lets it fit
    ready(twin, "lim-b")
    assert node_of(twin, "lim-b") == n3


def test_wait_for_first_consumer_claims_get_the_pods_node_and_immediate_ones_must_be_bound(twin):
    twin.kubectl("apply", "-f", "-", input=claim("wffc", "alicloud-disk-topology"))
    anns = twin.kubectl_json("get", "pvc", "wffc")["metadata"].get("annotations") or {}
    assert "volume.kubernetes.io/selected-node" not in anns  # no consumer yet
    twin.kubectl("apply", "-f", "-", input=pod("consumer", claims=["wffc"]))
    ready(twin, "consumer")
    pvc = twin.kubectl_json("get", "pvc", "wffc")
    anns = pvc["metadata"]["annotations"]
    assert anns["volume.kubernetes.io/selected-node"] == node_of(twin, "consumer")
    assert anns["volume.kubernetes.io/storage-provisioner"] == "diskplugin.csi.alibabacloud.com"
    assert anns["volume.beta.kubernetes.io/storage-provisioner"] == "diskplugin.csi.alibabacloud.com"
    assert pvc["status"]["phase"] == "Bound"

    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "nobody-serves"},
          "provisioner": "example.com/nobody", "volumeBindingMode": "Immediate"}
    twin.kubectl("apply", "-f", "-", input="---\n".join([yaml.safe_dump(sc), claim("imm", "nobody-serves"),
                                                         pod("imm-consumer", claims=["imm"])]))
    msg = unschedulable(twin, "imm-consumer")
    assert msg == f"0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. {PREEMPTION}"
    twin.kubectl("apply", "-f", "-", input=pod("no-claim", claims=["missing"]))
    assert 'persistentvolumeclaim "missing" not found' in unschedulable(twin, "no-claim")


PMEM_LABEL = "pmem.csi.alibabacloud.com"


def test_pmem_claims_bind_only_on_a_node_with_pmem(twin, nodes):
    """Seed 001's class (local plugin, volumeType PMEM): no PMEM node, no binding; a labelled node takes it."""
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sched-pmem"},
          "provisioner": "localplugin.csi.alibabacloud.com", "volumeBindingMode": "WaitForFirstConsumer",
          "parameters": {"volumeType": "PMEM", "lvmType": "striping", "nodeAffinity": "true"}}
    twin.kubectl("apply", "-f", "-", input="---\n".join([yaml.safe_dump(sc), claim("pmem-data", "sched-pmem"),
                                                         pod("pmem-user", claims=["pmem-data"])]))
    msg = unschedulable(twin, "pmem-user")
    assert msg == f"0/3 nodes are available: 3 node(s) did not have enough free storage. {PREEMPTION}"
    pvc = twin.kubectl_json("get", "pvc", "pmem-data")
    assert pvc["status"]["phase"] == "Pending" and not pvc["spec"].get("volumeName")
    assert "volume.kubernetes.io/selected-node" not in (pvc["metadata"].get("annotations") or {})

    pmem_node = nodes[2]
    twin.kubectl("label", "node", pmem_node, f"{PMEM_LABEL}=lvm", f"{PMEM_LABEL}/type=lvm")
    try:
        twin.kubectl("wait", "--for=condition=PodScheduled", "pod/pmem-user", "--timeout=120s")
        assert node_of(twin, "pmem-user") == pmem_node
        twin.kubectl("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/pmem-data", "--timeout=120s")
        pvc = twin.kubectl_json("get", "pvc", "pmem-data")
        assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == pmem_node
    finally:
        twin.kubectl("delete", "pod", "pmem-user", "--wait=false")
        twin.kubectl("label", "node", pmem_node, f"{PMEM_LABEL}-", f"{PMEM_LABEL}/type-")


def test_a_class_with_allowed_topologies_provisions_only_there(twin, nodes):
    zone_b = "cn-hangzhou-b"  # no node of the twin is in it
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sched-zone-b"},
          "provisioner": "zonal.example.com", "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [
              {"key": "topology.diskplugin.csi.alibabacloud.com/zone", "values": [zone_b]}]}]}
    twin.kubectl("apply", "-f", "-", input="---\n".join([yaml.safe_dump(sc), claim("zone-b", "sched-zone-b"),
                                                         pod("zone-b-user", claims=["zone-b"])]))
    msg = unschedulable(twin, "zone-b-user")
    assert msg == f"0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. {PREEMPTION}"
