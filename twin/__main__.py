"""`python -m twin up|down|serve|status|fault` — the twin's command contract.

up     start in the background, return once the API answers; writes DIR/kubeconfig, DIR/cloud.json and DIR/env
       (the throwaway keys for the controller's environment: `set -a; . DIR/env; set +a`, twin/fleet/envfile.py)
       (with --clusters N > 1: a fleet, DIR/twin-K/{kubeconfig,cloud.json,env}, DIR/env and DIR/fleet.json, see
       twin/fleet/front.py)
down   stop what `up` started (the whole process group); `--cluster twin-K` stops only that cluster's API server
serve  run in the foreground
status print the running twin's object counts and cloud requests per action (a fleet: every cluster)
fault  inject or clear faults: `fault --name api --rule '{"fraction":0.2,"code":500}'`, `fault --clear`
       (twin/faults.py; an operation rule's `"while": "trident_concurrency"|"parallel_attach"` bites only
       while that change is on)
settings  change a running cluster's settings: `settings --set '{"ontap_serial": true}'` (twin/fleet/cluster.py)
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

DEFAULT_DIR = Path(__file__).resolve().parent.parent / ".twin"


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m twin", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("verb", choices=["up", "down", "serve", "status", "fault", "settings"])
    p.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="state directory (default: .twin/ in the repo)")
    p.add_argument("--nodes", type=int, default=3, help="number of Ready nodes to register")
    p.add_argument("--node-pools", type=int, default=1, help="node pools the nodes are spread over")
    p.add_argument("--time-scale", type=float, default=1.0, help="multiply every calibrated latency by this")
    p.add_argument("--crds", default="snapshot,trident", help="CRD sets to install at start (comma list, or 'none')")
    p.add_argument("--ack-extra-clusters", type=int, default=0,
                   help="synthetic ACK clusters (cloud side only, no API server) to list next to the real ones")
    p.add_argument("--clusters", type=int, default=1, help="clusters in the fleet (twin-1..twin-N, one ACK account)")
    p.add_argument("--cluster", help="a fleet's cluster: down (its API server only), fault, settings")
    p.add_argument("--cluster-name", default="", help=argparse.SUPPRESS)  # set by the fleet for its members
    p.add_argument("--node-offset", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--name", help="fault name (fault verb)")
    p.add_argument("--rule", help="fault rule as JSON (fault verb)")
    p.add_argument("--clear", action="store_true", help="clear the named fault, or all (fault verb)")
    p.add_argument("--set", dest="settings", help="settings as JSON (settings verb)")
    return p.parse_args(argv)


def _pid(d: Path) -> int | None:
    try:
        return int((d / "twin.pid").read_text())
    except (FileNotFoundError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # `up` exits after the start, so nobody of ours reaps the server: a zombie counts as stopped
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _fleet(d: Path) -> dict | None:
    """The running fleet's index (fleet.json), or None for a single twin."""
    try:
        return json.loads((d / "fleet.json").read_text())
    except FileNotFoundError:
        return None


def _fleet_admin(fleet: dict, verb: str, body: dict) -> dict:
    req = urllib.request.Request(f"{fleet['admin']['url']}/_twin/{verb}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {fleet['admin']['token']}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise SystemExit(json.loads(e.read()).get("error") or str(e)) from None
    except urllib.error.URLError as e:
        raise SystemExit(f"the fleet's front does not answer ({e.reason}): is it up?") from None


def _admin(d: Path, verb: str, body: dict, cluster: str | None = None) -> dict:
    fleet = _fleet(d)
    if fleet is not None:
        if verb == "stats" and not cluster:
            return _fleet_admin(fleet, "stats", {})
        if not cluster:
            raise SystemExit(f"this is a fleet: name the cluster with --cluster ({', '.join(c['name'] for c in fleet['clusters'])})")
        return _fleet_admin(fleet, "member", {"cluster": cluster, "verb": verb, "body": body})
    if cluster:
        raise SystemExit(f"--cluster {cluster}: {d} holds a single twin, not a fleet")
    cfg = yaml.safe_load((d / "kubeconfig").read_text())
    server = cfg["clusters"][0]["cluster"]["server"]
    token = cfg["users"][0]["user"]["token"]
    ctx = ssl.create_default_context(cafile=str(d / "pki" / "ca.crt"))
    req = urllib.request.Request(f"{server}/_twin/{verb}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:  # a refused fault or setting: its message names the field
        raise SystemExit(json.loads(e.read()).get("error") or str(e)) from None


def up(a: argparse.Namespace) -> int:
    d = a.dir.resolve()
    d.mkdir(parents=True, exist_ok=True)
    pid = _pid(d)
    if pid and _alive(pid) and (d / "ready").exists():
        where = d / ("fleet.json" if (d / "fleet.json").exists() else "kubeconfig")
        print(f"twin already running (pid {pid}); {where.name}: {where}")
        return 0
    if a.clusters < 1:
        print("--clusters must be 1 or more", file=sys.stderr)
        return 2
    for f in ("ready", "kubeconfig", "cloud.json", "env", "fleet.json"):
        (d / f).unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "twin", "serve", "--dir", str(d), "--nodes", str(a.nodes),
           "--node-pools", str(a.node_pools), "--time-scale", str(a.time_scale), "--crds", a.crds,
           "--ack-extra-clusters", str(a.ack_extra_clusters), "--clusters", str(a.clusters)]
    logf = open(d / "twin.log", "ab")
    proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parent.parent, stdout=logf, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    (d / "twin.pid").write_text(str(proc.pid))
    wait = 60 if a.clusters == 1 else 30 + 30 * a.clusters
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if (d / "ready").exists():
            where = d / ("kubeconfig" if a.clusters == 1 else "fleet.json")
            print(f"twin up: {(d / 'ready').read_text().strip()} (pid {proc.pid}); {where.name}: {where}")
            return 0
        if proc.poll() is not None:
            print(f"twin exited with {proc.returncode}; log: {d / 'twin.log'}", file=sys.stderr)
            print((d / "twin.log").read_text()[-3000:], file=sys.stderr)
            return 1
        time.sleep(0.05)
    print(f"twin did not answer within {wait} s; log: {d / 'twin.log'}", file=sys.stderr)
    return 1


def down(a: argparse.Namespace) -> int:
    d = a.dir.resolve()
    pid = _pid(d)
    if a.cluster:
        if not pid or not _alive(pid):
            print("twin not running")
            return 1
        _admin(d, "stop_apiserver", {}, a.cluster)
        print(f"{a.cluster}: API server stopped; the other clusters go on")
        return 0
    if not pid or not _alive(pid):
        print("twin not running")
        (d / "ready").unlink(missing_ok=True)
        return 0
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    if _alive(pid):
        os.killpg(pid, signal.SIGKILL)
    (d / "ready").unlink(missing_ok=True)
    (d / "twin.pid").unlink(missing_ok=True)
    print("twin down")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = _args(sys.argv[1:] if argv is None else argv)
    if a.verb == "up":
        return up(a)
    if a.verb == "down":
        return down(a)
    if a.verb == "serve":
        from .fleet.cluster import serve

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        crds = tuple(c for c in a.crds.split(",") if c and c != "none")
        (a.dir / "twin.pid").write_text(str(os.getpid())) if not (a.dir / "twin.pid").exists() else None
        if a.clusters > 1:
            from .fleet import front as fleet

            member_args = ["--nodes", str(a.nodes), "--node-pools", str(a.node_pools),
                           "--time-scale", str(a.time_scale), "--crds", a.crds]
            asyncio.run(fleet.serve(a.dir.resolve(), clusters=a.clusters, extra_clusters=a.ack_extra_clusters,
                                    member_args=member_args))
            return 0
        from .fleet.front import ONTAP_PASSWORD_ENV, TOKEN_ENV
        member = bool(a.cluster_name)  # started by a fleet front, which hands these over in the environment
        asyncio.run(serve(a.dir.resolve(), nodes=a.nodes, node_pools=a.node_pools, time_scale=a.time_scale, crds=crds,
                          extra_clusters=a.ack_extra_clusters, name=a.cluster_name, node_offset=a.node_offset,
                          fleet_token=os.environ.get(TOKEN_ENV, "") if member else "",
                          ontap_password=os.environ.get(ONTAP_PASSWORD_ENV, "") if member else ""))
        return 0
    if a.verb == "status":
        print(json.dumps(_admin(a.dir.resolve(), "stats", {}, a.cluster), indent=2))
        return 0
    if a.verb == "fault":
        body = {"clear": True, "name": a.name} if a.clear else {"name": a.name, "rule": json.loads(a.rule or "{}")}
        print(json.dumps(_admin(a.dir.resolve(), "fault", body, a.cluster)))
        return 0
    if a.verb == "settings":
        print(json.dumps(_admin(a.dir.resolve(), "settings", json.loads(a.settings or "{}"), a.cluster)))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
