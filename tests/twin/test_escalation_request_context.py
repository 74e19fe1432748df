"""escalation.REQUEST holds the requester of the authorized request being served, and only that request's.

The API server sets it once, after authorization, and never clears it: aiohttp serves each request in a task of
its own, so a request that is not authorized (the twin's /_twin/ routes, anonymous paths, a 401) sees it unset
even when it follows an authorized request on the same keep-alive connection.
"""
from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from twin.apiserver.auth import escalation
from twin.apiserver.server import ApiServer
from twin.store import Store

TOKEN = "super-admin-token"  # system:masters: a bare Store has no RBAC objects to grant the admin anything
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


async def _serve_in_turn() -> tuple[list, list, set]:
    """(REQUEST in each store write, REQUEST in each /_twin/probe, the client ports the server saw)."""
    store = Store()
    writes: list = []
    probes: list = []
    ports: set = set()
    store.before_write.append(lambda rtype, obj, old: writes.append(escalation.REQUEST.get()))

    async def probe(request: web.Request) -> web.Response:
        probes.append(escalation.REQUEST.get())
        ports.add(request.transport.get_extra_info("peername")[1])
        return web.json_response({})

    server = ApiServer(store, "admin-token", super_token=TOKEN, extra_routes=(("GET", "/_twin/probe", probe),))
    admin = {"Authorization": f"Bearer {TOKEN}"}
    async with TestServer(server.app) as ts, aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as s:
        for i in range(2):
            async with s.post(ts.make_url("/api/v1/namespaces/default/configmaps"), headers=admin,
                              json={**CM, "metadata": {"name": f"c{i}"}}) as r:
                assert r.status == 201, await r.text()
            async with s.get(ts.make_url("/_twin/probe")) as r:
                assert r.status == 200
            async with s.post(ts.make_url("/api/v1/namespaces/default/configmaps"), json=CM,
                              headers={"Authorization": "Bearer wrong"}) as r:
                assert r.status == 401
            async with s.get(ts.make_url("/version")) as r:
                assert r.status == 200
            async with s.get(ts.make_url("/_twin/probe")) as r:
                assert r.status == 200
    return writes, probes, ports


def test_only_the_authorized_request_sees_its_requester_on_a_keep_alive_connection():
    writes, probes, ports = asyncio.run(_serve_in_turn())
    assert len(ports) == 1  # every request came on one connection
    assert len(writes) == 2 and all(w is not None for w in writes)
    assert [(who.user, attrs["verb"], attrs["resource"]) for who, attrs in writes] == [
        ("kubernetes-super-admin", "create", "configmaps")] * 2
    assert probes == [None] * 4
