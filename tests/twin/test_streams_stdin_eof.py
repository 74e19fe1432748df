"""The end of an exec's stdin reaches the command as EOF and the command runs on to its own end, as with the real
kubelet (containerd does not kill an exec'd process when its stream ends): whether the client half-closes the
SPDY stdin stream, sends v5's close of channel 0, or just closes a v4/v5 WebSocket after its last write (what
kubernetes.core's k8s_cp does). `kubectl cp` of a directory, both ways and on both transports, k8s_cp into the
pod and k8s_exec deliver every file with its contents."""
from __future__ import annotations

import hashlib
import os
import shutil
import ssl
import subprocess
import textwrap
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.support.twin import Twin
from twin.host import exec_runner

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root, nsenter, unshare, ip, mount and chroot")
SPDY = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}
# a command with work to do after its stdin ends: killed at the end of the stream, it leaves no .sum behind
# the sum appears whole (written aside, then renamed): the shell's `> file` creates the file before md5sum writes it,
# and a reader waiting for the file to exist once read it empty
AFTER_EOF = "cat > /tmp/{name}; sleep 0.3; md5sum /tmp/{name} > /tmp/{name}.part; mv /tmp/{name}.part /tmp/{name}.sum"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("stdin-eof") / "twin", nodes=1, time_scale=0.01) as t:
        t.kubectl("run", "box", "--image=busybox:1.36", "--command", "--", "sleep", "3600")
        t.kubectl("wait", "pod/box", "--for=condition=Ready", "--timeout=60s")
        yield t


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A directory of several files, one large enough to need many stdin frames, and a subdirectory."""
    root = tmp_path_factory.mktemp("tree") / "src"
    (root / "sub" / "deeper").mkdir(parents=True)
    for i in range(5):
        (root / f"f{i}.bin").write_bytes(os.urandom(40_000 * (i + 1)))
        (root / "sub" / f"s{i}.txt").write_text(f"small file {i}\n")
    (root / "sub" / "deeper" / "big.bin").write_bytes(os.urandom(6_000_000))
    (root / "empty.txt").write_text("")
    return root


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _pod_digests(twin, path: str) -> dict[str, str]:
    out = twin.kubectl("exec", "box", "--", "sh", "-c", f"cd {path} && find . -type f | sort | xargs md5sum").stdout
    return {name[2:]: digest for digest, name in (line.split(None, 1) for line in out.splitlines())}


def _wait_for_file(twin, path: str) -> str:
    """The file's contents once it exists (the wait runs in the pod, bounded by `timeout`)."""
    return twin.kubectl("exec", "box", "--", "timeout", "30", "sh", "-c",
                        f"until [ -f {path} ]; do sleep 0.05; done; cat {path}").stdout


@pytest.mark.parametrize("transport", ["websocket", "spdy"])
def test_kubectl_cp_of_a_directory_both_ways(twin, tree, tmp_path, transport):
    env = {**twin.env(), **(SPDY if transport == "spdy" else {})}
    dest = f"/tmp/cp-{transport}"
    into = subprocess.run(["kubectl", "cp", str(tree), f"box:{dest}"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert into.returncode == 0, into.stderr
    want = _digests(tree)
    assert len(want) == 12
    assert _pod_digests(twin, dest) == want

    back = tmp_path / "back"
    out = subprocess.run(["kubectl", "cp", f"box:{dest}", str(back)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert _digests(back) == want


def test_python_client_v5_close_of_stdin_passes_eof_and_keeps_the_output(twin):
    from kubernetes import client
    from kubernetes.stream import stream

    core = client.CoreV1Api(twin.api_client())
    ws = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=["wc", "-c"], stdin=True, stdout=True,
                stderr=True, tty=False, _preload_content=False)
    assert ws.subprotocol == "v5.channel.k8s.io"
    payload = os.urandom(200_000)
    for i in range(0, len(payload), 64 * 1024):
        ws.write_stdin(payload[i:i + 64 * 1024])
    ws.close_channel(0)  # 255 0: stdin ends, the connection stays for the output
    out = ""
    while ws.is_open():
        ws.update(timeout=5)
        out += ws.read_stdout(timeout=0) if ws.peek_stdout() else ""
    assert out.strip() == str(len(payload)) and ws.returncode == 0


@pytest.mark.parametrize("subprotocol", ["v5.channel.k8s.io", "v4.channel.k8s.io"])
def test_closing_the_websocket_after_the_last_write_lets_the_command_finish(twin, subprotocol):
    import websocket

    name = f"ws-{subprotocol[:2]}"
    query = urlencode([("command", "sh"), ("command", "-c"), ("command", AFTER_EOF.format(name=name)),
                       ("stdin", "true"), ("stdout", "true"), ("stderr", "true")])
    url = twin.server.replace("https://", "wss://") + f"/api/v1/namespaces/default/pods/box/exec?{query}"
    sock = websocket.create_connection(url, header=[f"Authorization: Bearer {twin.token}"],
                                       subprotocols=[subprotocol], sslopt={"cert_reqs": ssl.CERT_NONE})
    payload = os.urandom(300_000)
    for i in range(0, len(payload), 32 * 1024):
        sock.send_binary(b"\x00" + payload[i:i + 32 * 1024])
    sock.close()  # no close of channel 0 first: the connection's end is the stdin's end
    assert _wait_for_file(twin, f"/tmp/{name}.sum").split()[0] == hashlib.md5(payload).hexdigest()


def test_spdy_stdin_end_then_hangup_lets_the_command_finish(twin):
    payload = os.urandom(500_000)
    proc = subprocess.run(["kubectl", "exec", "-i", "box", "--", "sh", "-c", AFTER_EOF.format(name="spdy")],
                          input=payload, env={**twin.env(), **SPDY}, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert _wait_for_file(twin, "/tmp/spdy.sum").split()[0] == hashlib.md5(payload).hexdigest()


def test_kubernetes_core_k8s_cp_and_k8s_exec(twin, tree, tmp_path):
    # k8s_cp state=from_pod is left out: kubernetes.core 6 passes its `find` command as a string, which the
    # pydantic-typed kubernetes client 37 refuses before any request (nothing the server can change)
    book = tmp_path / "cp.yml"
    book.write_text(textwrap.dedent(f"""\
        - hosts: localhost
          gather_facts: false
          module_defaults:
            group/kubernetes.core.k8s:
              kubeconfig: "{{{{ lookup('env', 'K8S_AUTH_KUBECONFIG') }}}}"
          tasks:
            - name: directory into the pod
              kubernetes.core.k8s_cp:
                namespace: default
                pod: box
                local_path: {tree}
                remote_path: /tmp/k8s-cp
                state: to_pod
            - name: sums in the pod
              kubernetes.core.k8s_exec:
                namespace: default
                pod: box
                command: sh -c 'cd /tmp/k8s-cp && find . -type f | sort | xargs md5sum'
            - name: a failing command
              kubernetes.core.k8s_exec:
                namespace: default
                pod: box
                command: sh -c 'echo out; echo err >&2; exit 3'
              ignore_errors: true
        """))
    run = twin.playbook(book)
    assert run.rc == 0, run.stdout + run.stderr
    want = _digests(tree)
    sums = run.task("sums in the pod")["result"]
    assert sums["rc"] == 0 and sums["return_code"] == 0
    got = {name[2:]: digest for digest, name in (line.split(None, 1) for line in sums["stdout_lines"])}
    assert got == want
    failing = run.task("a failing command")["result"]
    assert (failing["rc"], failing["stdout"].strip(), failing["stderr"].strip()) == (3, "out", "err")
