"""The kubelet's container runtime: simulated containers, or host programs through twin/host/exec_runner.py.

twin/host/exec_runner.py (maps(image) -> bool; async run(pod, container, mounts, log) -> exit code) and
twin/host/backing.py (volume_dir(pv) -> host directory of a PV) belong to the storage half and may be absent:
then every container is simulated. A simulated container of a pod with restartPolicy Always, and a server image
(pause, nginx) run by its own entrypoint under any restartPolicy, runs until it is killed; any other (a Job's
command) runs for a short calibrated time, prints what its shell script echoes and
exits with the code of its `exit N`, 0 otherwise - enough for logs and backoffLimit to behave.

What a container does on SIGTERM (term_exit) is decided here, for simulated and host-run containers alike
(twin/README.md, "Graceful termination"). A container's process is PID 1 of its PID namespace, and the kernel
delivers a signal to PID 1 only when it has installed a handler for it: a shell (sh -c without a `trap ... TERM`),
`sleep`, `tail -f` or `cat` never does, so TERM is ignored and the kubelet SIGKILLs the container when the
grace period ends (exit 137). A `trap '...; exit N' TERM` exits with N (`exit` alone: the status of the last
command, 0 in the seed's loop); servers (pause, nginx, mariadbd, CSI drivers) and every other program install a
handler and shut down (0). A shell image run without a command is kept running by the twin as a server and is
taken to exit on TERM too. Host-run containers are not PID 1 of a PID namespace on the twin's host, so the kubelet
applies the same rule: a container whose PID 1 would ignore TERM gets no TERM (a real SIGKILL at the end of the
grace period), the others get a real SIGTERM and exit when the program does.
"""
from __future__ import annotations

import asyncio
import hashlib
import math
import re
import shlex
from types import ModuleType
from collections.abc import Callable

from .. import calibration
from ..host import images

# Not in twin/calibration.yaml's kubelet section, so kept here (real-cluster seconds, scaled by
# --time-scale); a `container_run` entry in that section overrides it.
SIMULATED_RUN = {"median": 2.0, "sigma": 0.3}  # a batch container's work before it exits


def exec_runner() -> ModuleType | None:
    try:
        from ..host import exec_runner as mod
    except ImportError:
        return None
    return mod


def backing() -> ModuleType | None:
    try:
        from ..host import backing as mod
    except ImportError:
        return None
    return mod


def runs_on_host(image: str) -> bool:
    mod = exec_runner()
    try:
        return bool(mod and mod.maps(image))
    except Exception:
        return False


def image_id(image: str) -> str:
    """The digest reference containerd reports for an image (stable per image name)."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[: len(repo) - len(last)] + last.split(":", 1)[0]
    if "/" not in repo:
        repo = f"docker.io/library/{repo}"
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def container_id(pod_uid: str, name: str, restart: int) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restart}".encode()).hexdigest()


async def run(kubelet, pod: dict, container: dict, mounts: dict[str, str], log: Callable[[str], None],
              *, init: bool = False) -> int:
    """Run one container to its exit code (CancelledError when the kubelet kills it)."""
    mod = exec_runner()
    if mod is not None and runs_on_host(container.get("image", "")):
        return int(await mod.run(pod, container, mounts, log))
    return await simulate(kubelet, pod, container, log, init=init)


async def simulate(kubelet, pod: dict, container: dict, log: Callable[[str], None], *, init: bool = False) -> int:
    echoes, code, slept = script_effects(container)
    if not init and not slept and (pod["spec"].get("restartPolicy", "Always") == "Always" or _serves(container)):
        for line in echoes:
            log(line)
        await asyncio.Event().wait()  # a server: runs until killed
    if slept:
        # what the program does takes real time: `sleep 3600` lives an hour, or until the pod goes
        if math.isinf(slept):
            await asyncio.Event().wait()
        await asyncio.sleep(slept)
    else:
        cal = calibration.load()
        spec = cal.section("kubelet").get("container_run", SIMULATED_RUN)
        await kubelet.sleep(calibration.sample(spec, cal.rng))
    for line in echoes:
        log(line)
    return code


def _serves(container: dict) -> bool:
    """A server image (the catalogue's `runs: simulated`: pause, nginx, CSI drivers) run by its own entrypoint serves
    until it is killed, whatever the pod's restartPolicy; given a command, it does what the command does."""
    entry = images.lookup(container.get("image", ""))
    return entry is not None and entry.runs == "simulated" and not container.get("command")


# PID-1 programs that install no TERM handler (so the kernel drops the TERM the kubelet sends them)
_IGNORE_TERM = frozenset(("sh", "bash", "ash", "dash", "sleep", "tail", "cat"))
_TRAP = re.compile(r"\btrap\s+(?P<action>'[^']*'|\"[^\"]*\"|\S+)\s+(?P<sigs>[^;&|\n]*)")


def term_exit(container: dict) -> int | None:
    """The exit code the container's PID 1 ends with on SIGTERM, or None when it ignores TERM (then the kubelet
    kills it when the grace period ends: 137). The one place the twin decides it (module docstring)."""
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    if not argv:
        return 0  # the image's entrypoint: a server, or a shell image the twin keeps running as one
    prog = argv[0].rsplit("/", 1)[-1]
    if prog not in _IGNORE_TERM:
        return 0
    if prog in ("sh", "bash", "ash", "dash") and len(argv) >= 3 and argv[1] == "-c":
        for m in _TRAP.finditer(argv[2]):
            sigs = {w.upper().removeprefix("SIG") for w in m.group("sigs").split()}
            if not sigs & {"TERM", "15"}:
                continue
            action = m.group("action").strip("'\"")
            words = re.findall(r"\bexit(?:\s+(\d+))?", action)
            if words:
                return int(words[0]) if words[0] else 0
            return None  # a handler that does not exit: the shell carries on until killed
    return None


def prestop_seconds(hook: dict) -> float:
    """How long (cluster seconds) a preStop hook takes: sleep.seconds, an exec's sleeps, an HTTP GET at once."""
    if "sleep" in hook:
        return float((hook.get("sleep") or {}).get("seconds") or 0)
    if "exec" in hook:
        _, _, slept = script_effects({"command": (hook.get("exec") or {}).get("command") or []})
        return slept
    return 0.0


_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _seconds(word: str) -> float | None:
    """coreutils sleep's argument: a number with an optional s/m/h/d suffix, or inf / infinity."""
    if word.lower() in ("inf", "infinity"):
        return math.inf
    unit = word[-1] if word and word[-1] in "smhd" else ""
    try:
        return float(word[: len(word) - len(unit)]) * _UNITS[unit]
    except ValueError:
        return None


def script_effects(container: dict) -> tuple[list[str], int, float]:
    """What a `sh -c` script would print with echo, the code of its first `exit N`, and how long its
    `sleep`s take (a simulated container lives that long)."""
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    script = ""
    if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "ash") and argv[1] == "-c":
        script = argv[2]
    elif argv and argv[0].rsplit("/", 1)[-1] == "echo":
        return [" ".join(argv[1:])], 0, 0.0
    elif argv and argv[0].rsplit("/", 1)[-1] == "sleep":
        return [], 0, sum(_seconds(w) or 0.0 for w in argv[1:])
    echoes: list[str] = []
    slept = 0.0
    if re.search(r"\bwhile\s+(true|:)\s*;", script):
        return echoes, 0, math.inf  # runs until killed
    looped = re.search(r"\b(while|until|for)\b", script) is not None  # its sleeps repeat: not counted
    for stmt in script.replace("&&", ";").replace("\n", ";").split(";"):
        try:
            words = shlex.split(stmt)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "echo":
            echoes.append(" ".join(words[1:]))
        elif words[0] == "sleep" and len(words) > 1 and not looped:
            slept += sum(_seconds(w) or 0.0 for w in words[1:])
        elif words[0] == "exit":
            try:
                return echoes, int(words[1]) if len(words) > 1 else 0, slept
            except ValueError:
                return echoes, 2, slept
        elif words[0] == "false":
            return echoes, 1, slept
    return echoes, 0, slept
