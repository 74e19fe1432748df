"""SPDY/3.1 sessions as client-go speaks them (moby/spdystream): the transport of exec and port-forward
when kubectl does not use WebSocket (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false, older clients), and the
protocol that port-forward tunnels inside its WebSocket (subprotocol SPDY/3.1+portforward.k8s.io).

Only what a server of those streams needs: the client opens every stream (SYN_STREAM, odd ids, with
a `streamtype` header and for port-forward `port` and `requestid`); the server answers each with an empty
SYN_REPLY, moves bytes in DATA frames, ends its side with FLAG_FIN, echoes PINGs and ends the session
with GOAWAY. Header blocks are zlib streams that share one compression context per direction for the
whole session, primed with the SPDY/3 dictionary. client-go sends no flow control that must be obeyed
(spdystream ignores WINDOW_UPDATE), so SETTINGS and WINDOW_UPDATE are read and dropped.
"""
from __future__ import annotations

import asyncio
import struct
import zlib
from collections.abc import Awaitable, Callable

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
RST_PROTOCOL_ERROR, RST_INVALID_STREAM, RST_CANCEL = 1, 2, 5
MAX_DATA = 32 * 1024


def _prefixed(*words: str) -> bytes:
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in words)


# The SPDY/3 header dictionary (draft 3, section 2.6.10.1): length-prefixed names and values, then text.
DICTIONARY = _prefixed(
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
    "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
    "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
    "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
    "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
    "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
    "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
    "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public",
    "set-cookie", "keep-alive", "origin",
) + (
    b"100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    b"203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    b"403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    b"Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    b"chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    b"text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


class ProtocolError(Exception):
    pass


def encode_headers(headers: dict[str, str]) -> bytes:
    out = [struct.pack(">I", len(headers))]
    for name, value in headers.items():
        out += [struct.pack(">I", len(name)), name.lower().encode(), struct.pack(">I", len(value)), value.encode()]
    return b"".join(out)


def decode_headers(block: bytes) -> dict[str, str]:
    """name -> value (several values of one name stay joined by NUL, as SPDY carries them)."""
    try:
        (count,), pos, out = struct.unpack_from(">I", block), 4, {}
        for _ in range(count):
            (n,) = struct.unpack_from(">I", block, pos)
            name = block[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
            (v,) = struct.unpack_from(">I", block, pos)
            out[name] = block[pos + 4:pos + 4 + v].decode()
            pos += 4 + v
    except (struct.error, UnicodeDecodeError) as e:
        raise ProtocolError(f"malformed header block: {e}") from e
    return out


class Stream:
    """One client-opened stream: its headers, the bytes the client sent, and our side of it."""

    def __init__(self, session: Session, sid: int, headers: dict[str, str]) -> None:
        self.session, self.id, self.headers = session, sid, headers
        self._incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.remote_done = False
        self.local_done = False

    @property
    def type(self) -> str:
        return self.headers.get("streamtype", "")

    async def read(self) -> bytes:
        """The next bytes from the client; b"" once it ended its side (FIN, reset, or the session ended)."""
        if self.remote_done and self._incoming.empty():
            return b""
        return await self._incoming.get()

    def _feed(self, data: bytes, fin: bool) -> None:
        if self.remote_done:
            return
        if data:
            self._incoming.put_nowait(data)
        if fin:
            self.remote_done = True
            self._incoming.put_nowait(b"")

    async def write(self, data: bytes) -> None:
        for i in range(0, len(data), MAX_DATA):
            await self.session.send_data(self.id, data[i:i + MAX_DATA], fin=False)

    async def close(self) -> None:
        """End our side (an empty DATA frame with FLAG_FIN); the client reads EOF."""
        if not self.local_done:
            self.local_done = True
            await self.session.send_data(self.id, b"", fin=True)


class Session:
    """The server side of one SPDY/3.1 connection over any byte transport."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], write: Callable[[bytes], Awaitable[None]]) -> None:
        self._read, self._write = read, write
        self._buf = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(9, zdict=DICTIONARY)
        self._send_lock = asyncio.Lock()
        self.streams: dict[int, Stream] = {}
        self._new: asyncio.Queue[Stream | None] = asyncio.Queue()
        self.closed = False
        self._last_id = 0

    # reading -------------------------------------------------------------------------------------
    async def _exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = await self._read()
            if not chunk:
                raise EOFError
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    async def serve(self) -> None:
        """Read frames until the client goes away; new streams come out of accept()."""
        try:
            while True:
                head = await self._exactly(8)
                word, flags_len = struct.unpack(">II", head)
                flags, length = flags_len >> 24, flags_len & 0xFFFFFF
                payload = await self._exactly(length)
                if word & 0x80000000:
                    await self._control((word >> 16) & 0x7FFF, word & 0xFFFF, flags, payload)
                else:
                    stream = self.streams.get(word & 0x7FFFFFFF)
                    if stream is not None:
                        stream._feed(payload, bool(flags & FLAG_FIN))
        except (EOFError, ConnectionError, ProtocolError, zlib.error):
            pass
        finally:
            self.closed = True
            for stream in self.streams.values():
                stream._feed(b"", True)
            self._new.put_nowait(None)

    async def _control(self, version: int, ftype: int, flags: int, payload: bytes) -> None:
        if version != VERSION:
            raise ProtocolError(f"SPDY version {version}, not {VERSION}")
        if ftype == SYN_STREAM:
            sid = struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF
            headers = decode_headers(self._inflate.decompress(payload[10:]))
            if sid in self.streams or sid <= self._last_id:
                await self.send_rst(sid, RST_PROTOCOL_ERROR)
                return
            self._last_id = sid
            stream = self.streams[sid] = Stream(self, sid, headers)
            await self._send_control(SYN_REPLY, 0, struct.pack(">I", sid) + self._compress({}))
            if flags & FLAG_FIN:
                stream._feed(b"", True)
            self._new.put_nowait(stream)
        elif ftype == HEADERS:
            self._inflate.decompress(payload[4:])  # keeps the shared zlib context in step
        elif ftype == RST_STREAM:
            reset = self.streams.get(struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF)
            if reset is not None:
                reset.local_done = True
                reset._feed(b"", True)
        elif ftype == PING:
            await self._send_control(PING, 0, payload[:4])
        elif ftype == GOAWAY:
            raise EOFError
        # SETTINGS, WINDOW_UPDATE, SYN_REPLY (never sent to a server): nothing to do

    async def accept(self) -> Stream | None:
        """The next stream the client opened, or None once the session ended."""
        stream = await self._new.get()
        if stream is None:
            self._new.put_nowait(None)  # every later accept() sees the end too
        return stream

    # writing -------------------------------------------------------------------------------------
    def _compress(self, headers: dict[str, str]) -> bytes:
        return self._deflate.compress(encode_headers(headers)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    async def _send(self, frame: bytes) -> None:
        async with self._send_lock:
            if not self.closed:
                try:
                    await self._write(frame)
                except ConnectionError:
                    self.closed = True

    async def _send_control(self, ftype: int, flags: int, payload: bytes) -> None:
        await self._send(struct.pack(">HHI", 0x8000 | VERSION, ftype, (flags << 24) | len(payload)) + payload)

    async def send_data(self, sid: int, data: bytes, fin: bool) -> None:
        await self._send(struct.pack(">II", sid & 0x7FFFFFFF, ((FLAG_FIN if fin else 0) << 24) | len(data)) + data)

    async def send_rst(self, sid: int, status: int) -> None:
        await self._send_control(RST_STREAM, 0, struct.pack(">II", sid & 0x7FFFFFFF, status))

    async def goaway(self) -> None:
        await self._send_control(GOAWAY, 0, struct.pack(">II", self._last_id, 0))
