"""Seed 002's own method on a twin: `kubectl apply -f` / `kubectl delete -f` of one file holding a step's N objects,
then `kubectl get` once per cluster second until all are done.

The seed ("How we measured"): start the clock, submit a large batch (`kubectl apply -f` on a YAML file that defines
the objects), poll until all are done, stop the clock. Here the clock starts just before the `kubectl apply` /
`kubectl delete` and stops when the first poll that sees every object done returns. The seed polled every second of
its cluster's time; at --time-scale s one cluster second is s wall seconds, so the poll interval is s (a 1 s wall
poll at 0.1 would add up to 10 cluster seconds of quantisation to a step). kubectl's own client time is not scaled:
each step records how long `kubectl apply` / `delete` itself ran, and the summed latency of its requests as kubectl
logs them at -v=6 (the twin's side of each round trip), so a report can say how much of the step is kubectl's.

Used by `benchmarks/calibration.py --method kubectl` and by tests/twin/test_seed_method.py.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.twin import Twin  # noqa: E402

TUNED_ARGS = ["--v=5", "--leader-election=true", "--worker-threads=25", "--kube-api-qps=75", "--kube-api-burst=150"]
LABEL = {"storageperf.k8s/benchmark": "seed-method"}
# kubectl -v=6 logs one line per request, at klog's time of day (local time) when the response came; up to 1.32:
# `I1204 18:18:21.497883 16245 round_trippers.go:560] POST https://host/path?q 201 Created in 1 milliseconds`,
# structured since 1.33: `... round_trippers.go:632] "Response" verb="POST" url="https://host/path?q" status="201
# Created" milliseconds=1`
_REQUEST = re.compile(r"^I\d{4} (\d\d):(\d\d):(\d\d\.\d+) +\d+ \S+\] (?:"
                      r"(?P<verb>GET|POST|PUT|PATCH|DELETE) https?://[^/]+(?P<path>/[^?\s]*)\S* .*? in (?P<ms>\d+) milliseconds"
                      r"|\"Response\" verb=\"(?P<sverb>[A-Z]+)\" url=\"https?://[^/]+(?P<spath>/[^?\"]*)[^\"]*\" .*?"
                      r"milliseconds=(?P<sms>\d+))$", re.M)
# The kubectl the seed's method runs: the one on PATH, or KUBECTL (benchmarks/calibration.py --kubectl).
# kubectl before 1.34 decodes the OpenAPI v3 document once per object it applies (kubernetes/kubernetes#127095),
# seconds of its own CPU before its first request that no time scale shrinks; scripts/fetch-kubectl.sh gets 1.34.
KUBECTL = os.environ.get("KUBECTL", "kubectl")
# what kubectl asks before it touches a step's objects: the OpenAPI documents and API discovery
_PREPARE = re.compile(r"^/openapi/|^/apis?$|^/apis?/[^/]+(/[^/]+)?$|^/api/v1$")


@dataclass
class Step:
    """One step by the seed's method; wall seconds, as measured (divide by the time scale for cluster seconds)."""

    wall: float  # clock start (before kubectl apply/delete) to the end of the first poll that saw all done
    submit: float  # kubectl apply / delete -f itself
    prepare: float  # from the clock's start to the response to kubectl's first request for one of the step's objects:
    #                 kubectl's own start-up, OpenAPI and file decoding (kubectl < 1.34 decodes the group's OpenAPI v3
    #                 document once per object, kubernetes/kubernetes#127095); nothing reaches the cluster before it
    requests: int  # HTTP requests kubectl apply / delete made (-v=6), the OpenAPI and discovery ones included
    server_ms: float  # their summed latency as kubectl logged it (the twin's answer, and its waits for a CPU)
    twin_cpu: float  # CPU seconds the twin process used while kubectl ran (its controllers' work included)
    polls: int  # kubectl get runs, the last one seeing all done
    poll_wall: float  # wall seconds those kubectl get runs took in all


def _run(tw: Twin, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([KUBECTL, *args], env=tw.env(), text=True, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-2000:]}")
    return proc


def _requests(log: str, t0_of_day: float) -> tuple[int, float, float]:
    """Requests, their summed latency (ms) and when the first request for an object answered (seconds after
    t0_of_day, the clock's start as seconds since local midnight, as klog stamps its lines)."""
    count, ms_sum, first = 0, 0.0, None
    for m in _REQUEST.finditer(log):
        hh, mm, ss = m.group(1, 2, 3)
        path = m["path"] or m["spath"]
        count += 1
        ms_sum += int(m["ms"] or m["sms"])
        if first is None and not _PREPARE.search(path):
            at = int(hh) * 3600 + int(mm) * 60 + float(ss) - t0_of_day
            first = at + 86400 if at < -3600 else at  # past midnight
    return count, ms_sum, max(0.0, first if first is not None else 0.0)


def _of_day(epoch: float) -> float:
    t = time.localtime(epoch)
    return t.tm_hour * 3600 + t.tm_min * 60 + t.tm_sec + epoch % 1


def cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_step(tw: Twin, verb: str, manifest: Path, get: list[str], done: Callable[[list[dict]], bool],
             interval: float) -> Step:
    """`kubectl <verb> -f manifest`, then `kubectl get <get> -o json` every `interval` wall seconds until
    done(items); the seed's shell loop sleeps between polls, so the interval runs from one poll's end."""
    pid = int((tw.dir / "twin.pid").read_text())
    c0, t0, epoch0 = cpu_s(pid), time.monotonic(), time.time()
    # delete: --wait=false, as the seed must have: kubectl's wait for deletion GETs each object through a client
    # limited to 5 QPS (burst 10), 18 s for 100 objects, longer than the seed's 15-16 s ON delete-snapshot steps
    proc = _run(tw, verb, "-f", str(manifest), "-v=6", *(["--wait=false"] if verb == "delete" else []))
    submit, twin_cpu = time.monotonic() - t0, cpu_s(pid) - c0
    polls, poll_wall = 0, 0.0
    while True:
        p0 = time.monotonic()
        items = json.loads(_run(tw, "get", *get, "-o", "json").stdout)["items"]
        polls += 1
        poll_wall += time.monotonic() - p0
        if done(items):
            break
        time.sleep(interval)  # the seed's poll cadence (one cluster second), not a wait for state
    wall = time.monotonic() - t0
    requests, server_ms, prepare = _requests(proc.stderr, _of_day(epoch0))
    return Step(wall, submit, min(prepare, submit), requests, server_ms, twin_cpu, polls, poll_wall)


# manifests ----------------------------------------------------------------------------------------------
def pvc(name: str, ns: str, sc: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany" if "nas" in sc else "ReadWriteOnce"],
                            "storageClassName": sc, "resources": {"requests": {"storage": "1Gi"}}}
    if source:
        spec["dataSource"] = source
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "labels": LABEL}, "spec": spec}


def pod(i: int, ns: str, claims: list[str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": ns, "labels": LABEL},
            "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "infinity"],
                                     "volumeMounts": [{"name": f"v{j}", "mountPath": f"/mnt/{j}"}
                                                      for j in range(len(claims))]}],
                     "terminationGracePeriodSeconds": 0,
                     "volumes": [{"name": f"v{j}", "persistentVolumeClaim": {"claimName": n}} for j, n in enumerate(claims)]}}


def snapshot(name: str, ns: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
            "metadata": {"name": name, "namespace": ns, "labels": LABEL},
            "spec": {"volumeSnapshotClassName": "trident-snapshotclass", "source": {"persistentVolumeClaimName": claim}}}


def write(d: Path, name: str, objects: list[dict[str, Any]]) -> Path:
    path = d / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


# done conditions ----------------------------------------------------------------------------------------
def count(items: list[dict], pred: Callable[[dict], bool]) -> int:
    return sum(1 for i in items if pred(i))


def phase_bound(p: dict) -> bool:
    return (p.get("status") or {}).get("phase") == "Bound"


def pod_ready(p: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (p.get("status") or {}).get("conditions") or [])


def snapshot_ready(s: dict) -> bool:
    return bool((s.get("status") or {}).get("readyToUse"))


def claim_of(pv: dict) -> tuple[str, str]:
    ref = pv["spec"].get("claimRef") or {}
    return ref.get("namespace", ""), ref.get("name", "")


# setup (outside the clock) ------------------------------------------------------------------------------
def set_concurrency(tw: Twin, on: bool) -> None:
    _run(tw, "patch", "tridentorchestrator", "trident", "--type", "merge", "-p", json.dumps({"spec": {"enableConcurrency": on}}))
    _run(tw, "wait", "tridentorchestrator/trident", "--timeout=300s",
         "--for=jsonpath={.status.currentInstallationParams.enableConcurrency}=" + ("true" if on else "false"))


def set_snapshot_controller_args(tw: Twin, args: list[str]) -> None:
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]
    _run(tw, "-n", "kube-system", "patch", "deployment", "snapshot-controller", "--type", "json", "-p", json.dumps(patch))
    _run(tw, "-n", "kube-system", "rollout", "status", "deployment", "snapshot-controller", "--timeout=300s")


# the seed's steps ---------------------------------------------------------------------------------------
STEP_ORDER = ("create", "publish", "unpublish", "snapshot", "clone", "delete_clone", "delete_snapshot", "delete_volume")


def lifecycle(tw: Twin, sc: str, on: bool, volumes: int = 100, per_pod: int = 4, interval: float | None = None,
              steps: tuple[str, ...] = STEP_ORDER, log: Callable[[str], None] | None = None) -> dict[str, Step]:
    """The seed's steps (those of `steps` that apply to `sc`) on `volumes` PVCs, each by kubectl apply/delete + poll;
    `interval` defaults to one cluster second. Returns the raw wall figures per step."""
    interval = tw.time_scale if interval is None else interval
    ns = f"{sc}-{'on' if on else 'off'}"
    _run(tw, "create", "namespace", ns)
    names = [f"vol-{i}" for i in range(volumes)]
    npods = volumes // per_pod
    has_snapshots = sc in ("ontap-nas", "ontap-san")
    out: dict[str, Step] = {}
    with tempfile.TemporaryDirectory(prefix="seed-method-") as tmp:
        d = Path(tmp)
        files = {
            "create": write(d, "pvcs", [pvc(n, ns, sc) for n in names]),
            "publish": write(d, "pods", [pod(i, ns, names[i * per_pod:(i + 1) * per_pod]) for i in range(npods)]),
            "snapshot": write(d, "snapshots", [snapshot(f"snap-{n}", ns, n) for n in names]),
            "clone": write(d, "clones", [pvc(f"clone-{n}", ns, sc, {"apiGroup": "snapshot.storage.k8s.io",
                                                                    "kind": "VolumeSnapshot", "name": f"snap-{n}"})
                                         for n in names]),
        }
        pvs_of: dict[str, set[str]] = {}

        def pvs_gone(prefix: str) -> Callable[[list[dict]], bool]:
            return lambda items: not any(claim_of(pv)[0] == ns and claim_of(pv)[1].startswith(prefix) for pv in items)

        plan: dict[str, tuple[str, Path, list[str], Callable[[list[dict]], bool]]] = {
            "create": ("apply", files["create"], ["pvc", "-n", ns],
                       lambda items: count(items, lambda p: p["metadata"]["name"].startswith("vol-") and phase_bound(p)) >= volumes),
            "publish": ("apply", files["publish"], ["pods", "-n", ns], lambda items: count(items, pod_ready) >= npods),
            # the detach is done when no VolumeAttachment of the volumes is left
            "unpublish": ("delete", files["publish"], ["volumeattachments"],
                          lambda items: not any(va["spec"]["source"].get("persistentVolumeName") in pvs_of["vol-"]
                                                for va in items)),
            "snapshot": ("apply", files["snapshot"], ["volumesnapshots", "-n", ns],
                         lambda items: count(items, snapshot_ready) >= volumes),
            "clone": ("apply", files["clone"], ["pvc", "-n", ns],
                      lambda items: count(items, lambda p: p["metadata"]["name"].startswith("clone-") and phase_bound(p)) >= volumes),
            "delete_clone": ("delete", files["clone"], ["pv"], pvs_gone("clone-")),
            # done when the VolumeSnapshotContents are gone (the VolumeSnapshots go before them)
            "delete_snapshot": ("delete", files["snapshot"], ["volumesnapshotcontents"],
                                lambda items: not any((c["spec"].get("volumeSnapshotRef") or {}).get("namespace") == ns
                                                      for c in items)),
            "delete_volume": ("delete", files["create"], ["pv"], pvs_gone("vol-")),
        }
        for name in STEP_ORDER:
            if name not in steps or (name in ("snapshot", "clone", "delete_clone", "delete_snapshot") and not has_snapshots):
                continue
            verb, manifest, get, done = plan[name]
            out[name] = run_step(tw, verb, manifest, get, done, interval)
            if name == "create":
                pvcs = json.loads(_run(tw, "get", "pvc", "-n", ns, "-o", "json").stdout)["items"]
                pvs_of["vol-"] = {p["spec"]["volumeName"] for p in pvcs}
            if log:
                s = out[name]
                log(f"{ns} {name}: {s.wall / tw.time_scale:.1f} s (kubectl {verb} {s.submit:.2f} s wall, of which "
                    f"{s.prepare:.2f} s before its first object; {s.requests} requests {s.server_ms:.0f} ms; twin CPU "
                    f"{s.twin_cpu:.2f} s; {s.polls} polls)")
    return out


def client_version() -> str:
    """The kubectl client's gitVersion, recorded with the figures: its pre-send time depends on it."""
    proc = subprocess.run([KUBECTL, "version", "--client", "-o", "json"], text=True, capture_output=True, check=True, timeout=60)
    return str(json.loads(proc.stdout)["clientVersion"]["gitVersion"])


def seed002(time_scale: float, drivers: list[str], volumes: int = 100, modes: tuple[bool, ...] = (False, True),
            interval: float | None = None, log: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Per driver and mode ("off", "on"): {mode: {step: cluster seconds}, mode_sent: the same from kubectl's first
    request for an object, mode_kubectl: {step: Step as a dict, wall seconds}}."""
    out: dict[str, dict[str, Any]] = {}
    for sc in drivers:
        out[sc] = {}
        for on in modes:
            key = "on" if on else "off"
            with tempfile.TemporaryDirectory(prefix="seed-method-twin-") as d, \
                    Twin(Path(d) / "twin", nodes=max(3, volumes // 4), time_scale=time_scale) as tw:
                set_snapshot_controller_args(tw, TUNED_ARGS)  # the seed tuned it for its runs
                set_concurrency(tw, on)
                steps = lifecycle(tw, sc, on, volumes, interval=interval, log=log)
            out[sc][key] = {k: s.wall / time_scale for k, s in steps.items()}
            # the same clock started when kubectl's first request for an object answered: what the cluster saw
            out[sc][f"{key}_sent"] = {k: (s.wall - s.prepare) / time_scale for k, s in steps.items()}
            out[sc][f"{key}_kubectl"] = {k: asdict(s) for k, s in steps.items()}
    return out
