"""`kubectl exec` (and `kubectl cp`, tar over exec) over the Kubernetes remotecommand WebSocket protocol.

kubectl 1.32 opens GET .../pods/<name>/exec?command=..&container=..&stdin=..&stdout=..&stderr=..&tty=..
as a WebSocket with subprotocol v5.channel.k8s.io (v4 accepted too). Every binary message starts with a
channel byte: 0 stdin (client to server), 1 stdout, 2 stderr, 3 error (one metav1.Status JSON when the
command ends: Success, or Failure with reason NonZeroExitCode and causes [{reason: ExitCode, message:
"<code>"}], from which kubectl takes its exit code), 4 resize ({"Width", "Height"} for a tty), and in v5
255 close (payload: the channel the client closes, 0 when its stdin ended).

The same command runs over SPDY/3.1 (twin/spdy.py) when the client upgrades to it: kubectl falls back to
SPDY when the WebSocket upgrade fails, uses it with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, and older
clients only speak it. Protocol v4.channel.k8s.io, as the kubelet serves it (pkg/kubelet/cri/streaming/
remotecommand): one client-opened stream per channel, told apart by their `streamtype` header (error,
stdin, stdout, stderr, resize); the command starts once every stream the query asked for is open; the
exit status is the same metav1.Status JSON on the error stream; stdin ends with the stream's FIN.
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import struct
import termios
from collections.abc import Awaitable, Callable

from aiohttp import WSMsgType, web

from . import errors, spdy, upgrade

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
SPDY_PROTOCOLS = ("v4.channel.k8s.io",)
STREAM_CREATION_TIMEOUT = 30  # the kubelet's default (--streaming-connection... DefaultStreamCreationTimeout)
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


class Command:
    """One exec'd command and the client's input to it, whatever protocol carries the bytes."""

    def __init__(self, ex, argv: list[str], tty: bool, want_stdin: bool) -> None:
        self.ex, self.argv, self.tty, self.want_stdin = ex, argv, tty, want_stdin
        self.proc = ex.proc

    async def stdin(self, data: bytes) -> None:
        if self.tty and self.ex.master is not None:
            with contextlib.suppress(OSError):
                os.write(self.ex.master, data)
        elif self.proc.stdin is not None and not self.proc.stdin.is_closing():
            with contextlib.suppress(ConnectionError):
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()

    def stdin_closed(self) -> None:
        if self.tty and self.ex.master is not None:
            with contextlib.suppress(OSError):
                os.write(self.ex.master, b"\x04")  # EOF at the terminal
        elif self.proc.stdin is not None:
            self.proc.stdin.close()

    def resize(self, size: dict) -> None:
        if self.tty and self.ex.master is not None:
            with contextlib.suppress(ValueError, KeyError, OSError, TypeError):
                fcntl.ioctl(self.ex.master, termios.TIOCSWINSZ,
                            struct.pack("HHHH", int(size["Height"]), int(size["Width"]), 0, 0))

    def client_gone(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, 9)

    async def run(self, send: Callable[[int, bytes], Awaitable[None]]) -> None:
        """Stream stdout/stderr through send(channel, data) until the command ends, then its exit status."""
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
        if self.tty:
            reader = asyncio.StreamReader()
            loop = asyncio.get_running_loop()
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                        os.fdopen(os.dup(self.ex.master), "rb", 0))
            pumps.append(asyncio.ensure_future(pump(reader, STDOUT)))
        else:
            transport = None
            if not self.want_stdin and self.proc.stdin is not None:
                self.proc.stdin.close()
            pumps += [asyncio.ensure_future(pump(self.proc.stdout, STDOUT)),
                      asyncio.ensure_future(pump(self.proc.stderr, STDERR))]
        try:
            code = await self.proc.wait()
            await asyncio.wait(pumps, timeout=5)
            code = 128 - code if code < 0 else code
            await send(ERROR, json.dumps(exit_status(code, self.argv)).encode())
        finally:
            for p in pumps:
                p.cancel()
            if transport is not None:
                transport.close()


def _query(request: web.Request) -> tuple[list[str], bool, bool]:
    q = request.query
    argv = q.getall("command", [])
    if not argv:
        raise errors.bad_request("you must specify at least 1 command")
    return argv, _flag(q, "tty"), _flag(q, "stdin")


async def exec_stream(request: web.Request, kubelet, ns: str, name: str) -> web.StreamResponse:
    """pods/exec: the command's errors first (as API errors), then the upgrade the client asked for."""
    argv, tty, want_stdin = _query(request)
    if kubelet is None:
        raise errors.ApiError(500, "InternalError", "no kubelet serves this cluster's pods")
    container = request.query.get("container", "")
    await kubelet.exec(ns, name, container, argv, tty, start=False)  # the pod's errors come first
    if upgrade.wants_spdy(request):
        return await _exec_spdy(request, kubelet, ns, name, container, argv, tty, want_stdin)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise errors.bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    if not any(p in PROTOCOLS for p in offered):
        raise errors.bad_request(f"unable to upgrade: none of the offered subprotocols {offered} is supported; "
                                 f"supported: {', '.join(PROTOCOLS)}")
    command = Command(await kubelet.exec(ns, name, container, argv, tty), argv, tty, want_stdin)
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0, autoping=True)
    send_lock = asyncio.Lock()

    async def send(channel: int, data: bytes) -> None:
        async with send_lock:
            if not ws.closed:
                await ws.send_bytes(bytes([channel]) + data)

    try:
        await ws.prepare(request)
        receiver = asyncio.ensure_future(_receive_ws(ws, command))
        try:
            await command.run(send)
        finally:
            receiver.cancel()
            with contextlib.suppress(Exception):
                await ws.close()
    finally:
        command.ex.close()
    return ws


async def _receive_ws(ws: web.WebSocketResponse, command: Command) -> None:
    async for msg in ws:
        if msg.type != WSMsgType.BINARY or not msg.data:
            continue
        channel, data = msg.data[0], msg.data[1:]
        if channel == STDIN and data:
            await command.stdin(data)
        elif channel == RESIZE:
            with contextlib.suppress(ValueError):
                command.resize(json.loads(data))
        elif channel == CLOSE and data[:1] == bytes([STDIN]):
            command.stdin_closed()
    command.client_gone()  # the client went away: the command goes too


def _expected_streams(request: web.Request, tty: bool, want_stdin: bool) -> set[str]:
    q = request.query
    wanted = {"error"}
    if want_stdin:
        wanted.add("stdin")
    if _flag(q, "stdout"):
        wanted.add("stdout")
    if _flag(q, "stderr") and not tty:
        wanted.add("stderr")
    if tty:
        wanted.add("resize")
    return wanted


async def _exec_spdy(request: web.Request, kubelet, ns: str, name: str, container: str, argv: list[str], tty: bool,
                     want_stdin: bool) -> web.StreamResponse:
    refused = upgrade.refusal(request, SPDY_PROTOCOLS)
    if refused is not None:
        return refused
    conn = await upgrade.accept_spdy(request, SPDY_PROTOCOLS)
    session = conn.session
    reader = asyncio.ensure_future(session.serve())
    streams: dict[str, spdy.Stream] = {}
    wanted = _expected_streams(request, tty, want_stdin)
    command = None
    tasks: list[asyncio.Future] = []
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            async with asyncio.timeout(STREAM_CREATION_TIMEOUT):
                while not wanted <= streams.keys():
                    stream = await session.accept()
                    if stream is None:
                        break
                    streams[stream.type] = stream
        if not wanted <= streams.keys():
            if "error" in streams:
                await streams["error"].write(b"timed out waiting for client to create streams")
            return await conn.close()
        error = streams["error"]
        try:
            command = Command(await kubelet.exec(ns, name, container, argv, tty), argv, tty, want_stdin)
        except errors.ApiError as e:
            await error.write(json.dumps(e.status()).encode())
            return await conn.close()

        async def send(channel: int, data: bytes) -> None:
            stream = streams.get({STDOUT: "stdout", STDERR: "stderr", ERROR: "error"}[channel])
            if stream is not None:
                await stream.write(data)

        async def read_stdin(stream) -> None:
            while data := await stream.read():
                await command.stdin(data)
            command.stdin_closed()

        async def read_resize(stream) -> None:
            decoder, pending = json.JSONDecoder(), ""
            while data := await stream.read():
                pending += data.decode(errors="replace")
                with contextlib.suppress(ValueError):
                    while pending.strip():
                        size, end = decoder.raw_decode(pending.lstrip())
                        pending = pending.lstrip()[end:]
                        command.resize(size)

        if "stdin" in streams:
            tasks.append(asyncio.ensure_future(read_stdin(streams["stdin"])))
        if "resize" in streams:
            tasks.append(asyncio.ensure_future(read_resize(streams["resize"])))
        gone = asyncio.ensure_future(_when_session_ends(reader, command))
        tasks.append(gone)
        await command.run(send)
        for kind in ("stdout", "stderr", "error"):
            if kind in streams:
                await streams[kind].close()
        return await conn.close()
    finally:
        for t in tasks:
            t.cancel()
        reader.cancel()
        if command is not None:
            command.ex.close()


async def _when_session_ends(reader: asyncio.Future, command: Command) -> None:
    await asyncio.shield(reader)
    command.client_gone()
