"""Print the twin's storage figures beside the seeds' (seed 000 attach-stress, seed 002 Trident at 100 or 1000 volumes).

    .venv/bin/python benchmarks/calibration.py [--time-scale 0.01] [--only seed000,seed002,snapshot]
                                                [--drivers ontap-nas] [--volumes 100|1000] [--json FILE] [--markdown]
    .venv/bin/python benchmarks/calibration.py --from-json FILE --markdown   # tables of a saved run, no twin

Every figure is measured on a fresh twin through real clients (kubectl for the seed 000 manifest, the
kubernetes Python client with watches elsewhere) at the given time scale and scaled back to cluster seconds
(wall seconds / time scale). The clock of each step starts when the step's objects are released to the
controller under test: they are submitted while that controller is stalled (`python -m twin fault --name
stall:<controller>`), because the time the client needs to send a hundred requests is not scaled by
--time-scale and would otherwise dominate at 0.01. Ratios (OFF/ON, serial/parallel) come from one run each.
With --method kubectl, seed 002 is timed by the seed's own method instead (benchmarks/seed_method.py): one
`kubectl apply -f` / `kubectl delete -f` per step, then `kubectl get` once per cluster second until all are
done; its tables add the same figures with the clock started at kubectl's first request for the step's
objects, and what kubectl itself took. Twin/seed outside 0.8-1.2 is flagged with "!".
"""
from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import ssl
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any
from collections.abc import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.twin import Twin  # noqa: E402
from benchmarks import seed_method  # noqa: E402

sys.path.insert(0, str(REPO / "collections"))  # the installed collection (scripts/install-collection.sh)
from ansible_collections.storageperf.k8s.plugins.module_utils.report import seed_figures as SF  # noqa: E402

# the seeds' figures, one source for the collection's reports and these scripts (report/seed_figures.py):
# SEED000 {serial, parallel} seconds; SEED002 {volumes: {driver: {step: (OFF s, ON s)}}}; ISSUE_1344 (80 snapshots)
SEED000, SEED002, ISSUE_1344 = SF.SEED000, SF.SEED002, SF.ISSUE_1344
STEPS = ("create", "publish", "unpublish", "snapshot", "clone", "delete_clone", "delete_snapshot", "delete_volume")
TUNED_ARGS = seed_method.TUNED_ARGS  # the seed's snapshot-controller (its "Note on snapshot performance")


# clients ------------------------------------------------------------------------------------------
class Cluster:
    """A started twin with the clients a benchmark needs."""

    def __init__(self, twin: Twin) -> None:
        from kubernetes import client

        self.twin = twin
        self.api = twin.api_client()
        self.core = client.CoreV1Api(self.api)
        self.storage = client.StorageV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.scale = twin.time_scale
        self._ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
        self.trackers: list[Tracker] = []

    def close(self) -> None:
        for t in self.trackers:
            t.stop()

    def admin(self, verb: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(f"{self.twin.server}/_twin/{verb}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {self.twin.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=self._ctx, timeout=60) as r:
            return json.loads(r.read())

    def stall(self, controller: str) -> None:
        self.admin("fault", {"name": f"stall:{controller}", "rule": {}})

    def release(self, controller: str) -> float:
        t = time.monotonic()
        self.admin("fault", {"clear": True, "name": f"stall:{controller}"})
        return t

    def parallel(self, fn: Callable[[Any], Any], items: list[Any], threads: int = 16) -> None:
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(fn, items))


class Tracker:
    """Objects of one resource as a watch delivers them (plain dicts), with the client's receive time.

    Lists, then watches from the list's resourceVersion over the API's HTTP stream (re-listing if the watch
    ends), like an informer; no per-event model deserialization, so the client stays cheap next to the twin."""

    def __init__(self, cluster: Cluster, path: str) -> None:
        self.c = cluster
        self.path = path
        self.objs: dict[str, dict] = {}
        self.cond = threading.Condition()
        self.synced = threading.Event()
        self.stopped = False
        cluster.trackers.append(self)
        threading.Thread(target=self._run, daemon=True).start()
        if not self.synced.wait(60):
            raise TimeoutError(f"no list of {path}")

    def _run(self) -> None:
        import requests

        sess = requests.Session()
        sess.trust_env = False  # REQUESTS_CA_BUNDLE would override the twin's CA
        sess.headers["Authorization"] = f"Bearer {self.c.twin.token}"
        sess.verify = str(self.c.twin.dir / "pki" / "ca.crt")
        base = self.c.twin.server + self.path
        pause = 0.05
        while not self.stopped:
            try:
                lst = sess.get(base, timeout=60).json()
                with self.cond:
                    self.objs = {self._key(o): o for o in lst.get("items") or []}
                    self.cond.notify_all()
                self.synced.set()
                rv = lst["metadata"]["resourceVersion"]
                with sess.get(base, params={"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "false"},
                              stream=True, timeout=(10, 3600)) as r:
                    for line in self._lines(r):
                        if self.stopped:
                            return
                        ev = json.loads(line)
                        if ev.get("type") == "ERROR":
                            break
                        o = ev["object"]
                        with self.cond:
                            if ev["type"] == "DELETED":
                                self.objs.pop(self._key(o), None)
                            else:
                                self.objs[self._key(o)] = o
                            self.cond.notify_all()
            except Exception:  # a watch may end: list and watch again, as informers do
                time.sleep(pause)
                pause = min(1.0, pause * 2)

    @staticmethod
    def _lines(r: Any) -> Any:
        """Watch lines as each HTTP chunk arrives (requests' iter_lines waits for 512 bytes: the last event of
        a quiet watch would sit in its buffer)."""
        buf = b""
        for chunk in r.raw.stream(amt=None, decode_content=True):
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.strip():
                    yield line

    def stop(self) -> None:
        """Stop watching at the next event (a watch left open costs the client CPU that the twin then lacks).
        The socket is not closed from here: closing a TLS socket another thread reads from can block."""
        self.stopped = True

    @staticmethod
    def _key(o: dict) -> str:
        md = o["metadata"]
        return f"{md.get('namespace') or ''}/{md['name']}"

    def wait(self, pred: Callable[[dict[str, dict]], bool], timeout: float = 3600) -> float:
        """Block until pred(objects) holds; return the receive time (monotonic) of the change that made it hold."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self.objs):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"condition on {self.path} not reached")
                self.cond.wait(min(left, 1.0))
            return time.monotonic()


def ready(p: dict) -> bool:
    return any(x.get("type") == "Ready" and x.get("status") == "True" for x in (p.get("status") or {}).get("conditions") or [])


def name_of(key: str) -> str:
    return key.split("/", 1)[1]


def fmt(seconds: float | None) -> str:
    if seconds is None or seconds != seconds:  # None or NaN: not measured
        return "-"
    s = int(round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


# seed 000 -----------------------------------------------------------------------------------------
def seed000(time_scale: float) -> dict[str, Any]:
    manifest = (Path(__file__).parent / "attach-stress.yaml").read_text()
    with tempfile.TemporaryDirectory(prefix="cal000-") as d, Twin(Path(d) / "twin", nodes=3, time_scale=time_scale) as tw, \
            closing(Cluster(tw)) as c:
        node = c.core.list_node().items[0].metadata.name
        tw.kubectl("apply", "-f", "-", input=manifest.replace("<YOUR-HOSTNAME>", node))
        tw.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=300s")
        pods = Tracker(c, "/api/v1/namespaces/default/pods")
        vas = Tracker(c, "/apis/storage.k8s.io/v1/volumeattachments")

        def scale_down() -> float:
            t0 = time.monotonic()
            tw.kubectl("scale", "sts", "attach-stress", "--replicas", "0")
            t1 = vas.wait(lambda objs: not objs and not pods.objs)
            return (t1 - t0) / time_scale

        def scale_up() -> float:
            c.admin("storage", {"reset": ["attach"], "only": ["backends"]})
            c.stall("attachdetach-controller")  # the clock starts once every pod is on the node (module doc)
            tw.kubectl("scale", "sts", "attach-stress", "--replicas", "28")
            pods.wait(lambda o: sum(1 for p in o.values() if (p.get("spec") or {}).get("nodeName")) >= 28)
            t0 = c.release("attachdetach-controller")
            t1 = pods.wait(lambda o: sum(1 for p in o.values() if ready(p)) >= 28)
            tw.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=600s")
            return (t1 - t0) / time_scale

        scale_down()
        serial = scale_up()
        st = c.admin("storage", {"only": ["backends"]})["backends"]["diskplugin.csi.alibabacloud.com"]["nodes"][node]
        detach_serial = scale_down()
        prov = c.admin("cloud", {})["addons"]
        prov_name = "managed-csiprovisioner" if "managed-csiprovisioner" in prov else "csi-provisioner"
        c.admin("cloud", {"instance": "all", "tags": {"supportConcurrencyAttach": "true"}})
        c.admin("cloud", {"addon": prov_name, "feature_gates": "DiskADController=true,DiskParallelAttach=true"})
        c.admin("cloud", {"addon": "csi-plugin", "feature_gates": "DiskADController=true"})
        parallel = scale_up()
        st2 = c.admin("storage", {"only": ["backends"]})["backends"]["diskplugin.csi.alibabacloud.com"]["nodes"][node]
        return {"serial": serial, "parallel": parallel, "detach": detach_serial,
                "max_attaching_serial": st["max_attaching"], "max_attaching_parallel": st2["max_attaching"]}


# snapshot-controller (issue #1344) ------------------------------------------------------------------
SNAP = "/apis/snapshot.storage.k8s.io/v1"


def set_snapshot_controller_args(c: Cluster, args: list[str]) -> None:
    """Read, edit, replace; again on a 409 (client-go's RetryOnConflict): right after start the Deployment's
    status is still being written, and a replace that carries the read's resourceVersion then conflicts."""
    from kubernetes.client.exceptions import ApiException

    for attempt in range(5):
        dep = c.apps.read_namespaced_deployment("snapshot-controller", "kube-system")
        dep.spec.template.spec.containers[0].args = args
        try:
            c.apps.replace_namespaced_deployment("snapshot-controller", "kube-system", dep)
            return
        except ApiException as e:
            if e.status != 409 or attempt == 4:
                raise


def bound(pvcs: Tracker, prefix: str, n: int) -> float:
    return pvcs.wait(lambda o: sum(1 for k, p in o.items() if name_of(k).startswith(prefix)
                                   and (p.get("status") or {}).get("phase") == "Bound") >= n)


def sources(c: Cluster, ns: str, sc: str, count: int) -> Tracker:
    c.core.create_namespace({"metadata": {"name": ns}})
    pvcs = Tracker(c, f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
    c.parallel(lambda i: c.core.create_namespaced_persistent_volume_claim(ns, pvc(f"src-{i}", sc)), list(range(count)))
    bound(pvcs, "src-", count)
    return pvcs


def snapshot_issue(time_scale: float, count: int = 80) -> dict[str, float]:
    """80 VolumeSnapshots of ontap-nas volumes with Trident concurrency on, default vs tuned snapshot-controller."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="cal1344-") as d, Twin(Path(d) / "twin", nodes=3, time_scale=time_scale) as tw, \
            closing(Cluster(tw)) as c:
        set_concurrency(c, True)
        ns = "issue1344"
        sources(c, ns, "ontap-nas", count)
        snaps = Tracker(c, f"{SNAP}/namespaces/{ns}/volumesnapshots")
        # the issue's "default" run kept QPS 5 / burst 10 but had --worker-threads=100 ("no effect")
        for label, args in (("default", ["--v=5", "--leader-election=true", "--worker-threads=100"]), ("tuned", TUNED_ARGS)):
            set_snapshot_controller_args(c, args)
            out[label] = snapshot_batch(c, snaps, ns, count, label)
        out["calls"] = c.admin("storage", {"only": ["throttles"]})["throttles"]["snapshot-controller"]["calls"]
    return out


def vs_body(name: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot", "metadata": {"name": name},
            "spec": {"volumeSnapshotClassName": "trident-snapshotclass", "source": {"persistentVolumeClaimName": claim}}}


def snapshot_batch(c: Cluster, snaps: Tracker, ns: str, count: int, prefix: str) -> float:
    """Create `count` VolumeSnapshots of src-0..count-1; cluster seconds until all are readyToUse."""
    c.stall("snapshot-controller")
    c.parallel(lambda i: c.custom.create_namespaced_custom_object("snapshot.storage.k8s.io", "v1", ns, "volumesnapshots",
                                                                  vs_body(f"{prefix}-{i}", f"src-{i}")), list(range(count)))
    t0 = c.release("snapshot-controller")
    t1 = snaps.wait(lambda o: sum(1 for k, s in o.items() if name_of(k).startswith(prefix + "-")
                                  and (s.get("status") or {}).get("readyToUse")) >= count)
    return (t1 - t0) / c.scale


# seed 002 -----------------------------------------------------------------------------------------
def pvc(name: str, sc: str, source: dict[str, Any] | None = None, size: str = "1Gi") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany" if "nas" in sc else "ReadWriteOnce"],
                            "storageClassName": sc, "resources": {"requests": {"storage": size}}}
    if source:
        spec["dataSource"] = source
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "labels": {"storageperf.k8s/benchmark": "calibration"}}, "spec": spec}


def set_concurrency(c: Cluster, on: bool) -> None:
    torc = Tracker(c, "/apis/trident.netapp.io/v1/tridentorchestrators")
    c.custom.patch_cluster_custom_object("trident.netapp.io", "v1", "tridentorchestrators", "trident",
                                         {"spec": {"enableConcurrency": on}})
    want = "true" if on else "false"
    torc.wait(lambda o: any((i.get("status") or {}).get("status") == "Installed" and
                            (i.get("status") or {}).get("currentInstallationParams", {}).get("enableConcurrency") == want
                            for i in o.values()))
    stats = c.admin("storage", {"only": ["trident"]})["trident"]
    assert stats["concurrency"] is on, stats


def lifecycle(c: Cluster, sc: str, on: bool, volumes: int = 100, per_pod: int = 4) -> dict[str, float]:
    """The seed's 8 steps on `volumes` PVCs of class `sc`; cluster seconds per step."""
    ns = f"{sc}-{'on' if on else 'off'}"
    c.core.create_namespace({"metadata": {"name": ns}})
    # watches open only around the steps that need them: each costs the client CPU that the twin then lacks
    pvcs = Tracker(c, f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
    has_snapshots = sc in ("ontap-nas", "ontap-san")
    out: dict[str, float] = {}
    names = [f"vol-{i}" for i in range(volumes)]
    npods = volumes // per_pod

    def step(name: str, controller: str, submit: Callable[[], None], done: Callable[[], float]) -> None:
        c.stall(controller)
        submit()
        t0 = c.release(controller)
        out[name] = (done() - t0) / c.scale
        print(f"{ns} {name}: {fmt(out[name])}", file=sys.stderr)  # a long run shows its figures as they come

    def pod(i: int) -> dict[str, Any]:
        return seed_method.pod(i, ns, names[i * per_pod:(i + 1) * per_pod])  # the same pods as the seed's method

    def attached(o: dict[str, dict]) -> int:
        return sum(1 for v in o.values() if (v.get("status") or {}).get("attached")
                   and v["spec"]["source"].get("persistentVolumeName") in vol_pvs)

    def pvs_gone(keep: set[str]) -> Callable[[dict], bool]:
        return lambda o: not any(name_of(k) in keep for k in o)

    step("create", "csi-provisioner",
         lambda: c.parallel(lambda n: c.core.create_namespaced_persistent_volume_claim(ns, pvc(n, sc)), names),
         lambda: bound(pvcs, "vol-", volumes))
    vol_pvs = {p["spec"].get("volumeName") for p in pvcs.objs.values()}
    pods = Tracker(c, f"/api/v1/namespaces/{ns}/pods")
    vas = Tracker(c, "/apis/storage.k8s.io/v1/volumeattachments")
    step("publish", "attachdetach-controller",
         lambda: c.parallel(lambda i: c.core.create_namespaced_pod(ns, pod(i)), list(range(npods))),
         lambda: max(pods.wait(lambda o: sum(1 for p in o.values() if ready(p)) >= npods),
                     vas.wait(lambda o: attached(o) >= volumes)))
    step("unpublish", "attachdetach-controller",
         lambda: c.parallel(lambda i: c.core.delete_namespaced_pod(f"pod-{i}", ns), list(range(npods))),
         lambda: max(pods.wait(lambda o: not o),
                     vas.wait(lambda o: not any(v["spec"]["source"].get("persistentVolumeName") in vol_pvs for v in o.values()))))
    pods.stop()
    vas.stop()
    pvs = Tracker(c, "/api/v1/persistentvolumes")
    if has_snapshots:
        snaps = Tracker(c, f"{SNAP}/namespaces/{ns}/volumesnapshots")
        step("snapshot", "snapshot-controller",
             lambda: c.parallel(lambda n: c.custom.create_namespaced_custom_object(
                 "snapshot.storage.k8s.io", "v1", ns, "volumesnapshots", vs_body(f"snap-{n}", n)), names),
             lambda: snaps.wait(lambda o: sum(1 for s in o.values() if (s.get("status") or {}).get("readyToUse")) >= volumes))
        step("clone", "csi-provisioner",
             lambda: c.parallel(lambda n: c.core.create_namespaced_persistent_volume_claim(ns, pvc(
                 f"clone-{n}", sc, {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot",
                                    "name": f"snap-{n}"})), names),
             lambda: bound(pvcs, "clone-", volumes))
        clone_pvs = {p["spec"].get("volumeName") for k, p in pvcs.objs.items() if name_of(k).startswith("clone-")}
        step("delete_clone", "persistentvolume-controller",
             lambda: c.parallel(lambda n: c.core.delete_namespaced_persistent_volume_claim(f"clone-{n}", ns), names),
             lambda: max(pvcs.wait(lambda o: not any(name_of(k).startswith("clone-") for k in o)),
                         pvs.wait(pvs_gone(clone_pvs))))
        contents = Tracker(c, f"{SNAP}/volumesnapshotcontents")
        step("delete_snapshot", "snapshot-controller",
             lambda: c.parallel(lambda n: c.custom.delete_namespaced_custom_object(
                 "snapshot.storage.k8s.io", "v1", ns, "volumesnapshots", f"snap-{n}"), names),
             lambda: max(snaps.wait(lambda o: not o), contents.wait(lambda o: not any(
                 (i["spec"].get("volumeSnapshotRef") or {}).get("namespace") == ns for i in o.values()))))
        snaps.stop()
        contents.stop()
    step("delete_volume", "persistentvolume-controller",
         lambda: c.parallel(lambda n: c.core.delete_namespaced_persistent_volume_claim(n, ns), names),
         lambda: max(pvcs.wait(lambda o: not o), pvs.wait(pvs_gone(vol_pvs))))
    return out


def seed002(time_scale: float, drivers: list[str], volumes: int = 100,
            modes: tuple[bool, ...] = (False, True)) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for sc in drivers:
        out[sc] = {}
        for on in modes:
            with tempfile.TemporaryDirectory(prefix="cal002-") as d, \
                    Twin(Path(d) / "twin", nodes=max(3, volumes // 4), time_scale=time_scale) as tw, closing(Cluster(tw)) as c:
                set_snapshot_controller_args(c, TUNED_ARGS)  # the seed tuned it for its runs
                set_concurrency(c, on)
                out[sc]["on" if on else "off"] = lifecycle(c, sc, on, volumes)
                if on and sc in ("ontap-nas", "ontap-san"):
                    set_snapshot_controller_args(c, ["--v=5", "--leader-election=true"])
                    sources(c, "defaults", sc, volumes)
                    snaps = Tracker(c, f"{SNAP}/namespaces/defaults/volumesnapshots")
                    out[sc]["on_default_snapshot_controller"] = {"snapshot": snapshot_batch(c, snaps, "defaults", volumes, "d")}
    return out


# report -------------------------------------------------------------------------------------------
def ratio(a: float, b: float, suffix: str = "") -> str:
    """a / b formatted, or "-" when either was not measured."""
    if a != a or b != b or not b:
        return "-"
    return f"{a / b:.1f}{suffix}" if suffix else f"{a / b:.2f}"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def seed_table(volumes: int) -> dict[str, dict[str, tuple[int, int]]]:
    """Seed 002's figures for a batch of `volumes`; a size the seed did not measure is refused, not scaled."""
    if volumes not in SEED002:
        sizes = " or ".join(f"--volumes {n}" for n in sorted(SEED002))
        raise ValueError(f"--volumes {volumes}: seed 002 has tables for {' and '.join(map(str, sorted(SEED002)))} volumes "
                         f"only, and a twin run is compared with the seed's table for the same size; use {sizes}")
    return SEED002[volumes]


def report(res: dict[str, Any], time_scale: float, heading: str = "##") -> str:
    """The tables; `heading` is the Markdown level of each table's title."""
    out = [f"Twin at --time-scale {time_scale}, figures scaled back to cluster seconds.", ""]
    if "seed000" in res:
        r = res["seed000"]
        seed_ratio, twin_ratio = SEED000["serial"] / SEED000["parallel"], r["serial"] / r["parallel"]
        rows = [[name, fmt(SEED000[k]), fmt(r[k]), f"{r[k] / SEED000[k]:.2f}"]
                for name, k in (("serial (gates off)", "serial"), ("parallel (gates + tag)", "parallel"))]
        rows.append(["serial / parallel", f"{seed_ratio:.1f}x", f"{twin_ratio:.1f}x", f"{twin_ratio / seed_ratio:.2f}"])
        out += [f"{heading} Seed 000: attach-stress, 28 pods x 2 disks on one node, scale 0 -> 28", "",
                table(rows, ["step", "seed", "twin", "twin/seed"]), "",
                f"Max disks attaching at once on the node: serial {r['max_attaching_serial']}, parallel "
                f"{r['max_attaching_parallel']} (limit 32). Scale 28 -> 0 until no VolumeAttachment (serial detach): "
                f"{fmt(r['detach'])} (seed: \"a few minutes\").", ""]
    if "snapshot" in res:
        r = res["snapshot"]
        rows = [[k, fmt(ISSUE_1344[k]), fmt(r[k]), f"{r[k] / ISSUE_1344[k]:.2f}"] for k in ("default", "tuned")]
        issue_ratio, twin_ratio = ISSUE_1344["default"] / ISSUE_1344["tuned"], r["default"] / r["tuned"]
        rows.append(["default / tuned", f"{issue_ratio:.1f}x", f"{twin_ratio:.1f}x", f"{twin_ratio / issue_ratio:.2f}"])
        out += [f"{heading} external-snapshotter #1344: 80 VolumeSnapshots (Trident concurrency on; default = QPS 5 / "
                "burst 10 with 100 workers as in the issue, tuned = 25 workers, QPS 75, burst 150)", "",
                table(rows, ["snapshot-controller", "issue", "twin", "twin/issue"]), ""]
    volumes = int(res.get("volumes", 100))  # runs saved before the key existed were all at 100 volumes
    by_kubectl = res.get("method") == "kubectl"
    for sc, r in (res.get("seed002") or {}).items():
        seed_figures = seed_table(volumes)[sc]
        title = f"{heading} Seed 002: {sc}, {volumes} volumes ({volumes // 4} pods x 4 PVCs), concurrency OFF vs ON"
        if by_kubectl:
            title += f" ({res['kubectl']})" if "kubectl" in res else ""  # runs saved before the key existed: 1.32
            out += [f"{title}, kubectl apply + poll", "", off_on_table(r.get("off", {}), r.get("on", {}), seed_figures), "",
                    f"{title}, kubectl apply + poll, clock from kubectl's first request for the step's objects", "",
                    off_on_table(r.get("off_sent", {}), r.get("on_sent", {}), seed_figures), "",
                    f"{title}, what kubectl itself took", "", kubectl_share_table(r), ""]
            continue
        out += [title, "", off_on_table(r.get("off", {}), r.get("on", {}), seed_figures), ""]
        d = r.get("on_default_snapshot_controller")
        if d:
            out += [f"Snapshot step with concurrency ON but the snapshot-controller at its defaults (QPS 5, burst 10, "
                    f"10 workers): {fmt(d['snapshot'])} vs {fmt(r['on']['snapshot'])} tuned (25/75/150) and "
                    f"{fmt(r.get('off', {}).get('snapshot'))} with concurrency OFF.", ""]
    return "\n".join(out)


FLAG = " !"  # marks a twin/seed (or twin ratio / seed ratio) outside 20 %


def flagged(text: str, twin: float, seed: float) -> str:
    """`text`, flagged when twin / seed is outside 0.8-1.2 (the calibration's bar); unflagged when either is missing."""
    if text == "-" or not seed or twin != twin:
        return text
    return text + FLAG if abs(twin / seed - 1) > 0.2 else text


def off_on_table(off_figures: dict[str, float], on_figures: dict[str, float], seed_figures: dict[str, tuple[int, int]]) -> str:
    """Seed vs twin per step, OFF, ON and OFF/ON, cluster seconds."""
    rows = []
    for step_name in STEPS:
        if step_name not in (off_figures or on_figures):
            continue
        seed = seed_figures.get(step_name)
        off, on = off_figures.get(step_name, float("nan")), on_figures.get(step_name, float("nan"))
        if seed:
            rows.append([step_name, fmt(seed[0]), fmt(off), flagged(ratio(off, seed[0]), off, seed[0]), fmt(seed[1]), fmt(on),
                         flagged(ratio(on, seed[1]), on, seed[1]), ratio(seed[0], seed[1], "x"),
                         flagged(ratio(off, on, "x"), off / on if on else float("nan"), seed[0] / seed[1])])
        else:
            rows.append([step_name, "-", fmt(off), "-", "-", fmt(on), "-", "-", ratio(off, on, "x")])
    tot_off = sum(off_figures.values()) or float("nan")
    tot_on = sum(on_figures.values()) or float("nan")
    rows.append(["sum", "", fmt(tot_off), "", "", fmt(tot_on), "", "", ratio(tot_off, tot_on, "x")])
    return table(rows, ["step", "seed OFF", "twin OFF", "twin/seed", "seed ON", "twin ON", "twin/seed",
                        "seed ratio", "twin ratio"])


def kubectl_share_table(r: dict[str, Any]) -> str:
    """Per step and mode: kubectl apply/delete's own wall time as a share of the step's, the part of it before its
    first request for an object (nothing of the step has reached the twin yet), the twin's CPU while kubectl ran as
    a share of kubectl's wall time (an upper bound of the twin's share: it includes what the controllers did with
    the objects meanwhile; issue 18's bar is under 10 %), and the number of polls."""
    rows = []
    for step_name in STEPS:
        row = [step_name]
        for mode in ("off", "on"):
            s = (r.get(f"{mode}_kubectl") or {}).get(step_name)
            if not s:
                row += ["-"] * 4
                continue
            row += [f"{s['submit']:.2f} s ({100 * s['submit'] / s['wall']:.0f} %)",
                    f"{s['prepare']:.2f} s ({100 * s['prepare'] / s['wall']:.0f} %)",
                    f"{100 * s['twin_cpu'] / s['submit']:.0f} %" if s["submit"] and "twin_cpu" in s else "-", str(s["polls"])]
        if len(row) > 1 and set(row[1:]) != {"-"}:
            rows.append(row)
    return table(rows, ["step", "OFF kubectl (of step)", "OFF before 1st object", "OFF twin CPU/kubectl", "OFF polls",
                        "ON kubectl (of step)", "ON before 1st object", "ON twin CPU/kubectl", "ON polls"])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time-scale", type=float, default=0.01)
    p.add_argument("--only", default="seed000,snapshot,seed002")
    p.add_argument("--drivers", default="ontap-nas,ontap-nas-economy,ontap-san,ontap-san-economy")
    p.add_argument("--volumes", type=int, default=100,
                   help=f"PVCs per seed 002 run; the seed has tables for {' and '.join(map(str, sorted(SEED002)))} only")
    p.add_argument("--modes", default="off,on", help="Trident concurrency runs of seed 002 (off,on)")
    p.add_argument("--method", choices=("release", "kubectl"), default="release",
                   help="how seed 002's steps are timed: release = objects submitted to a stalled controller by the "
                        "Python client, clock from the release, watches; kubectl = the seed's own: kubectl apply / "
                        "delete -f of one file, then kubectl get once per cluster second until all are done "
                        "(benchmarks/seed_method.py)")
    p.add_argument("--kubectl", metavar="PATH", default=seed_method.KUBECTL,
                   help="with --method kubectl: the kubectl to run (default: KUBECTL or kubectl on PATH); before 1.34 "
                        "kubectl spends seconds decoding OpenAPI per applied object, see scripts/fetch-kubectl.sh")
    p.add_argument("--poll-wall", type=float, metavar="SECONDS",
                   help="with --method kubectl: wall seconds between polls (default: the time scale, one cluster second)")
    p.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    p.add_argument("--markdown", action="store_true",
                   help="print the tables as docs/calibration.md has them (titles at level 4, under a run's heading); "
                        "the raw figures go to --json, or to stderr without it")
    p.add_argument("--from-json", metavar="FILE",
                   help="print the tables of figures an earlier --json run saved, without starting a twin "
                        "(give that run's --time-scale)")
    return p


def main() -> int:
    parser = build_parser()
    a = parser.parse_args()
    res = json.loads(Path(a.from_json).read_text()) if a.from_json else {}
    res.setdefault("volumes", a.volumes)  # a saved run records its size; older saves take --volumes
    try:  # before a twin starts: a size without a seed table would only fail at the report, after a long run
        seed_table(int(res["volumes"]))
    except ValueError as e:
        parser.error(str(e))
    if not a.from_json:
        res = measure(a)
    if not a.json and not a.from_json:
        # the raw figures first, so a report bug cannot lose a long run (to stderr when stdout is to be Markdown)
        print(json.dumps(res), file=sys.stderr if a.markdown else sys.stdout)
    print(report(res, a.time_scale, heading="####" if a.markdown else "##"))
    return 0


def measure(a: argparse.Namespace) -> dict[str, Any]:
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` prints where a run waits
    only = set(a.only.split(","))
    res: dict[str, Any] = {"volumes": a.volumes}
    if "seed000" in only:
        res["seed000"] = seed000(a.time_scale)
    if "snapshot" in only:
        res["snapshot"] = snapshot_issue(a.time_scale)
    modes = tuple(m == "on" for m in a.modes.split(","))
    if "seed002" in only and a.method == "kubectl":
        seed_method.KUBECTL = a.kubectl
        res["method"] = "kubectl"
        res["kubectl"] = seed_method.client_version()
        res["seed002"] = seed_method.seed002(a.time_scale, a.drivers.split(","), a.volumes, modes, a.poll_wall,
                                             log=lambda line: print(line, file=sys.stderr))
    elif "seed002" in only:
        res["seed002"] = seed002(a.time_scale, a.drivers.split(","), a.volumes, modes)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
