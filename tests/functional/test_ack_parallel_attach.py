"""playbooks/enable_parallel_attach.yml (role ack_parallel_attach) against the twin's ACK and ECS endpoints.

Every call is a real aliyun-python-sdk-core request, signed and verified by the twin; the twin counts calls per
action at its gateway, which is how "no write call" is asserted. What the tests read back is the twin's cloud
state (addon configs, tags, the attach limits its attach-detach controller obeys) and its Kubernetes objects.
"""
from __future__ import annotations

from tests.support.alibaba import admin, cloud_calls, cloud_state, run_module, run_role_playbook

ATTACH = "supportConcurrencyAttach"
DETACH = "supportConcurrencyDetach"
MODULE_TASK = "Set parallel disk attach to"  # the role's task that runs ack_parallel_attach


def plugin_pod_gates(twin) -> set[str]:
    pods = twin.kubectl_json("-n", "kube-system", "get", "pods", "-l", "app=csi-plugin")["items"]
    out = set()
    for p in pods:
        args = p["spec"]["containers"][0].get("args", [])
        out.add(next((a.split("=", 1)[1] for a in args if a.startswith("--feature-gates=")), ""))
    return out


def test_enable_rerun_and_roll_back_keep_everything_else(twin_factory):
    twin = twin_factory(nodes=6, time_scale=0.01, extra=["--node-pools", "2"])
    # someone else's gate and tag, which neither enabling nor rolling back may touch
    admin(twin, "cloud", {"addon": "csi-plugin", "feature_gates": "EnableVolumeGroupSnapshots=true"})
    admin(twin, "cloud", {"instance": "all", "tags": {"team": "db"}})
    before = cloud_state(twin)
    assert {tuple(i["limits"]) for i in before["instances"].values()} == {(1, 1)}  # serial: one shared slot

    run = run_role_playbook(twin)
    assert run.rc == 0, run.stdout + run.stderr
    result = run.task(MODULE_TASK)["result"]
    assert result["changed"] is True
    assert result["instances_changed"] == 6 and len(result["node_pools_changed"]) == 2
    calls = cloud_calls(twin)
    # node pools and instances first, then the controller, then the node
    assert calls["journal"][-2:] == ["cs:ModifyClusterAddon managed-csiprovisioner", "cs:ModifyClusterAddon csi-plugin"]
    assert calls["calls"]["ecs:TagResources"] == 1 and calls["calls"]["cs:ModifyClusterNodePool"] == 2
    assert calls["resource_types_seen"].keys() == {"instance"}  # the documented lower-case ResourceType

    state = cloud_state(twin)
    assert state["addons"]["csi-plugin"]["config"]["FeatureGate"] == "EnableVolumeGroupSnapshots=true,DiskADController=true"
    assert state["addons"]["managed-csiprovisioner"]["config"]["FeatureGate"] == "DiskADController=true,DiskParallelAttach=true"
    assert all(a["state"] == "active" for a in state["addons"].values())
    for inst in state["instances"].values():
        assert inst["tags"] == {"team": "db", ATTACH: "true"}
        assert inst["limits"][0] > 1  # the twin's attach controller now attaches in parallel on every node
    assert all(p["scaling_group_tags"] == [{"key": ATTACH, "value": "true"}] for p in state["node_pools"].values())
    assert plugin_pod_gates(twin) == {"EnableVolumeGroupSnapshots=true,DiskADController=true"}
    assert run.task("Kubernetes side")["status"] == "ok"  # the role checked the pods (not skipped), and they agree

    writes = cloud_calls(twin)["writes"]
    again = run_role_playbook(twin)
    assert again.rc == 0, again.stdout
    assert again.task(MODULE_TASK)["result"]["changed"] is False
    assert again.changed_tasks == []
    assert cloud_calls(twin)["writes"] == writes  # a second run makes no write call

    back = run_role_playbook(twin, extra_vars={"state": "absent"})
    assert back.rc == 0, back.stdout + back.stderr
    assert back.task(MODULE_TASK)["result"]["changed"] is True
    journal = cloud_calls(twin)["journal"]
    addon_writes = [j for j in journal if "ModifyClusterAddon" in j]
    assert addon_writes[-2:] == ["cs:ModifyClusterAddon csi-plugin", "cs:ModifyClusterAddon managed-csiprovisioner"]
    assert journal.index("cs:ModifyClusterAddon managed-csiprovisioner", len(journal) - 4) < \
        max(i for i, j in enumerate(journal) if j.startswith("ecs:UntagResources"))  # tags go last
    state = cloud_state(twin)
    assert state["addons"]["csi-plugin"]["config"]["FeatureGate"] == "EnableVolumeGroupSnapshots=true"
    assert state["addons"]["managed-csiprovisioner"]["config"]["FeatureGate"] == ""
    assert all(i["tags"] == {"team": "db"} and tuple(i["limits"]) == (1, 1) for i in state["instances"].values())
    assert all(p["scaling_group_tags"] == [] for p in state["node_pools"].values())
    assert plugin_pod_gates(twin) == {"EnableVolumeGroupSnapshots=true"}

    writes = cloud_calls(twin)["writes"]
    assert run_module(twin, "ack_parallel_attach", {"state": "absent"}).task("module under test")["result"]["changed"] is False
    assert cloud_calls(twin)["writes"] == writes


def test_check_mode_makes_no_write_call_and_diff_shows_tags_and_gates(twin_factory):
    twin = twin_factory(nodes=3, time_scale=0.01)
    run = run_role_playbook(twin, check=True, diff=True)
    assert run.rc == 0, run.stdout + run.stderr
    result = run.task(MODULE_TASK)["result"]
    assert result["changed"] is True and result["instances_changed"] == 3
    diff = result["diff"]
    assert diff["before"]["feature_gates"] == {"managed-csiprovisioner": "", "csi-plugin": ""}
    assert diff["after"]["feature_gates"] == {"managed-csiprovisioner": "DiskADController=true,DiskParallelAttach=true",
                                              "csi-plugin": "DiskADController=true"}
    assert set(diff["before"]["instance_tags"].values()) == {""}
    assert set(diff["after"]["instance_tags"].values()) == {f"{ATTACH}=true"}
    assert list(diff["after"]["node_pool_tags"].values()) == [{ATTACH: "true"}]
    assert "+        csi-plugin: DiskADController=true" in run.stdout  # rendered by --diff
    calls = cloud_calls(twin)
    assert calls["writes"] == 0 and calls["calls"].get("cs:ModifyClusterAddon") is None
    assert run.task("Verify")["status"] == "skipped"  # nothing to verify in check mode
    assert all(a["config"]["FeatureGate"] == "" for a in cloud_state(twin)["addons"].values())


def test_detach_enables_both_and_the_twin_detaches_in_parallel(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    run = run_role_playbook(twin, extra_vars={"detach": True})
    assert run.rc == 0, run.stdout + run.stderr
    state = cloud_state(twin)
    assert state["addons"]["managed-csiprovisioner"]["config"]["FeatureGate"] == \
        "DiskADController=true,DiskParallelAttach=true,DiskParallelDetach=true"
    for inst in state["instances"].values():
        assert inst["tags"] == {ATTACH: "true", DETACH: "true"}
        assert inst["limits"][0] > 1 and inst["limits"][1] > 1
    # one TagResources call carries both tags for both instances
    assert cloud_calls(twin)["calls"]["ecs:TagResources"] == 1
    back = run_module(twin, "ack_parallel_attach", {"state": "absent"})  # absent removes detach too
    assert back.rc == 0, back.stdout
    state = cloud_state(twin)
    assert all(i["tags"] == {} for i in state["instances"].values())
    assert state["addons"]["managed-csiprovisioner"]["config"]["FeatureGate"] == ""


def test_unmanaged_provisioner_pods_restart_with_the_gates(twin_factory):
    """csi-provisioner (not managed) runs as a Deployment in kube-system; the role checks its pods too."""
    twin = twin_factory(nodes=2, time_scale=0.01)
    admin(twin, "cloud", {"addon": "managed-csiprovisioner", "remove": True})
    admin(twin, "cloud", {"addon": "csi-provisioner", "create": True, "version": "v1.31.3-2d0e1fa-aliyun"})
    run = run_role_playbook(twin)
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task(MODULE_TASK)["result"]["provisioner"] == "csi-provisioner"
    pods = twin.kubectl_json("-n", "kube-system", "get", "pods", "-l", "app=csi-provisioner")["items"]
    assert len(pods) == 2
    assert all("--feature-gates=DiskADController=true,DiskParallelAttach=true" in p["spec"]["containers"][0]["args"]
               for p in pods)
    after = run.task("Read the cluster again")["result"]["kubernetes"]["csi"]["csi-provisioner"]
    assert after["feature_gates_on_all_pods"] == {"DiskADController": True, "DiskParallelAttach": True}


def test_warnings_for_disks_without_serial_and_low_disk_limits(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    seeded = admin(twin, "alibaba", {"legacy_disk": {"name": "olddb"}})["legacy_disk"]
    run = run_module(twin, "ack_parallel_attach", {"disk_quantity_warning": 60})
    assert run.rc == 0, run.stdout + run.stderr
    result = run.task("module under test")["result"]
    assert [d["disk_id"] for d in result["disks_without_serial"]] == [seeded["disk_id"]]
    assert result["low_disk_quantity_instance_types"] == ["ecs.g7se.16xlarge"]
    warnings = " ".join(result.get("warnings", []))
    assert seeded["disk_id"] in warnings and "no serial number" in warnings
    assert "at most 56 disks" in warnings


def test_preflight_can_stop_on_disks_without_serial_before_any_change(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    seeded = admin(twin, "alibaba", {"legacy_disk": {"name": "olddb"}})["legacy_disk"]
    run = run_role_playbook(twin, extra_vars={"ack_parallel_attach_fail_on_disks_without_serial": True})
    assert run.rc != 0
    msg = run.task("Stop when a disk without a serial number")["result"]["msg"]
    assert seeded["disk_id"] in msg and "olddb-pv" in msg
    assert cloud_calls(twin)["writes"] == 0


def test_controller_attach_only_from_parallel_drops_the_parallel_gates_and_tags(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    assert run_role_playbook(twin, extra_vars={"detach": True}).rc == 0
    run = run_role_playbook(twin, extra_vars={"parallel": False}, diff=True)
    assert run.rc == 0, run.stdout + run.stderr
    diff = run.task(MODULE_TASK)["result"]["diff"]
    assert diff["after"]["feature_gates"] == {"managed-csiprovisioner": "DiskADController=true", "csi-plugin": "DiskADController=true"}
    assert set(diff["after"]["instance_tags"].values()) == {""}
    state = cloud_state(twin)
    assert state["addons"]["managed-csiprovisioner"]["config"]["FeatureGate"] == "DiskADController=true"
    assert state["addons"]["csi-plugin"]["config"]["FeatureGate"] == "DiskADController=true"
    assert all(i["tags"] == {} for i in state["instances"].values())
    assert all(p["scaling_group_tags"] == [] for p in state["node_pools"].values())
    # the controller attaches, one disk at a time per node with one slot shared with detach (NewSlots(1, 1))
    assert state["controller_attach"] is True
    assert {tuple(i["driver_limits"]) for i in state["instances"].values()} == {(1, 1)}
    assert run.task("Kubernetes side")["status"] == "ok"  # the role verified the pods run the middle state
    writes = cloud_calls(twin)["writes"]
    again = run_role_playbook(twin, extra_vars={"parallel": False})
    assert again.rc == 0 and again.task(MODULE_TASK)["result"]["changed"] is False
    assert cloud_calls(twin)["writes"] == writes


def test_controller_attach_only_refuses_detach_before_any_call(twin):
    run = run_module(twin, "ack_parallel_attach", {"parallel": False, "detach": True})
    assert run.rc != 0
    assert "detach=true needs parallel=true" in run.stdout
    assert cloud_calls(twin)["calls"] == {}  # refused before the client was built
