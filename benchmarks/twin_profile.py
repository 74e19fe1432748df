"""What the twin itself costs: CPU per PVC under the seed's method, per watch event, per API request by verb.

    .venv/bin/python benchmarks/twin_profile.py [--pvcs 100] [--time-scale 0.1] [--concurrency on|off]
                                                [--watchers 1,10,50] [--events 500] [--requests 200] [--no-profile]

Starts its own twin (`python -m twin up --time-scale 0.1`), stops it at the end, and measures the twin
process's CPU (utime + stime of all its threads, /proc/<pid>/stat) around each step, less what the idle twin
burns over the same wall time (its controllers' timers; measured first, over 5 s):

  seed method  seed 002's own: `kubectl apply -f` one file of N ontap-nas PVCs, then `kubectl get pvc` every
               1 s until all are Bound (then, unless --no-snapshots, N VolumeSnapshots of them until
               readyToUse, the same way). Twin CPU over the whole step, CPU ms per PVC, and the twin's share of
               kubectl apply's wall time: twin CPU during the apply / the apply's wall time. The twin is one
               event loop, so its CPU during the apply bounds the server-side handling of the apply's requests
               from above (it also holds what the controllers do with the new PVCs meanwhile). Issue 18's bar
               is < 10 %.
  watch        M ConfigMaps created one at a time with 0, then W watch streams open on their namespace; the
               CPU beyond the 0-watcher run, per event delivered (M x W events).
  verbs        create, get, list (of a namespace holding the created objects), merge patch: R requests each,
               one at a time over one keep-alive connection; twin CPU ms per request.
  profile      py-spy (`pip install py-spy`; not a requirement of the project) samples the twin during a second
               N-PVC apply + poll and its N snapshots: the top 10 functions by self time; then during a third
               apply alone, to split the twin's CPU into serving requests, controllers and the event loop's
               wake-ups; serving's share times the unsampled apply's CPU is the server-side handling summed over
               the requests. Skipped with --no-profile or without py-spy.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
TICK = os.sysconf("SC_CLK_TCK")


def twin(*args: str, directory: Path) -> str:
    return subprocess.run([str(VENV_BIN / "python"), "-m", "twin", *args, "--dir", str(directory)], cwd=REPO,
                          check=True, capture_output=True, text=True, timeout=120).stdout


def cpu_s(pid: int) -> float:
    """utime + stime of the process (all threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Meter:
    """Twin CPU and wall time between enter and exit; `net` subtracts the idle twin's rate."""

    idle_rate = 0.0

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> Meter:
        self.t0, self.c0 = time.monotonic(), cpu_s(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.monotonic() - self.t0
        self.cpu = cpu_s(self.pid) - self.c0

    @property
    def net(self) -> float:
        return max(0.0, self.cpu - Meter.idle_rate * self.wall)


def start_twin(time_scale: float, prefix: str) -> tuple[Path, int, dict]:
    """A 3-node twin in a new temporary directory: (the directory, the twin's pid, the env for kubectl)."""
    directory = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    twin("up", "--nodes", "3", "--time-scale", str(time_scale), directory=directory)
    pid = int((directory / "twin.pid").read_text())
    env = dict(os.environ, KUBECONFIG=str(directory / "kubeconfig"), HOME=str(directory / "home"),
               PATH="%s:%s" % (VENV_BIN, os.environ.get("PATH", "")))
    return directory, pid, env


def kubectl(env: dict, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["kubectl", *args], env=env, input=stdin, check=True, capture_output=True, text=True,
                          timeout=600).stdout


def pvc_file(n: int, ns: str, sc: str) -> str:
    return yaml.safe_dump_all([{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                "metadata": {"name": "vol-%04d" % i, "namespace": ns},
                                "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": sc,
                                         "resources": {"requests": {"storage": "1Gi"}}}} for i in range(n)],
                              sort_keys=False)


def set_concurrency(env: dict, on: bool) -> None:
    kubectl(env, "patch", "tridentorchestrator", "trident", "--type", "merge",
            "-p", json.dumps({"spec": {"enableConcurrency": on}}))
    want = "true" if on else "false"
    kubectl(env, "wait", "tridentorchestrator/trident", "--timeout=120s",
            "--for=jsonpath={.status.currentInstallationParams.enableConcurrency}=" + want)


def bound(p: dict) -> bool:
    return (p.get("status") or {}).get("phase") == "Bound"


def ready(vs: dict) -> bool:
    return bool((vs.get("status") or {}).get("readyToUse"))


def apply_and_poll(env: dict, pid: int, ns: str, text: str, n: int, resource: str, done) -> dict:
    """The seed's method: `kubectl apply -f` one file of n objects, then `kubectl get` every 1 s until all are done."""
    path = Path(tempfile.mkdtemp(prefix="twin-profile-")) / "objects.yaml"
    path.write_text(text)
    polls = 0
    with Meter(pid) as whole:
        with Meter(pid) as apply:
            kubectl(env, "apply", "-f", str(path))
        while True:
            polls += 1
            doc = json.loads(kubectl(env, "get", resource, "-n", ns, "-o", "json"))
            if sum(1 for o in doc["items"] if done(o)) >= n:
                break
            time.sleep(1.0)
    shutil.rmtree(path.parent)
    return {"n": n, "apply_wall_s": apply.wall, "apply_cpu_s": apply.cpu, "apply_net_s": apply.net,
            "wall_s": whole.wall, "cpu_s": whole.cpu, "net_s": whole.net, "polls": polls}


def seed_method(env: dict, pid: int, n: int, sc: str, ns: str) -> dict:
    kubectl(env, "create", "namespace", ns)
    return apply_and_poll(env, pid, ns, pvc_file(n, ns, sc), n, "pvc", bound)


def snapshot_file(n: int, ns: str) -> str:
    return yaml.safe_dump_all([{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
                                "metadata": {"name": "snap-%04d" % i, "namespace": ns},
                                "spec": {"volumeSnapshotClassName": "trident-snapshotclass",
                                         "source": {"persistentVolumeClaimName": "vol-%04d" % i}}}
                               for i in range(n)], sort_keys=False)


def snapshot_step(env: dict, pid: int, n: int, ns: str) -> dict:
    """n VolumeSnapshots of the n Bound PVCs of namespace ns, until all are readyToUse."""
    return apply_and_poll(env, pid, ns, snapshot_file(n, ns), n, "volumesnapshots", ready)


class Api:
    def __init__(self, d: Path) -> None:
        cfg = yaml.safe_load((d / "kubeconfig").read_text())
        self.server = cfg["clusters"][0]["cluster"]["server"]
        self.token = cfg["users"][0]["user"]["token"]
        self.ca = str(d / "pki" / "ca.crt")

    def session(self, limit: int = 1) -> aiohttp.ClientSession:
        ctx = ssl.create_default_context(cafile=self.ca)
        return aiohttp.ClientSession(self.server, connector=aiohttp.TCPConnector(limit=limit, ssl=ctx),
                                     headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"},
                                     timeout=aiohttp.ClientTimeout(total=None, sock_read=600))


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"bench": "twin-profile"}},
            "data": {"a": "1", "b": "two", "c": "x" * 64}}


async def _ok(resp: aiohttp.ClientResponse) -> None:
    body = await resp.read()
    if resp.status >= 300:
        raise SystemExit(f"{resp.method} {resp.url}: {resp.status} {body[:300]!r}")


async def watch_cost(api: Api, pid: int, watchers: int, events: int, tag: str) -> dict:
    """CPU of creating `events` ConfigMaps with `watchers` watch streams open on their namespace."""
    ns = f"watch-{tag}"
    base = f"/api/v1/namespaces/{ns}/configmaps"
    async with api.session(limit=watchers + 2) as s:
        async with s.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": ns}}) as r:
            await _ok(r)
        async with s.get(base) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        got = [0] * watchers
        done = asyncio.Event() if watchers else None
        streams = [await s.get(base, params={"watch": "1", "resourceVersion": rv}) for _ in range(watchers)]

        async def read(i: int, resp: aiohttp.ClientResponse) -> None:
            async for line in resp.content:
                if line.strip() and b'"ADDED"' in line:
                    got[i] += 1
                    if all(g >= events for g in got) and done is not None:
                        done.set()

        readers = [asyncio.ensure_future(read(i, r)) for i, r in enumerate(streams)]
        with Meter(pid) as m:
            for i in range(events):
                async with s.post(base, json=configmap(f"cm-{i:05d}")) as r:
                    await _ok(r)
            if done is not None:
                await asyncio.wait_for(done.wait(), 300)
        for t in readers:
            t.cancel()
        for r in streams:
            r.close()
    return {"watchers": watchers, "events": events * watchers, "cpu_s": m.cpu, "net_s": m.net, "wall_s": m.wall}


async def verb_costs(api: Api, pid: int, count: int) -> dict[str, dict]:
    ns = "verbs"
    base = f"/api/v1/namespaces/{ns}/configmaps"
    out: dict[str, dict] = {}
    async with api.session() as s:
        async with s.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": ns}}) as r:
            await _ok(r)

        async def run(verb: str, times: int, call) -> None:
            with Meter(pid) as m:
                for i in range(times):
                    async with call(i) as r:
                        await _ok(r)
            out[verb] = {"requests": times, "cpu_s": m.cpu, "net_s": m.net, "wall_s": m.wall}

        await run("create", count, lambda i: s.post(base, json=configmap(f"cm-{i:05d}")))
        await run("get", count, lambda i: s.get(f"{base}/cm-{i:05d}"))
        await run(f"list ({count} objects)", max(10, count // 10), lambda i: s.get(base))
        await run("patch (merge)", count, lambda i: s.patch(
            f"{base}/cm-{i:05d}", data=json.dumps({"data": {"b": f"patched-{i}"}}),
            headers={"Content-Type": "application/merge-patch+json"}))
    return out


def part(stack: str, leaf: str) -> str:
    """Which part of the twin a sample is in: its controllers, serving API requests (aiohttp, TLS, the handlers
    under Server._middleware), or the event loop waiting in epoll (woken by timers and sockets)."""
    if "twin/controllers/" in stack:
        return "controllers"
    if leaf.startswith("EpollSelector.select"):
        return "event loop (epoll)"
    if "Server._middleware" in stack or "aiohttp/" in stack or "ssl" in stack:
        return "serving requests"
    return "other"


def samples(raw: Path):
    """(stack, sample count) per line of py-spy's raw (collapsed) output; frames joined by ';', the leaf last."""
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            yield stack, int(count)


def top_self(raw: Path, k: int = 10) -> tuple[int, dict[str, int], list[tuple[str, int]]]:
    """From py-spy's raw (collapsed) output: samples, samples per part of the twin, and the top functions by
    self time (samples whose leaf frame is them, the lines of one function summed)."""
    leaves: collections.Counter[str] = collections.Counter()
    parts: collections.Counter[str] = collections.Counter()
    total = 0
    for stack, n in samples(raw):
        total += n
        leaf = stack.rsplit(";", 1)[-1]
        parts[part(stack, leaf)] += n
        leaves[leaf.rsplit(":", 1)[0] + ")" if ":" in leaf else leaf] += n
    return total, dict(parts), leaves.most_common(k)


def profiled(pid: int, out: Path, run):
    """run() with py-spy sampling the twin at 200 Hz; (run's result, samples, serving samples, top 10)."""
    spy = shutil.which("py-spy") or str(VENV_BIN / "py-spy")
    proc = subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", "200", "--format", "raw", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)  # py-spy attaches
    try:
        row = run()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    return (row, *top_self(out))


def apply_only(env: dict, pid: int, n: int, sc: str, ns: str) -> dict:
    kubectl(env, "create", "namespace", ns)
    path = Path(tempfile.mkdtemp(prefix="twin-profile-")) / "pvcs.yaml"
    path.write_text(pvc_file(n, ns, sc))
    with Meter(pid) as m:
        kubectl(env, "apply", "-f", str(path))
    shutil.rmtree(path.parent)
    return {"wall_s": m.wall, "cpu_s": m.cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pvcs", type=int, default=100)
    ap.add_argument("--time-scale", type=float, default=0.1)
    ap.add_argument("--storage-class", default="ontap-nas")
    ap.add_argument("--concurrency", choices=("on", "off"), default="on", help="Trident concurrency (default on)")
    ap.add_argument("--watchers", default="1,10,50", help="comma list of watch stream counts (default 1,10,50)")
    ap.add_argument("--events", type=int, default=500, help="ConfigMaps created per watch run (default 500)")
    ap.add_argument("--requests", type=int, default=200, help="requests per verb (default 200)")
    ap.add_argument("--no-profile", action="store_true", help="skip the py-spy run")
    ap.add_argument("--no-snapshots", action="store_true",
                    help="skip the profiled step that snapshots the profiled PVCs (needs --storage-class ontap-nas)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    directory, pid, env = start_twin(a.time_scale, "twin-profile-")
    res: dict = {"time_scale": a.time_scale, "storage_class": a.storage_class, "concurrency": a.concurrency,
                 "load_before": os.getloadavg()}
    try:
        set_concurrency(env, a.concurrency == "on")
        kubectl(env, "get", "storageclass", a.storage_class)  # kubectl's discovery cache, outside the clock
        with Meter(pid) as idle:
            time.sleep(5.0)
        Meter.idle_rate = idle.cpu / idle.wall
        res["idle_cpu_per_s"] = Meter.idle_rate
        res["seed_method"] = seed_method(env, pid, a.pvcs, a.storage_class, "profile-seed")
        if not a.no_snapshots:
            res["snapshots"] = snapshot_step(env, pid, a.pvcs, "profile-seed")
        api = Api(directory)
        watchers = [0] + [int(w) for w in a.watchers.split(",") if w.strip()]
        res["watch"] = [asyncio.run(watch_cost(api, pid, w, a.events, str(w))) for w in watchers]
        res["verbs"] = asyncio.run(verb_costs(api, pid, a.requests))
        if not a.no_profile and (shutil.which("py-spy") or (VENV_BIN / "py-spy").exists()):
            row, samples, parts, top = profiled(pid, directory / "pyspy-step.txt", lambda: seed_method(
                env, pid, a.pvcs, a.storage_class, "profile-spy"))
            res["profile"] = {"run": row, "samples": samples, "parts": parts, "top": top}
            row, samples, parts, _ = profiled(pid, directory / "pyspy-apply.txt", lambda: apply_only(
                env, pid, a.pvcs, a.storage_class, "profile-spy-apply"))
            res["profile_apply"] = {"run": row, "samples": samples, "parts": parts}
            if not a.no_snapshots:
                row, samples, parts, top = profiled(pid, directory / "pyspy-snap.txt", lambda: snapshot_step(
                    env, pid, a.pvcs, "profile-spy"))
                res["profile_snapshots"] = {"run": row, "samples": samples, "parts": parts, "top": top}
        res["load_after"] = os.getloadavg()
    finally:
        twin("down", directory=directory)
    report(res, a)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    shutil.rmtree(directory, ignore_errors=True)
    return 0


def step_table(title: str, s: dict, unit: str) -> None:
    print(title)
    print("| | wall | twin CPU | twin CPU less idle | per %s |" % unit)
    print("|---|---:|---:|---:|---:|")
    print("| kubectl apply -f | %.2fs | %.2fs | %.2fs | %.1f ms |" % (
        s["apply_wall_s"], s["apply_cpu_s"], s["apply_net_s"], 1000 * s["apply_net_s"] / s["n"]))
    print("| apply + poll until done (%d polls) | %.2fs | %.2fs | %.2fs | %.1f ms |" % (
        s["polls"], s["wall_s"], s["cpu_s"], s["net_s"], 1000 * s["net_s"] / s["n"]))
    share = s["apply_cpu_s"] / s["apply_wall_s"]
    print("all twin CPU during kubectl apply, against its wall time: %.1f%% (%.1f%% less idle; an upper bound "
          "of the server-side share); bar < 10%%: %s" % (
              100 * share, 100 * s["apply_net_s"] / s["apply_wall_s"], "ok" if share < 0.10 else "OVER"))
    print()


def top_table(title: str, p: dict) -> None:
    print()
    print(title)
    print("| function (file) | samples | share |")
    print("|---|---:|---:|")
    for fn, n in p["top"]:
        print("| %s | %d | %.1f%% |" % (fn, n, 100 * n / max(1, p["samples"])))


def report(res: dict, a: argparse.Namespace) -> None:
    print("What the twin costs: time scale %s, %s, Trident concurrency %s" % (
        res["time_scale"], res["storage_class"], res["concurrency"]))
    print("load average (1, 5, 15 min) before %s, after %s; idle twin %.1f ms CPU per s" % (
        "/".join("%.2f" % x for x in res["load_before"]), "/".join("%.2f" % x for x in res["load_after"]),
        res["idle_cpu_per_s"] * 1000))
    print()
    s = res["seed_method"]
    step_table("Seed method, %d PVCs: kubectl apply -f + kubectl get pvc every 1 s until Bound" % s["n"], s, "PVC")
    if "snapshots" in res:
        step_table("Then %d VolumeSnapshots of those PVCs (trident-snapshotclass, snapshot-controller at its defaults):"
                   " kubectl apply -f + kubectl get volumesnapshots every 1 s until readyToUse" % s["n"],
                   res["snapshots"], "snapshot")
    print("Watch fan-out: %d ConfigMaps created one at a time, W watchers on their namespace" % a.events)
    print("| watchers | events delivered | twin CPU less idle | beyond 0 watchers, per event |")
    print("|---:|---:|---:|---:|")
    zero = res["watch"][0]["net_s"]
    for w in res["watch"]:
        per = "" if not w["events"] else "%.3f ms" % (1000 * (w["net_s"] - zero) / w["events"])
        print("| %d | %d | %.2fs | %s |" % (w["watchers"], w["events"], w["net_s"], per))
    print()
    print("API requests by verb, one at a time over one connection (ConfigMaps)")
    print("| verb | requests | twin CPU less idle | per request |")
    print("|---|---:|---:|---:|")
    for verb, v in res["verbs"].items():
        print("| %s | %d | %.2fs | %.2f ms |" % (verb, v["requests"], v["net_s"], 1000 * v["net_s"] / v["requests"]))
    if "profile" in res:
        p = res["profile"]
        top_table("py-spy, %d-PVC apply + poll (a second namespace; %d samples at 200 Hz, wall %.1fs): top 10 by "
                  "self" % (p["run"]["n"], p["samples"], p["run"]["wall_s"]), p)
        if "profile_snapshots" in res:
            ps = res["profile_snapshots"]
            top_table("py-spy, %d-snapshot apply + poll (%d samples, wall %.1fs): top 10 by self" % (
                ps["run"]["n"], ps["samples"], ps["run"]["wall_s"]), ps)
        q = res["profile_apply"]
        print()
        print("Where the twin's CPU goes during a third %d-PVC kubectl apply (py-spy, %d samples; twin CPU %.2fs "
              "in %.2fs wall, sampling included):" % (p["run"]["n"], q["samples"], q["run"]["cpu_s"],
                                                      q["run"]["wall_s"]))
        for name, n in sorted(q["parts"].items(), key=lambda kv: -kv[1]):
            print("  %-20s %5.1f%% of samples" % (name, 100 * n / max(1, q["samples"])))
        serving = s["apply_cpu_s"] * q["parts"].get("serving requests", 0) / max(1, q["samples"])
        print("server-side handling of the apply's requests, summed: ~%.2fs of the unsampled run's %.2fs twin CPU, "
              "%.1f%% of kubectl apply's %.2fs wall" % (serving, s["apply_cpu_s"], 100 * serving / s["apply_wall_s"],
                                                        s["apply_wall_s"]))


if __name__ == "__main__":
    sys.exit(main())
