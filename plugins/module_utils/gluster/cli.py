# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gluster CLI as the collection uses it: one runner, output parsers, and bulk volume plans.

Everything goes through the real `gluster` command (or a wrapper that runs it for one peer), always in
`--mode=script` so nothing prompts. Parsers are pure functions tested against output captured from
glusterfs 10.3.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import retry

VOLUME_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")
NO_VOLUMES = "No volumes present in cluster"
# glusterd takes a lock per volume (and the cluster lock for `volume set all`); a concurrent transaction
# touching the same lock is refused with one of these, and trying again shortly succeeds.
TRANSIENT_ERRORS = ("Another transaction is in progress", "Locking failed", "Lock on", "try again")

T = TypeVar("T")
R = TypeVar("R")

# Cluster-wide options this collection tunes: the seed's knobs (glusterd volume scale).
BRICK_MULTIPLEX = "cluster.brick-multiplex"
MAX_BRICKS_PER_PROCESS = "cluster.max-bricks-per-process"
VOL_COUNT_PER_THREAD = "glusterd.vol_count_per_thread"
VOL_COUNT_PER_THREAD_RANGE = (5, 200)
VOL_COUNT_THREADING_OFF_ABOVE = 100
TRUE_WORDS = ("on", "enable", "enabled", "true", "yes", "1")
FALSE_WORDS = ("off", "disable", "disabled", "false", "no", "0")


class GlusterError(StoragePerfError):
    """A gluster command failed; the message names the command and carries gluster's own output."""

    def __init__(self, msg: str, cmd: list[str] | None = None, rc: int | None = None,
                 stdout: str = "", stderr: str = "", hint: str | None = None, result: dict | None = None,
                 **details: Any) -> None:
        super().__init__(msg, hint=hint, result=result, **details)
        self.cmd = cmd or []
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr


class GlusterCLI:
    """Runs `<cli> --mode=script <args>`; `cli` is a command line such as `gluster` or a wrapper path."""

    def __init__(self, cli: str | list[str] = "gluster", timeout: float = 600.0) -> None:
        self.base = shlex.split(cli) if isinstance(cli, str) else list(cli)
        if not self.base:
            raise GlusterError("gluster_cli is empty: set it to `gluster` or to a wrapper that runs the gluster CLI")
        self.timeout = timeout
        # Every invocation counts, retries included: the benchmark reports it, and a test holds bulk work to O(N).
        self.calls = 0
        self._calls_lock = threading.Lock()

    def command(self, *args: str) -> list[str]:
        return [*self.base, "--mode=script", *args]

    def run(self, *args: str, timeout: float | None = None) -> tuple[int, str, str]:
        cmd = self.command(*args)
        with self._calls_lock:
            self.calls += 1
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout or self.timeout, check=False)
        except FileNotFoundError as exc:
            raise GlusterError(f"cannot run {cmd[0]!r} ({exc}); set gluster_cli to the gluster command or wrapper",
                               cmd) from exc
        except subprocess.TimeoutExpired as exc:
            return 124, "", f"timed out after {exc.timeout} s"
        return proc.returncode, proc.stdout, proc.stderr

    def check(self, *args: str, retries: int = 0, timeout: float | None = None) -> str:
        """Run and return stdout; raise GlusterError with gluster's output on failure.

        `retries` re-runs commands refused because another transaction held the lock (see TRANSIENT_ERRORS).
        """
        def attempt() -> str:
            rc, out, err = self.run(*args, timeout=timeout)
            if rc != 0:
                raise GlusterError(f"`gluster {' '.join(args)}` failed (rc={rc}): {error_text(out, err)}",
                                   self.command(*args), rc, out, err)
            return out

        return retry(attempt, is_transient, retries + 1, first=0.2, cap=5.0)


def is_transient(exc: Exception) -> bool:
    """A transaction refused because another one held its lock: trying again shortly succeeds."""
    return isinstance(exc, GlusterError) and any(word in f"{exc.stdout}\n{exc.stderr}" for word in TRANSIENT_ERRORS)


def read_pool(cli: GlusterCLI, *args: str) -> str:
    """cli.check(*args) as the first read of a task: failing there, glusterd is down or gluster_cli is wrong."""
    try:
        return cli.check(*args)
    except GlusterError as exc:
        exc.hint = exc.hint or f"Is glusterd running, and is gluster_cli={shlex.join(cli.base)!r} right?"
        raise


def error_text(out: str, err: str) -> str:
    """gluster prints failures on stderr, sometimes on stdout; keep both, trimmed."""
    text = " ".join(part.strip() for part in (err, out) if part and part.strip())
    return text or "no output"


# ---------------------------------------------------------------------------------------------- parsers
def parse_volume_list(out: str, err: str = "") -> list[str]:
    """`gluster volume list`: one name per line; with no volumes, only a message on stderr."""
    names = []
    for line in out.splitlines():
        line = line.strip()
        if not line or line == NO_VOLUMES:
            continue
        names.append(line)
    return names


def parse_peer_status(out: str) -> list[dict]:
    """`gluster peer status` -> [{hostname, uuid, state, connected, other_names}]."""
    peers: list[dict] = []
    current: dict | None = None
    in_other_names = False
    for raw in out.splitlines():
        line = raw.strip()
        if line.startswith("Hostname:"):
            current = {"hostname": line.split(":", 1)[1].strip(), "uuid": "", "state": "",
                       "connected": False, "other_names": []}
            peers.append(current)
            in_other_names = False
        elif current is None:
            continue
        elif line.startswith("Uuid:"):
            current["uuid"] = line.split(":", 1)[1].strip()
        elif line.startswith("State:"):
            state = line.split(":", 1)[1].strip()
            current["state"] = state
            # "Peer in Cluster (Connected)" / "(Disconnected)": the transport state is in parentheses.
            match = re.search(r"\(([^)]*)\)\s*$", state)
            current["connected"] = bool(match and match.group(1).strip() == "Connected")
        elif line.startswith("Other names:"):
            in_other_names = True
        elif in_other_names and line:
            current["other_names"].append(line)
        elif not line:
            in_other_names = False
    return peers


def parse_volume_get(out: str) -> dict[str, dict]:
    """`gluster volume get all <opt>` -> {option: {"value": str, "default": bool}}."""
    result: dict[str, dict] = {}
    for line in out.splitlines():
        line = line.rstrip()
        if not line or line.startswith("Option") or set(line.strip()) <= {"-", " "}:
            continue
        parts = line.split(None, 1)
        if len(parts) != 2:
            continue
        name, value = parts[0], parts[1].strip()
        default = value.endswith("(DEFAULT)")
        if default:
            value = value[: -len("(DEFAULT)")].strip()
        result[name] = {"value": value, "default": default}
    return result


def parse_volume_info(out: str) -> dict[str, dict]:
    """`gluster volume info [all]` -> {name: {"status", "type", "bricks": [...], "options": {...}}}."""
    volumes: dict[str, dict] = {}
    current: dict | None = None
    section = ""
    for raw in out.splitlines():
        line = raw.strip()
        if line.startswith("Volume Name:"):
            current = {"status": "", "type": "", "bricks": [], "options": {}}
            volumes[line.split(":", 1)[1].strip()] = current
            section = ""
            continue
        if current is None or not line:
            continue
        if line == "Bricks:":
            section = "bricks"
        elif line == "Options Reconfigured:":
            section = "options"
        elif line.startswith("Status:"):
            current["status"] = line.split(":", 1)[1].strip()
        elif line.startswith("Type:"):
            current["type"] = line.split(":", 1)[1].strip()
        elif section == "bricks" and re.match(r"^Brick\d+:", line):
            current["bricks"].append(line.split(":", 1)[1].strip())
        elif section == "options" and ":" in line:
            key, value = line.split(":", 1)
            current["options"][key.strip()] = value.strip()
    return volumes


def is_true(value: object) -> bool:
    return str(value).strip().lower() in TRUE_WORDS


# ------------------------------------------------------------------------------------------ volume plan
def volume_names(names: list[str] | None, prefix: str | None, count: int | None, start: int = 1) -> list[str]:
    """The requested names: `names` as given, or prefix + zero-padded index (width of the largest, min 4)."""
    if names:
        return list(dict.fromkeys(names))  # keep order, drop duplicates
    if prefix is None or count is None:
        return []
    width = max(4, len(str(start + count - 1)))
    return [f"{prefix}{i:0{width}d}" for i in range(start, start + count)]


def invalid_volume_names(names: list[str]) -> list[str]:
    return [n for n in names if not VOLUME_NAME_RE.match(n)]


def bricks_for(name: str, peers: list[str], bricks_root: str | None, bricks_roots: dict | None) -> list[str]:
    """One brick per peer, `<address>:<root>/<volume>`; bricks_roots overrides the root per address."""
    bricks = []
    for peer in peers:
        root = (bricks_roots or {}).get(peer, bricks_root)
        if root is None:  # validate() in gluster_volumes_ops rejects this before anything runs
            raise ValueError(f"no bricks directory for peer {peer}: set bricks_root, or bricks_roots per address")
        bricks.append(f"{peer}:{root.rstrip('/')}/{name}")
    return bricks


class VolumeResult:
    def __init__(self, name: str, ok: bool, seconds: float, error: str = "") -> None:
        self.name = name
        self.ok = ok
        self.seconds = seconds
        self.error = error


def run_parallel(func: Callable[[T], R], items: list[T], parallel: int) -> list[R]:
    """Apply func to items with at most `parallel` in flight; results in input order."""
    if not items:
        return []
    if parallel <= 1 or len(items) == 1:
        return [func(item) for item in items]
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(func, items))


def create_volume(cli: GlusterCLI, name: str, bricks: list[str], replica: int, options: dict,
                  start: bool, force: bool, retries: int = 8) -> VolumeResult:
    t0 = time.monotonic()
    try:
        args = ["volume", "create", name]
        if replica > 1:
            args += ["replica", str(replica)]
        args += bricks
        if force:
            # Bricks on the root file system (or several bricks of a replica set on one host) need `force`.
            args.append("force")
        cli.check(*args, retries=retries)
        for key, value in (options or {}).items():
            cli.check("volume", "set", name, str(key), str(value), retries=retries)
        if start:
            cli.check("volume", "start", name, retries=retries)
    except GlusterError as exc:
        return VolumeResult(name, False, time.monotonic() - t0, str(exc))
    return VolumeResult(name, True, time.monotonic() - t0)


def delete_volume(cli: GlusterCLI, name: str, retries: int = 8) -> VolumeResult:
    t0 = time.monotonic()
    try:
        rc, out, err = cli.run("volume", "stop", name, "force")
        text = f"{out}\n{err}"
        # A volume that was never started cannot be stopped; that is fine before delete.
        if rc != 0 and "is not in the started state" not in text and "not started" not in text:
            if any(word in text for word in TRANSIENT_ERRORS):
                cli.check("volume", "stop", name, "force", retries=retries)
            else:
                raise GlusterError(f"`gluster volume stop {name} force` failed (rc={rc}): {error_text(out, err)}")
        cli.check("volume", "delete", name, retries=retries)
    except GlusterError as exc:
        return VolumeResult(name, False, time.monotonic() - t0, str(exc))
    return VolumeResult(name, True, time.monotonic() - t0)


def set_options_on(cli: GlusterCLI, name: str, options: dict, retries: int = 8) -> VolumeResult:
    t0 = time.monotonic()
    try:
        for key, value in options.items():
            cli.check("volume", "set", name, str(key), str(value), retries=retries)
    except GlusterError as exc:
        return VolumeResult(name, False, time.monotonic() - t0, str(exc))
    return VolumeResult(name, True, time.monotonic() - t0)


def normalize_value(value: object) -> str:
    """gluster accepts on/enable/true/yes/1 and their opposites for booleans; compare them as on/off."""
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return "on"
    if text in FALSE_WORDS:
        return "off"
    return text


def option_drift(current: dict[str, str], wanted: dict) -> dict:
    """Options whose reconfigured value differs from the wanted one."""
    return {key: value for key, value in (wanted or {}).items()
            if key not in current or normalize_value(current[key]) != normalize_value(value)}


# ------------------------------------------------------------------------------------- cluster options
def desired_cluster_options(brick_multiplex: bool | None, max_bricks_per_process: int | None,
                            vol_count_per_thread: int | None) -> tuple[dict[str, str], list[str]]:
    """Validate the tunables -> ({gluster option: value}, [errors]). Dependency on multiplex checked later."""
    wanted: dict[str, str] = {}
    errors: list[str] = []
    if brick_multiplex is not None:
        wanted[BRICK_MULTIPLEX] = "on" if brick_multiplex else "off"
    if max_bricks_per_process is not None:
        if max_bricks_per_process < 0:
            errors.append(f"max_bricks_per_process must be >= 0 (0 means no limit); got {max_bricks_per_process}")
        wanted[MAX_BRICKS_PER_PROCESS] = str(max_bricks_per_process)
    if vol_count_per_thread is not None:
        low, high = VOL_COUNT_PER_THREAD_RANGE
        if not low <= vol_count_per_thread <= high:
            errors.append(f"vol_count_per_thread must be between {low} and {high} (glusterd's range); "
                          f"got {vol_count_per_thread}")
        wanted[VOL_COUNT_PER_THREAD] = str(vol_count_per_thread)
    return wanted, errors


def same_option_value(option: str, have: str, want: str) -> bool:
    return normalize_value(have) == normalize_value(want)
