"""The twin as one process: API server, controllers and cloud endpoints on one event loop."""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import secrets
import signal
import socket
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from ..apimachinery import admission
from ..apiserver.auth import authorization
from ..host import backing, exec_runner
from . import envfile, nodes
from ..cloud import alibaba
from ..cloud_state import CloudState
from ..controllers import all_controllers
from ..faults import Faults
from ..apiserver.server import ApiServer
from ..store import Store
from ..netapp import ontap
from ..apiserver.http import tls

log = logging.getLogger("twin")

# The endpoints beside the Kubernetes API: each has `async def start(cluster) -> dict`, whose keys are merged
# into cloud.json (its endpoints and credentials). Add one per endpoint family.
ENDPOINTS = (alibaba, ontap)


def free_socket() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s


def write_atomic(path: Path, text: str, mode: int = 0o600) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    os.replace(tmp, path)


# settings checked before they apply (`python -m twin settings --set '{...}'`); the older ones are taken as given:
#   ontap_serial  true: this cluster's ONTAP answers one call at a time, as an overloaded one does: every Trident
#                 ONTAP call and every REST/ZAPI request (controllers/trident.py, netapp/ontap.py)
BOOL_SETTINGS = ("ontap_serial",)


def settings_error(body: Any) -> str | None:
    """Why the settings verb must refuse this body (None: it may be applied), before anything is changed."""
    if not isinstance(body, dict):
        return f"settings: expected a JSON object, got {type(body).__name__}"
    for key in BOOL_SETTINGS:
        if key in body and not isinstance(body[key], bool):
            return f"settings.{key}: expected true or false, got {body[key]!r}"
    return None


class Cluster:
    """The twin's composition root: it builds the parts and hands itself to each as a twin.context.ClusterContext."""

    def __init__(self, directory: Path, *, nodes: int = 3, node_pools: int = 1, time_scale: float = 1.0,
                 crds: tuple[str, ...] = ("snapshot", "trident"), seed: str = "", name: str = "",
                 extra_clusters: int = 0, fleet_token: str = "", node_offset: int = 0, ontap_password: str = "") -> None:
        self.dir = Path(directory)
        self.name = name  # the ACK cluster name (a fleet's twin-1..twin-N); empty: the single twin's default
        self.extra_clusters = extra_clusters  # synthetic ACK clusters next to this one (twin/cloud/ack_clusters.py)
        self.fleet_token = fleet_token  # set when a fleet front (twin/fleet/front.py) relays the cloud calls
        self.node_offset = node_offset  # a fleet member's nodes are numbered from here (distinct names and IPs)
        self.ontap_password = ontap_password  # a fleet's ONTAPs share one credential; empty: the ONTAP makes its own
        self.api_runner: web.AppRunner | None = None
        self.cloud_requests: Callable[[], dict[str, int]] | None = None  # set by twin/cloud/alibaba.py
        self.node_count = nodes
        self.node_pools = node_pools
        self.time_scale = time_scale
        self.crd_sets = crds
        self.seed = seed or self.dir.name
        self.store = Store()
        self.faults = Faults(seed=f"faults/{self.seed}")  # the same coin flips on every run of this cluster
        self.token = secrets.token_hex(24)
        self.nodes: list[dict] = []
        self.controllers: list[Any] = []
        self.tasks: list[asyncio.Task] = []
        self.runners: list[web.AppRunner] = []
        self.ssl: ssl.SSLContext | None = None
        self.settings: dict[str, Any] = {}
        self.admin_handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {}
        self.on_stop: list[Callable[[], Any]] = []  # run at stop, last registered first
        # registries the parts fill (twin/context.py says what each holds)
        self.csi_backends: dict[str, Any] = {}
        self.storage_stats: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self.throttles: dict[str, Any] = {}
        self.alibaba: dict[str, Any] = {}  # the Alibaba endpoints' state, for in-process tests (cloud/alibaba.py)
        self.trident: Any = None  # set by controllers.trident.Trident (backend volumes: cluster.trident.volumes)
        self.authn: Any = None  # the API server's Authenticator, set in start() (serviceaccount_tokens.py signs with it)

    # serving --------------------------------------------------------------------------------
    async def serve_app(self, app: web.Application, tls: bool = True, ssl_context: ssl.SSLContext | None = None) -> str:
        """Serve another app (a cloud endpoint) on its own loopback port; return its base URL."""
        sock = free_socket()
        # open watch streams would hold a graceful shutdown for a minute; clients reconnect anyway
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.SockSite(runner, sock, ssl_context=(ssl_context or self.ssl) if tls else None).start()
        self.runners.append(runner)
        port = sock.getsockname()[1]
        return f"{'https' if tls else 'http'}://127.0.0.1:{port}"

    async def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        ca, crt, key = tls.make_certs(self.dir / "pki")
        self.ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl.load_cert_chain(crt, key)
        self._install_crds()
        authorization.bootstrap(self.store)
        # the time scale, where a benchmark can see it without knowing the twin (bench/runner.py time_scale())
        self.store.create(self.store.rt("", "v1", "configmaps"), "kube-public", {
            "metadata": {"name": "cluster-time-scale", "namespace": "kube-public"},
            "data": {"timeScale": repr(float(self.time_scale))}})
        self.nodes = nodes.register(self.store, self.node_count, self.node_pools, self.seed, offset=self.node_offset)
        # cloud state (ACK addons, ECS instances/disks), read by the storage controllers
        self.cloud = self._cloud_state()
        # host-backed volumes and host-run containers (twin/host/backing.py, twin/host/exec_runner.py) need the cluster
        admission.bind(self)
        backing.bind(self)
        exec_runner.bind(self)
        api = ApiServer(self.store, self.token, self.faults, extra_routes=(("*", "/_twin/{verb}", self._admin),),
                        time_scale=self.time_scale, client_ca=tls.load_ca(self.dir / "pki")[0])
        self.authn = api.authn
        server_url = await self.serve_app(api.app, ssl_context=tls.apiserver_context(ca, crt, key))
        self.api_runner = self.runners[-1]
        for cls in all_controllers():
            c = cls(self)
            self.controllers.append(c)
            self.tasks.append(asyncio.ensure_future(self._supervise(c)))
        cloud_doc: dict[str, Any] = {}
        for endpoint in ENDPOINTS:
            cloud_doc.update(await endpoint.start(self))
        if self.fleet_token:
            # the fleet front's door to this member (stats, faults, stop_apiserver), open when the API server is not
            admin = web.Application()
            admin.router.add_post("/_twin/{verb}", self._admin)
            cloud_doc["fleet_admin"] = await self.serve_app(admin, tls=False)
        self._write_kubeconfig(server_url, ca)
        write_atomic(self.dir / "cloud.json", json.dumps(cloud_doc, indent=2))
        write_atomic(self.dir / envfile.NAME, envfile.render(cloud_doc))
        write_atomic(self.dir / "ready", server_url + "\n", 0o644)
        log.info("twin serving at %s with %d nodes, time scale %s", server_url, self.node_count, self.time_scale)

    def _cloud_state(self) -> CloudState:
        st = CloudState.from_nodes(self.nodes, self.seed)
        if self.name:
            st.cluster_name = self.name
            st.cluster_tags = [{"key": "env", "value": "twin"}, {"key": "twin-fleet", "value": self.name}]
        self.admin_handlers["cloud"] = st.admin
        return st

    async def _supervise(self, controller: Any) -> None:
        while True:
            try:
                await controller.run()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("controller %s crashed; restarting", controller.name)
                await asyncio.sleep(0.1)

    def _install_crds(self) -> None:
        crd_rt = self.store.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        for name in self.crd_sets:
            for f in sorted((Path(__file__).parent / "crds" / name).glob("*.yaml")):
                for doc in yaml.safe_load_all(f.read_text()):
                    if doc:
                        self.store.create(crd_rt, None, doc)

    def _write_kubeconfig(self, server: str, ca: Path) -> None:
        """kubeconfig: the twin's own (the admin token, as every test and playbook uses it); admin.conf and
        super-admin.conf as kubeadm 1.29+ writes them, with client certificates signed by the cluster CA:
        kubernetes-admin in kubeadm:cluster-admins (RBAC binds it to cluster-admin) and kubernetes-super-admin in
        system:masters (break-glass: allowed whatever the bindings say)."""
        ca_data = base64.b64encode(ca.read_bytes()).decode()
        write_atomic(self.dir / "kubeconfig", yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": "twin", "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "users": [{"name": "twin-admin", "user": {"token": self.token}}],
            "contexts": [{"name": "twin", "context": {"cluster": "twin", "user": "twin-admin", "namespace": "default"}}],
            "current-context": "twin"}, sort_keys=False))
        ca_cert, ca_key = tls.load_ca(self.dir / "pki")
        for file, user, group in (("admin.conf", "kubernetes-admin", "kubeadm:cluster-admins"),
                                  ("super-admin.conf", "kubernetes-super-admin", "system:masters")):
            crt, key = tls.client_cert(ca_cert, ca_key, user, (group,))
            write_atomic(self.dir / file, yaml.safe_dump({
                "apiVersion": "v1", "kind": "Config", "preferences": {},
                "clusters": [{"name": "kubernetes", "cluster": {"server": server, "certificate-authority-data": ca_data}}],
                "users": [{"name": user, "user": {"client-certificate-data": base64.b64encode(crt).decode(),
                                                  "client-key-data": base64.b64encode(key).decode()}}],
                "contexts": [{"name": f"{user}@kubernetes", "context": {"cluster": "kubernetes", "user": user}}],
                "current-context": f"{user}@kubernetes"}, sort_keys=False))

    # admin (the twin's own control door: faults, settings) ------------------------------------
    async def _admin(self, request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization")
        if auth != f"Bearer {self.token}" and not (self.fleet_token and auth == f"Bearer {self.fleet_token}"):
            return web.json_response({"error": "unauthorized"}, status=401)
        verb = request.match_info["verb"]
        body = await request.json() if request.can_read_body else {}
        if verb == "fault":
            if body.get("clear"):
                self.faults.clear(body.get("name"))
            else:
                try:
                    self.faults.set(body["name"], body.get("rule", {}))
                except ValueError as e:  # refused before anything is set (faults.rule_error)
                    return web.json_response({"error": str(e)}, status=400)
            return web.json_response({"faults": self.faults.rules})
        if verb == "settings":
            problem = settings_error(body)
            if problem:
                return web.json_response({"error": problem}, status=400)
            self.settings.update(body)
            return web.json_response(self.settings)
        if verb == "stats":
            return web.json_response(self.stats())
        if verb == "stop_apiserver":
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.stop_apiserver()))
            return web.json_response({"apiserver": "stopping"})
        handler = self.admin_handlers.get(verb)
        if handler:
            return web.json_response(await handler(body))
        return web.json_response({"error": f"unknown verb {verb}"}, status=404)

    def stats(self) -> dict[str, Any]:
        return {"objects": sum(len(v) for v in self.store.objects.values()), "resourceVersion": self.store.rv,
                "requests": self.store.request_count, "nodes": self.nodes,
                "apiserver": "serving" if self.api_runner is not None else "stopped",
                "cloud_requests": self.cloud_requests() if self.cloud_requests else {}}

    async def stop_apiserver(self) -> None:
        """`down --cluster NAME`: close the Kubernetes API server's port (clients get connection refused);
        controllers and cloud endpoints go on, as when a cluster's API server becomes unreachable."""
        runner, self.api_runner = self.api_runner, None
        if runner is not None:
            self.runners.remove(runner)
            await runner.cleanup()
            (self.dir / "ready").unlink(missing_ok=True)
            log.info("API server stopped (down --cluster)")

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        for r in self.runners:
            await r.cleanup()
        for hook in reversed(self.on_stop):
            try:
                hook()
            except Exception:
                log.exception("stop hook %r failed", hook)


async def serve(directory: Path, **kwargs: Any) -> None:
    cluster = Cluster(directory, **kwargs)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await cluster.start()
    await stop.wait()
    await cluster.stop()
    for f in ("ready",):
        (cluster.dir / f).unlink(missing_ok=True)
