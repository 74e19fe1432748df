"""The twin's CPU per VolumeSnapshot, created and deleted, with the watches the collection's harness keeps open.

    .venv/bin/python benchmarks/snapshot_cpu.py [--snapshots 100] [--rounds 3] [--time-scale 0.05] [--py-spy FILE]

Starts its own twin (3 nodes, Trident concurrency on, the snapshot-controller tuned as seed 002's ON run:
25 workers, QPS 75, burst 150, unless --untuned), makes N ontap-nas PVCs and waits until they are Bound. Then, per round, with
watches open as the harness's Create/Delete Snapshot steps keep them (VolumeSnapshots and Events of the
namespace, VolumeSnapshotContents), it creates N VolumeSnapshots of them (16 requests in flight) and waits until
all are readyToUse, then deletes them and waits until their contents are gone. It reads the twin process's CPU
(utime + stime, /proc/<pid>/stat) around each half, less the idle twin's rate over the same wall time, and
prints CPU ms per snapshot. CPU time is the clean figure on a loaded machine; the wall times are shown too.
With --py-spy FILE, py-spy (not a requirement of the project) samples the twin over the rounds and the top
functions by self and by inclusive time are printed.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from twin_profile import Api, Meter, VENV_BIN, _ok, samples, set_concurrency, start_twin, twin  # noqa: E402
from seed_method import TUNED_ARGS  # noqa: E402

SNAP = "/apis/snapshot.storage.k8s.io/v1"
IN_FLIGHT = 16


async def watch_until(s: aiohttp.ClientSession, path: str, rv: str, done, ready: asyncio.Event) -> None:
    """Read a watch stream from rv; set `ready` once done(type, object) returns True."""
    async with s.get(path, params={"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true"}) as r:
        async for line in r.content:
            if line.strip():
                ev = json.loads(line)
                if ev["type"] != "BOOKMARK" and done(ev["type"], ev["object"]):
                    ready.set()
                    return


async def drain(s: aiohttp.ClientSession, path: str, rv: str) -> None:
    """A watch the harness keeps open (events): read and drop."""
    async with s.get(path, params={"watch": "1", "resourceVersion": rv}) as r:
        async for _ in r.content:
            pass


async def list_rv(s: aiohttp.ClientSession, path: str) -> str:
    async with s.get(path) as r:
        return (await r.json())["metadata"]["resourceVersion"]


async def in_parallel(calls) -> None:
    sem = asyncio.Semaphore(IN_FLIGHT)

    async def one(call) -> None:
        async with sem, call() as r:
            await _ok(r)
    await asyncio.gather(*(one(c) for c in calls))


def pvc(i: int, ns: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "vol-%04d" % i, "namespace": ns},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "ontap-nas",
                     "resources": {"requests": {"storage": "1Gi"}}}}


def snapshot(i: int, ns: str, rnd: int) -> dict:
    return {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
            "metadata": {"name": "snap-%d-%04d" % (rnd, i), "namespace": ns},
            "spec": {"volumeSnapshotClassName": "trident-snapshotclass",
                     "source": {"persistentVolumeClaimName": "vol-%04d" % i}}}


async def make_pvcs(api: Api, ns: str, n: int) -> None:
    base = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    async with api.session(limit=IN_FLIGHT + 2) as s:
        async with s.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": ns}}) as r:
            await _ok(r)
        bound: set[str] = set()
        ready = asyncio.Event()

        def done(_t: str, o: dict) -> bool:
            if (o.get("status") or {}).get("phase") == "Bound":
                bound.add(o["metadata"]["name"])
            return len(bound) >= n
        w = asyncio.ensure_future(watch_until(s, base, await list_rv(s, base), done, ready))
        await in_parallel([lambda i=i: s.post(base, json=pvc(i, ns)) for i in range(n)])
        await asyncio.wait_for(ready.wait(), 600)
        await w


async def snapshot_round(api: Api, pid: int, ns: str, n: int, rnd: int) -> dict:
    vs_base = f"{SNAP}/namespaces/{ns}/volumesnapshots"
    vsc_base = f"{SNAP}/volumesnapshotcontents"
    ev_base = f"/api/v1/namespaces/{ns}/events"
    names = {"snap-%d-%04d" % (rnd, i) for i in range(n)}
    async with api.session(limit=IN_FLIGHT + 4) as s:
        events = asyncio.ensure_future(drain(s, ev_base, await list_rv(s, ev_base)))
        ready_names: set[str] = set()
        contents: set[str] = set()
        all_ready, all_gone = asyncio.Event(), asyncio.Event()

        def is_ready(_t: str, o: dict) -> bool:
            if o["metadata"]["name"] in names and (o.get("status") or {}).get("readyToUse"):
                ready_names.add(o["metadata"]["name"])
                contents.add(o["status"]["boundVolumeSnapshotContentName"])
            return len(ready_names) >= n

        gone: set[str] = set()

        def is_gone(t: str, o: dict) -> bool:
            if t == "DELETED" and o["metadata"]["name"] in contents:
                gone.add(o["metadata"]["name"])
            return len(gone) >= n

        vsc_rv = await list_rv(s, vsc_base)
        vs_watch = asyncio.ensure_future(watch_until(s, vs_base, await list_rv(s, vs_base), is_ready, all_ready))
        vsc_watch = asyncio.ensure_future(watch_until(s, vsc_base, vsc_rv, is_gone, all_gone))
        with Meter(pid) as create:
            await in_parallel([lambda i=i: s.post(vs_base, json=snapshot(i, ns, rnd)) for i in range(n)])
            await asyncio.wait_for(all_ready.wait(), 600)
        await vs_watch
        with Meter(pid) as delete:
            await in_parallel([lambda name=name: s.delete(f"{vs_base}/{name}") for name in sorted(names)])
            await asyncio.wait_for(all_gone.wait(), 600)
        await vsc_watch
        events.cancel()
    return {"create": {"wall_s": create.wall, "cpu_s": create.cpu, "net_s": create.net},
            "delete": {"wall_s": delete.wall, "cpu_s": delete.cpu, "net_s": delete.net}}


def top(raw: Path, k: int) -> tuple[int, list[tuple[str, int]], list[tuple[str, int]]]:
    """Samples, top functions by self samples and by inclusive samples, from py-spy's raw output."""
    self_n: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for stack, n in samples(raw):
        frames = [f.rsplit(":", 1)[0] + ")" if ":" in f else f for f in stack.split(";")]
        if frames[-1].startswith(("select (selectors.py", "EpollSelector.select")):
            continue  # idle: the event loop waiting in epoll
        total += n
        self_n[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
    return total, self_n.most_common(k), incl.most_common(k)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshots", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time-scale", type=float, default=0.05)
    ap.add_argument("--untuned", action="store_true",
                    help="leave the snapshot-controller at its upstream defaults (10 workers, QPS 5, burst 10)")
    ap.add_argument("--py-spy", type=Path, metavar="FILE", help="sample the twin with py-spy into FILE (raw format)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    directory, pid, env = start_twin(a.time_scale, "snapshot-cpu-")
    res: dict = {"time_scale": a.time_scale, "snapshots": a.snapshots, "load_before": os.getloadavg(), "rounds": []}
    spy = None
    try:
        set_concurrency(env, True)
        if not a.untuned:
            subprocess.run(["kubectl", "-n", "kube-system", "patch", "deployment", "snapshot-controller", "--type",
                            "json", "-p", json.dumps([{"op": "replace", "path": "/spec/template/spec/containers/0/args",
                                                       "value": TUNED_ARGS}])], env=env, check=True, capture_output=True)
        api = Api(directory)
        asyncio.run(make_pvcs(api, "snap-cpu", a.snapshots))
        with Meter(pid) as idle:
            time.sleep(3.0)
        Meter.idle_rate = idle.cpu / idle.wall
        res["idle_cpu_per_s"] = Meter.idle_rate
        if a.py_spy:
            exe = shutil.which("py-spy") or str(VENV_BIN / "py-spy")
            spy = subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", "200", "--format", "raw", "--idle",
                                    "-o", str(a.py_spy)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1.0)
        for rnd in range(a.rounds):
            res["rounds"].append(asyncio.run(snapshot_round(api, pid, "snap-cpu", a.snapshots, rnd)))
        res["load_after"] = os.getloadavg()
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        twin("down", directory=directory)
        shutil.rmtree(directory, ignore_errors=True)
    report(res, a)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


def report(res: dict, a: argparse.Namespace) -> None:
    n = res["snapshots"]
    print("twin CPU per VolumeSnapshot: %d snapshots x %d rounds, time scale %s; load %s before, %s after; "
          "idle twin %.1f ms CPU/s" % (n, len(res["rounds"]), res["time_scale"],
                                       "/".join("%.1f" % x for x in res["load_before"]),
                                       "/".join("%.1f" % x for x in res["load_after"]), 1000 * res["idle_cpu_per_s"]))
    print("| round | create wall | create CPU/snapshot | delete wall | delete CPU/snapshot |")
    print("|---:|---:|---:|---:|---:|")
    for i, r in enumerate(res["rounds"]):
        print("| %d | %.2fs | %.2f ms | %.2fs | %.2f ms |" % (
            i, r["create"]["wall_s"], 1000 * r["create"]["net_s"] / n, r["delete"]["wall_s"],
            1000 * r["delete"]["net_s"] / n))
    for half in ("create", "delete"):
        per = sorted(1000 * r[half]["net_s"] / n for r in res["rounds"])
        print("%s: CPU per snapshot median %.2f ms, lowest %.2f ms (the lowest is the least disturbed by other load)"
              % (half, per[len(per) // 2], per[0]))
    if a.py_spy and a.py_spy.exists():
        total, self_top, incl_top = top(a.py_spy, a.top)
        print("\npy-spy: %d busy samples (epoll waits left out)" % total)
        for title, rows in (("self", self_top), ("inclusive", incl_top)):
            print("\n| top by %s | share |\n|---|---:|" % title)
            for fn, k in rows:
                print("| %s | %.1f%% |" % (fn, 100 * k / max(1, total)))


if __name__ == "__main__":
    sys.exit(main())
