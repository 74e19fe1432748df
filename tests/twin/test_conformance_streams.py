"""exec over SPDY and port-forward (SPDY, SPDY tunnelled in a WebSocket, and the Python client's channel protocol),
driven by kubectl 1.32 and the kubernetes Python client exactly as they meet a real API server.

kubectl picks the transport: KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false makes exec upgrade to SPDY/3.1 (what it
falls back to when a server refuses WebSockets), KUBECTL_PORT_FORWARD_WEBSOCKETS=false does the same for
port-forward, whose default is SPDY inside a WebSocket. Waits read kubectl's own "Forwarding from" line.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess

import pytest
from kubernetes import client
from kubernetes.stream import portforward

from tests.support.twin import Twin
from twin.host import exec_runner
from twin.streams import spdy

needs_host = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root, nsenter, unshare, ip, mount and chroot")
SPDY = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false", "KUBECTL_PORT_FORWARD_WEBSOCKETS": "false"}
SPDY_VERSIONS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")  # the kubelet's
WEB = """
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [python3, -m, http.server, "8080", --bind, "127.0.0.1", --directory, /srv]
    volumeMounts: [{name: srv, mountPath: /srv}]
  volumes: [{name: srv, emptyDir: {}}]
"""


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("streams") / "twin", nodes=1, time_scale=0.01) as t:
        t.twin_cmd("settings", "--set", '{"exec_shell_images": true}')  # the web pod's server runs for real
        yield t


@pytest.fixture(scope="module")
def web(twin):
    twin.kubectl("apply", "-f", "-", input=WEB)
    twin.kubectl("wait", "pod/web", "--for=condition=Ready", "--timeout=60s")
    twin.kubectl("exec", "web", "--", "sh", "-c", "echo served > /srv/index.txt")
    yield "web"
    twin.kubectl("delete", "pod", "web", "--wait=true")


def _kubectl(twin, *args, env=None, **kw):
    return subprocess.run(["kubectl", *args], env={**twin.env(), **(env or {})}, capture_output=True, text=True,
                          timeout=60, **kw)


def test_header_blocks_round_trip_and_malformed_ones_are_refused():
    # the dictionary's bytes are proven by kubectl itself below (zlib checks its id on every session);
    # here: its size in the draft, and the block format
    assert len(spdy.DICTIONARY) == 1423
    block = spdy.encode_headers({"streamtype": "stdout", "port": "80"})
    assert spdy.decode_headers(block) == {"streamtype": "stdout", "port": "80"}
    with pytest.raises(spdy.ProtocolError):
        spdy.decode_headers(block[:-3])


@needs_host
def test_exec_over_spdy_streams_output_stdin_and_the_exit_code(twin, web):
    out = _kubectl(twin, "exec", web, "--", "sh", "-c", "echo out; echo err >&2; exit 7", env=SPDY)
    assert out.returncode == 7
    assert out.stdout == "out\n"
    assert "err\n" in out.stderr and "command terminated with exit code 7" in out.stderr
    data = "".join(f"line {i}\n" for i in range(5000))  # many DATA frames
    out = _kubectl(twin, "exec", "-i", web, "--", "sh", "-c", "tr a-z A-Z; echo end", input=data, env=SPDY)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data.upper() + "end\n"


@needs_host
def test_cp_over_spdy(twin, web, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("payload\n" * 1000)
    assert _kubectl(twin, "cp", str(src), f"{web}:/srv/in.txt", env=SPDY).returncode == 0
    back = tmp_path / "back.txt"
    assert _kubectl(twin, "cp", f"{web}:/srv/in.txt", str(back), env=SPDY).returncode == 0
    assert back.read_text() == src.read_text()


def test_exec_offering_no_common_protocol_is_refused_with_the_servers_list(twin):
    import ssl
    import urllib.request

    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    # args only: busybox has no ENTRYPOINT, so they replace its CMD and sleep runs (a real process here)
    twin.kubectl("run", "idle", "--image=busybox:1.36", "--", "sleep", "3600")
    twin.kubectl("wait", "pod/idle", "--for=condition=Ready", "--timeout=60s")
    req = urllib.request.Request(f"{twin.server}/api/v1/namespaces/default/pods/idle/exec?command=true&stdout=true",
                                 method="POST", headers={"Authorization": f"Bearer {twin.token}", "Connection": "Upgrade",
                                                         "Upgrade": "SPDY/3.1", "X-Stream-Protocol-Version": "v1.example"})
    with pytest.raises(urllib.request.HTTPError) as err:
        urllib.request.urlopen(req, context=ctx, timeout=30)
    assert err.value.code == 403, err.value.read()
    assert err.value.headers.get_all("X-Accepted-Stream-Protocol-Versions") == list(SPDY_VERSIONS)
    assert "unable to negotiate protocol: client supports [v1.example]" in err.value.read().decode()
    twin.kubectl("delete", "pod", "idle", "--wait=false")


def _forward(twin, env, *ports):
    """kubectl port-forward on free local ports; returns (process, {remote port: local port}) once it listens."""
    proc = subprocess.Popen(["kubectl", "port-forward", "pod/web", *[f":{p}" for p in ports]], env={**twin.env(), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    local = {}
    assert proc.stdout is not None
    while len(local) < len(ports):
        line = proc.stdout.readline()  # kubectl prints one "Forwarding from" line per address once it listens
        assert line, proc.stderr.read() if proc.stderr else "kubectl port-forward ended"
        m = re.match(r"Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)", line)
        if m:
            local[int(m.group(2))] = int(m.group(1))
    return proc, local


def _http_get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


@needs_host
@pytest.mark.parametrize("transport", ["websocket", "spdy"])
def test_port_forward_reaches_the_pods_server(twin, web, transport):
    proc, local = _forward(twin, SPDY if transport == "spdy" else {}, 8080)
    try:
        for _ in range(3):  # one stream pair per connection, several on one session
            reply = _http_get(local[8080], "/index.txt")
            assert reply.startswith(b"HTTP/1.0 200") and reply.endswith(b"served\n"), reply[:200]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@needs_host
def test_port_forward_to_a_closed_port_reports_the_runtimes_error(twin, web):
    proc, local = _forward(twin, {}, 9999)
    try:
        assert _http_get(local[9999], "/") == b""  # the connection is closed at once
        err = proc.communicate(timeout=60)[1]  # kubectl 1.32 gives up on the pod after a forwarding error
    finally:
        proc.kill()
    assert "error forwarding port 9999 to pod" in err
    assert "dial tcp4 127.0.0.1:9999: connect: connection refused" in err
    assert "lost connection to pod" in err


@needs_host
def test_the_python_clients_port_forward(twin, web):
    api = client.CoreV1Api(twin.api_client())
    pf = portforward(api.connect_get_namespaced_pod_portforward, "web", "default", ports="8080,9999")
    try:
        sock = pf.socket(8080)
        sock.setblocking(True)
        sock.sendall(b"GET /index.txt HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.0 200") and data.endswith(b"served\n")
        error = pf.error(9999)
    finally:
        pf.close()
    assert error is not None and "connect: connection refused" in error


def test_port_forward_needs_a_running_pod(twin):
    out = _kubectl(twin, "port-forward", "pod/nowhere", ":80")
    assert out.returncode != 0 and 'pods "nowhere" not found' in out.stderr


@needs_host
def test_args_alone_replace_a_shell_images_cmd(twin):
    # busybox has no ENTRYPOINT and CMD ["sh"]: `kubectl run -- echo hello` runs echo, not `sh echo hello`
    twin.kubectl("run", "echoer", "--image=busybox:1.36", "--restart=Never", "--", "echo", "hello")
    twin.kubectl("wait", "pod/echoer", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s")
    assert twin.kubectl("logs", "echoer").stdout == "hello\n"
    twin.kubectl("delete", "pod", "echoer", "--wait=false")


def _spdy_exec(twin, pod: str, argv: list[str], versions: list[str]) -> tuple[str, dict[str, bytes]]:
    """exec over SPDY/3.1 as an old client-go does it: offer `versions`, open the error, stdout and stderr
    streams, read until the server ends the session. Returns the version the server chose and the bytes
    each stream carried."""
    import ssl
    import struct
    import zlib
    from urllib.parse import urlencode, urlparse

    url = urlparse(twin.server)
    query = urlencode([("command", a) for a in argv] + [("stdout", "true"), ("stderr", "true")])
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    sock = ctx.wrap_socket(socket.create_connection((url.hostname, url.port), timeout=60), server_hostname=url.hostname)
    head = (f"POST /api/v1/namespaces/default/pods/{pod}/exec?{query} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {twin.token}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
            + "".join(f"X-Stream-Protocol-Version: {v}\r\n" for v in versions) + "Content-Length: 0\r\n\r\n")
    sock.sendall(head.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        assert chunk, buf
        buf += chunk
    reply, buf = buf.split(b"\r\n\r\n", 1)
    lines = reply.decode().split("\r\n")
    assert lines[0].startswith("HTTP/1.1 101"), reply
    chosen = next(x.split(":", 1)[1].strip() for x in lines if x.lower().startswith("x-stream-protocol-version:"))
    deflate = zlib.compressobj(9, zdict=spdy.DICTIONARY)
    ids = {1: "error", 3: "stdout", 5: "stderr"}
    for sid, kind in ids.items():
        block = deflate.compress(spdy.encode_headers({"streamtype": kind})) + deflate.flush(zlib.Z_SYNC_FLUSH)
        payload = struct.pack(">IIH", sid, 0, 0) + block
        sock.sendall(struct.pack(">HHI", 0x8003, spdy.SYN_STREAM, len(payload)) + payload)
    got = dict.fromkeys(ids.values(), b"")
    while True:
        while len(buf) < 8:
            chunk = sock.recv(65536)
            if not chunk:
                sock.close()
                return chosen, got
            buf += chunk
        word, flags_len = struct.unpack(">II", buf[:8])
        length = flags_len & 0xFFFFFF
        while len(buf) < 8 + length:
            buf += sock.recv(65536)
        payload, buf = buf[8:8 + length], buf[8 + length:]
        if word & 0x80000000:
            if (word & 0xFFFF) == spdy.GOAWAY:
                sock.close()
                return chosen, got
        else:
            got[ids[word & 0x7FFFFFFF]] += payload


@needs_host
@pytest.mark.parametrize("version", SPDY_VERSIONS[1:])
def test_older_spdy_protocols_report_failure_as_text_and_success_as_nothing(twin, web, version):
    # v1-v3 have no structured status (the kubelet's v1WriteStatusFunc): client-go then reports
    # "error executing remote command: <message>" and no exit code
    chosen, got = _spdy_exec(twin, web, ["sh", "-c", "echo out; echo err >&2; exit 7"], [version])
    assert chosen == version
    assert got["stdout"] == b"out\n" and got["stderr"] == b"err\n"
    assert got["error"].decode() == ("command terminated with non-zero exit code: error executing command "
                                     "[sh -c echo out; echo err >&2; exit 7], exit code 7")
    assert _spdy_exec(twin, web, ["true"], [version])[1]["error"] == b""


@needs_host
def test_spdy_negotiation_takes_the_clients_first_supported_version(twin, web):
    chosen, got = _spdy_exec(twin, web, ["sh", "-c", "exit 3"], ["v5.example", *SPDY_VERSIONS])
    assert chosen == "v4.channel.k8s.io"
    status = json.loads(got["error"])
    assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
    assert _spdy_exec(twin, web, ["true"], ["v2.channel.k8s.io", "v4.channel.k8s.io"])[0] == "v2.channel.k8s.io"
