"""The kubelet's container runtime: simulated containers, or host programs through twin/exec_runner.py.

twin/exec_runner.py (maps(image) -> bool; async run(pod, container, mounts, log) -> exit code) and
twin/backing.py (volume_dir(pv) -> host directory of a PV) belong to the storage half and may be absent:
then every container is simulated. A simulated container of a pod with restartPolicy Always runs until it
is killed; any other (a Job's) runs for a short calibrated time, prints what its shell script echoes and
exits with the code of its `exit N`, 0 otherwise - enough for logs and backoffLimit to behave.
"""
from __future__ import annotations

import asyncio
import hashlib
import shlex
from types import ModuleType
from typing import Callable

from .. import calibration

# Not in twin/calibration.yaml's kubelet section, so kept here (real-cluster seconds, scaled by
# --time-scale); a `container_run` entry in that section overrides it.
SIMULATED_RUN = {"median": 2.0, "sigma": 0.3}  # a batch container's work before it exits


def exec_runner() -> ModuleType | None:
    try:
        from .. import exec_runner as mod
    except ImportError:
        return None
    return mod


def backing() -> ModuleType | None:
    try:
        from .. import backing as mod
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
    if not init and pod["spec"].get("restartPolicy", "Always") == "Always":
        await asyncio.Event().wait()  # a server: runs until killed
    echoes, code = script_effects(container)
    cal = calibration.load()
    spec = cal.section("kubelet").get("container_run", SIMULATED_RUN)
    await kubelet.sleep(calibration.sample(spec, cal.rng))
    for line in echoes:
        log(line)
    return code


def script_effects(container: dict) -> tuple[list[str], int]:
    """What a `sh -c` script would print with echo, and the code of its first `exit N`."""
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    script = ""
    if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "ash") and argv[1] == "-c":
        script = argv[2]
    elif argv and argv[0].rsplit("/", 1)[-1] == "echo":
        return [" ".join(argv[1:])], 0
    echoes: list[str] = []
    for stmt in script.replace("&&", ";").replace("\n", ";").split(";"):
        try:
            words = shlex.split(stmt)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "echo":
            echoes.append(" ".join(words[1:]))
        elif words[0] == "exit":
            try:
                return echoes, int(words[1]) if len(words) > 1 else 0
            except ValueError:
                return echoes, 2
        elif words[0] == "false":
            return echoes, 1
    return echoes, 0
