"""`kubectl port-forward`: pods/portforward over SPDY (portforward.k8s.io), plain or tunnelled in a WebSocket.

kubectl 1.32 first opens a WebSocket with subprotocol SPDY/3.1+portforward.k8s.io and speaks SPDY inside
its binary messages (feature PortForwardWebsockets, on by default since 1.31); when that upgrade fails it
upgrades the connection to SPDY/3.1 itself. Either way, per local connection it opens two streams with
the same `requestid` and `port` headers: `streamtype: error` and `streamtype: data`. As the kubelet's
port-forward handler does (pkg/kubelet/cri/streaming/portforward/httpstream.go), each complete pair is
forwarded on its own: the data stream to TCP localhost:<port> inside the pod's network namespace (the
runtime tries IPv4, then IPv6), the error stream carries the message of a failure, and both are closed
when the connection ends.

On the twin a pod has a network namespace when its containers run as host processes (twin/host/exec_runner.py):
what listens there answers. A pod whose containers are simulated has nothing listening, so its ports
refuse the connection as a real pod's closed port does.
"""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import os
import socket
import struct
import threading

from aiohttp import web

from ..apimachinery import errors
from . import spdy, upgrade

PROTOCOL = "portforward.k8s.io"
TUNNEL_PROTOCOL = "SPDY/3.1+" + PROTOCOL
CHANNEL_PROTOCOL = "v4.channel.k8s.io"  # the kubernetes Python client's WebSocket port-forward
CLONE_NEWNET = 0x40000000
CHUNK = 32 * 1024


async def port_forward(request: web.Request, kubelet, ns: str, name: str) -> web.StreamResponse:
    if kubelet is None:
        raise errors.ApiError(500, "InternalError", "no kubelet serves this cluster's pods")
    pod = kubelet.store.get(kubelet.pods_rt, ns, name)
    if not pod["spec"].get("nodeName"):
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        raise errors.bad_request(f"unable to upgrade connection: pod {name} is not running (phase {phase})")
    if request.headers.get("Upgrade", "").lower() == "websocket":
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        if TUNNEL_PROTOCOL in offered:
            ws = web.WebSocketResponse(protocols=(TUNNEL_PROTOCOL,), max_msg_size=0, autoping=True)
            await ws.prepare(request)
            tunnel = upgrade.WebSocketBytes(ws)
            await _serve(spdy.Session(tunnel.read, tunnel.write), pod)
        elif CHANNEL_PROTOCOL in offered:
            ports = _query_ports(request)
            ws = web.WebSocketResponse(protocols=(CHANNEL_PROTOCOL,), max_msg_size=0, autoping=True)
            await ws.prepare(request)
            await _serve_channels(ws, pod, ports)
        else:
            raise errors.bad_request(f"unable to upgrade: none of the offered subprotocols {offered} is supported; "
                                     f"supported: {TUNNEL_PROTOCOL}, {CHANNEL_PROTOCOL}")
        with contextlib.suppress(Exception):
            await ws.close()
        return ws
    if not upgrade.wants_spdy(request):
        raise errors.bad_request("Upgrade request required")
    refused = upgrade.refusal(request, (PROTOCOL,))
    if refused is not None:
        return refused
    conn = await upgrade.accept_spdy(request, (PROTOCOL,))
    await _serve(conn.session, pod)
    return await conn.close()


def _query_ports(request: web.Request) -> list[int]:
    texts = [t for v in request.query.getall("ports", []) for t in v.split(",") if t.strip()]
    if not texts:
        raise errors.bad_request("query parameter \"port\" is required")
    ports = []
    for t in texts:
        try:
            port = int(t)
        except ValueError:
            raise errors.bad_request(f"unable to parse \"{t}\" as a port: invalid syntax") from None
        if not 0 < port < 65536:
            raise errors.bad_request(f"port \"{t}\" must be > 0")
        ports.append(port)
    return ports


async def _serve_channels(ws: web.WebSocketResponse, pod: dict, ports: list[int]) -> None:
    """The channel protocol (kubelet's websocket.go): port i's data on channel 2i, its errors on 2i+1; each
    channel starts with the port as two little-endian bytes, from the server only."""
    lock = asyncio.Lock()

    async def send(channel: int, data: bytes) -> None:
        async with lock:
            if not ws.closed:
                await ws.send_bytes(bytes([channel]) + data)

    for i, port in enumerate(ports):
        await send(2 * i, struct.pack("<H", port))
        await send(2 * i + 1, struct.pack("<H", port))
    # what the client sends before its port's connection is up waits here, in order
    inbound: list[asyncio.Queue[bytes]] = [asyncio.Queue() for _ in ports]

    async def forward(i: int, port: int) -> None:
        try:
            r, w = await asyncio.open_connection(sock=await _connect_in_pod(pod, port))
        except ConnectionError as e:
            await send(2 * i + 1, _forward_error(port, pod, e))
            return

        async def to_pod() -> None:
            while chunk := await inbound[i].get():
                w.write(chunk)
                await w.drain()

        up = asyncio.ensure_future(to_pod())
        try:
            while chunk := await r.read(CHUNK):
                await send(2 * i, chunk)
        finally:
            up.cancel()
            w.close()

    tasks = [asyncio.ensure_future(forward(i, port)) for i, port in enumerate(ports)]
    everything_ended = asyncio.ensure_future(asyncio.wait(tasks))
    try:
        while True:
            msg_task = asyncio.ensure_future(ws.receive())
            done, _ = await asyncio.wait({msg_task, everything_ended}, return_when=asyncio.FIRST_COMPLETED)
            if msg_task not in done:
                msg_task.cancel()
                return
            msg = msg_task.result()
            if msg.type != web.WSMsgType.BINARY:
                if msg.type in (web.WSMsgType.CLOSE, web.WSMsgType.CLOSING, web.WSMsgType.CLOSED, web.WSMsgType.ERROR):
                    return
                continue
            channel, data = msg.data[0], msg.data[1:]
            if channel % 2 == 0 and data and channel // 2 < len(inbound):
                inbound[channel // 2].put_nowait(bytes(data))
    finally:
        for t in tasks:
            t.cancel()
        everything_ended.cancel()


def _request_id(stream: spdy.Stream) -> str:
    rid = stream.headers.get("requestid", "")
    if rid:
        return rid
    # clients before 1.3 sent no request id: the kubelet pairs an error stream N with the data stream N+2
    return str(stream.id - 2 if stream.type == "data" else stream.id)


async def _serve(session: spdy.Session, pod: dict) -> None:
    reader = asyncio.ensure_future(session.serve())
    pairs: dict[str, dict[str, spdy.Stream]] = {}
    forwards: set[asyncio.Future] = set()
    try:
        while (stream := await session.accept()) is not None:
            if stream.type not in ("error", "data"):
                await session.send_rst(stream.id, spdy.RST_PROTOCOL_ERROR)
                continue
            pair = pairs.setdefault(_request_id(stream), {})
            pair[stream.type] = stream
            if len(pair) == 2:
                pairs.pop(_request_id(stream))
                forward = asyncio.ensure_future(_forward(pair["data"], pair["error"], pod))
                forwards.add(forward)
                forward.add_done_callback(forwards.discard)
    finally:
        for pending in list(forwards):
            pending.cancel()
        reader.cancel()


async def _forward(data: spdy.Stream, error: spdy.Stream, pod: dict) -> None:
    port_text = data.headers.get("port", "")
    try:
        try:
            port = int(port_text)
            if not 0 < port < 65536:
                raise ValueError(port_text)
        except ValueError:
            raise ConnectionError(f"unable to parse '{port_text}' as a port") from None
        sock = await _connect_in_pod(pod, port)
    except ConnectionError as e:
        await error.write(_forward_error(port_text, pod, e))
        await error.close()
        await data.close()
        return
    r, w = await asyncio.open_connection(sock=sock)

    async def to_pod() -> None:
        while chunk := await data.read():
            w.write(chunk)
            await w.drain()
        with contextlib.suppress(OSError):
            w.write_eof()

    async def from_pod() -> None:
        while chunk := await r.read(CHUNK):
            await data.write(chunk)

    up = asyncio.ensure_future(to_pod())
    try:
        with contextlib.suppress(ConnectionError):
            await from_pod()
    finally:
        up.cancel()
        w.close()
        await data.close()
        await error.close()


def _forward_error(port: object, pod: dict, e: Exception) -> bytes:
    # the CRI streaming server's wording: it knows the sandbox, not the pod's uid
    return f"error forwarding port {port} to pod {_sandbox(pod)}, uid : {e}".encode()


def _sandbox(pod: dict) -> str:
    """The id containerd names the pod's sandbox by in its messages (a stable 64-hex id per pod here)."""
    return hashlib.sha256(pod["metadata"].get("uid", pod["metadata"]["name"]).encode()).hexdigest()


async def _connect_in_pod(pod: dict, port: int) -> socket.socket:
    from ..host import exec_runner

    path = exec_runner.netns_path(pod)
    if path is None:
        raise ConnectionError(f"failed to connect to localhost:{port} inside namespace \"{_sandbox(pod)}\", "
                              f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused "
                              f"IPv6 dial tcp6 [::1]:{port}: connect: connection refused ")
    loop = asyncio.get_running_loop()
    done: asyncio.Future[socket.socket] = loop.create_future()

    def connect() -> None:
        # setns moves only the calling thread, and a socket stays in the namespace it was made in: a thread of
        # its own that ends here, so no pooled thread is ever left inside a pod's namespace
        try:
            result: socket.socket | BaseException = _connect_in_netns(path, port, _sandbox(pod))
        except BaseException as e:  # handed to the event loop as the future's exception
            result = e
        loop.call_soon_threadsafe(_settle, done, result)

    threading.Thread(target=connect, name=f"portforward-{port}", daemon=True).start()
    return await done


def _settle(fut: asyncio.Future, result) -> None:
    if fut.done():
        if isinstance(result, socket.socket):
            result.close()
    elif isinstance(result, BaseException):
        fut.set_exception(result)
    else:
        fut.set_result(result)


def _connect_in_netns(path: str, port: int, sandbox: str) -> socket.socket:
    libc = ctypes.CDLL(None, use_errno=True)
    target = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise ConnectionError(f"failed to execute portforward in network namespace \"{path}\": {os.strerror(err)}")
    finally:
        os.close(target)
    failures = []
    for family, address, label in ((socket.AF_INET, ("127.0.0.1", port), f"dial tcp4 127.0.0.1:{port}"),
                                   (socket.AF_INET6, ("::1", port), f"dial tcp6 [::1]:{port}")):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(10)
            sock.connect(address)
            sock.setblocking(False)
            return sock
        except OSError as e:
            sock.close()
            failures.append(f"{label}: connect: {os.strerror(e.errno).lower() if e.errno else e}")
    raise ConnectionError(f"failed to execute portforward in network namespace \"{path}\": failed to connect to "
                          f"localhost:{port} inside namespace \"{sandbox}\", IPv4: {failures[0]} IPv6 {failures[1]} ")
