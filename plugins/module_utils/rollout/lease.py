# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run at a time per rollout: a lease in the rollout's directory (docs/rollout.md, "One run at a time").

<rollout_dir>/lease.json names its holder (the run, the controller's host and pid), when it was acquired and renewed,
and when it expires. It is read and written under an flock of <rollout_dir>/.lease.lock, and replaced atomically.
A background renewer, started by acquire(), renews it while the run's ansible-playbook lives and stops when that
process is gone, so the lease of a killed run expires TTL seconds later: long enough for the killed run's modules to
stop (they stop within 10 s, common/module.py), after which a new run takes it over and records the takeover.

The renewer outlives the module that starts it, and the module's files (AnsiballZ) are gone by then: it is the
self-contained RENEWER source, run by the same Python with -c.
"""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import subprocess
import sys
import time
from typing import Any, Iterator, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common import controller as C
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import write_text_atomic

LEASE_FILE = "lease.json"
LOCK_FILE = ".lease.lock"
TAKEOVERS_MAX = 20


class LeaseHeld(StoragePerfError):
    """Another live run holds the rollout's lease."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _iso(when: datetime.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: object) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(str(text)[:26].rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return None


@contextlib.contextmanager
def _locked(rollout_dir: str) -> Iterator[None]:
    os.makedirs(rollout_dir, exist_ok=True)
    with open(os.path.join(rollout_dir, LOCK_FILE), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read(rollout_dir: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(rollout_dir, LEASE_FILE), encoding="utf-8") as f:
            lease = json.load(f)
    except (OSError, ValueError):
        return None
    return lease if isinstance(lease, dict) and lease.get("owner") else None


def _write(rollout_dir: str, lease: Mapping[str, Any]) -> None:
    write_text_atomic(os.path.join(rollout_dir, LEASE_FILE), json.dumps(lease, indent=2, sort_keys=True) + "\n")


def holder_alive(lease: Mapping[str, Any]) -> bool | None:
    """Whether the holder's controller still runs: None when that cannot be told from here (another host)."""
    if not lease.get("pid") or lease.get("pid_start") is None:
        return None
    try:
        return C.alive({"pid": lease["pid"], "start": lease["pid_start"], "host": lease.get("host")})
    except ValueError:
        return None


def describe(lease: Mapping[str, Any]) -> str:
    return "run %s on %s (ansible-playbook pid %s), renewed %s, expiring %s" % (
        lease.get("owner"), lease.get("host"), lease.get("pid"), lease.get("renewed"), lease.get("expires"))


def acquire(rollout_dir: str, owner: str, controller: Mapping[str, Any] | None, ttl: int, wait: bool = True,
            now: Any = _now, sleep: Any = time.sleep) -> dict[str, Any]:
    """Take the lease for `owner` (the run's id) or raise LeaseHeld naming the holder and its expiry.

    A lease held by this owner is renewed. One past its expiry is taken over, and the takeover kept in the lease's
    `takeovers`. One whose holder is known dead (this host, its controller gone) is waited for until it expires
    when `wait`, so that the dead run's last modules have stopped. -> {lease, takeover, waited_s}."""
    rollout_dir = os.path.abspath(rollout_dir)
    waited = 0.0
    while True:
        with _locked(rollout_dir):
            held, t = read(rollout_dir), now()
            expires = _parse((held or {}).get("expires"))
            mine = held is not None and held.get("owner") == owner
            if held is None or mine or expires is None or expires <= t:
                takeover = None
                takeovers = list((held or {}).get("takeovers") or [])
                if held is not None and not mine:
                    holder = {k: held.get(k) for k in ("owner", "host", "pid", "renewed", "expires")}
                    takeover = {"at": _iso(t), "from": holder, "holder_alive": holder_alive(held)}
                    takeovers = (takeovers + [takeover])[-TAKEOVERS_MAX:]
                lease = {"owner": owner, "host": (controller or {}).get("host") or os.uname()[1],
                         "pid": (controller or {}).get("pid"), "pid_start": (controller or {}).get("start"),
                         "acquired": (held or {}).get("acquired") if mine else _iso(t), "renewed": _iso(t),
                         "expires": _iso(t + datetime.timedelta(seconds=ttl)), "ttl": ttl, "takeovers": takeovers}
                _write(rollout_dir, lease)
                return {"lease": lease, "takeover": takeover, "waited_s": round(waited, 1)}
            left = (expires - t).total_seconds()
            if not (wait and holder_alive(held) is False and left <= ttl + 5):
                raise LeaseHeld("the rollout's lease in %s is held by %s: another run of this rollout is under way"
                                % (rollout_dir, describe(held)),
                                hint="Wait for that run to end. If its controller is gone, a new run takes the lease "
                                     "over once it expires (%s)." % held.get("expires"), lease=held)
        sleep(min(left + 0.2, 2.0))
        waited += min(left + 0.2, 2.0)


def release(rollout_dir: str, owner: str) -> bool:
    """Give the lease up (the run is over); False when this owner did not hold it."""
    rollout_dir = os.path.abspath(rollout_dir)
    with _locked(rollout_dir):
        held = read(rollout_dir)
        if not held or held.get("owner") != owner:
            return False
        os.unlink(os.path.join(rollout_dir, LEASE_FILE))
        return True


# The renewer: self-contained (the module's own files are gone when it runs), stdlib only. It renews the lease while
# the controller (pid with its start time) lives and the lease is still this owner's, and ends otherwise.
RENEWER = r'''
import datetime, fcntl, json, os, sys, time
rollout_dir, owner, pid, start, ttl = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
every = max(1.0, ttl / 4.0)
def alive():
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[19] == start
path, next_renew = os.path.join(rollout_dir, "lease.json"), time.monotonic() + every
while alive():
    if time.monotonic() >= next_renew:
        with open(os.path.join(rollout_dir, ".lease.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                with open(path) as f:
                    lease = json.load(f)
            except (OSError, ValueError):
                break
            if lease.get("owner") != owner:
                break
            now = datetime.datetime.now(datetime.timezone.utc)
            lease["renewed"] = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            lease["expires"] = (now + datetime.timedelta(seconds=ttl)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            tmp = os.path.join(rollout_dir, ".lease.json.%d" % os.getpid())
            with open(tmp, "w") as f:
                json.dump(lease, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(tmp, path)
        next_renew = time.monotonic() + every
    time.sleep(1.0)
'''


def start_renewer(rollout_dir: str, owner: str, controller: Mapping[str, Any], ttl: int) -> int:
    """Start the renewer beside the controller; -> its pid. It holds none of the module's pipes, so the task ends."""
    proc = subprocess.Popen(  # noqa: S603 - our own source, run by this Python
        [sys.executable, "-c", RENEWER, os.path.abspath(rollout_dir), owner, str(controller["pid"]),
         str(controller["start"]), str(ttl)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
    return proc.pid


def lease_module(p: Mapping[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """The rollout_lease module: take the lease and start its renewer, or give it up."""
    if p["ttl"] < 5:
        raise StoragePerfError("ttl is %d: give at least 5 seconds, the time a killed run's modules take to stop"
                               % p["ttl"])
    rollout_dir, owner = os.path.abspath(p["rollout_dir"]), p["owner"]
    if check_mode:
        return {"changed": False, "lease": read(rollout_dir), "takeover": None, "waited_s": 0.0, "renewer_pid": None}
    if p["state"] == "released":
        released = release(rollout_dir, owner)
        return {"changed": released, "lease": read(rollout_dir), "takeover": None, "waited_s": 0.0}
    me = C.controller()
    out = acquire(rollout_dir, owner, me, int(p["ttl"]), wait=p["wait"])
    renewer = start_renewer(rollout_dir, owner, me, int(p["ttl"])) if me else None
    return dict(out, changed=True, renewer_pid=renewer)
