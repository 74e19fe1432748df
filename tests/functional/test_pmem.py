"""playbooks/deploy_pmem.yml against the twin: deploy, idempotence, check mode, rollback, refusals.

Everything is read back through kubectl, never from the role's own report alone. What was in the
cluster before (a label, a node-resource-topo entry, a StorageClass of someone else) must survive the
rollback: state=absent removes exactly what state=present added.
"""
from __future__ import annotations

import json

import yaml

from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "deploy_pmem.yml"
N1, N2, N3 = "cn-hangzhou.192.168.0.1", "cn-hangzhou.192.168.0.2", "cn-hangzhou.192.168.0.3"
TYPE = "pmem.csi.alibabacloud.com/type"


def pmem_labels(twin) -> dict[str, dict[str, str]]:
    out = {}
    for n in twin.kubectl_json("get", "nodes")["items"]:
        labels = n["metadata"].get("labels") or {}
        out[n["metadata"]["name"]] = {k: v for k, v in labels.items() if k.startswith("pmem.csi.alibabacloud.com")}
    return out


def storageclasses(twin) -> dict[str, dict]:
    return {sc["metadata"]["name"]: sc for sc in twin.kubectl_json("get", "storageclass")["items"]}


def topo(twin) -> dict | None:
    proc = twin.kubectl("-n", "kube-system", "get", "configmap", "node-resource-topo", "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def snapshot(twin):
    return pmem_labels(twin), set(storageclasses(twin)), topo(twin)


def test_deploy_idempotent_and_rollback_keeps_what_was_there(twin):
    # someone else's state before the play: a topology entry of another node and a class of their own
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "node-resource-topo", "namespace": "kube-system"},
         "data": {"volumegroup": "volumegroup:\n- name: localvg\n  key: kubernetes.io/hostname\n  operator: In\n"
                                 f"  value: {N3}\n  topology:\n    type: device\n    devices: [/dev/vdb]\n"}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "their-local"},
         "provisioner": "localplugin.csi.alibabacloud.com", "parameters": {"volumeType": "LVM"},
         "volumeBindingMode": "WaitForFirstConsumer"}]))
    before = snapshot(twin)

    run = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1, N2]}, diff=True)
    assert run.rc == 0, run.stdout + run.stderr

    sc = storageclasses(twin)["csi-pmem-lvm"]  # the seed's class, field by field
    assert sc["provisioner"] == "localplugin.csi.alibabacloud.com"
    assert sc["parameters"] == {"lvmType": "striping", "nodeAffinity": "true", "volumeType": "PMEM"}
    assert sc["mountOptions"] == ["dax"]
    assert (sc["volumeBindingMode"], sc["reclaimPolicy"], sc["allowVolumeExpansion"]) == \
        ("WaitForFirstConsumer", "Delete", True)
    direct = storageclasses(twin)["csi-pmem-direct"]
    assert direct["parameters"] == {"nodeAffinity": "true", "pmemType": "direct", "volumeType": "PMEM"}

    labels = pmem_labels(twin)
    assert labels[N1] == labels[N2] == {"pmem.csi.alibabacloud.com": "lvm", TYPE: "lvm"}
    assert labels[N3] == {}
    cm = topo(twin)
    entries = yaml.safe_load(cm["data"]["volumegroup"])["volumegroup"]
    assert [(e["name"], e["value"]) for e in entries] == [("localvg", N3), ("pmemvgregion0", N1), ("pmemvgregion0", N2)]
    assert entries[1] == {"name": "pmemvgregion0", "key": "kubernetes.io/hostname", "operator": "In", "value": N1,
                          "topology": {"type": "pmem", "regions": ["region0"]}}
    diff = run.task("Create the PMEM StorageClasses")["result"]["results"][0]["diff"]
    assert diff["before"] == {} and diff["after"]["parameters"]["lvmType"] == "striping"

    again = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1, N2]})
    assert again.rc == 0, again.stdout + again.stderr
    assert again.changed_tasks == []

    back = twin.playbook(PLAYBOOK, extra_vars={"state": "absent"})
    assert back.rc == 0, back.stdout + back.stderr
    after = snapshot(twin)
    assert after[0] == before[0] and after[1] == before[1]
    # the foreign entry, as it was (the key's YAML is rewritten, its content is the same)
    assert yaml.safe_load(after[2]["data"]["volumegroup"]) == yaml.safe_load(before[2]["data"]["volumegroup"])
    assert not [k for k in after[2]["metadata"].get("annotations") or {} if k.startswith("storageperf.k8s/")]
    assert "their-local" in after[1]


def test_check_mode_and_refusals_write_nothing(twin):
    before = snapshot(twin)

    check = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1]}, check=True, diff=True)
    assert check.rc == 0, check.stdout + check.stderr
    planned = check.task("Create the PMEM StorageClasses")["result"]["results"]
    assert [r["action"] for r in planned] == ["created", "created"]
    assert check.task("Label the PMEM nodes")["result"]["nodes"][0]["labels"] == \
        {"pmem.csi.alibabacloud.com": "lvm", TYPE: "lvm"}
    assert snapshot(twin) == before

    # an unknown pmem type in the second class stops the first one too (the role's argument spec)
    bad_class = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1], "classes": [
        {"name": "ok-lvm", "pmem_type": "lvm"}, {"name": "bad", "pmem_type": "optane"}]})
    assert bad_class.rc != 0 and "optane" in bad_class.stdout
    # LVM options on a direct class: the module's own check
    bad_mix = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1], "classes": [
        {"name": "mixed", "pmem_type": "direct", "lvm_type": "striping"}]})
    assert bad_mix.rc != 0
    failed = bad_mix.task("Validate every StorageClass")["result"]["results"][0]
    assert "lvm_type only applies to pmem_type lvm" in failed["msg"]
    assert snapshot(twin) == before


def test_refuses_without_the_local_csi_driver_or_pmem_nodes(twin):
    # no node listed and none labelled
    none = twin.playbook(PLAYBOOK)
    assert none.rc != 0
    assert "no PMEM nodes" in none.task("Validate the PMEM nodes")["result"]["msg"]
    # a node labelled with a type the plugin exits on
    twin.kubectl("label", "node", N2, f"{TYPE}=nvme")
    bad_label = twin.playbook(PLAYBOOK)
    assert bad_label.rc != 0
    assert "exits on" in bad_label.task("Validate the PMEM nodes")["result"]["msg"]
    twin.kubectl("label", "node", N2, f"{TYPE}-")

    twin.kubectl("delete", "csidriver", "localplugin.csi.alibabacloud.com")
    before = snapshot(twin)
    run = twin.playbook(PLAYBOOK, extra_vars={"nodes": [N1]})
    assert run.rc != 0
    assert "localplugin.csi.alibabacloud.com is not installed" in run.stdout
    assert snapshot(twin) == before
