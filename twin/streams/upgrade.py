"""HTTP connection upgrades that aiohttp does not serve itself: `Upgrade: SPDY/3.1` (exec, port-forward).

The handshake is k8s.io/apimachinery's httpstream.Handshake + spdy.NewResponseUpgrader: the client offers
X-Stream-Protocol-Version values, the server picks the first one it supports in the client's order and
answers 101 with `Connection: Upgrade`, `Upgrade: SPDY/3.1` and the chosen version; with no common
version it answers 403 in plain text and lists its own in X-Accepted-Stream-Protocol-Versions.

aiohttp's parser upgrades only to WebSocket, so after the 101 the connection's transport is handed to a
protocol of our own; the client sends nothing before it reads the 101, so no SPDY byte reaches aiohttp.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from aiohttp import web

from . import spdy

HIGH_WATER = 256 * 1024


def offered_versions(request: web.Request) -> list[str]:
    return [v.strip() for h in request.headers.getall("X-Stream-Protocol-Version", []) for v in h.split(",") if v.strip()]


def wants_spdy(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").strip().lower() == "spdy/3.1"


def refusal(request: web.Request, supported: Sequence[str]) -> web.Response | None:
    """The 403 of a failed negotiation, or None when a version is common to both sides."""
    offered = offered_versions(request)
    if any(v in supported for v in offered):
        return None
    resp = web.Response(status=403, content_type="text/plain",
                        text=f"unable to upgrade: unable to negotiate protocol: client supports {_go_list(offered)}, "
                             f"server accepts {_go_list(supported)}\n")
    for v in supported:
        resp.headers.add("X-Accepted-Stream-Protocol-Versions", v)
    return resp


def _go_list(items: Sequence[str]) -> str:
    return "[" + " ".join(items) + "]"


class _Raw(asyncio.Protocol):
    """The upgraded connection: bytes in to a StreamReader, writes paused while the peer is slow."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.writable = asyncio.Event()
        self.writable.set()

    def data_received(self, data: bytes) -> None:
        self.reader.feed_data(data)

    def eof_received(self) -> bool:
        self.reader.feed_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.reader.feed_eof()
        self.writable.set()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()


class SpdyConnection:
    """A SPDY session over the request's own connection, after the 101."""

    def __init__(self, request: web.Request, response: web.StreamResponse, version: str) -> None:
        self.request, self.response, self.version = request, response, version
        transport = request.transport
        assert transport is not None
        self.transport = transport
        self._reader = asyncio.StreamReader()
        self._proto = _Raw(self._reader)
        transport.set_protocol(self._proto)
        transport.set_write_buffer_limits(high=HIGH_WATER)
        self.session = spdy.Session(self._read, self._write)

    async def _read(self) -> bytes:
        return await self._reader.read(64 * 1024)

    async def _write(self, data: bytes) -> None:
        if self.transport.is_closing():
            raise ConnectionResetError("the client closed the connection")
        self.transport.write(data)
        await self._proto.writable.wait()

    async def close(self) -> web.StreamResponse:
        """GOAWAY, close the connection, and give aiohttp a response it will find already sent."""
        with contextlib.suppress(ConnectionError):
            await self.session.goaway()
        self.transport.close()
        protocol = self.request.protocol
        if protocol is not None:
            protocol.force_close()  # its write_eof then meets a closed transport, which aiohttp takes as a gone client
        return self.response


async def accept_spdy(request: web.Request, supported: Sequence[str]) -> SpdyConnection:
    """Answer the upgrade (the caller checked refusal() first) and return the session's connection."""
    version = next(v for v in offered_versions(request) if v in supported)
    response = web.StreamResponse(status=101, headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                                       "X-Stream-Protocol-Version": version})
    await response.prepare(request)
    return SpdyConnection(request, response, version)


class WebSocketBytes:
    """A WebSocket whose binary messages carry one byte stream (client-go's TunnelingConnection)."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    async def read(self) -> bytes:
        while True:
            msg = await self.ws.receive()
            if msg.type == web.WSMsgType.BINARY:
                if msg.data:
                    return bytes(msg.data)
            elif msg.type in (web.WSMsgType.CLOSE, web.WSMsgType.CLOSING, web.WSMsgType.CLOSED, web.WSMsgType.ERROR):
                return b""

    async def write(self, data: bytes) -> None:
        if self.ws.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self.ws.send_bytes(data)
