"""`kubectl exec` (and `kubectl cp`, tar over exec) and `kubectl attach` over the Kubernetes remotecommand WebSocket protocol.

kubectl 1.32 opens GET .../pods/<name>/exec?command=..&container=..&stdin=..&stdout=..&stderr=..&tty=..
as a WebSocket with subprotocol v5.channel.k8s.io (v4 accepted too). Every binary message starts with a
channel byte: 0 stdin (client to server), 1 stdout, 2 stderr, 3 error (one metav1.Status JSON when the
command ends: Success, or Failure with reason NonZeroExitCode and causes [{reason: ExitCode, message:
"<code>"}], from which kubectl takes its exit code), 4 resize ({"Width", "Height"} for a tty), and in v5
255 close (payload: the channel the client closes, 0 when its stdin ended).

The same command runs over SPDY/3.1 (twin/streams/spdy.py) when the client upgrades to it: kubectl falls back to
SPDY when the WebSocket upgrade fails, uses it with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, and older
clients only speak it. Protocols v4.channel.k8s.io, v3, v2 and channel.k8s.io (v1), as the kubelet serves
them (pkg/kubelet/cri/streaming/remotecommand): one client-opened stream per channel, told apart by their
`streamtype` header (error, stdin, stdout, stderr, resize from v3 on); the command starts once every stream
the query asked for is open; stdin ends with the stream's FIN. v4 writes the exit status as the same
metav1.Status JSON on the error stream; v1-v3 write nothing on success and the Status's message as text
on failure (no exit code reaches the client).

`kubectl attach` (pods/attach) uses the same transports on the container's running main process
(Attachment below, exec_runner.Attachable).
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

from ..apimachinery import errors
from . import spdy, upgrade
from ..apimachinery.queryflags import flag

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
# the kubelet's order (remotecommand SupportedStreamingProtocols); the client's order picks among them
SPDY_PROTOCOLS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
_RESIZING = ("v4.channel.k8s.io", "v3.channel.k8s.io")  # v1 and v2 have no resize stream
STREAM_CREATION_TIMEOUT = 30  # the kubelet's default (--streaming-connection... DefaultStreamCreationTimeout)
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
CHUNK = 32 * 1024


def exit_status(code: int, argv: list[str]) -> dict:
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], "
                       f"exit code {code}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def _set_size(master: int | None, size: dict) -> None:
    if master is not None:
        with contextlib.suppress(ValueError, KeyError, OSError, TypeError):
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", int(size["Height"]), int(size["Width"]), 0, 0))


class Command:
    """One exec'd command and the client's input to it, whatever protocol carries the bytes."""

    def __init__(self, ex, argv: list[str], tty: bool, want_stdin: bool) -> None:
        self.ex, self.argv, self.tty, self.want_stdin = ex, argv, tty, want_stdin
        self.proc = ex.proc
        self.gone = False  # the client went away: output is drained and dropped
        self.stdin_done = False

    async def stdin(self, data: bytes) -> None:
        if self.tty and self.ex.master is not None:
            with contextlib.suppress(OSError):
                os.write(self.ex.master, data)
        elif self.proc.stdin is not None and not self.proc.stdin.is_closing():
            with contextlib.suppress(ConnectionError):
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()

    def stdin_closed(self) -> None:
        """EOF on the command's stdin (the SPDY stdin stream's FIN, v5's close of channel 0, or the connection's
        end), once: the writes before it were awaited, so the pipe flushes them first."""
        if self.stdin_done:
            return
        self.stdin_done = True
        if self.tty and self.ex.master is not None:
            with contextlib.suppress(OSError):
                os.write(self.ex.master, b"\x04")  # EOF at the terminal
        elif self.proc.stdin is not None:
            self.proc.stdin.close()

    def resize(self, size: dict) -> None:
        if self.tty:
            _set_size(self.ex.master, size)

    def client_gone(self) -> None:
        """The client's connection ended. The kubelet does not kill an exec'd command for that (containerd's exec
        process outlives its stream): the command reads EOF and runs on to its own end, as `tar xf -` must when
        kubernetes.core's k8s_cp closes the WebSocket right after its last stdin write (v4 has no other way to end
        stdin). Its output, with no reader left, is drained and dropped; the twin stopping still kills it."""
        self.gone = True
        self.stdin_closed()

    def close(self) -> None:
        self.ex.close()

    async def run(self, send: Callable[[int, bytes], Awaitable[None]]) -> None:
        """Stream stdout/stderr through send(channel, data) until the command ends, then its exit status."""
        async def deliver(channel: int, data: bytes) -> None:
            if self.gone:
                return
            try:
                await send(channel, data)
            except (ConnectionError, EOFError, OSError, RuntimeError):
                self.gone = True  # keep reading: a command blocked on a full pipe would never end

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
                await deliver(channel, data)

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
            await deliver(ERROR, json.dumps(exit_status(code, self.argv)).encode())
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
    return argv, flag(q, "tty"), flag(q, "stdin")


class Attachment:
    """One `kubectl attach` session on a running container's main process (exec_runner.Attachable), with
    containerd's semantics: without `stdin: true` on the container the client's stdin goes nowhere and
    the session lasts until the container exits; with it, the client's stdin ending closes the container's
    stdin when the container has `stdinOnce` and no tty (output then flows until it exits), else detaches
    the client. A tty: true container's terminal takes the client's resizes.
    The kubelet ends every attach with a Success status."""

    def __init__(self, hub, want_stdin: bool) -> None:
        self.hub, self.want_stdin = hub, want_stdin
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        hub.clients.add(self.queue)

    async def stdin(self, data: bytes) -> None:
        if self.want_stdin:
            await self.hub.write(data)

    def stdin_closed(self) -> None:
        if not self.want_stdin or not self.hub.has_stdin:
            return
        if self.hub.stdin_once and self.hub.master is None:
            self.hub.close_stdin()
        else:  # containerd keeps a terminal's stdin open: the client just detaches
            self.client_gone()

    def resize(self, size: dict) -> None:
        _set_size(self.hub.master, size)

    def client_gone(self) -> None:
        if self.queue in self.hub.clients:
            self.hub.clients.discard(self.queue)
            self.queue.put_nowait(None)

    def close(self) -> None:
        self.client_gone()

    async def run(self, send: Callable[[int, bytes], Awaitable[None]]) -> None:
        while (data := await self.queue.get()) is not None:
            await send(STDOUT, data)
        await send(ERROR, json.dumps(exit_status(0, [])).encode())


Streamed = Command | Attachment  # what a remote-command session drives


async def exec_stream(request: web.Request, kubelet, ns: str, name: str) -> web.StreamResponse:
    """pods/exec: the command's errors first (as API errors), then the upgrade the client asked for."""
    argv, tty, want_stdin = _query(request)
    if kubelet is None:
        raise errors.ApiError(500, "InternalError", "no kubelet serves this cluster's pods")
    container = request.query.get("container", "")
    await kubelet.exec(ns, name, container, argv, tty, start=False)  # the pod's errors come first

    async def start() -> Streamed:
        await asyncio.sleep(kubelet.exec_start_latency())
        return Command(await kubelet.exec(ns, name, container, argv, tty), argv, tty, want_stdin)
    return await _serve(request, start, tty, want_stdin)


async def attach_stream(request: web.Request, kubelet, ns: str, name: str) -> web.StreamResponse:
    """pods/attach: the running container's own stdio, over the same transports as exec."""
    tty, want_stdin = flag(request.query, "tty"), flag(request.query, "stdin")
    if kubelet is None:
        raise errors.ApiError(500, "InternalError", "no kubelet serves this cluster's pods")
    container = request.query.get("container", "")
    kubelet.attach(ns, name, container)  # the pod's errors come first

    async def start() -> Streamed:
        return Attachment(kubelet.attach(ns, name, container)[0], want_stdin)
    return await _serve(request, start, tty, want_stdin)


async def _serve(request: web.Request, start: Callable[[], Awaitable[Streamed]], tty: bool,
                 want_stdin: bool) -> web.StreamResponse:
    if upgrade.wants_spdy(request):
        return await _serve_spdy(request, start, tty, want_stdin)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise errors.bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    if not any(p in PROTOCOLS for p in offered):
        raise errors.bad_request(f"unable to upgrade: none of the offered subprotocols {offered} is supported; "
                                 f"supported: {', '.join(PROTOCOLS)}")
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0, autoping=True)
    send_lock = asyncio.Lock()

    async def send(channel: int, data: bytes) -> None:
        async with send_lock:
            if not ws.closed:
                await ws.send_bytes(bytes([channel]) + data)

    # The handshake goes first and the command starts after it, as on a real cluster, where kube-apiserver's
    # stream translator answers the client's upgrade, then dials the kubelet over SPDY and containerd starts
    # the process. client-go creates its streams only once the handshake returns and drops a frame for a
    # stream it has not made yet ("Unknown stream id 3"): a command that ended before the 101 went out lost
    # its exit status, and `kubectl cp` took a failed `test -d` for a directory.
    await ws.prepare(request)
    try:
        command = await start()
    except errors.ApiError as e:
        await send(ERROR, json.dumps(e.status()).encode())
        await ws.close()
        return ws
    try:
        receiver = asyncio.ensure_future(_receive_ws(ws, command))
        try:
            await command.run(send)
        finally:
            receiver.cancel()
            with contextlib.suppress(Exception):
                await ws.close()
    finally:
        command.close()
    return ws


async def _receive_ws(ws: web.WebSocketResponse, command: Streamed) -> None:
    async for msg in ws:
        # text frames too: the apiserver's wsstream reads either kind, and the Python client sends str stdin as text
        raw = msg.data.encode() if msg.type == WSMsgType.TEXT else msg.data if msg.type == WSMsgType.BINARY else b""
        if not raw:
            continue
        channel, data = raw[0], raw[1:]
        if channel == STDIN and data:
            await command.stdin(data)
        elif channel == RESIZE:
            with contextlib.suppress(ValueError):
                command.resize(json.loads(data))
        elif channel == CLOSE and data[:1] == bytes([STDIN]):
            command.stdin_closed()
    command.client_gone()  # the client went away: the command goes too


def _expected_streams(request: web.Request, tty: bool, want_stdin: bool, version: str) -> set[str]:
    q = request.query
    wanted = {"error"}
    if want_stdin:
        wanted.add("stdin")
    if flag(q, "stdout"):
        wanted.add("stdout")
    if flag(q, "stderr") and not tty:
        wanted.add("stderr")
    if tty and version in _RESIZING:
        wanted.add("resize")
    return wanted


def _v1_status(data: bytes) -> bytes:
    """The error stream before v4 (the kubelet's v1WriteStatusFunc): nothing on success, else the
    Status's message as text, which the client reports as "error executing remote command: <message>"."""
    status = json.loads(data)
    return b"" if status.get("status") == "Success" else str(status.get("message", "")).encode()


async def _serve_spdy(request: web.Request, start: Callable[[], Awaitable[Streamed]], tty: bool,
                      want_stdin: bool) -> web.StreamResponse:
    refused = upgrade.refusal(request, SPDY_PROTOCOLS)
    if refused is not None:
        return refused
    conn = await upgrade.accept_spdy(request, SPDY_PROTOCOLS)
    session = conn.session
    reader = asyncio.ensure_future(session.serve())
    streams: dict[str, spdy.Stream] = {}
    wanted = _expected_streams(request, tty, want_stdin, conn.version)
    status = (lambda data: data) if conn.version == "v4.channel.k8s.io" else _v1_status
    command: Streamed | None = None
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
            command = await start()
        except errors.ApiError as e:
            await error.write(status(json.dumps(e.status()).encode()))
            return await conn.close()
        running = command

        async def send(channel: int, data: bytes) -> None:
            stream = streams.get({STDOUT: "stdout", STDERR: "stderr", ERROR: "error"}[channel])
            if channel == ERROR:
                data = status(data)
            if stream is not None and data:
                await stream.write(data)

        async def read_stdin(stream) -> None:
            while data := await stream.read():
                await running.stdin(data)
            running.stdin_closed()

        async def read_resize(stream) -> None:
            decoder, pending = json.JSONDecoder(), ""
            while data := await stream.read():
                pending += data.decode(errors="replace")
                with contextlib.suppress(ValueError):
                    while pending.strip():
                        size, end = decoder.raw_decode(pending.lstrip())
                        pending = pending.lstrip()[end:]
                        running.resize(size)

        if "stdin" in streams:
            tasks.append(asyncio.ensure_future(read_stdin(streams["stdin"])))
        if "resize" in streams:
            tasks.append(asyncio.ensure_future(read_resize(streams["resize"])))
        gone = asyncio.ensure_future(_when_session_ends(reader, command))
        tasks.append(gone)
        await command.run(send)
        for kind in ("stdout", "stderr", "error"):
            if kind in streams:
                with contextlib.suppress(ConnectionError, EOFError, OSError):
                    await streams[kind].close()
        return await conn.close()
    finally:
        for t in tasks:
            t.cancel()
        reader.cancel()
        if command is not None:
            command.close()


async def _when_session_ends(reader: asyncio.Future, command: Streamed) -> None:
    await asyncio.shield(reader)
    command.client_gone()
