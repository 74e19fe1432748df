"""A fleet of twin clusters behind one Alibaba Cloud account: `python -m twin up --dir D --clusters N`.

One process per cluster, plus this front. Each cluster twin-K is today's single twin (`serve --dir D/twin-K`):
its own Kubernetes API server, controllers, Trident, ONTAP, CloudState (addons, node pools, ECS instances,
disks) and ACK/ECS apps. The front owns what the account shares: the credentials, the gateway (signatures,
flow control, faults, the per-action request counter), the synthetic clusters, and the one ACK and ECS
endpoint every client uses. It authenticates and counts each call once, then relays it to the member that
holds the cluster or resource, marked with X-Twin-Fleet-Token (the member's apps trust that header instead of
checking a signature again). So ModifyClusterAddon on twin-2 runs in twin-2's process and rolls twin-2's
csi-plugin DaemonSet, and nothing in the controllers or cloud modules had to learn about several clusters.

Why processes rather than N clusters on one event loop: the machine has 2 cores and a loop uses one, so
N clusters under benchmark load would share one core; and twin/host/backing.py and twin/host/exec_runner.py bind one
cluster per process (module state), which several clusters in one process would overwrite.

Files: D/twin-K/{kubeconfig,cloud.json,env,twin.log,pki/,...} per cluster (cloud.json as a single twin writes it,
with the front's endpoints and credentials), D/env (the account's keys and the ONTAPs' shared credential, for the
controller's environment: twin/fleet/envfile.py), D/fleet.json (the index: clusters, endpoints, the admin door),
D/twin.pid (the front; the members share its process group, so `down` stops all), D/ready.

Admin door (URL and token in fleet.json, what `python -m twin status|fault|settings|down --cluster` use):
  POST /_twin/stats                                  -> {"clusters": {name: member stats}, "cloud_requests": ..}
  POST /_twin/alibaba {..}                           -> the shared gateway (as a single twin's alibaba verb)
  POST /_twin/member {"cluster": name, "verb": v, "body": {..}} -> that member's admin verb (fault,
                                                        settings, cloud, alibaba, stats, stop_apiserver)

ECS calls are relayed by resource: ResourceId.N / InstanceId to the member whose instance it is (split per
member when ids span several); DescribeDisks without InstanceId and ListTagResources without ids ask every
member and page the merged answer; DescribeInstanceTypes asks the first member.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from . import envfile
from ..cloud import ecs_lists
from ..cloud.ack import AckApi, Handler, not_found
from ..cloud.ack_clusters import synthetic_clusters
from ..cloud.ecs import LIST_TAGS_PAGE, _indexed
from ..cloud.errors import PopError, request_id
from ..cloud.gateway import MAX_PAGE_SIZE, TRUSTED_HEADER, Gateway
from .cluster import free_socket, write_atomic

log = logging.getLogger("twin.fleet")

START_SECONDS_PER_CLUSTER = 30.0
TOKEN_ENV = "TWIN_FLEET_TOKEN"
# One ONTAP credential for every member, as the ACK account is one: a controller running a fleet job has one
# environment (one AWX credential per type), so ONTAP_USERNAME / ONTAP_PASSWORD must open every cluster's ONTAP.
ONTAP_PASSWORD_ENV = "TWIN_FLEET_ONTAP_PASSWORD"


def member_name(k: int) -> str:
    return f"twin-{k}"


@dataclass
class Member:
    name: str
    dir: Path
    proc: subprocess.Popen
    cluster_id: str = ""
    region: str = ""
    cs_url: str = ""
    ecs_url: str = ""
    admin_url: str = ""
    doc: dict[str, Any] = field(default_factory=dict)  # the cloud.json the member wrote (its own endpoints)
    instances: set[str] = field(default_factory=set)


class Fleet:
    def __init__(self, directory: Path, *, clusters: int, extra_clusters: int = 0, member_args: list[str]) -> None:
        self.dir = Path(directory)
        self.count = clusters
        self.extra_clusters = extra_clusters
        self.member_args = member_args
        self.token = secrets.token_hex(24)
        self.ontap_password = secrets.token_urlsafe(12)
        self.gw = Gateway()
        self.members: dict[str, Member] = {}
        self.by_cluster: dict[str, Member] = {}
        self.runners: list[web.AppRunner] = []
        self.session: aiohttp.ClientSession | None = None

    # members --------------------------------------------------------------------------------
    def _spawn(self, k: int) -> Member:
        name = member_name(k)
        d = self.dir / name
        d.mkdir(parents=True, exist_ok=True)
        for f in ("ready", "kubeconfig", "cloud.json", "env", "twin.pid"):
            (d / f).unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "twin", "serve", "--dir", str(d), "--cluster-name", name,
               "--node-offset", str((k - 1) * 1000), *self.member_args]
        env = dict(os.environ, **{TOKEN_ENV: self.token, ONTAP_PASSWORD_ENV: self.ontap_password})
        with open(d / "twin.log", "ab") as logf:
            # same process group as the front: `down` signals the group, so members stop with it
            proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[2], stdout=logf,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        (d / "twin.pid").write_text(str(proc.pid))
        return Member(name, d, proc)

    async def _wait_ready(self, m: Member, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        while not (m.dir / "ready").exists():
            if m.proc.poll() is not None:
                raise RuntimeError(f"{m.name} exited with {m.proc.returncode}; log: {m.dir / 'twin.log'}")
            if loop.time() > deadline:
                raise RuntimeError(f"{m.name} did not start in time; log: {m.dir / 'twin.log'}")
            await asyncio.sleep(0.05)
        m.doc = json.loads((m.dir / "cloud.json").read_text())
        a = m.doc["alibaba"]
        m.cluster_id, m.region, m.cs_url, m.ecs_url = a["cluster_id"], a["region"], a["cs_endpoint"], a["ecs_endpoint"]
        m.admin_url = m.doc["fleet_admin"]
        state = await self.member_admin(m, "cloud", {})
        m.instances = set(state["instances"])

    async def member_admin(self, m: Member, verb: str, body: dict[str, Any]) -> dict[str, Any]:
        return (await self.member_call(m, verb, body))[1]

    async def member_call(self, m: Member, verb: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The member's admin verb: its HTTP status (a refused fault or setting is its 400) and answer."""
        assert self.session is not None
        async with self.session.post(f"{m.admin_url}/_twin/{verb}", json=body,
                                     headers={"Authorization": f"Bearer {self.token}"}) as r:
            return r.status, await r.json()

    # serving --------------------------------------------------------------------------------
    async def _serve(self, app: web.Application) -> str:
        sock = free_socket()
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self.runners.append(runner)
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    async def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for f in ("ready", "kubeconfig", "cloud.json", "env", "fleet.json"):
            (self.dir / f).unlink(missing_ok=True)
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        key = self.gw.credentials.new_access_key()
        sts = self.gw.credentials.new_sts()
        for k in range(1, self.count + 1):
            m = self._spawn(k)
            self.members[m.name] = m
        deadline = asyncio.get_running_loop().time() + START_SECONDS_PER_CLUSTER * self.count
        await asyncio.gather(*(self._wait_ready(m, deadline) for m in self.members.values()))
        self.by_cluster = {m.cluster_id: m for m in self.members.values()}
        extra = synthetic_clusters(self.extra_clusters, "fleet")
        cs_url = await self._serve(FleetAck(self, extra).app)
        ecs_url = await self._serve(FleetEcs(self).app)
        admin = web.Application()
        admin.router.add_post("/_twin/{verb}", self._admin)
        admin_url = await self._serve(admin)
        shared = {"cs_endpoint": cs_url, "ecs_endpoint": ecs_url,
                  "access_key_id": key.access_key_id, "access_key_secret": key.access_key_secret,
                  "sts": {"access_key_id": sts.access_key_id, "access_key_secret": sts.access_key_secret,
                          "security_token": sts.security_token}}
        index = []
        for m in self.members.values():
            doc = {k: v for k, v in m.doc.items() if k != "fleet_admin"}
            doc["alibaba"] = {"region": m.region, "cluster_id": m.cluster_id, **shared}
            write_atomic(m.dir / "cloud.json", json.dumps(doc, indent=2))
            write_atomic(m.dir / envfile.NAME, envfile.render(doc))  # the member wrote its own key's; the account's
            index.append({"name": m.name, "cluster_id": m.cluster_id, "region": m.region, "dir": str(m.dir),
                          "kubeconfig": str(m.dir / "kubeconfig"), "cloud": str(m.dir / "cloud.json")})
        write_atomic(self.dir / "fleet.json", json.dumps({
            "clusters": index, "extra_clusters": self.extra_clusters, "cs_endpoint": cs_url, "ecs_endpoint": ecs_url,
            "admin": {"url": admin_url, "token": self.token}}, indent=2))
        # the same for every member (one account, one ONTAP credential): the fleet's, for a job over all of them
        write_atomic(self.dir / envfile.NAME, envfile.render(doc))
        write_atomic(self.dir / "ready", f"{len(index)} clusters, cs {cs_url}\n", 0o644)
        log.info("fleet of %d clusters serving, ACK %s, ECS %s", len(index), cs_url, ecs_url)

    async def stop(self) -> None:
        for m in self.members.values():
            if m.proc.poll() is None:
                m.proc.terminate()
        for r in self.runners:
            await r.cleanup()
        if self.session is not None:
            await self.session.close()
        loop = asyncio.get_running_loop()
        for m in self.members.values():
            try:
                await loop.run_in_executor(None, m.proc.wait, 20)
            except subprocess.TimeoutExpired:
                m.proc.kill()
        (self.dir / "ready").unlink(missing_ok=True)

    # admin door ------------------------------------------------------------------------------
    async def _admin(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"error": "unauthorized"}, status=401)
        verb = request.match_info["verb"]
        body = await request.json() if request.can_read_body else {}
        if verb == "stats":
            clusters = {}
            for m in self.members.values():
                try:
                    stats = await self.member_admin(m, "stats", {})
                except (aiohttp.ClientError, ValueError) as e:  # the member process is gone
                    stats = {"apiserver": "stopped", "process": f"exited ({m.proc.poll()}): {e}"}
                clusters[m.name] = {"cluster_id": m.cluster_id, **stats}
            return web.json_response({"clusters": clusters, "extra_clusters": self.extra_clusters,
                                      "cloud_requests": dict(self.gw.calls)})
        if verb == "alibaba":
            self.gw.configure(body)
            return web.json_response(self.gw.stats())
        if verb == "member":
            target = self.members.get(body.get("cluster", ""))
            if target is None:
                return web.json_response({"error": f"no cluster {body.get('cluster')!r}; the fleet has "
                                                   f"{', '.join(self.members)}"}, status=404)
            status, answer = await self.member_call(target, body["verb"], body.get("body") or {})
            return web.json_response(answer, status=status)
        return web.json_response({"error": f"unknown verb {verb}"}, status=404)

    # relaying -----------------------------------------------------------------------------------
    async def relay(self, url: str, method: str = "GET", body: bytes = b"",
                    headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        assert self.session is not None
        h = {k: v for k, v in (headers or {}).items() if k.lower() in ("content-type", "accept")}
        h[TRUSTED_HEADER] = self.token
        async with self.session.request(method, url, data=body or None, headers=h) as r:
            return r.status, await r.read()

    async def ecs(self, m: Member, params: dict[str, str]) -> tuple[int, dict[str, Any]]:
        status, raw = await self.relay(f"{m.ecs_url}/?{urlencode(params)}")
        return status, json.loads(raw)


class FleetAck(AckApi):
    """The account's one ACK endpoint: the directory here, everything per cluster relayed to its member."""

    def __init__(self, fleet: Fleet, extra: dict[str, dict[str, Any]]) -> None:
        super().__init__(None, fleet.gw, None, extra=extra)
        self.fleet = fleet

    async def dispatch(self, action: str, fn: Handler, request: web.Request, doc: dict, body: bytes) -> Any:
        cid = request.match_info.get("cid")
        if cid is None:
            return await fn(request, doc)
        m = self.fleet.by_cluster.get(cid)
        if m is not None:
            status, raw = await self.fleet.relay(m.cs_url + request.path_qs, request.method, body,
                                                 dict(request.headers))
            return web.Response(status=status, body=raw, content_type="application/json")
        if cid in self.extra:
            return self.synthetic(action, self.extra[cid], request)
        raise not_found(cid)

    async def all_details(self) -> list[dict[str, Any]]:
        async def detail(m: Member) -> dict[str, Any]:
            status, raw = await self.fleet.relay(f"{m.cs_url}/clusters/{m.cluster_id}")
            return json.loads(raw)

        members = await asyncio.gather(*(detail(m) for m in self.fleet.members.values()))
        return [*members, *self.extra.values()]


class FleetEcs:
    """The account's one ECS endpoint, relaying each call to the member(s) that hold its resources."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.gw = fleet.gw
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        rid = request_id()
        try:
            name, params = await self.gw.admit_rpc(request, "ecs")
        except PopError as e:  # refused or throttled: counted by the gateway, not served
            return e.response(rid)
        try:
            status, answer = await self.route(params.get("Action", ""), params)
        except PopError as e:
            self.gw.served(name, error=True)
            return e.response(rid)
        self.gw.served(name, error=status >= 400, detail=str(len(_indexed(params, "ResourceId"))))
        return web.Response(status=status, body=json.dumps(dict(answer, RequestId=rid)), content_type="application/json")

    def _owner(self, instance_id: str) -> Member:
        for m in self.fleet.members.values():
            if instance_id in m.instances:
                return m
        return next(iter(self.fleet.members.values()))  # it answers the NotFound

    async def route(self, action: str, params: dict[str, str]) -> tuple[int, dict[str, Any]]:
        members = list(self.fleet.members.values())
        ids = _indexed(params, "ResourceId")
        if ids and action in ("TagResources", "UntagResources", "ListTagResources"):
            groups: dict[str, list[str]] = {}
            for n in sorted(ids):
                groups.setdefault(self._owner(ids[n]).name, []).append(ids[n])
            if len(groups) == 1:
                return await self.fleet.ecs(self.fleet.members[next(iter(groups))], params)
            if action == "ListTagResources":
                return await self._list_tags(params, [self.fleet.members[g] for g in groups])
            base = {k: v for k, v in params.items() if not k.startswith("ResourceId.")}
            for g, group_ids in groups.items():
                status, answer = await self.fleet.ecs(self.fleet.members[g], dict(
                    base, **{f"ResourceId.{i + 1}": rid for i, rid in enumerate(group_ids)}))
                if status >= 400:
                    return status, answer
            return 200, {}
        if action == "ListTagResources":
            return await self._list_tags(params, members)
        if action == "DescribeDisks":
            if params.get("InstanceId"):
                return await self.fleet.ecs(self._owner(params["InstanceId"]), params)
            return await self._describe_disks(params, members)
        return await self.fleet.ecs(members[0], params)

    async def _list_tags(self, params: dict[str, str], members: list[Member]) -> tuple[int, dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for m in members:
            token = ""
            while True:
                status, answer = await self.fleet.ecs(m, dict(params, NextToken=token))
                if status >= 400:
                    return status, answer
                rows += answer["TagResources"]["TagResource"]
                token = answer.get("NextToken") or ""
                if not token:
                    break
        start = int(params.get("NextToken") or 0)
        nxt = start + LIST_TAGS_PAGE
        return 200, {"NextToken": str(nxt) if nxt < len(rows) else "",
                     "TagResources": {"TagResource": rows[start:nxt]}}

    async def _describe_disks(self, params: dict[str, str], members: list[Member]) -> tuple[int, dict[str, Any]]:
        # every member's disks by the legacy pages, then this answer paged as the caller asked (either way)
        legacy = {k: v for k, v in params.items() if k not in ("MaxResults", "NextToken", "PageSize", "PageNumber")}
        disks: list[dict[str, Any]] = []
        for m in members:
            page = 1
            while True:
                status, answer = await self.fleet.ecs(m, dict(legacy, PageSize=str(MAX_PAGE_SIZE), PageNumber=str(page)))
                if status >= 400:
                    return status, answer
                disks += answer["Disks"]["Disk"]
                if page * MAX_PAGE_SIZE >= answer["TotalCount"]:
                    break
                page += 1
        try:
            items, paging = ecs_lists.page("DescribeDisks", params, disks)
        except PopError as e:
            return e.status, e.body("")
        return 200, dict(paging, Disks={"Disk": items})


async def serve(directory: Path, **kwargs: Any) -> None:
    fleet = Fleet(directory, **kwargs)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await fleet.start()
    except Exception:
        log.exception("fleet start failed")
        await fleet.stop()
        raise
    await stop.wait()
    await fleet.stop()
