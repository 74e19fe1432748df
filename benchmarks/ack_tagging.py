"""How long tagging a large ACK cluster takes: one call at a time (the seed's loop) against the module's
bounded parallel calls, at a fixed per-call API latency.

    .venv/bin/python benchmarks/ack_tagging.py [--nodes 500] [--pools 5] [--latency 0.1]
                                               [--concurrency 1,4,8,16] [--dir D]

The seed's script tags one page of 50 nodes at a time, each TagResources after the previous one, and the
node pools one after another. ack_parallel_attach plans the same calls (ceil(nodes/50) TagResources, one
ModifyClusterNodePool per pool) and runs them on a thread pool of `concurrency`. Both run here through the
module's own code (module_utils.ack.parallel_attach) with concurrency 1 (serial, as the seed) and the given
values, against one twin whose Alibaba Cloud gateway adds --latency seconds to every call (real ECS and ACK
calls take 0.1-0.5 s). Between runs the tags are removed again (not timed). The twin runs at time scale
0.001 so that the addon rollouts (not what is measured here) are short; the table shows the tagging phase
(node pools + instances) and the whole run, with the calls each made.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "collections"))  # the installed collection (scripts/install-collection.sh)
sys.path.insert(0, str(REPO))

from ansible_collections.storageperf.k8s.plugins.module_utils.ack.parallel_attach import ParallelAttach  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient  # noqa: E402
from tests.support.alibaba import admin  # noqa: E402
from tests.support.twin import Twin  # noqa: E402


class TimedTagging(ParallelAttach):
    """The module's run, with the tagging phase timed on the side."""

    tag_seconds = 0.0

    def tag(self, facts, plan):
        t0 = time.monotonic()
        try:
            return super().tag(facts, plan)
        finally:
            self.tag_seconds = time.monotonic() - t0


def run(cloud: dict, state: str, concurrency: int) -> tuple[float, float, dict]:
    client = AliyunClient({"access_key_id": cloud["access_key_id"], "access_key_secret": cloud["access_key_secret"],
                           "cs_endpoint": cloud["cs_endpoint"], "ecs_endpoint": cloud["ecs_endpoint"],
                           "concurrency": concurrency, "api_retries": 6, "api_timeout": 30})
    # every option the module's argument spec fills in (ParallelAttach reads them as the spec leaves them):
    # parallel=True is the module's default, the parallel attach the figures are about
    runner = TimedTagging(client, {"cluster_id": cloud["cluster_id"], "state": state, "detach": False,
                                   "parallel": True, "wait_timeout": 600, "disk_quantity_warning": 0})
    t0 = time.monotonic()
    runner.run()
    return time.monotonic() - t0, runner.tag_seconds, client.stats()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument("--pools", type=int, default=5)
    p.add_argument("--latency", type=float, default=0.1, help="seconds added to every Alibaba Cloud call")
    p.add_argument("--concurrency", default="1,4,8,16", help="comma list; 1 is the seed's serial loop")
    p.add_argument("--dir", type=Path, help="twin directory (default: a temporary one)")
    a = p.parse_args()
    levels = [int(c) for c in a.concurrency.split(",")]
    directory = a.dir or Path(tempfile.mkdtemp(prefix="ack-tagging-")) / "twin"
    with Twin(directory, nodes=a.nodes, time_scale=0.001, extra=["--node-pools", str(a.pools)]) as twin:
        cloud = twin.cloud["alibaba"]
        admin(twin, "alibaba", {"latency": a.latency})
        expected = math.ceil(a.nodes / 50)
        print(f"{a.nodes} nodes in {a.pools} node pools, {a.latency * 1000:.0f} ms per API call; "
              f"{expected} TagResources + {a.pools} ModifyClusterNodePool calls to make")
        print(f"{'concurrency':>11} {'tagging s':>10} {'whole run s':>12} {'TagResources':>13} {'all calls':>10} "
              f"{'speedup':>8}")
        rows = []
        for c in levels:
            total, tagging, stats = run(cloud, "present", c)
            rows.append((c, tagging, total, stats))
            run(cloud, "absent", 16)  # undo, untimed
            base = rows[0][1]
            print(f"{c:>11} {tagging:>10.2f} {total:>12.2f} {stats['calls'].get('ecs:TagResources', 0):>13} "
                  f"{stats['total']:>10} {base / tagging if tagging else 0:>7.1f}x")
        seen = admin(twin, "alibaba", {})["max_in_flight"]
        print(json.dumps({"max_in_flight_seen_by_the_twin": seen}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
