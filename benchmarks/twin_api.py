"""Benchmark of the twin's Kubernetes API server.

Starts a twin (`python -m twin up`), then measures, over HTTPS with the bearer token as any client:
  create   ConfigMaps (and Pods, which carry the full pod schema) per second, `--concurrency` in flight
  get      GETs of those per second
  list     LISTs of a namespace holding 1000 objects per second
  watch    fan-out: `--watchers` watch streams (in separate processes) on one namespace while ConfigMaps are
           created; events delivered per second over all watchers, and the max lag from the writer's
           send time to each watcher's receive time
  memory   the twin's resident memory once it holds `--objects` objects (Pods bound to a node no
           kubelet runs), and a GET / LIST at that size
  latency  each request's latency, one request at a time as kubectl sends them: `--latency-requests` ConfigMap
           creates on a quiet twin; then `--pvcs` ontap-nas PVC creates (seed 002's `kubectl create -f` of N
           PVCs), and GETs until every PVC is Bound, while the twin's Trident controller (its concurrent core
           unless `--trident-concurrency off`) provisions them in the same process: p50 and p95 of each
           (issue 45's bar: p50 of 5 ms or less under that load)

Usage: .venv/bin/python benchmarks/twin_api.py [--objects 20000] [--watchers 50] [--json out.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml

REPO = Path(__file__).resolve().parents[1]
PY = Path(sys.executable)


class Conn:
    def __init__(self, d: Path):
        cfg = yaml.safe_load((d / "kubeconfig").read_text())
        self.server = cfg["clusters"][0]["cluster"]["server"]
        self.token = cfg["users"][0]["user"]["token"]
        self.ca = str(d / "pki" / "ca.crt")
        self.pid = int((d / "twin.pid").read_text())

    def session(self, limit: int) -> aiohttp.ClientSession:
        ctx = ssl.create_default_context(cafile=self.ca)
        return aiohttp.ClientSession(self.server, connector=aiohttp.TCPConnector(limit=limit, ssl=ctx),
                                     headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"},
                                     timeout=aiohttp.ClientTimeout(total=None, sock_read=600))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pvc(name: str, storage_class: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def quantiles_ms(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return (round(statistics.median(ordered) * 1000, 2),
            round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2))


async def timed(request) -> float:
    t0 = time.perf_counter()
    await expect(request)
    return time.perf_counter() - t0


TORC = "/apis/trident.netapp.io/v1/tridentorchestrators"


async def trident_concurrency(s: aiohttp.ClientSession, on: bool) -> None:
    """Switch the twin's Trident to its concurrent core (or not) and wait, by watch, until the operator has
    installed it."""
    want = "true" if on else "false"
    async with s.patch(f"{TORC}/trident", json={"spec": {"enableConcurrency": on}},
                       headers={"Content-Type": "application/merge-patch+json"}) as r:
        r.raise_for_status()
    async with s.get(TORC, params={"watch": "1", "fieldSelector": "metadata.name=trident"}) as r:
        r.raise_for_status()
        async for line in r.content:
            status = (json.loads(line)["object"].get("status") or {})
            if status.get("status") == "Installed" and (status.get("currentInstallationParams") or {}).get(
                    "enableConcurrency") == want:
                return


async def latency(s: aiohttp.ClientSession, args: argparse.Namespace, res: dict) -> None:
    """One request at a time: quiet, then while the Trident controller provisions the PVCs just created."""
    await trident_concurrency(s, args.trident_concurrency == "on")
    res["trident_concurrency"] = args.trident_concurrency
    quiet = [await timed(s.post("/api/v1/namespaces/bench-latency/configmaps", json=configmap(f"q-{i:06d}")))
             for i in range(args.latency_requests)]
    res["quiet_create_p50_ms"], res["quiet_create_p95_ms"] = quantiles_ms(quiet)
    t0 = time.perf_counter()
    creates = [await timed(s.post("/api/v1/namespaces/bench-latency/persistentvolumeclaims",
                                  json=pvc(f"pvc-{i:05d}", args.storage_class))) for i in range(args.pvcs)]
    res["pvc_create_p50_ms"], res["pvc_create_p95_ms"] = quantiles_ms(creates)
    res["pvc_creates_s"] = round(time.perf_counter() - t0, 2)
    gets: list[float] = []
    bound = 0
    while bound < args.pvcs and time.perf_counter() - t0 < args.bind_timeout:
        for i in range(20):
            gets.append(await timed(s.get(f"/api/v1/namespaces/bench-latency/configmaps/q-{i % args.latency_requests:06d}")))
        claims = json.loads(await expect(s.get("/api/v1/namespaces/bench-latency/persistentvolumeclaims")))["items"]
        bound = sum(1 for c in claims if (c.get("status") or {}).get("phase") == "Bound")
    res["pvcs_bound"] = bound
    res["get_under_load"] = len(gets)
    res["get_under_load_p50_ms"], res["get_under_load_p95_ms"] = quantiles_ms(gets or [float("nan")])


def configmap(name: str, sent: float | None = None) -> dict:
    md: dict = {"name": name, "labels": {"storageperf.k8s/benchmark": "twin-api", "storageperf.k8s/run-id": "bench"}}
    if sent is not None:
        md["annotations"] = {"bench/sent": repr(sent)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": {"a": "1", "b": "two", "c": "x" * 64}}


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "bench", "storageperf.k8s/benchmark": "twin-api",
                                                  "storageperf.k8s/run-id": "bench"}},
            "spec": {"nodeName": "bench-ghost-node", "containers": [
                {"name": "main", "image": "nginx:1.25", "args": ["--port", "8080"],
                 "env": [{"name": "MODE", "value": "bench"}], "ports": [{"containerPort": 8080, "name": "http"}],
                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                "volumes": [{"name": "data", "emptyDir": {}}]}}


async def run_many(n: int, concurrency: int, make) -> float:
    """Run make(i) for i < n with `concurrency` in flight; returns the elapsed seconds."""
    it = iter(range(n))

    async def worker() -> None:
        for i in it:
            await make(i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0


async def expect(resp_cm, status: tuple[int, ...] = (200, 201)) -> bytes:
    async with resp_cm as r:
        body = await r.read()
        if r.status not in status:
            raise RuntimeError(f"{r.method} {r.url} -> {r.status}: {body[:300]!r}")
        return body


async def ensure_ns(s: aiohttp.ClientSession, name: str) -> None:
    async with s.post("/api/v1/namespaces", json={"metadata": {"name": name}}) as r:
        await r.read()


# watchers (child processes) ------------------------------------------------------------------
def watcher_proc(conn_dir: str, ns: str, rv: str, n_streams: int, expect_events: int, out: mp.Queue,
                 ready: mp.Queue) -> None:
    async def main() -> None:
        conn = Conn(Path(conn_dir))
        async with conn.session(n_streams + 2) as s:
            lags: list[float] = []
            counts = [0] * n_streams
            last = [0.0] * n_streams

            async def one(i: int) -> None:
                url = f"/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=600"
                async with s.get(url) as r:
                    ready.put(1)
                    while counts[i] < expect_events:
                        line = await r.content.readline()
                        if not line:
                            break
                        now = time.time()
                        ev = json.loads(line)
                        sent = float(ev["object"]["metadata"]["annotations"]["bench/sent"])
                        lags.append(now - sent)
                        counts[i] += 1
                        last[i] = now

            await asyncio.gather(*(one(i) for i in range(n_streams)))
            out.put({"events": sum(counts), "lags": lags, "last": max(last) if last else 0.0})

    asyncio.run(main())


async def bench(args: argparse.Namespace, d: Path) -> dict:
    conn = Conn(d)
    res: dict = {"objects_target": args.objects, "watchers": args.watchers}
    async with conn.session(args.concurrency) as s:
        for ns in ("bench-cm", "bench-list", "bench-watch", "bench-pods", "bench-latency"):
            await ensure_ns(s, ns)
        res["rss_start_mib"] = round(rss_mib(conn.pid), 1)

        # latency, one request at a time, quiet and under the controllers' load ----------------
        await latency(s, args, res)

        # create ----------------------------------------------------------------------------
        n = args.creates
        el = await run_many(n, args.concurrency, lambda i: expect(
            s.post("/api/v1/namespaces/bench-cm/configmaps", json=configmap(f"cm-{i:06d}"))))
        res["create_configmaps_per_s"] = round(n / el)
        el = await run_many(n, args.concurrency, lambda i: expect(
            s.post("/api/v1/namespaces/bench-pods/pods", json=pod(f"pod-{i:06d}"))))
        res["create_pods_per_s"] = round(n / el)

        # get -------------------------------------------------------------------------------
        el = await run_many(n, args.concurrency, lambda i: expect(
            s.get(f"/api/v1/namespaces/bench-cm/configmaps/cm-{i % n:06d}")))
        res["get_per_s"] = round(n / el)

        # list of 1000 ----------------------------------------------------------------------
        await run_many(1000, args.concurrency, lambda i: expect(
            s.post("/api/v1/namespaces/bench-list/configmaps", json=configmap(f"l-{i:04d}"))))
        sizes = []

        async def one_list(_i: int) -> None:
            body = await expect(s.get("/api/v1/namespaces/bench-list/configmaps"))
            sizes.append(len(body))

        lists = args.lists
        el = await run_many(lists, min(args.concurrency, 8), one_list)
        res["list_1000_per_s"] = round(lists / el, 1)
        res["list_1000_bytes"] = sizes[0]
        t0 = time.perf_counter()
        for _ in range(10):
            await expect(s.get("/api/v1/namespaces/bench-list/configmaps?limit=500"))
        res["list_page_500_ms"] = round((time.perf_counter() - t0) / 10 * 1000, 1)

        # watch fan-out ---------------------------------------------------------------------
        body = json.loads(await expect(s.get("/api/v1/namespaces/bench-watch/configmaps")))
        rv = body["metadata"]["resourceVersion"]
        events = args.watch_events
        procs, out, ready = [], mp.Queue(), mp.Queue()
        per = [args.watchers // args.watch_procs + (1 if i < args.watchers % args.watch_procs else 0)
               for i in range(args.watch_procs)]
        for k in per:
            if k:
                p = mp.Process(target=watcher_proc, args=(str(d), "bench-watch", rv, k, events, out, ready))
                p.start()
                procs.append(p)
        for _ in range(args.watchers):
            ready.get(timeout=120)
        t0 = time.time()
        el = await run_many(events, args.concurrency, lambda i: expect(
            s.post("/api/v1/namespaces/bench-watch/configmaps", json=configmap(f"w-{i:06d}", time.time()))))
        res["watch_writer_creates_per_s"] = round(events / el)
        results = [out.get(timeout=600) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        delivered = sum(r["events"] for r in results)
        lags = [x for r in results for x in r["lags"]]
        t_end = max(r["last"] for r in results)
        res["watch_events_expected"] = events * args.watchers
        res["watch_events_delivered"] = delivered
        res["watch_events_per_s"] = round(delivered / (t_end - t0))
        res["watch_lag_p50_ms"] = round(statistics.median(lags) * 1000, 1)
        res["watch_lag_p99_ms"] = round(sorted(lags)[int(len(lags) * 0.99) - 1] * 1000, 1)
        res["watch_lag_max_ms"] = round(max(lags) * 1000, 1)

        # fill to N objects, memory ---------------------------------------------------------
        async with s.post("/_twin/stats", json={}) as r:
            have = (await r.json())["objects"]
        fill = max(0, args.objects - have)
        el = await run_many(fill, args.concurrency, lambda i: expect(
            s.post("/api/v1/namespaces/bench-pods/pods", json=pod(f"fill-{i:06d}"))))
        async with s.post("/_twin/stats", json={}) as r:
            res["objects_held"] = (await r.json())["objects"]
        res["rss_full_mib"] = round(rss_mib(conn.pid), 1)
        res["rss_per_object_kib"] = round((res["rss_full_mib"] - res["rss_start_mib"]) * 1024 /
                                          max(1, res["objects_held"]), 1)
        t0 = time.perf_counter()
        for i in range(200):
            await expect(s.get(f"/api/v1/namespaces/bench-pods/pods/pod-{i % n:06d}"))
        res["get_at_full_ms"] = round((time.perf_counter() - t0) / 200 * 1000, 2)
        t0 = time.perf_counter()
        body = await expect(s.get("/api/v1/pods?labelSelector=app%3Dbench&limit=500"))
        res["list_500_of_all_pods_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        t0 = time.perf_counter()
        body = await expect(s.get("/api/v1/namespaces/bench-pods/pods"))
        res["list_all_pods_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        res["list_all_pods_items"] = len(json.loads(body)["items"])
    return res


LABELS = [
    ("quiet_create_p50_ms", "create ConfigMap, quiet twin, one at a time: p50 (ms)"),
    ("quiet_create_p95_ms", "  p95 (ms)"),
    ("pvc_create_p50_ms", "create PVC while Trident provisions, one at a time: p50 (ms)"),
    ("pvc_create_p95_ms", "  p95 (ms)"),
    ("get_under_load_p50_ms", "get while Trident provisions, one at a time: p50 (ms)"),
    ("get_under_load_p95_ms", "  p95 (ms)"), ("get_under_load", "  gets measured"),
    ("pvcs_bound", "PVCs Bound at the end"), ("trident_concurrency", "Trident's concurrent core"),
    ("create_configmaps_per_s", "create ConfigMap (req/s)"), ("create_pods_per_s", "create Pod (req/s)"),
    ("get_per_s", "get (req/s)"), ("list_1000_per_s", "list of 1000 ConfigMaps (lists/s)"),
    ("list_page_500_ms", "list page of 500 (ms)"),
    ("watch_writer_creates_per_s", "creates during fan-out (req/s)"),
    ("watch_events_delivered", "watch events delivered"), ("watch_events_expected", "watch events expected"),
    ("watch_events_per_s", "watch events delivered (events/s, all watchers)"),
    ("watch_lag_p50_ms", "watch lag p50 (ms)"), ("watch_lag_p99_ms", "watch lag p99 (ms)"),
    ("watch_lag_max_ms", "watch lag max (ms)"), ("objects_held", "objects held"),
    ("rss_start_mib", "RSS at start (MiB)"), ("rss_full_mib", "RSS holding the objects (MiB)"),
    ("rss_per_object_kib", "RSS per object (KiB)"), ("get_at_full_ms", "get at full size (ms)"),
    ("list_500_of_all_pods_ms", "list 500 pods by label, all namespaces (ms)"),
    ("list_all_pods_ms", "list every bench pod (ms)"), ("list_all_pods_items", "pods in that list"),
]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--objects", type=int, default=20000, help="objects the twin holds for the memory figure")
    p.add_argument("--watchers", type=int, default=50)
    p.add_argument("--watch-procs", type=int, default=2, help="processes the watchers are spread over")
    p.add_argument("--watch-events", type=int, default=1000, help="objects created while the watchers watch")
    p.add_argument("--creates", type=int, default=2000, help="ConfigMaps and Pods created for the create/get rates")
    p.add_argument("--lists", type=int, default=50, help="LISTs of 1000 objects")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--latency-requests", type=int, default=100, help="ConfigMaps created one at a time, quiet")
    p.add_argument("--pvcs", type=int, default=100, help="PVCs created one at a time for the latency under load")
    p.add_argument("--storage-class", default="ontap-nas", help="the PVCs' class (a Trident class of the twin)")
    p.add_argument("--bind-timeout", type=float, default=120, help="seconds the GETs go on waiting for Bound")
    p.add_argument("--trident-concurrency", choices=("on", "off"), default="on",
                   help="the twin's Trident with its concurrent core (seed 002's ON) or without")
    p.add_argument("--dir", type=Path, help="twin directory (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="leave the twin running")
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = p.parse_args()
    d = (args.dir or Path(tempfile.mkdtemp(prefix="twin-bench-"))).resolve()
    subprocess.run([str(PY), "-m", "twin", "up", "--dir", str(d), "--nodes", "3", "--time-scale", "0.01"],
                   cwd=REPO, check=True)
    try:
        res = asyncio.run(bench(args, d))
    finally:
        if not args.keep:
            subprocess.run([str(PY), "-m", "twin", "down", "--dir", str(d)], cwd=REPO, check=False)
            if not args.dir:
                shutil.rmtree(d, ignore_errors=True)
    res["cpus"] = os.cpu_count()
    res["load_avg_1m"] = round(os.getloadavg()[0], 2)
    width = max(len(label) for _, label in LABELS)
    print(f"\ntwin API server benchmark ({res['cpus']} CPUs, load average {res['load_avg_1m']})")
    for key, label in LABELS:
        print(f"  {label:<{width}}  {res.get(key)}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    ok = (res["watch_events_delivered"] == res["watch_events_expected"] and res["objects_held"] >= args.objects
          and res["pvcs_bound"] == args.pvcs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
