"""Conformance: `kubectl attach` to a pod's running process, with the kubelet's (containerd's) semantics.

- a container with `stdin: true` gets the client's stdin; with `stdinOnce` its stdin closes when the first
  attached client's stdin ends, and the session lasts until the process exits; without it, the client's
  stdin ending detaches that client and the container keeps its stdin for the next one;
- without `stdin: true` the client's stdin goes nowhere and the session lasts until the process exits;
- output is what the process writes while attached (kubectl's exit code 0: the kubelet ends with Success);
- over WebSocket (kubectl's default) and SPDY (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false).
Waits read the process's own output (its log, or the attached stream).
"""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.twin import Twin
from tests.twin.test_conformance_streams import SPDY, _kubectl, needs_host


def _pod(name: str, script: str, **container) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"restartPolicy": "Never", "containers": [
                           dict({"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script]}, **container)]}})


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("attach") / "twin", nodes=1, time_scale=0.01) as t:
        t.twin_cmd("settings", "--set", '{"exec_shell_images": true}')
        yield t


def _started(twin, name: str, script: str, **container) -> str:
    """Create the pod and wait for its process's first line ("ready") in its log."""
    twin.kubectl("apply", "-f", "-", input=_pod(name, script, **container))
    twin.kubectl("wait", f"pod/{name}", "--for=condition=Ready", "--timeout=60s")
    _log_until(twin, name, "ready\r" if container.get("tty") else "ready")  # a terminal ends lines with \r\n
    return name


@needs_host
@pytest.mark.parametrize("transport", ["websocket", "spdy"])
def test_attach_with_stdin_once_feeds_the_process_until_it_exits(twin, transport):
    name = _started(twin, f"once-{transport}", 'echo ready; while read l; do echo "got $l"; done; echo bye',
                    stdin=True, stdinOnce=True)
    out = _kubectl(twin, "attach", "-i", name, "-c", "main", input="hello\nworld\n",
                   env=SPDY if transport == "spdy" else None)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "got hello\ngot world\nbye\n"  # "ready" came before the attach: not replayed
    twin.kubectl("wait", f"pod/{name}", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s")


def _log_until(twin, name: str, line: str) -> list[str]:
    """The pod's log lines up to `line` (followed: waits for the process to write it)."""
    # bytes: text mode would turn a terminal's \r\n into \n
    logs = subprocess.Popen(["kubectl", "logs", "-f", name], env=twin.env(), stdout=subprocess.PIPE)
    seen: list[str] = []
    try:
        assert logs.stdout is not None
        for got in logs.stdout:
            seen.append(got.decode().rstrip("\n"))
            if seen[-1] == line:
                return seen
    finally:
        logs.kill()
        logs.wait()
    raise AssertionError(f"{line!r} never logged: {seen}")


@needs_host
def test_without_stdin_once_each_client_detaches_and_stdin_stays_open(twin):
    # the client's stdin ending detaches it at once (containerd drops its output then), so the process's
    # answers are read from its log; the shell never sees EOF, so no "bye" and it keeps running
    name = _started(twin, "many", 'echo ready; while read l; do echo "got $l"; done; echo bye', stdin=True)
    first = _kubectl(twin, "attach", "-i", name, input="one\n")
    assert first.returncode == 0, first.stderr
    assert _log_until(twin, name, "got one") == ["ready", "got one"]
    second = _kubectl(twin, "attach", "-i", name, input="two\n")
    assert second.returncode == 0, second.stderr
    assert _log_until(twin, name, "got two") == ["ready", "got one", "got two"]
    assert twin.kubectl_json("get", "pod", name)["status"]["phase"] == "Running"
    twin.kubectl("delete", "pod", name, "--wait=false")


@needs_host
def test_attach_to_a_container_without_stdin_ignores_the_clients_input(twin):
    script = ('echo ready; while [ ! -e /tmp/go ]; do echo waiting; sleep 0.1; done; '
              'if read l; then echo "got $l"; else echo "no stdin"; fi')
    name = _started(twin, "nostdin", script)
    attach = subprocess.Popen(["kubectl", "attach", "-i", name], env=twin.env(), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert attach.stdin is not None and attach.stdout is not None
        attach.stdin.write("hello\n")
        attach.stdin.close()
        assert attach.stdout.readline() == "waiting\n"  # attached: output streams
        twin.kubectl("exec", name, "--", "touch", "/tmp/go")
        rest = attach.stdout.read()
        assert attach.wait(timeout=60) == 0
    finally:
        if attach.poll() is None:
            attach.kill()
            attach.wait()
    assert rest.rstrip("\n").rsplit("\n", 1)[-1] == "no stdin"
    assert "got hello" not in rest


@needs_host
def test_attach_is_listed_and_refused_for_a_missing_container(twin):
    pods = next(g for g in json.loads(twin.kubectl("get", "--raw", "/api/v1").stdout)["resources"]
                if g["name"] == "pods/attach")
    assert pods["kind"] == "PodAttachOptions" and sorted(pods["verbs"]) == ["create", "get"]
    name = _started(twin, "idle", "echo ready; exec sleep 3600")
    out = _kubectl(twin, "attach", name, "-c", "nope")
    assert out.returncode != 0
    assert 'container nope not found in pod idle' in out.stderr or "container nope is not valid" in out.stderr
    twin.kubectl("delete", "pod", name, "--wait=false")


RBAC = """
apiVersion: v1
kind: ServiceAccount
metadata: {name: watcher, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: attach-get-only, namespace: default}
rules: [{apiGroups: [""], resources: [pods, pods/attach], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: watcher, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: attach-get-only}
subjects: [{kind: ServiceAccount, name: watcher, namespace: default}]
"""


@needs_host
def test_attach_needs_create_on_pods_attach(twin, tmp_path):
    # the WebSocket upgrade is a GET, yet kube-apiserver also asks for create, as for exec
    name = _started(twin, "guarded", "echo ready; exec sleep 3600")
    twin.kubectl("apply", "-f", "-", input=RBAC)
    token = twin.kubectl("create", "token", "watcher").stdout.strip()
    out = subprocess.run(["kubectl", "attach", name], env=twin.env(twin.kubeconfig_for(token, tmp_path / "watcher")),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert ('User "system:serviceaccount:default:watcher" cannot create resource "pods/attach" in API group "" '
            'in the namespace "default"') in out.stderr
    twin.kubectl("delete", "pod", name, "--wait=false")


@needs_host
def test_the_python_clients_attach(twin):
    from kubernetes import client
    from kubernetes.stream import stream

    name = _started(twin, "pyattach", 'echo ready; while read l; do echo "got $l"; done', stdin=True)
    api = client.CoreV1Api(twin.api_client())
    # the client writes a str as a WebSocket text frame, which the real server reads like a binary one
    ws = stream(api.connect_get_namespaced_pod_attach, name, "default", container="main", stdin=True, stdout=True,
                stderr=True, tty=False, _preload_content=False)
    try:
        ws.write_stdin("hello\n")
        out = ""
        for _ in range(60):  # a bound for a server that never answers; each update returns with the next frame
            if "got hello\n" in out or not ws.is_open():
                break
            ws.update(timeout=5)
            out += ws.read_stdout()
    finally:
        ws.close()
    assert out == "got hello\n"
    twin.kubectl("delete", "pod", name, "--wait=false")


@needs_host
def test_a_tty_container_runs_on_a_terminal_that_attach_reaches(twin):
    # kubectl forces a tty for a tty: true container; the terminal echoes the input and ends lines with \r\n,
    # and the client's stdin ending detaches it without closing the terminal's input
    name = _started(twin, "term", 'echo ready; [ -t 0 ] && echo on-a-tty; while read l; do echo "got $l"; done; echo bye',
                    stdin=True, stdinOnce=True, tty=True)
    out = _kubectl(twin, "attach", "-i", name, input="hello\n")
    assert out.returncode == 0, out.stderr
    assert _log_until(twin, name, "got hello\r") == ["ready\r", "on-a-tty\r", "hello\r", "got hello\r"]
    assert twin.kubectl_json("get", "pod", name)["status"]["phase"] == "Running"
    twin.kubectl("delete", "pod", name, "--wait=false")
