"""kubelet: run the pods bound to the twin's nodes, from volume mount to termination.

One controller plays the kubelet of every node. For each pod bound to a node it writes what the real
kubelet writes: a Pending status (ContainerCreating, hostIP, startTime), then, once every volume is ready
(kubelet_volumes.py: claim Bound, VolumeAttachment attached where the CSIDriver requires it) and
mounted (calibrated, all volumes of a pod in parallel), the sandbox (podIP) and the containers
(kubelet_runtime.py: simulated, or host programs), and phase Running with every condition Ready.
Containers that exit follow restartPolicy (CrashLoopBackOff backoff 10 s doubling to 5 min); a pod
whose containers all ended turns Succeeded or Failed and its volumes are unmounted.

Deletion is graceful (store.graceful_pods): a pod with deletionTimestamp has its containers stopped as the
kubelet's killContainer does - preStop hook, SIGTERM to a container whose PID 1 handles it
(kubelet_runtime.term_exit), SIGKILL (exit 137) when metadata.deletionGracePeriodSeconds of cluster time are
over, a later DELETE's shorter grace applying from then - gets its terminal phase, has its volumes unmounted,
and only then is deleted with grace 0, after which the attach-detach controller may detach. A force delete
(grace 0) removes the object at once; the kubelet then stops what still runs. Events: Pulled, Created, Started,
Killing, SuccessfulMountVolume, FailedMount, BackOff.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import shutil
from pathlib import Path

from .. import calibration
from ..apimachinery import errors
from ..host import images
from ..store import now_iso
from . import kubelet_runtime
from .base import Controller
from ..streams.podlogs import ContainerLog
from .kubelet_volumes import Volume, VolumeManager
from .podstatus import is_terminal, set_condition

log = logging.getLogger("twin")

# pkg/kubelet/volumemanager: podAttachAndMountTimeout (2 min 3 s), after which FailedMount is reported
MOUNT_TIMEOUT_SECONDS = 123.0
BACKOFF_START_SECONDS, BACKOFF_MAX_SECONDS = 10.0, 300.0
# pod spec default (core/v1 DefaultTerminationGracePeriodSeconds) and the kubelet's minimumGracePeriodInSeconds,
# what a container gets after a preStop hook that used up the grace period (cluster seconds)
DEFAULT_GRACE_SECONDS, MIN_GRACE_SECONDS = 30, 2
# wall seconds a host program gets to finish its own shutdown at least (mariadbd flushes; not time-scaled)
REAL_STOP_SECONDS = 2.0
CONDITION_ORDER = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


class Kubelet(Controller):
    name = "kubelet"

    def setup(self) -> None:
        self.store.graceful_pods = True  # pods on a node wait for us to finish them
        self.store.time_scale = self.cluster.time_scale  # a grace period's deletionTimestamp, in cluster seconds
        self.volumes = VolumeManager(self)
        self.workers: dict[str, PodWorker] = {}
        self.next_ip: dict[str, int] = {}
        self.root = Path(self.cluster.dir) / "kubelet" / "pods"
        self.store.kubelet = self  # the API server's exec, attach and port-forward

    def on_change(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        # never writes synchronously: workers run as tasks, so a pod write never recurses into us
        if rtype.key != self.pods_rt.key:
            self.volumes.on_change(rtype, etype, obj)
            return
        node = obj["spec"].get("nodeName")
        if not node:
            return
        uid = obj["metadata"]["uid"]
        w = self.workers.get(uid)
        if etype == "DELETED":
            if w is not None:
                del self.workers[uid]
                w.gone()
            return
        if w is None:
            if is_terminal(obj) or not self.store.exists(self.nodes_rt, None, node):
                return
            w = self.workers[uid] = PodWorker(self, obj)
            w.start()
        if obj["metadata"].get("deletionTimestamp"):
            w.terminate(obj)

    async def run(self) -> None:
        for e in self.store.list_entries(self.pods_rt):
            self.on_change(self.pods_rt, "ADDED", e.obj, None)
        await asyncio.Event().wait()  # everything else arrives through the store hook

    def _streaming_target(self, ns: str, name: str, container: str, verb: str):
        """The pod, container and worker a `kubectl exec|attach` names, with the API's errors when none runs."""
        pod = self.store.get(self.pods_rt, ns, name)
        cs = list(pod["spec"].get("containers") or [])
        if not container:
            container = cs[0]["name"] if cs else ""
        c = next((x for x in cs + list(pod["spec"].get("initContainers") or []) if x["name"] == container), None)
        if c is None:
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            what = "exec into" if verb == "exec" else "attach"
            raise errors.bad_request(f"cannot {what} a container in a completed pod; current phase is {phase}")
        if not pod["spec"].get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        w = self.workers.get(pod["metadata"]["uid"])
        st = w.cstatus.get(container) if w is not None else None
        if w is None or st is None or "running" not in st["state"] or container not in w.running:
            raise errors.bad_request(f'unable to upgrade connection: container not found ("{container}")')
        mod = kubelet_runtime.exec_runner()
        if mod is None or not mod._host_ready():
            raise errors.ApiError(500, "InternalError", f"{verb} needs the twin to run as root with nsenter, unshare, "
                                                        "ip, mount and chroot")
        return pod, c, w, mod

    async def exec(self, ns: str, name: str, container: str, argv: list[str], tty: bool, start: bool = True):
        """Start `kubectl exec`'s command in the container's view (twin/host/exec_runner.py); errors as the API's.
        With start=False only check that it could start."""
        pod, c, w, mod = self._streaming_target(ns, name, container, "exec")
        if not start:
            return None
        mounts = await w.host_mounts(pod, c)
        return await mod.start_exec(pod, c, mounts, argv, tty)

    def attach(self, ns: str, name: str, container: str):
        """The running container's main process streams (`kubectl attach`); errors as the API's. Only a
        container the twin runs as a host process has them: a simulated one has no process to attach to."""
        pod, c, _, mod = self._streaming_target(ns, name, container, "attach")
        hub = mod.attachable(pod, c["name"])
        if hub is None:
            raise errors.ApiError(500, "InternalError", f"error attaching to container: container {c['name']} is "
                                                        "simulated by the twin (no process runs it)")
        return hub, c

    # node facts ---------------------------------------------------------------------------------
    def node_ip(self, node: str) -> str:
        e = self.store.objects[self.nodes_rt.key].get(("", node))
        for a in ((e.obj.get("status") or {}).get("addresses") or []) if e else []:
            if a.get("type") == "InternalIP":
                return a["address"]
        return "127.0.0.1"

    def pod_ip(self, node: str) -> str:
        e = self.store.objects[self.nodes_rt.key].get(("", node))
        cidr = ((e.obj.get("spec") or {}).get("podCIDR") if e else None) or "10.244.0.0/24"
        net = ipaddress.ip_network(cidr, strict=False)
        n = self.next_ip.get(node, 0)
        self.next_ip[node] = n + 1
        return str(net.network_address + 2 + n % max(net.num_addresses - 3, 1))

    def exec_start_latency(self) -> float:
        """Real seconds from an exec's handshake to its process running: the client's wire, not the cluster's
        clock, so the time scale does not shrink it."""
        try:
            return calibration.load().kubelet_latency("exec_start")
        except calibration.CalibrationError:
            return 0.02

    def latency(self, op: str) -> float:
        try:
            return calibration.load().kubelet_latency(op)
        except calibration.CalibrationError:
            return 0.5


class PodWorker:
    """The kubelet's pod worker for one pod: start, run, restart, terminate."""

    def __init__(self, kubelet: Kubelet, pod: dict) -> None:
        self.k = kubelet
        md = pod["metadata"]
        self.uid, self.ns, self.name, self.node = md["uid"], md["namespace"], md["name"], pod["spec"]["nodeName"]
        self.main: asyncio.Task | None = None
        self.running: dict[str, asyncio.Task] = {}
        self.mounted: dict[str, Volume] = {}
        self.cstatus: dict[str, dict] = {}      # container name -> containerStatus
        self.istatus: dict[str, dict] = {}      # init container name -> status
        self.sandbox = False
        self.initialized = False
        self.phase = "Pending"
        self.pod_ip = ""
        self.terminating = False
        self.grace = 0.0        # cluster seconds, from the pod's deletionGracePeriodSeconds
        self.deadline = 0.0     # loop time at which the grace period ends (a shorter grace brings it forward)
        self.hurry = asyncio.Event()
        self.exit_codes: dict[str, int] = {}  # container -> code it exited with while terminating
        self.adopted = False
        self.last_failed_mount = 0.0
        self.problems: dict[str, str] = {}  # volume name -> unbound / unattached / missing, while waiting
        self.start_time = now_iso()

    # lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        self.main = asyncio.ensure_future(self._start())

    def fresh(self) -> dict | None:
        e = self.k.store.objects[self.k.pods_rt.key].get((self.ns, self.name))
        if e is None or e.obj["metadata"]["uid"] != self.uid:
            return None
        return self.k.store.get(self.k.pods_rt, self.ns, self.name)

    async def _start(self) -> None:
        pod = self.fresh()
        if pod is None:
            return
        st = pod.get("status") or {}
        if st.get("phase") == "Running" and st.get("containerStatuses"):
            self.adopted = True  # started by someone else (a static or pre-made pod): leave it running
            return
        spec = pod["spec"]
        for c in spec.get("initContainers") or []:
            self.istatus[c["name"]] = _waiting(c, "PodInitializing")
        for c in spec.get("containers") or []:
            self.cstatus[c["name"]] = _waiting(c, "ContainerCreating" if not spec.get("initContainers") else "PodInitializing")
        self.initialized = not spec.get("initContainers")
        self.start_time = now_iso()
        self.write_status()
        await self._mount_all(pod)
        self.sandbox = True
        self.pod_ip = self.k.node_ip(self.node) if spec.get("hostNetwork") else self.k.pod_ip(self.node)
        for c in spec.get("initContainers") or []:
            restarts = 0
            if images.lookup(c.get("image", "")) is None:
                await self._pull_backoff(pod, c, self.istatus[c["name"]])  # never returns: killed with the pod
            while await self._run_init(pod, c, restarts) != 0:
                if spec.get("restartPolicy", "Always") == "Never":
                    self.phase = "Failed"
                    self.write_status()
                    asyncio.ensure_future(self._teardown_volumes())
                    return
                # a failed init container is retried (Init:CrashLoopBackOff) before anything else starts
                await self.k.sleep(min(BACKOFF_START_SECONDS * 2 ** restarts, BACKOFF_MAX_SECONDS))
                restarts += 1
        self.initialized = True
        await self.k.sleep(self.k.latency("container_start"))
        for c in spec.get("containers") or []:
            if images.lookup(c.get("image", "")) is None:
                self.running[c["name"]] = asyncio.ensure_future(self._pull_backoff(pod, c, self.cstatus[c["name"]]))
            else:
                self._start_container(pod, c, restarts=0)
        # a pod none of whose containers could start (images that cannot be pulled) stays Pending
        if any("running" in s["state"] or "terminated" in s["state"] for s in self.cstatus.values()):
            self.phase = "Running"
        self.write_status()

    async def _pull_backoff(self, pod: dict, c: dict, st: dict) -> None:
        """An image the twin cannot pull: ErrImagePull, then ImagePullBackOff, retried with the kubelet's
        image back-off (10 s doubling to 5 min) until the pod is deleted."""
        image = c.get("image", "")
        err = images.pull_error(image)
        attempt = 0
        while True:
            self.k.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet")
            self.k.event(pod, "Warning", "Failed", f'Failed to pull image "{image}": {err}', "kubelet")
            self.k.event(pod, "Warning", "Failed", "Error: ErrImagePull", "kubelet")
            st.update({"ready": False, "started": False, "state": {"waiting": {"reason": "ErrImagePull", "message": err}}})
            self.write_status()
            await self.k.sleep(self.k.latency("container_start"))
            self.k.event(pod, "Normal", "BackOff", f'Back-off pulling image "{image}"', "kubelet")
            self.k.event(pod, "Warning", "Failed", "Error: ImagePullBackOff", "kubelet")
            st["state"] = {"waiting": {"reason": "ImagePullBackOff",
                                       "message": f'Back-off pulling image "{image}": ErrImagePull: {err}'}}
            self.write_status()
            await self.k.sleep(min(BACKOFF_START_SECONDS * 2 ** attempt, BACKOFF_MAX_SECONDS))
            attempt += 1

    def _start_container(self, pod: dict, c: dict, restarts: int) -> None:
        image = c.get("image", "")
        if restarts == 0:
            self.k.event(pod, "Normal", "Pulled", f'Container image "{image}" already present on machine', "kubelet")
        self.k.event(pod, "Normal", "Created", f"Created container: {c['name']}", "kubelet")
        self.k.event(pod, "Normal", "Started", f"Started container {c['name']}", "kubelet")
        st = self.cstatus[c["name"]]
        what = self._what_runs(c, announce=restarts == 0)
        st.update({"containerID": kubelet_runtime.container_id(self.uid, c["name"], restarts),
                   "imageID": images.image_id(image, what), "ready": True, "started": True,
                   "restartCount": restarts, "state": {"running": {"startedAt": now_iso()}}})
        self.running[c["name"]] = asyncio.ensure_future(self._run_container(pod, c, restarts))

    def _what_runs(self, c: dict, announce: bool) -> str:
        """What really runs for the container's image; announced once in the pod's annotation
        storageperf.io/twin-runtime-<container> so that reports can say what was measured."""
        image = c.get("image", "")
        real = kubelet_runtime.runs_on_host(image)
        what = images.runtime(image, real=real)
        # only host programs are announced: simulated pods (hundreds in the attach benchmarks) get no extra write
        pod = self.fresh() if announce and real else None
        if pod is not None and not self.adopted:
            key = (images.ANNOTATION_PREFIX + c["name"])[:len(images.ANNOTATION_PREFIX.split("/")[0]) + 64]
            pod["metadata"].setdefault("annotations", {})[key] = f"{image}: {what}"
            try:
                self.k.store.update(self.k.pods_rt, self.ns, self.name, pod)
            except errors.ApiError:
                pass
        return what

    async def _run_init(self, pod: dict, c: dict, restarts: int) -> int:
        st = self.istatus[c["name"]]
        started = now_iso()
        if "terminated" in st["state"]:
            st["lastState"] = {"terminated": st["state"]["terminated"]}
        what = self._what_runs(c, announce=restarts == 0)
        st.update({"containerID": kubelet_runtime.container_id(self.uid, c["name"], restarts),
                   "imageID": images.image_id(c.get("image", ""), what), "started": True,
                   "restartCount": restarts, "state": {"running": {"startedAt": started}}})
        self.write_status()
        code = await self._exec(pod, c, init=True)
        st.update({"ready": code == 0, "started": False,
                   "state": {"terminated": _terminated(code, started, st["containerID"])}})
        self.write_status()
        return code

    async def _exec(self, pod: dict, c: dict, init: bool = False) -> int:
        st = (self.istatus if init else self.cstatus)[c["name"]]
        clog = self._instance_log(c["name"], st.get("containerID", ""))
        clog.start()
        try:
            return await self._exec_logged(pod, c, init)
        finally:
            clog.end()  # `kubectl logs -f` ends with the container

    async def host_mounts(self, pod: dict, c: dict) -> dict[str, str]:
        """Path in the container -> host directory: its volumeMounts, and each CSI volume it mounts also at
        the kubelet's path (/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount), so that
        `mount | grep csi` inside shows the CSI volume as on the node. Only in the container's own view."""
        plan = self.k.volumes.plan_host_dirs(pod, self.mounted, self.k.root / self.uid)
        dirs = await asyncio.get_running_loop().run_in_executor(None, self.k.volumes.host_dirs, plan)
        mounts = _mount_paths(c, dirs)
        used = {m.get("name") for m in c.get("volumeMounts") or []}
        for vname, v in self.mounted.items():
            if vname in used and vname in dirs and v.pv is not None and (v.pv.get("spec") or {}).get("csi"):
                path = f"/var/lib/kubelet/pods/{self.uid}/volumes/kubernetes.io~csi/{v.pv['metadata']['name']}/mount"
                mounts[path] = str(dirs[vname])
        return mounts

    async def _exec_logged(self, pod: dict, c: dict, init: bool) -> int:
        try:
            mounts = {}
            if kubelet_runtime.runs_on_host(c.get("image", "")):
                mounts = await self.host_mounts(pod, c)
            name = c["name"]

            def log_line(text: str) -> None:
                self._log(name, text)

            return await kubelet_runtime.run(self.k, pod, c, mounts, log_line, init=init)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the runtime failed to run it: as a container that could not start
            log.exception("container %s of %s/%s failed to run", c["name"], self.ns, self.name)
            self._log(c["name"], f"failed to run: {e}")
            return 128

    async def _run_container(self, pod: dict, c: dict, restarts: int) -> None:
        name = c["name"]
        code = await self._exec(pod, c)
        if self.terminating:  # it ended within the grace period: no restart, _stop_container reports it
            self.exit_codes[name] = code
            return
        st = self.cstatus[name]
        started = st["state"].get("running", {}).get("startedAt", now_iso())
        term = _terminated(code, started, st.get("containerID", ""))
        policy = pod["spec"].get("restartPolicy", "Always")
        if policy == "Always" or (policy == "OnFailure" and code != 0):
            delay = min(BACKOFF_START_SECONDS * 2 ** restarts, BACKOFF_MAX_SECONDS)
            st.update({"ready": False, "started": False, "lastState": {"terminated": term},
                       "state": {"waiting": {"reason": "CrashLoopBackOff",
                                             "message": f"back-off {int(delay)}s restarting failed container={name} "
                                                        f"pod={self.name}_{self.ns}({self.uid})"}}})
            self.write_status()
            self.k.event(pod, "Warning", "BackOff", f"Back-off restarting failed container {name} in pod "
                                                    f"{self.name}_{self.ns}({self.uid})", "kubelet")
            await self.k.sleep(delay)
            self._start_container(pod, c, restarts + 1)
            self.write_status()
            return
        st.update({"ready": False, "started": False, "state": {"terminated": term}})
        self.running.pop(name, None)
        if all("terminated" in s["state"] for s in self.cstatus.values()):
            codes = [s["state"]["terminated"]["exitCode"] for s in self.cstatus.values()]
            self.phase = "Succeeded" if all(x == 0 for x in codes) else "Failed"
            self.write_status()
            asyncio.ensure_future(self._teardown_volumes())  # a finished pod's volumes are torn down
        else:
            self.write_status()

    # volumes ------------------------------------------------------------------------------------
    async def _mount_all(self, pod: dict) -> None:
        timeout = MOUNT_TIMEOUT_SECONDS * self.k.cluster.time_scale

        async def one(vol: dict) -> None:
            got: list[Volume] = []

            def check() -> tuple[bool, list[tuple]]:
                v, keys, problem = self.k.volumes.resolve(pod, vol, self.node)
                if v is None:
                    self.problems[vol["name"]] = problem
                    return False, keys
                self.problems.pop(vol["name"], None)
                got.append(v)
                return True, []

            while not await self.k.volumes.wait(check, timeout):
                self._failed_mount(pod)
            v = got[-1]
            self.mounted[v.name] = v  # counted as in use from here, so unmount runs even if killed mid-mount
            await self.k.volumes.mount(self.node, v)
            if v.kind == "pvc" and v.pv is not None:
                self.k.event(pod, "Normal", "SuccessfulMountVolume",
                             f'MountVolume.SetUp succeeded for volume "{v.pv["metadata"]["name"]}"', "kubelet")

        vols = pod["spec"].get("volumes") or []
        if vols:
            await asyncio.gather(*(one(v) for v in vols))

    def _failed_mount(self, pod: dict) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() - self.last_failed_mount < MOUNT_TIMEOUT_SECONDS * self.k.cluster.time_scale / 2:
            return  # one event per timeout period, however many volumes timed out
        self.last_failed_mount = loop.time()
        names = sorted(v["name"] for v in pod["spec"].get("volumes") or [] if v["name"] not in self.mounted)
        unattached = sorted(n for n, p in self.problems.items() if p in ("unattached", "unbound"))
        self.k.event(pod, "Warning", "FailedMount",
                     f"Unable to attach or mount volumes: unmounted volumes=[{' '.join(names)}], unattached "
                     f"volumes=[{' '.join(unattached)}], failed to process volumes=[]: timed out waiting for the condition",
                     "kubelet")

    async def _teardown_volumes(self) -> None:
        mod = kubelet_runtime.exec_runner()
        if mod is not None:
            mod.release_pod(self.uid)  # exec views hold the volumes
        vols = list(self.mounted.values())
        self.mounted.clear()
        await asyncio.gather(*(self.k.volumes.unmount(self.node, v) for v in vols), return_exceptions=True)

    # termination --------------------------------------------------------------------------------
    def terminate(self, pod: dict) -> None:
        """The pod is marked for deletion: start its termination, or shorten its grace period when a later DELETE
        asked for less (the kubelet's pod worker then kills with the shorter one from now)."""
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace = float(pod["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS) if grace is None
                      else grace)
        deadline = asyncio.get_running_loop().time() + grace * self.k.cluster.time_scale
        if not self.terminating:
            self.terminating = True
            self.grace, self.deadline = grace, deadline
            asyncio.ensure_future(self._terminate())
        elif deadline < self.deadline:
            self.grace, self.deadline = grace, deadline
            self.hurry.set()  # wake every wait bounded by the old deadline
            self.hurry = asyncio.Event()

    async def _until(self, end: float, task: asyncio.Future | None = None, floor: float | None = None) -> bool:
        """Wait until `end` but no later than the grace deadline (which a shorter grace may bring forward; a
        `floor` keeps it from coming before that); or until `task` is done. True when the task is done."""
        loop = asyncio.get_running_loop()
        while not (task is not None and task.done()):
            delay = min(end, self.deadline if floor is None else max(self.deadline, floor)) - loop.time()
            if delay <= 0:
                return False
            hurry = asyncio.ensure_future(self.hurry.wait())
            await asyncio.wait({hurry} | ({task} if task is not None else set()), timeout=delay,
                               return_when=asyncio.FIRST_COMPLETED)
            hurry.cancel()
        return True

    async def _stop_container(self, pod: dict, c: dict, task: asyncio.Task) -> int:
        """The kubelet's killContainer: the preStop hook (within the grace period), then SIGTERM to a container
        whose PID 1 handles it (kubelet_runtime.term_exit), then SIGKILL when the grace period is over; returns
        the exit code. The grace left after the hook is at least MIN_GRACE_SECONDS, as in the kubelet."""
        loop, scale, name = asyncio.get_running_loop(), self.k.cluster.time_scale, c["name"]
        self.k.event(pod, "Normal", "Killing", f"Stopping container {name}", "kubelet")
        hook = (c.get("lifecycle") or {}).get("preStop")
        if hook:
            await self._until(loop.time() + kubelet_runtime.prestop_seconds(hook) * scale, task)
        floor = loop.time() + MIN_GRACE_SECONDS * scale
        code = kubelet_runtime.term_exit(c)
        mod = kubelet_runtime.exec_runner()
        if code is not None and mod is not None and kubelet_runtime.runs_on_host(c.get("image", "")) \
                and mod.send_term(self.uid, name):
            # a real program shuts down in wall time, which the time scale does not shorten
            if await self._until(math.inf, task, max(floor, loop.time() + min(REAL_STOP_SECONDS, self.grace))):
                return self.exit_codes.pop(name, code)
        elif code is not None:
            # simulated: it exits once its handler has run (the seed's trap, after the loop's `sleep 1`)
            stop_at = loop.time() + self.k.latency("container_stop") * scale
            if await self._until(stop_at, task, floor):
                return self.exit_codes.pop(name, code)
            if loop.time() >= stop_at:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                return code
        elif await self._until(math.inf, task, floor):
            return self.exit_codes.pop(name, 0)  # it ended on its own within the grace period
        task.cancel()  # the grace period is over: SIGKILL
        await asyncio.gather(task, return_exceptions=True)
        self.exit_codes.pop(name, None)
        return 137

    async def _terminate(self) -> None:
        pod = self.fresh()
        if self.main is not None and not self.main.done():
            self.main.cancel()
            await asyncio.gather(self.main, return_exceptions=True)
        if pod is not None and not self.adopted:
            containers = {c["name"]: c for c in pod["spec"].get("containers") or []}
            stops, codes = {}, {}
            for name, task in list(self.running.items()):
                st = self.cstatus.get(name)
                if st and "running" in st["state"] and name in containers:
                    stops[name] = asyncio.ensure_future(self._stop_container(pod, containers[name], task))
                else:  # waiting (back-off, image pull): nothing runs to stop
                    task.cancel()
            if stops:
                codes = dict(zip(stops, await asyncio.gather(*stops.values())))
            for c in pod["spec"].get("containers") or []:
                st = self.cstatus.get(c["name"])
                if st and "running" in st["state"]:
                    st.update({"ready": False, "started": False,
                               "state": {"terminated": _terminated(codes.get(c["name"], 137),
                                                                   st["state"]["running"]["startedAt"],
                                                                   st.get("containerID", ""))}})
                elif st and "waiting" in st["state"]:  # never started: what the kubelet reports for it
                    st.update({"ready": False, "started": False, "state": {"terminated": {
                        "exitCode": 137, "reason": "ContainerStatusUnknown", "startedAt": None, "finishedAt": None,
                        "message": "The container could not be located when the pod was terminated"}}})
            await asyncio.gather(*self.running.values(), return_exceptions=True)
            self.running.clear()
            mod = kubelet_runtime.exec_runner()
            if mod is not None:
                mod.release_pod(self.uid)  # exec views hold the volumes open
            if self.phase not in ("Succeeded", "Failed") and self.cstatus:
                # the terminal phase comes before the pod goes (the Job controller counts it from there)
                codes_all = [s["state"].get("terminated", {}).get("exitCode", 1) for s in self.cstatus.values()]
                self.phase = "Succeeded" if all(x == 0 for x in codes_all) else "Failed"
                self.write_status()
            await self._teardown_volumes()
            self.k.volumes.flush(self.node)  # the node reports the volumes unused before the pod goes
        try:
            self.k.store.delete(self.k.pods_rt, self.ns, self.name, grace_seconds=0, preconditions={"uid": self.uid})
        except errors.ApiError:
            pass

    def gone(self) -> None:
        """The pod object is gone (deleted by us, or forced): stop what still runs, tear volumes down."""
        mod = kubelet_runtime.exec_runner()
        if mod is not None:
            mod.release_pod(self.uid)
        for t in [self.main, *self.running.values()]:
            if t is not None and not t.done():
                t.cancel()
        if self.mounted:
            asyncio.ensure_future(self._teardown_volumes())
        d = self.k.root / self.uid
        if d.exists():
            asyncio.get_running_loop().run_in_executor(None, shutil.rmtree, d, True)

    # status -------------------------------------------------------------------------------------
    def _clog(self, container: str) -> ContainerLog:
        logs = self.k.store.pod_logs
        key = (self.ns, self.name, container)
        cl = logs.get(key)
        if cl is None:
            cl = logs[key] = ContainerLog()
        return cl

    def _instance_log(self, container: str, container_id: str) -> ContainerLog:
        """The log of a starting instance: a restart starts a new one and keeps the last as its previous."""
        cl = self._clog(container)
        if cl.ran:
            cl = self.k.store.pod_logs[(self.ns, self.name, container)] = ContainerLog(container_id, previous=cl)
        cl.container_id = container_id
        return cl

    def _log(self, container: str, text: str) -> None:
        self._clog(container).add(text)

    def write_status(self) -> None:
        pod = self.fresh()
        if pod is None or self.adopted:
            return
        st = pod.setdefault("status", {})
        conds = st.get("conditions") or []
        terminal = self.phase in ("Succeeded", "Failed")
        unready = [n for n, s in self.cstatus.items() if not s.get("ready")]
        uninit = [n for n, s in self.istatus.items() if "terminated" not in s["state"]
                  or s["state"]["terminated"].get("exitCode")]
        set_condition(conds, "PodReadyToStartContainers", "True" if self.sandbox and not terminal else "False",
                      probe_time=True)
        if self.initialized or not uninit:
            set_condition(conds, "Initialized", "True", probe_time=True)
        else:
            set_condition(conds, "Initialized", "False", "ContainersNotInitialized",
                          f"containers with incomplete status: [{' '.join(uninit)}]", probe_time=True)
        for ctype in ("Ready", "ContainersReady"):
            if terminal:
                set_condition(conds, ctype, "False", "PodCompleted", probe_time=True)
            elif unready:
                set_condition(conds, ctype, "False", "ContainersNotReady",
                              f"containers with unready status: [{' '.join(unready)}]", probe_time=True)
            else:
                set_condition(conds, ctype, "True", probe_time=True)
        if not any(c["type"] == "PodScheduled" for c in conds):
            set_condition(conds, "PodScheduled", "True", probe_time=True)
        conds.sort(key=lambda c: CONDITION_ORDER.index(c["type"]) if c["type"] in CONDITION_ORDER else 99)
        host_ip = self.k.node_ip(self.node)
        st.update({"phase": self.phase, "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                   "startTime": st.get("startTime") or self.start_time,
                   "containerStatuses": [dict(s) for s in self.cstatus.values()]})
        if self.istatus:
            st["initContainerStatuses"] = [dict(s) for s in self.istatus.values()]
        if self.pod_ip:
            st["podIP"], st["podIPs"] = self.pod_ip, [{"ip": self.pod_ip}]
        try:
            self.k.store.update(self.k.pods_rt, self.ns, self.name, pod, subresource="status")
        except errors.ApiError:
            pass


def _mount_paths(c: dict, dirs: dict[str, Path]) -> dict[str, str]:
    """mountPath -> host directory of the container's volumeMounts (subPath inside the volume)."""
    out = {}
    for m in c.get("volumeMounts") or []:
        d = dirs.get(m.get("name"))
        if d is not None:
            if m.get("subPath"):
                d = d / m["subPath"]
                d.mkdir(parents=True, exist_ok=True)
            out[m["mountPath"]] = str(d)
    return out


def _waiting(c: dict, reason: str) -> dict:
    return {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "restartCount": 0,
            "started": False, "state": {"waiting": {"reason": reason}}, "lastState": {}}


def _terminated(code: int, started: str, container_id: str) -> dict:
    return {"exitCode": code, "reason": "Completed" if code == 0 else "Error", "startedAt": started,
            "finishedAt": now_iso(), "containerID": container_id}
