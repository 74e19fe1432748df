"""What the measuring costs: the bench engine against the seed's method, on one twin, in one run.

    .venv/bin/python benchmarks/harness_overhead.py [--sizes 100,1000] [--time-scale 0]
                                                    [--storage-class alicloud-disk-essd] [--dir D]

The seed's method (seed 002, "How we measured"): `kubectl apply -f` one file holding N PVCs, then
`kubectl get pvc` every second until all are Bound. The engine: the create_volume step of the
csi_lifecycle benchmark (plugins/module_utils/bench), which lists and watches PVCs and Events once and
creates the PVCs 16 at a time through one client.

Both create N PVCs of an Immediate StorageClass in their own namespace of the same twin, for each N,
twice, in the order polling, engine, engine, polling; the faster run of each is compared (the machine
is shared, and the twin gets fuller as the runs go on).
At time scale 0 the twin's provisioner binds at once, so the wall time is what the harness itself costs.
API requests are counted at the twin (`python -m twin status`, minus the status call itself), so
kubectl's own discovery requests count too; the engine's count of its own requests is printed beside.

Targets (issue 5): the engine is no slower than polling at any N, and makes at most N + 10 requests per
step (polling: kubectl apply's GET + POST per object, plus polls x 1 list, plus kubectl's own calls).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "collections"))  # the installed collection (scripts/install-collection.sh)

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options, run_step  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client  # noqa: E402


def twin(*args: str, directory: Path) -> str:
    return subprocess.run([str(VENV_BIN / "python"), "-m", "twin", *args, "--dir", str(directory)], cwd=REPO,
                          check=True, capture_output=True, text=True, timeout=120).stdout


def twin_requests(directory: Path) -> int:
    return int(json.loads(twin("status", directory=directory))["requests"])


class Counted:
    """Requests the twin served between enter and exit (the closing status call excluded)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def __enter__(self) -> Counted:
        self.before = twin_requests(self.directory)
        return self

    def __exit__(self, *exc: object) -> None:
        self.count = twin_requests(self.directory) - self.before - 1


def kubectl(env: dict, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["kubectl", *args], env=env, input=stdin, check=True, capture_output=True, text=True,
                          timeout=600).stdout


def pvc_file(n: int, ns: str, storage_class: str) -> str:
    import yaml

    docs = []
    for i in range(n):
        docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": "vol-%04d" % i, "namespace": ns,
                                  "labels": {"storageperf.k8s/run-id": "harness-overhead"}},
                     "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                              "resources": {"requests": {"storage": "1Gi"}}}})
    return yaml.safe_dump_all(docs, sort_keys=False)


def seed_method(directory: Path, env: dict, n: int, storage_class: str, run: int) -> dict:
    ns = "overhead-poll-%d-%d" % (n, run)
    kubectl(env, "create", "namespace", ns)
    path = Path(tempfile.mkdtemp()) / "pvcs.yaml"
    path.write_text(pvc_file(n, ns, storage_class))
    polls = 0
    with Counted(directory) as counted:
        t0 = time.monotonic()
        kubectl(env, "apply", "-f", str(path))
        while True:
            polls += 1
            doc = json.loads(kubectl(env, "get", "pvc", "-n", ns, "-o", "json"))
            bound = sum(1 for p in doc["items"] if p.get("status", {}).get("phase") == "Bound")
            if bound >= n:
                break
            time.sleep(1.0)
        wall = time.monotonic() - t0
    return {"method": "kubectl apply + get every 1s", "n": n, "wall_s": wall, "requests": counted.count,
            "polls": polls}


def engine_method(directory: Path, kubeconfig: Path, n: int, storage_class: str, run: int) -> dict:
    client = Client({"kubeconfig": str(kubeconfig)}, pool_maxsize=24)
    ns = "overhead-engine-%d-%d" % (n, run)
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    plan = csi_lifecycle.Plan({"storage_class": storage_class, "volumes": n})
    ctx = Context(client, "harness-overhead", "csi_lifecycle", ns, Options(concurrency=16, timeout=600), None)
    step = csi_lifecycle.step_create_volume(ctx, plan)
    for w in step.watches:  # discovery once per client, as in a benchmark run (not per step)
        client.resource(w.kind.api_version, w.kind.name)
    with Counted(directory) as counted:
        t0 = time.monotonic()
        result = run_step(client, step, ctx.options)
        wall = time.monotonic() - t0
    if result["status"] != "ok":
        raise SystemExit("engine step failed: %s %s" % (result.get("reason"), result.get("errors", [])[:3]))
    return {"method": "bench engine (watch)", "n": n, "wall_s": wall, "requests": counted.count,
            "own_count": result["api_requests"], "step_wall_s": result["wall_s"],
            "p50_s": result["latency"]["p50"], "p99_s": result["latency"]["p99"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000", help="comma list of N (default 100,1000)")
    ap.add_argument("--time-scale", type=float, default=0.0, help="twin time scale (default 0: the harness alone)")
    ap.add_argument("--storage-class", default="alicloud-disk-essd", help="an Immediate StorageClass of the twin")
    ap.add_argument("--dir", type=Path, help="twin directory (default: a fresh temporary one, stopped at the end)")
    ap.add_argument("--repeat", type=int, default=2, choices=(1, 2),
                    help="runs per method and N, in the order poll, engine, engine, poll (default 2; best run compared)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    directory = (a.dir or Path(tempfile.mkdtemp(prefix="harness-overhead-"))).resolve()
    own = a.dir is None
    twin("up", "--nodes", "3", "--time-scale", str(a.time_scale), directory=directory)
    env = dict(os.environ, KUBECONFIG=str(directory / "kubeconfig"), HOME=str(directory / "home"),
               PATH="%s:%s" % (VENV_BIN, os.environ.get("PATH", "")))
    try:
        kubectl(env, "get", "storageclass", a.storage_class)  # warms kubectl's discovery cache for both runs
        rows = []
        for n in sizes:
            # A B B A: neither method always runs on the emptier twin; the best of each is compared
            for run, method in enumerate(("poll", "engine", "engine", "poll")[:2 * a.repeat]):
                if method == "poll":
                    rows.append(seed_method(directory, env, n, a.storage_class, run))
                else:
                    rows.append(engine_method(directory, directory / "kubeconfig", n, a.storage_class, run))
    finally:
        if own:
            twin("down", directory=directory)
    print("Harness overhead: create N PVCs until all Bound, twin at time scale %s, StorageClass %s"
          % (a.time_scale, a.storage_class))
    print()
    print("| N | method | wall | API requests (at the twin) | requests - N | notes |")
    print("|---:|---|---:|---:|---:|---|")
    for r in rows:
        notes = ("%d polls" % r["polls"]) if "polls" in r else (
            "engine's own count %d; per PVC p50 %.3fs p99 %.3fs" % (r["own_count"], r["p50_s"], r["p99_s"]))
        print("| %d | %s | %.2fs | %d | %d | %s |" % (r["n"], r["method"], r["wall_s"], r["requests"],
                                                      r["requests"] - r["n"], notes))
    print()
    ok = True
    for n in sizes:
        poll = min((r for r in rows if r["n"] == n and "polls" in r), key=lambda r: r["wall_s"])
        eng = min((r for r in rows if r["n"] == n and "own_count" in r), key=lambda r: r["wall_s"])
        faster = eng["wall_s"] <= poll["wall_s"]
        within = eng["requests"] <= n + 10
        ok = ok and faster and within
        print("N=%d: engine %.2fs vs polling %.2fs (%.1fx) %s; engine %d requests (N + %d) %s; polling %d" % (
            n, eng["wall_s"], poll["wall_s"], poll["wall_s"] / eng["wall_s"] if eng["wall_s"] else float("inf"),
            "ok" if faster else "SLOWER", eng["requests"], eng["requests"] - n, "ok" if within else "OVER N + 10",
            poll["requests"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
