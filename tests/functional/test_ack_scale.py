"""500 nodes in 7 node pools: the module tags them in ceil(500/50) TagResources calls, runs its calls in parallel
but never more than `concurrency` at once, and reads every page of nodes."""
from __future__ import annotations

import math
import time

from tests.support.alibaba import admin, cloud_calls, cloud_state, run_module, run_role_playbook

NODES, POOLS, CONCURRENCY = 500, 7, 4


def test_500_nodes_in_several_pools(twin_factory):
    twin = twin_factory(nodes=NODES, time_scale=0.01, extra=["--node-pools", str(POOLS)])
    admin(twin, "alibaba", {"latency": 0.02})  # every call takes a moment, so overlapping calls become visible
    run = run_module(twin, "ack_parallel_attach", {"concurrency": CONCURRENCY})
    assert run.rc == 0, run.stdout + run.stderr
    result = run.task("module under test")["result"]
    assert result["instances_changed"] == NODES and len(result["node_pools_changed"]) == POOLS
    calls = cloud_calls(twin)
    assert calls["calls"]["ecs:TagResources"] == math.ceil(NODES / 50)
    assert calls["calls"]["ecs:ListTagResources"] == math.ceil(NODES / 50)
    assert calls["calls"]["cs:DescribeClusterNodes"] == math.ceil(NODES / 100)
    assert calls["calls"]["cs:ModifyClusterNodePool"] == POOLS
    assert result["api_calls"]["calls"]["ecs:TagResources"] == calls["calls"]["ecs:TagResources"]
    assert 1 < calls["max_in_flight"]["ecs:TagResources"] <= CONCURRENCY
    state = cloud_state(twin)
    assert sum(1 for i in state["instances"].values() if i["tags"].get("supportConcurrencyAttach") == "true") == NODES

    info = run_module(twin, "ack_cluster_info", {})
    assert info.rc == 0, info.stdout
    r = info.task("module under test")["result"]
    assert len(r["nodes"]) == NODES and r["parallel_attach"]["enabled"] is True
    plugin = r["kubernetes"]["csi"]["csi-plugin"]
    assert plugin["pods"] == plugin["ready"] == plugin["desired"] == NODES
    assert plugin["feature_gates_on_all_pods"] == {"DiskADController": True}


def _csi_plugin_ready(twin, gate: str) -> None:
    """Wait (a watch, through kubectl) until the DaemonSet's rollout is done, then check every pod once."""
    twin.kubectl("-n", "kube-system", "rollout", "status", "ds/csi-plugin", "--timeout=300s", timeout=330)
    pods = twin.kubectl_json("-n", "kube-system", "get", "pods", "-l", "app=csi-plugin")["items"]
    assert len(pods) == NODES and len({p["metadata"]["name"] for p in pods}) == NODES
    assert len({p["spec"]["nodeName"] for p in pods}) == NODES  # one per node
    for p in pods:
        assert p["metadata"]["generateName"] == "csi-plugin-" and not p["metadata"].get("deletionTimestamp")
        ready = next(c["status"] for c in p["status"]["conditions"] if c["type"] == "Ready")
        assert ready == "True", p["metadata"]["name"]
        assert f"--feature-gates={gate}" in p["spec"]["containers"][0]["args"] or (not gate and not any(
            a.startswith("--feature-gates=") for a in p["spec"]["containers"][0]["args"]))


def _timed_tagging(cloud: dict, state: str, concurrency: int) -> float:
    """The module's own code in this process, with its tagging phase (node pools + instances) timed."""
    from ansible_collections.storageperf.k8s.plugins.module_utils.ack.parallel_attach import ParallelAttach
    from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient

    class Timed(ParallelAttach):
        seconds = 0.0

        def tag(self, facts, plan):
            t0 = time.monotonic()
            try:
                return super().tag(facts, plan)
            finally:
                self.seconds = time.monotonic() - t0

    client = AliyunClient({"access_key_id": cloud["access_key_id"], "access_key_secret": cloud["access_key_secret"],
                           "cs_endpoint": cloud["cs_endpoint"], "ecs_endpoint": cloud["ecs_endpoint"],
                           "concurrency": concurrency, "api_retries": 6, "api_timeout": 30})
    runner = Timed(client, {"cluster_id": cloud["cluster_id"], "state": state, "detach": False, "parallel": True, "wait_timeout": 600,
                            "disk_quantity_warning": 0})
    runner.run()
    return runner.seconds


def test_500_nodes_enable_and_roll_back_through_the_playbook(twin_factory):
    """Every csi-plugin pod is recreated (by generateName) on each addon change; 500 of them used to collide."""
    twin = twin_factory(nodes=NODES, time_scale=0.01, extra=["--node-pools", str(POOLS)])
    for state, action, gate in (("present", "ecs:TagResources", "DiskADController=true"),
                                ("absent", "ecs:UntagResources", "")):
        admin(twin, "alibaba", {"reset_calls": True})
        run = run_role_playbook(twin, extra_vars={"state": state})
        assert run.rc == 0, run.stdout + run.stderr
        calls = cloud_calls(twin)
        assert calls["calls"][action] == math.ceil(NODES / 50)
        assert calls["calls"]["cs:ModifyClusterNodePool"] == POOLS
        assert {a["state"] for a in cloud_state(twin)["addons"].values()} == {"active"}
        _csi_plugin_ready(twin, gate)
    tagged = sum(1 for i in cloud_state(twin)["instances"].values() if "supportConcurrencyAttach" in i["tags"])
    assert tagged == 0

    # serial (the seed's loop) against 8 at once, same calls at the same latency, in this one run: 10 TagResources
    # and 7 ModifyClusterNodePool take 17 latencies one after another and 3 with 8 in flight
    admin(twin, "alibaba", {"latency": 0.1})
    serial = _timed_tagging(twin.cloud["alibaba"], "present", 1)
    _timed_tagging(twin.cloud["alibaba"], "absent", 8)
    concurrent = _timed_tagging(twin.cloud["alibaba"], "present", 8)
    print(f"500 nodes, tagging: serial {serial:.2f} s, 8 at once {concurrent:.2f} s ({serial / concurrent:.1f}x)")
    assert serial / concurrent > 2.5, (serial, concurrent)
