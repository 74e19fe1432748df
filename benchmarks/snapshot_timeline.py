"""Where Create Snapshot ON's time goes by seed 002's own method: the step's figure beside its timeline.

    .venv/bin/python benchmarks/snapshot_timeline.py [--time-scale 0.1] [--driver ontap-nas]
        [--before create,publish,unpublish] [--seed N] [--kubectl .cache/kubectl-1.34/kubectl]

Starts its own twin (25 nodes, Trident concurrency on, the snapshot-controller tuned as for the seed's ON run),
runs the `--before` steps by the seed's method (benchmarks/seed_method.py), then the Create Snapshot step the same
way (`kubectl apply -f` of 100 VolumeSnapshots, `kubectl get` once per cluster second until all are readyToUse)
while two watches record when each VolumeSnapshot and VolumeSnapshotContent appeared and became ready. Prints,
in cluster seconds from the clock's start: the step, kubectl's start and sending, those four spans, the gaps
over 0.4 s between consecutive contents becoming ready (where ONTAP's serialized section sat idle), and every
throttled client's calls. `--seed N` runs the twin with calibration.yaml's RNG seed replaced by N (the draws of
every latency), through TWIN_CALIBRATION. docs/calibration.md ("what is left of Create Snapshot ON") holds the
figures.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import ssl
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import seed_method as sm  # noqa: E402
from tests.support.alibaba import admin  # noqa: E402

SNAP = "/apis/snapshot.storage.k8s.io/v1"


def _watch(tw: sm.Twin, path: str, added: list[float], ready: list[float], stop: threading.Event) -> None:
    """Record when objects are ADDED and when each first shows status.readyToUse, until `stop` or 100 ready."""
    ctx = ssl.create_default_context(cafile=str(tw.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(f"{tw.server}{path}?watch=1", headers={"Authorization": f"Bearer {tw.token}"})
    seen: set[str] = set()
    with urllib.request.urlopen(req, context=ctx, timeout=600) as r:
        for line in r:
            now = time.monotonic()
            ev = json.loads(line)
            obj = ev["object"]
            if ev["type"] == "ADDED":
                added.append(now)
            if (obj.get("status") or {}).get("readyToUse") and obj["metadata"]["name"] not in seen:
                seen.add(obj["metadata"]["name"])
                ready.append(now)
            if stop.is_set() or len(seen) >= 100:
                return


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--driver", default="ontap-nas", choices=("ontap-nas", "ontap-san"))
    ap.add_argument("--before", default="create", help="steps run first, of " + ",".join(sm.STEP_ORDER[:3]))
    ap.add_argument("--seed", type=int, help="calibration.yaml's RNG seed replaced by this one")
    ap.add_argument("--kubectl", help="the kubectl to run (default: KUBECTL or the one on PATH)")
    a = ap.parse_args()
    before = tuple(s for s in a.before.split(",") if s)
    if "create" not in before or set(before) - set(sm.STEP_ORDER[:3]):
        ap.error(f"--before: 'create' and any of {', '.join(sm.STEP_ORDER[1:3])}, got {a.before!r}")
    if a.kubectl:
        sm.KUBECTL = a.kubectl
    ts = a.time_scale
    with tempfile.TemporaryDirectory(prefix="snapshot-timeline-") as d:
        if a.seed is not None:
            text = (sm.REPO / "twin" / "calibration.yaml").read_text()
            cal = Path(d) / "calibration.yaml"
            cal.write_text(re.sub(r"(?m)^seed: \d+", f"seed: {a.seed}", text, count=1))
            os.environ["TWIN_CALIBRATION"] = str(cal)  # the twin process inherits it
        with sm.Twin(Path(d) / "twin", nodes=25, time_scale=ts) as tw:
            sm.set_snapshot_controller_args(tw, sm.TUNED_ARGS)
            sm.set_concurrency(tw, True)
            sm.lifecycle(tw, a.driver, True, 100, steps=before)
            ns = f"{a.driver}-on"
            spans: dict[str, list[float]] = {k: [] for k in ("snapshot added", "snapshot ready", "content added", "content ready")}
            stop = threading.Event()
            watchers = [threading.Thread(target=_watch, daemon=True, args=(tw, f"{SNAP}/namespaces/{ns}/volumesnapshots",
                                                                           spans["snapshot added"], spans["snapshot ready"], stop)),
                        threading.Thread(target=_watch, daemon=True, args=(tw, f"{SNAP}/volumesnapshotcontents",
                                                                           spans["content added"], spans["content ready"], stop))]
            for w in watchers:
                w.start()
            manifest = sm.write(Path(d), "snapshots", [sm.snapshot(f"snap-vol-{i}", ns, f"vol-{i}") for i in range(100)])
            # the clock starts inside run_step, just before kubectl apply; the first watch line (ADDED) comes after it
            t0 = time.monotonic()
            step = sm.run_step(tw, "apply", manifest, ["volumesnapshots", "-n", ns],
                               lambda items: sm.count(items, sm.snapshot_ready) >= 100, ts)
            stop.set()
            for w in watchers:
                w.join(60)
            calls = admin(tw, "storage", {"only": ["throttles"], "log": True})["throttles"]
    print(f"{a.driver} Create Snapshot ON after {','.join(before)} at {ts} (seed {a.seed if a.seed is not None else 'of the file'}, "
          f"{sm.client_version()}): {step.wall / ts:.2f} s; kubectl started {step.prepare / ts:.2f} s, sent for "
          f"{(step.submit - step.prepare) / ts:.2f} s; {step.polls} polls of {step.poll_wall / step.polls * 1000:.0f} ms wall")
    for name, xs in spans.items():
        xs.sort()
        print(f"  {name:15s} " + (f"{(xs[0] - t0) / ts:6.2f} .. {(xs[-1] - t0) / ts:6.2f} s (n={len(xs)})" if xs else "-"))
    ready = spans["content ready"]
    gaps = [(i + 1, (b - t0) / ts, (b - a_) / ts) for i, (a_, b) in enumerate(zip(ready, ready[1:])) if (b - a_) / ts > 0.4]
    print("  content ready gaps > 0.4 s: " + (", ".join(f"#{n} at {t:.2f} s: {g:.2f} s" for n, t, g in gaps) or "none"))
    for name, doc in calls.items():
        since = t0 / ts
        n = sum(1 for t, _, _ in doc.get("log", []) if t >= since)
        if n:
            print(f"  {name}: {n} calls in the step (qps {doc['qps']:g}, burst {doc['burst']}, workers {doc['workers']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
