"""`kubectl exec` (and `kubectl cp`, tar over exec) over the Kubernetes remotecommand WebSocket protocol.

kubectl 1.32 opens GET .../pods/<name>/exec?command=..&container=..&stdin=..&stdout=..&stderr=..&tty=..
as a WebSocket with subprotocol v5.channel.k8s.io (v4 accepted too). Every binary message starts with a
channel byte: 0 stdin (client to server), 1 stdout, 2 stderr, 3 error (one metav1.Status JSON when the
command ends: Success, or Failure with reason NonZeroExitCode and causes [{reason: ExitCode, message:
"<code>"}], from which kubectl takes its exit code), 4 resize ({"Width", "Height"} for a tty), and in v5
255 close (payload: the channel the client closes, 0 when its stdin ended). The SPDY protocol that older
clients use is not served: kubectl only falls back to it when the WebSocket upgrade fails.
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import struct
import termios

from aiohttp import WSMsgType, web

from . import errors

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
CHUNK = 32 * 1024


def _flag(q, name: str) -> bool:
    return q.get(name, "").lower() in ("true", "1")


def exit_status(code: int, argv: list[str]) -> dict:
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], "
                       f"exit code {code}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


async def exec_websocket(request: web.Request, kubelet, ns: str, name: str) -> web.StreamResponse:
    q = request.query
    argv = q.getall("command", [])
    if not argv:
        raise errors.bad_request("you must specify at least 1 command")
    tty = _flag(q, "tty")
    want_stdin = _flag(q, "stdin")
    if kubelet is None:
        raise errors.ApiError(500, "InternalError", "no kubelet serves this cluster's pods")
    await kubelet.exec(ns, name, q.get("container", ""), argv, tty, start=False)  # the pod's errors come first
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise errors.bad_request("Upgrade request required: this server serves exec over WebSocket "
                                 f"({', '.join(PROTOCOLS)}), not SPDY")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    if not any(p in PROTOCOLS for p in offered):
        raise errors.bad_request(f"unable to upgrade: none of the offered subprotocols {offered} is supported; "
                                 f"supported: {', '.join(PROTOCOLS)}")
    ex = await kubelet.exec(ns, name, q.get("container", ""), argv, tty)
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0, autoping=True)
    try:
        await ws.prepare(request)
        await _serve(ws, ex, argv, tty, want_stdin)
    finally:
        ex.close()
    return ws


async def _serve(ws: web.WebSocketResponse, ex, argv: list[str], tty: bool, want_stdin: bool) -> None:
    proc = ex.proc
    send_lock = asyncio.Lock()

    async def send(channel: int, data: bytes) -> None:
        async with send_lock:
            if not ws.closed:
                await ws.send_bytes(bytes([channel]) + data)

    async def pump(stream: asyncio.StreamReader | None, channel: int) -> None:
        if stream is None:
            return
        while True:
            try:
                data = await stream.read(CHUNK)
            except OSError:  # EIO on the pty master once the command's side is closed
                return
            if not data:
                return
            await send(channel, data)

    pumps = []
    if tty:
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                    os.fdopen(os.dup(ex.master), "rb", 0))
        pumps.append(asyncio.ensure_future(pump(reader, STDOUT)))
    else:
        transport = None
        if not want_stdin and proc.stdin is not None:
            proc.stdin.close()
        pumps += [asyncio.ensure_future(pump(proc.stdout, STDOUT)), asyncio.ensure_future(pump(proc.stderr, STDERR))]
    receiver = asyncio.ensure_future(_receive(ws, ex, tty))
    try:
        code = await proc.wait()
        await asyncio.wait(pumps, timeout=5)
        code = 128 - code if code < 0 else code
        await send(ERROR, json.dumps(exit_status(code, argv)).encode())
    finally:
        receiver.cancel()
        for p in pumps:
            p.cancel()
        if transport is not None:
            transport.close()
        with contextlib.suppress(Exception):
            await ws.close()


async def _receive(ws: web.WebSocketResponse, ex, tty: bool) -> None:
    proc = ex.proc
    async for msg in ws:
        if msg.type != WSMsgType.BINARY or not msg.data:
            continue
        channel, data = msg.data[0], msg.data[1:]
        if channel == STDIN and data:
            if tty and ex.master is not None:
                with contextlib.suppress(OSError):
                    os.write(ex.master, data)
            elif proc.stdin is not None and not proc.stdin.is_closing():
                with contextlib.suppress(ConnectionError):
                    proc.stdin.write(data)
                    await proc.stdin.drain()
        elif channel == RESIZE and tty and ex.master is not None:
            with contextlib.suppress(ValueError, KeyError, OSError, TypeError):
                size = json.loads(data)
                fcntl.ioctl(ex.master, termios.TIOCSWINSZ, struct.pack("HHHH", int(size["Height"]), int(size["Width"]), 0, 0))
        elif channel == CLOSE and data[:1] == bytes([STDIN]):
            if tty and ex.master is not None:
                with contextlib.suppress(OSError):
                    os.write(ex.master, b"\x04")  # EOF at the terminal
            elif proc.stdin is not None:
                proc.stdin.close()
    # the client went away: the command goes too
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
