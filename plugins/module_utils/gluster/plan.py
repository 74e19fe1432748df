# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gluster_volume_scale run's plan as the result document stores it, and its progress line.

The bench engine's benchmarks keep their plan in the document under `plan` (bench_plan writes it once; the
repetitions read it). The gluster benchmark keeps the same shape, so that a reader of `plan` finds one:

    {"benchmark": "gluster_volume_scale", "options": {volume_counts, compare, replica, ...},
     "read": {"cluster": {peers, server, nodes}, "components": {glusterfs}},
     "variants": ["brick-multiplex off", ...], "settings": {variant: its cluster options}, "repeat": 1}

Its steps are host commands (the restart runs on a peer, the document is written on the controller), so it has
no `engine` (concurrency, watches) and no `metrics` (the role's metrics_push writes and pushes metrics.prom).
The role starts the document with the plan before it measures anything; a later write under the same run id
with another plan is refused, so one run id never holds figures of two plans.
"""
from __future__ import annotations

import json
import os

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import progress as P
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D

BENCHMARK = "gluster_volume_scale"
# what progress.line() counts: the volume counts of one mode measured so far
PROGRESS_UNIT = "volume counts"


def stored_plan(modes: list[dict], parameters: dict, cluster: dict, components: dict) -> dict:
    """The plan as JSON keeps it (so that a plan read back compares equal to one made again)."""
    plan = {"benchmark": BENCHMARK, "options": dict(parameters),
            "read": {"cluster": dict(cluster), "components": {k: str(v) for k, v in components.items()}},
            "variants": [m["name"] for m in modes],
            "settings": {m["name"]: dict(m.get("settings") or {}) for m in modes}, "repeat": 1}
    return json.loads(json.dumps(plan, sort_keys=True))


def check_same_plan(reports_dir: str, run_id: str, plan: dict) -> None:
    """Refuse a plan other than the one stored under run_id (a document without a plan is an older run's)."""
    path = D.result_path(reports_dir, run_id)
    if not run_id or not os.path.exists(path):
        return
    try:
        stored = D.load(path, check=False).get("plan")
    except ValueError:
        return  # unreadable: rewritten whole, as before the plan was stored
    if stored and stored != plan:
        changed = sorted(k for k in set(stored) | set(plan) if stored.get(k) != plan.get(k))
        raise StoragePerfError(
            f"run_id {run_id}: {path} holds the plan of another run (it differs in {', '.join(changed)}); a run's "
            "plan is made once: give another run_id (the role's gluster_volume_scale_bench_run_id), or leave it empty for a "
            "new one")


def progress_line(points: list[dict], plan: dict) -> str:
    """The bench engine's progress line (bench/progress.py) for the point measured last, or '' before any."""
    if not points:
        return ""
    last = points[-1]
    hs = last.get("handshake") or {}
    counts = (plan.get("options") or {}).get("volume_counts")
    done = sum(1 for p in points if p["mode"] == last["mode"])
    return P.line({"benchmark": plan["benchmark"], "variant": last["mode"], "repetition": 1,
                   "label": f"Restart handshake, {last['volumes']} volumes", "done": done,
                   "total": len(counts) if isinstance(counts, list) else done, "unit": PROGRESS_UNIT,
                   "errors": 1 if last.get("error") else 0,
                   "elapsed_s": hs.get("handshake_seconds", hs.get("waited_seconds")), "final": True})
