"""500 nodes in 7 node pools: the module tags them in ceil(500/50) TagResources calls, runs its calls in parallel
but never more than `concurrency` at once, and reads every page of nodes."""
from __future__ import annotations

import math

from tests.support.alibaba import admin, cloud_calls, cloud_state, run_module

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
