"""Run a pod's container as a host process, so benchmark pods on the twin run the real programs.

Which images run (maps): the catalogue twin/host/images.yaml; mysql / mariadb images run MariaDB (mariadbd; the
image's entrypoint is emulated, below), sysbench images /usr/bin/sysbench, fio images /usr/bin/fio, each
only when that program is installed and the twin runs as root. Shell images (busybox, alpine, ubuntu,
debian, bash) run their command with the host's /bin/sh only when the twin setting `exec_shell_images` is
true (`python -m twin settings --set '{"exec_shell_images": true}'`): the attach/lifecycle benchmarks start
hundreds of busybox pods that must stay simulated. Other images are simulated by the kubelet.

How a container runs (run):
- argv as Kubernetes builds it: command + args, or the image's entrypoint (the program above) + args;
  `$(VAR)` references expanded from the container's env. env/envFrom are resolved like the kubelet does
  (value, secretKeyRef, configMapKeyRef, fieldRef incl. status.podIP), from the store when bound.
- Filesystem: a private mount namespace (`unshare --mount --uts --propagation private`) whose root is a
  copy-on-write overlay of the host's / (upper layer on a tmpfs), with private /tmp, /run and /dev/shm;
  each volumeMount's host directory (mounts: mountPath -> directory, from the kubelet / twin/host/backing.py)
  is bind-mounted at its mountPath inside. So /data or /var/lib/mysql exist only in the container: the
  host's own directories are never written. Then chroot into it, cd to workingDir, exec the program.
- Network: a pod with hostNetwork joins its node's network namespace (one per node, loopback only), as a
  host-network pod shares its node's stack: a MariaDB pod with hostNetwork listens on 3306 there, and a
  sysbench pod with hostNetwork on the same node reaches it at 127.0.0.1:3306, exactly as in the seed and
  on a real cluster. Other pods get a namespace of their own (shared by their containers), loopback only:
  traffic between pods is not modelled, so benchmark clients run on the server's node with hostNetwork.
- stdin is /dev/null unless the container has `stdin: true` (then a pipe that `kubectl attach -i` writes to,
  see Attachable); a `tty: true` container runs on a pseudo-terminal.
- stdout and stderr go line by line to the pod log (the kubelet's log callback); the exit code is the
  program's, or 128 + signal. When the pod is deleted the kubelet sends SIGTERM (send_term) to a container whose
  PID 1 handles it (kubelet_runtime.term_exit) and waits for it through the grace period; one still running then,
  or one killed without that (a pod force-deleted), is cancelled: SIGKILL at once when TERM was sent, else TERM
  and SIGKILL after the grace period (at most KILL_GRACE_SECONDS). Every process started here dies with the twin
  (PR_SET_PDEATHSIG, and the cluster's stop hook).

MySQL/MariaDB images (the official images' docker-entrypoint.sh, emulated): on an empty datadir
(/var/lib/mysql, or --datadir) run mariadb-install-db, then start mariadbd (`--no-defaults --user=root
--port=3306 --bind-address=0.0.0.0`, socket /run/mysqld/mysqld.sock, plus the container's `-`-options)
with an init file, written into the container's private /tmp, that sets root's password from
MYSQL_ROOT_PASSWORD / MARIADB_ROOT_PASSWORD (root@localhost and root@'%'), creates MYSQL_DATABASE and
MYSQL_USER / MYSQL_PASSWORD. Without a password and without MYSQL_ALLOW_EMPTY_PASSWORD it exits 1 with the
image's message. Secrets travel in the process environment only, never in a log or on the host's disk.
"""
from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import functools
import logging
import os
import re
import select
import shutil
import subprocess
import signal
import tempfile
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable

log = logging.getLogger("twin")

KILL_GRACE_SECONDS = 10.0
HOST_TOOLS = ("nsenter", "unshare", "ip", "mount", "chroot")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# kind -> (programs that must be installed, default entrypoint)
KINDS: dict[str, tuple[tuple[str, ...], list[str]]] = {
    "mysql": (("mariadbd", "mariadb-install-db"), ["docker-entrypoint.sh"]),
    "sysbench": (("sysbench",), ["sysbench"]),
    "fio": (("fio",), ["fio"]),
    "shell": (("sh",), ["sh"]),
}

_cluster: Any = None
_procs: dict[int, asyncio.subprocess.Process] = {}   # pid -> running container process (its own group)
_netns: dict[tuple[str, str], NetNS] = {}
_mains: dict[tuple[str, str], int] = {}  # (pod uid, container) -> pid of its running main process
_attachable: dict[tuple[str, str], Attachable] = {}  # (pod uid, container) -> its main process's streams
_termed: set[int] = set()  # pids of main processes the kubelet has sent SIGTERM (its grace period is running)


class Attachable:
    """A running main process's stdio as `kubectl attach` meets it (containerd's ContainerIO.Attach): output
    produced while a client is attached goes to it (stdout and stderr arrive merged, as the log has them);
    stdin exists only for a container with `stdin: true`, shared by every attached client; a `tty: true`
    container runs on a terminal (master). With `stdinOnce` (and no tty) the container's stdin closes when
    the first attached client's stdin ends."""

    def __init__(self, proc: asyncio.subprocess.Process, container: dict, master: int | None) -> None:
        self.proc = proc
        self.master = master
        self.has_stdin = bool(container.get("stdin"))
        self.stdin_once = bool(container.get("stdinOnce"))
        self.clients: set[asyncio.Queue[bytes | None]] = set()

    async def write(self, data: bytes) -> None:
        if not self.has_stdin:
            return
        if self.master is not None:
            with contextlib.suppress(OSError):
                os.write(self.master, data)
        elif self.proc.stdin is not None and not self.proc.stdin.is_closing():
            with contextlib.suppress(ConnectionError):
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()

    def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def output(self, data: bytes) -> None:
        for q in self.clients:
            q.put_nowait(data)

    def ended(self) -> None:
        for q in self.clients:
            q.put_nowait(None)
        self.clients.clear()


def attachable(pod: dict, container: str) -> Attachable | None:
    md = pod["metadata"]
    return _attachable.get((md.get("uid", md["name"]), container))


def bind(cluster: Any) -> None:
    """Use the cluster's store (env from Secrets/ConfigMaps, pod IPs), its directory and its stop hook."""
    global _cluster
    _cluster = cluster
    hooks = getattr(cluster, "on_stop", None)
    if hooks is not None:
        hooks.append(kill_all)


# which images run --------------------------------------------------------------------------------
def image_kind(image: str) -> str | None:
    """mysql / sysbench / fio / shell for images this machine can run (twin/host/images.yaml), else None."""
    from . import images

    entry = images.lookup(image or "")
    if entry is None or entry.runs not in KINDS:
        return None
    if entry.runs == "shell" and not _setting("exec_shell_images"):
        return None
    return entry.runs


def maps(image: str) -> bool:
    kind = image_kind(image)
    return kind is not None and _host_ready() and _installed(KINDS[kind][0])


@functools.cache
def _host_ready() -> bool:
    return os.geteuid() == 0 and _installed(HOST_TOOLS)


@functools.cache
def _installed(programs: tuple[str, ...]) -> bool:
    return all(shutil.which(p) for p in programs)


def _setting(key: str) -> Any:
    return (getattr(_cluster, "settings", None) or {}).get(key)


# the run -------------------------------------------------------------------------------------------
async def run(pod: dict, container: dict, mounts: dict[str, str], log_line: Callable[[str], None]) -> int:
    """Run one container to its exit code; CancelledError (the kubelet kills it) kills the process group."""
    kind = image_kind(container.get("image", ""))
    if kind is None:
        raise ValueError(f"image {container.get('image')!r} does not run on this machine")
    env = container_env(pod, container)
    argv, extra_env = _argv(kind, container, env)
    env.update(extra_env)
    md = pod["metadata"]
    host = pod["spec"].get("nodeName", "") if pod["spec"].get("hostNetwork") else md["name"]
    pairs = _pairs(container, mounts)
    ns = await _netns_for(pod)
    rootdir = Path(tempfile.mkdtemp(prefix=f"{container['name']}-", dir=_runtime_dir(pod)))
    proc = None
    master: int | None = None
    pty_reader: asyncio.ReadTransport | None = None
    try:
        cmd = ["nsenter", f"--net={ns.path}", "--", "unshare", "--mount", "--uts", "--propagation", "private", "--",
               "/bin/sh", "-c", _SETUP, "storageperf-container", str(rootdir), host[:63] or "pod",
               container.get("workingDir") or "/", *pairs, "--", *argv]
        if container.get("tty"):  # a terminal, as the runtime gives a tty: true container (kubectl attach -t)
            master, slave = os.openpty()
            try:
                proc = await asyncio.create_subprocess_exec(
                    *cmd, stdin=slave, stdout=slave, stderr=slave, env=dict(env, TERM=env.get("TERM") or "xterm"),
                    start_new_session=True, preexec_fn=_controlling_tty)
            finally:
                os.close(slave)
            output = asyncio.StreamReader(limit=1 << 20)
            pty_reader, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(output), os.fdopen(master, "rb", 0))
        else:  # stdin: true keeps the container's stdin open for `kubectl attach -i`, else it reads /dev/null
            proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=asyncio.subprocess.PIPE if container.get("stdin") else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                env=env, start_new_session=True, preexec_fn=_die_with_parent, limit=1 << 20)
        _procs[proc.pid] = proc
        _mains[(md.get("uid", md["name"]), container["name"])] = proc.pid
        hub = _attachable[(md.get("uid", md["name"]), container["name"])] = Attachable(proc, container, master)
        try:
            await _pump(proc.stdout if master is None else output, log_line, hub.output)
        finally:
            hub.ended()
        code = await proc.wait()
    except asyncio.CancelledError:
        if proc is not None:
            await _stop(proc, pod)
        raise
    finally:
        if proc is not None:
            _procs.pop(proc.pid, None)
            _termed.discard(proc.pid)
            if _mains.get((md.get("uid", md["name"]), container["name"])) == proc.pid:
                del _mains[(md.get("uid", md["name"]), container["name"])]
                _attachable.pop((md.get("uid", md["name"]), container["name"]), None)
        if pty_reader is not None:
            pty_reader.close()  # closes the master
        ns.release()
        shutil.rmtree(rootdir, ignore_errors=True)
        with contextlib.suppress(OSError):
            rootdir.parent.rmdir()  # the pod's runtime directory, once its last container is done
    return 128 - code if code < 0 else code


async def _pump(stream: asyncio.StreamReader | None, log_line: Callable[[str], None],
                attached: Callable[[bytes], None] | None = None) -> None:
    if stream is None:
        return
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line longer than the limit: take what there is
            line = await stream.read(1 << 20)
        except OSError:  # EIO on a terminal's master once the process's side is closed
            return
        if not line:
            return
        if attached is not None:
            attached(line)
        log_line(line.decode("utf-8", "replace").rstrip("\n"))


def send_term(uid: str, container: str) -> bool:
    """SIGTERM to a running container's process group (the kubelet's stop); False when none runs."""
    pid = _mains.get((uid, container))
    if pid is None:
        return False
    _termed.add(pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    return True


async def _stop(proc: asyncio.subprocess.Process, pod: dict) -> None:
    # TERM already sent by the kubelet, whose grace period is over: SIGKILL now
    grace = min(float(pod["spec"].get("terminationGracePeriodSeconds", 30)), KILL_GRACE_SECONDS)
    if proc.pid in _termed:
        grace = 0.0
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), grace)
    except (TimeoutError, asyncio.CancelledError):
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(proc.wait()), 5)


def kill_all() -> None:
    """At twin stop: every container process group and every network namespace holder."""
    for pid in list(_procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    for ns in list(_netns.values()):
        ns.kill()
    _netns.clear()
    # a killed process keeps its files open until it is gone: wait (briefly) so volumes can be unmounted
    deadline = time.monotonic() + 3.0
    for pid in list(_procs):
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Running, or dying: anything but gone or a zombie (a zombie holds no files)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG: a twin killed with SIGKILL takes its containers with it."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def _runtime_dir(pod: dict) -> str:
    base = Path(_cluster.dir).resolve() / "exec" if _cluster is not None else Path(tempfile.gettempdir()) / "twin-exec"
    d = base / pod["metadata"].get("uid", pod["metadata"]["name"])
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


# The container's filesystem, inside the new mount namespace. Arguments: rootdir hostname workdir
# (src dst)... -- argv. The overlay keeps every write outside volumes off the host's disk.
_SETUP = r'''
set -e
r=$1; hn=$2; wd=$3; shift 3
mount -t tmpfs -o mode=0755 storageperf-root "$r"
mkdir "$r/upper" "$r/work" "$r/m"
if ! mount -t overlay overlay -o "lowerdir=/,upperdir=$r/upper,workdir=$r/work" "$r/m" 2>"$r/err"; then
  echo "storageperf twin: cannot make the container's root filesystem (overlay of / failed: $(cat "$r/err"))" >&2
  exit 126
fi
m=$r/m
mount --rbind /dev "$m/dev"
mount -t tmpfs -o mode=1777 shm "$m/dev/shm"
mount -t proc proc "$m/proc"
mount --rbind /sys "$m/sys"
mount -t tmpfs -o mode=1777 tmp "$m/tmp"
mount -t tmpfs -o mode=0755 run "$m/run"
while [ "$1" != "--" ]; do
  mkdir -p "$m$2"
  mount --bind "$1" "$m$2"
  shift 2
done
shift
hostname "$hn" 2>/dev/null || true
exec chroot "$m" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' storageperf-workdir "$wd" "$@"
'''


# argv and env, as the kubelet and the image build them --------------------------------------------
_VAR_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion: defined variables are replaced, $$ is a literal $, others stay."""
    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return _VAR_REF.sub(sub, str(text))


def _argv(kind: str, container: dict, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    command = [expand(a, env) for a in container.get("command") or []]
    args = [expand(a, env) for a in container.get("args") or []]
    if kind == "mysql" and (not command or os.path.basename(command[0]) in ("docker-entrypoint.sh", "mysqld", "mariadbd")):
        rest = command[1:] + args if command else args
        if rest and os.path.basename(rest[0]) in ("mysqld", "mariadbd"):
            rest = rest[1:]
        if not rest or rest[0].startswith("-"):
            return _mysql_entrypoint(rest, env)
        return rest, {}
    if command:
        return command + args, {}
    if kind == "shell":  # busybox, alpine, debian, ubuntu, bash: no ENTRYPOINT, CMD ["sh"], so args replace it
        return args or list(KINDS[kind][1]), {}
    return list(KINDS[kind][1]) + args, {}


def _sql_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sql_ident(value: str) -> str:
    return "`" + value.replace("`", "``") + "`"


def _mysql_entrypoint(options: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    def var(name: str) -> str:
        return env.get(f"MARIADB_{name}") or env.get(f"MYSQL_{name}") or ""

    password = var("ROOT_PASSWORD")
    allow_empty = bool(var("ALLOW_EMPTY_PASSWORD") or var("ALLOW_EMPTY_ROOT_PASSWORD"))
    sql = ["SET @@SESSION.SQL_LOG_BIN=0;",
           "DELETE FROM mysql.global_priv WHERE User='' OR (User='root' AND Host NOT IN ('localhost'));",
           "DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost');",
           "FLUSH PRIVILEGES;"]
    if password:
        sql += [f"ALTER USER 'root'@'localhost' IDENTIFIED BY {_sql_quote(password)};",
                f"CREATE USER 'root'@'%' IDENTIFIED BY {_sql_quote(password)};"]
    else:
        sql += ["CREATE USER 'root'@'%';"]
    sql += ["GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;"]
    if var("DATABASE"):
        sql.append(f"CREATE DATABASE IF NOT EXISTS {_sql_ident(var('DATABASE'))};")
    if var("USER") and var("PASSWORD"):
        sql += [f"CREATE USER {_sql_quote(var('USER'))}@'%' IDENTIFIED BY {_sql_quote(var('PASSWORD'))};"]
        if var("DATABASE"):
            sql.append(f"GRANT ALL ON {_sql_ident(var('DATABASE'))}.* TO {_sql_quote(var('USER'))}@'%';")
    sql.append("FLUSH PRIVILEGES;")
    datadir = next((o.split("=", 1)[1] for o in options if o.startswith("--datadir=")), "/var/lib/mysql")
    extra = {"STORAGEPERF_INIT_SQL": "\n".join(sql) + "\n", "STORAGEPERF_DATADIR": datadir,
             "STORAGEPERF_PASSWORD_SET": "1" if (password or allow_empty) else ""}
    return ["/bin/sh", "-c", _MYSQL_ENTRYPOINT, "docker-entrypoint.sh", *options], extra


_MYSQL_ENTRYPOINT = r'''
set -e
note() { echo "$(date -u '+%Y-%m-%d %H:%M:%S') 0 [Note] [Entrypoint]: $*"; }
d=$STORAGEPERF_DATADIR
init=""
if [ ! -d "$d/mysql" ]; then
  if [ -z "$STORAGEPERF_PASSWORD_SET" ]; then
    echo "[ERROR] [Entrypoint]: Database is uninitialized and password option is not specified" >&2
    echo "	You need to specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and" \
      "MARIADB_RANDOM_ROOT_PASSWORD" >&2
    exit 1
  fi
  note "Initializing database files in $d"
  mkdir -p "$d"
  mariadb-install-db --no-defaults --user=root --datadir="$d" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve >/tmp/install-db.log 2>&1 || { cat /tmp/install-db.log; exit 1; }
  note "Database files initialized"
  printf '%s' "$STORAGEPERF_INIT_SQL" > /tmp/storageperf-init.sql
  init=--init-file=/tmp/storageperf-init.sql
fi
unset STORAGEPERF_INIT_SQL STORAGEPERF_DATADIR STORAGEPERF_PASSWORD_SET MYSQL_ROOT_PASSWORD MARIADB_ROOT_PASSWORD
mkdir -p /run/mysqld
note "Starting MariaDB"
exec mariadbd --no-defaults --user=root --datadir="$d" --port=3306 --bind-address=0.0.0.0 \
  --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/mysqld.pid --skip-name-resolve $init "$@"
'''


def container_env(pod: dict, container: dict) -> dict[str, str]:
    """The container's environment as the kubelet builds it (envFrom first, then env in order)."""
    md = pod["metadata"]
    env = {"PATH": PATH, "HOME": "/root", "HOSTNAME": md["name"], "TERM": "xterm"}
    ns = md.get("namespace", "default")
    for src in container.get("envFrom") or []:
        prefix = src.get("prefix", "")
        if "configMapRef" in src or "secretRef" in src:
            kind = "configMapRef" if "configMapRef" in src else "secretRef"
            ref = src[kind]
            data = _object_data("configmaps" if kind == "configMapRef" else "secrets", ns, ref.get("name", ""),
                                optional=bool(ref.get("optional")))
            for k, v in (data or {}).items():
                env[prefix + k] = v
    for e in container.get("env") or []:
        name = e["name"]
        if "value" in e or "valueFrom" not in e:
            env[name] = expand(e.get("value", ""), env)
            continue
        value = _value_from(pod, e["valueFrom"], ns)
        if value is not None:
            env[name] = value
    return env


def _value_from(pod: dict, src: dict, ns: str) -> str | None:
    for kind, plural in (("secretKeyRef", "secrets"), ("configMapKeyRef", "configmaps")):
        if kind in src:
            ref = src[kind]
            data = _object_data(plural, ns, ref.get("name", ""), optional=bool(ref.get("optional")))
            if data is None:
                return None
            if ref.get("key") not in data:
                if ref.get("optional"):
                    return None
                raise ValueError(f"couldn't find key {ref.get('key')} in {plural[:-1]} {ns}/{ref.get('name')}")
            return data[ref["key"]]
    if "fieldRef" in src:
        return _field(pod, src["fieldRef"].get("fieldPath", ""))
    return None


def _object_data(plural: str, ns: str, name: str, optional: bool) -> dict[str, str] | None:
    store = getattr(_cluster, "store", None)
    obj = None
    if store is not None:
        rt = store.rt("", "v1", plural)
        if store.exists(rt, ns, name):
            obj = store.get(rt, ns, name)
    if obj is None:
        if optional:
            return None
        raise ValueError(f"{plural[:-1]} {ns}/{name} not found (CreateContainerConfigError)")
    data = {k: str(v) for k, v in (obj.get("data") or {}).items()}
    if plural == "secrets":
        data = {k: base64.b64decode(v).decode("utf-8", "replace") for k, v in data.items()}
        data.update({k: str(v) for k, v in (obj.get("stringData") or {}).items()})
    return data


def _field(pod: dict, path: str) -> str | None:
    fresh = pod
    store = getattr(_cluster, "store", None)
    md = pod["metadata"]
    if store is not None and path.startswith("status."):
        rt = store.rt("", "v1", "pods")
        if store.exists(rt, md.get("namespace"), md["name"]):
            fresh = store.get(rt, md.get("namespace"), md["name"])
    m = re.match(r"^metadata\.(labels|annotations)\['(.+)'\]$", path)
    if m:
        return (fresh["metadata"].get(m.group(1)) or {}).get(m.group(2))
    status = fresh.get("status") or {}
    simple = {"metadata.name": md.get("name"), "metadata.namespace": md.get("namespace"), "metadata.uid": md.get("uid"),
              "spec.nodeName": fresh["spec"].get("nodeName"), "spec.serviceAccountName": fresh["spec"].get("serviceAccountName"),
              "status.podIP": status.get("podIP"), "status.hostIP": status.get("hostIP")}
    return simple.get(path)


# network namespaces ----------------------------------------------------------------------------------
class NetNS:
    """A network namespace held open by a sleeping process; containers enter it with nsenter."""

    def __init__(self, key: tuple[str, str], proc: subprocess.Popen, shared: bool) -> None:
        self.key = key
        self.proc = proc
        self.shared = shared  # a node's namespace lives until the twin stops
        self.users = 0
        self.path = f"/proc/{proc.pid}/ns/net"

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0 and not self.shared:
            _netns.pop(self.key, None)
            self.kill()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)


def _new_netns(key: tuple[str, str], shared: bool) -> NetNS:
    """unshare --net with loopback up. A plain Popen (not an asyncio one): the holder outlives event loops."""
    proc = subprocess.Popen(["unshare", "--net", "--", "/bin/sh", "-c", "ip link set lo up && echo up && exec sleep infinity"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_die_with_parent)
    ready = select.select([proc.stdout], [], [], 10)[0] if proc.stdout is not None else []  # a pipe: stdout=PIPE
    line = proc.stdout.readline() if ready and proc.stdout else b""
    if line.strip() != b"up":
        proc.kill()
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise RuntimeError(f"cannot make a network namespace for {key[0]} {key[1]}: {err.strip() or 'no answer'}")
    return NetNS(key, proc, shared)


async def _netns_for(pod: dict) -> NetNS:
    host_net = bool(pod["spec"].get("hostNetwork"))
    key = _netns_key(pod)
    ns = _netns.get(key)
    if ns is None or not _alive(ns.proc.pid):
        ns = _netns[key] = _new_netns(key, shared=host_net)
    ns.users += 1
    return ns


def _netns_key(pod: dict) -> tuple[str, str]:
    """A host-network pod shares its node's namespace; any other pod has its own."""
    if pod["spec"].get("hostNetwork"):
        return ("node", pod["spec"].get("nodeName", ""))
    return ("pod", pod["metadata"].get("uid", pod["metadata"]["name"]))


def netns_path(pod: dict) -> str | None:
    """The network namespace the pod's running processes share (port-forward connects inside it), if any."""
    ns = _netns.get(_netns_key(pod))
    return ns.path if ns is not None and _alive(ns.proc.pid) else None


def running() -> list[int]:
    """Process ids of the containers running now (tests check that a killed pod leaves none)."""
    return sorted(_procs)


# kubectl exec ---------------------------------------------------------------------------------------
_holders: dict[tuple[str, str], tuple[asyncio.subprocess.Process, NetNS, Path]] = {}


async def _holder(pod: dict, container: dict, mounts: dict[str, str]) -> int:
    """A container without a host process (a simulated one) gets its view built once, held by a sleeping
    process until the pod goes (release_pod), so that what one exec or cp writes the next one sees."""
    md = pod["metadata"]
    key = (md.get("uid", md["name"]), container["name"])
    held = _holders.get(key)
    if held is not None and held[0].returncode is None:
        return held[0].pid
    ns = await _netns_for(pod)
    rootdir = Path(tempfile.mkdtemp(prefix=f"view-{container['name']}-", dir=_runtime_dir(pod)))
    host = pod["spec"].get("nodeName", "") if pod["spec"].get("hostNetwork") else md["name"]
    cmd = ["nsenter", f"--net={ns.path}", "--", "unshare", "--mount", "--uts", "--propagation", "private", "--",
           "/bin/sh", "-c", _SETUP, "storageperf-view", str(rootdir), host[:63] or "pod",
           container.get("workingDir") or "/", *_pairs(container, mounts), "--",
           "/bin/sh", "-c", "echo ready; exec sleep infinity"]
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True, preexec_fn=_die_with_parent)
    _procs[proc.pid] = proc
    line = await proc.stdout.readline() if proc.stdout is not None else b""
    if line.strip() != b"ready":
        rest = await proc.stdout.read() if proc.stdout is not None else b""
        _procs.pop(proc.pid, None)
        ns.release()
        shutil.rmtree(rootdir, ignore_errors=True)
        raise RuntimeError(f"cannot make the view of container {container['name']}: "
                           f"{(line + rest).decode(errors='replace').strip()}")
    _holders[key] = (proc, ns, rootdir)
    return proc.pid


def release_pod(uid: str) -> None:
    """The pod is gone: the views held for its simulated containers go too."""
    for key in [k for k in _holders if k[0] == uid]:
        proc, ns, rootdir = _holders.pop(key)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _procs.pop(proc.pid, None)
        ns.release()
        shutil.rmtree(rootdir, ignore_errors=True)
        with contextlib.suppress(OSError):
            rootdir.parent.rmdir()


class Exec:
    """A command started in a pod's view: the running container's namespaces and root when it has a host
    process, else a view built as run() builds one (overlay root, the pod's volumes, its network)."""

    def __init__(self, proc: asyncio.subprocess.Process, master: int | None, cleanup: Callable[[], None]) -> None:
        self.proc = proc
        self.master = master  # the pty's master side for a tty exec
        self._cleanup = cleanup

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.master is not None:
            with contextlib.suppress(OSError):
                os.close(self.master)
            self.master = None
        self._cleanup()


async def start_exec(pod: dict, container: dict, mounts: dict[str, str], argv: list[str], tty: bool) -> Exec:
    md = pod["metadata"]
    env = container_env(pod, container)
    key = (md.get("uid", md["name"]), container["name"])
    pid = _mains.get(key)
    if pid is None or not _alive(pid):
        pid = await _holder(pod, container, mounts)
    cmd = ["nsenter", "-t", str(pid), "--mount", "--uts", "--net", "--root", "--wd", "--", *argv]

    def cleanup() -> None:
        pass

    master = None
    try:
        if tty:
            master, slave = os.openpty()
            env["TERM"] = env.get("TERM") or "xterm"
            proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
                preexec_fn=_controlling_tty)
            os.close(slave)
        else:
            proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=env, start_new_session=True, preexec_fn=_die_with_parent)
    except Exception:
        if master is not None:
            os.close(master)
        cleanup()
        raise
    _procs[proc.pid] = proc
    ex = Exec(proc, master, cleanup)
    done = ex._cleanup

    def forget() -> None:
        _procs.pop(proc.pid, None)
        done()
    ex._cleanup = forget
    return ex


def _controlling_tty() -> None:
    import fcntl
    import termios

    _die_with_parent()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _pairs(container: dict, mounts: dict[str, str]) -> list[str]:
    pairs: list[str] = []
    for path, src in sorted(mounts.items(), key=lambda kv: kv[0].count("/")):  # parents before children
        if not path.startswith("/"):
            raise ValueError(f"volumeMount mountPath {path!r} of container {container['name']} must be absolute")
        pairs += [src, os.path.normpath(path)]
    return pairs
