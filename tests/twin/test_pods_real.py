"""Pods on the twin as a user meets them: images that cannot be pulled, what really runs, exec, cp, logs.

Images come from the catalogue twin/host/images.yaml; everything else goes through kubectl. Waits are
`kubectl wait` on conditions and jsonpaths, never sleeps.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.twin import REPO, Twin
from twin.host import exec_runner, images

needs_host = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root, nsenter, unshare, ip, mount and chroot")


def test_catalogue_says_which_images_run_and_refuses_the_rest():
    assert images.lookup("mysql:5.6").runs == images.lookup("docker.io/library/mariadb:10.11").runs == "mysql"
    assert images.lookup("mysql") is not None  # latest
    assert images.lookup("mysql:no-such-tag") is None
    assert images.lookup("registry.example.invalid/nope/app:9.9") is None
    assert images.lookup("registry.cn-hangzhou.aliyuncs.com/eric-dev/sysbench:fio").runs == "sysbench"
    assert images.lookup("xridge/fio").runs == "fio"
    assert images.lookup("busybox:1.36").runs == "shell"
    assert images.lookup("registry.k8s.io/pause:3.10").runs == "simulated"
    assert "not found" in images.pull_error("mysql:no-such-tag")
    assert "no such host" in images.pull_error("registry.example.invalid/nope/app:9.9")


# tags the repositories publish (Docker Hub's tag lists, registry.k8s.io's releases) and tags they do not
PUBLISHED = ["nginx", "nginx:1.27", "nginx:1.27.3", "nginx:1.27-alpine", "nginx:1.27.3-alpine3.20", "nginx:stable",
             "nginx:mainline-alpine", "nginx:alpine", "nginx:perl", "nginx:stable-alpine-perl", "nginx:1.14.2",
             "mysql:8.0.40", "mysql:8.4-oracle", "mysql:lts", "mariadb:11.4", "busybox:1.36.1-musl", "busybox:stable",
             "alpine:3.20", "debian:bookworm-slim", "ubuntu:24.04", "redis:7.4-alpine", "httpd:2.4",
             "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0", "nginx@sha256:" + "0" * 64]
UNPUBLISHED = ["nginx:pull", "nginx:1.27-pull", "nginx:latest-alpine", "mysql:7", "busybox:pull", "alpine:pull",
               "registry.k8s.io/pause:pull", "severalnines/sysbench:v9", "registry.k8s.io/sig-storage/csi-provisioner:pull"]


@pytest.mark.parametrize("image", PUBLISHED)
def test_catalogue_has_the_tags_the_repository_publishes(image):
    assert images.lookup(image) is not None


@pytest.mark.parametrize("image", UNPUBLISHED)
def test_catalogue_refuses_a_tag_the_repository_does_not_publish(image):
    assert images.lookup(image) is None
    ref = images.parse(image)
    assert images.pull_error(image) == (f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref.full}": '
                                        f'failed to resolve reference "{ref.full}": {ref.full}: not found')


# images the project means to fail (tests of the pull back-off), placeholders of objects that are only validated
# ("b", "i"), and the execution environment's base image (no pod runs it); everything else it writes must be pullable
MEANT_TO_FAIL = {"registry.example.invalid/nope/app:9.9", "mysql:no-such-tag", "nginx:pull", "b", "i",
                 "ghcr.io/ansible-community/community-ee-base:latest"}
# an image written on its line (`image: x`, `- image: x`): [ \t], never \s, which would run on into the next line
_WRITTEN = (re.compile(r"^[ \t]*(?:-[ \t]*)?image:[ \t]*[\"']?([^\s\"'{}]+)[\"']?[ \t]*$", re.MULTILINE),
            re.compile(r"[\"']image[\"']:\s*[\"']([^\"'{}]+)[\"']"), re.compile(r"--image[= ]([^\s\"'{}`]+)"),
            re.compile(r"^[A-Z_]*(?:IMAGE|BUSYBOX)\s*=\s*[\"']([^\"'{}]+)[\"']", re.MULTILINE))


def test_every_image_the_project_writes_is_in_the_catalogue():
    """roles' defaults, the benchmarks' manifests, docs, the twin's own workloads and the tests' pods."""
    found: dict[str, str] = {}
    for top in ("roles", "plugins", "benchmarks", "playbooks", "docs", "extensions", "twin/controllers", "twin/cloud",
                "tests/twin", "tests/functional", "tests/integration"):
        for f in sorted((REPO / top).rglob("*")):
            if f.suffix not in (".py", ".yml", ".yaml", ".md", ".j2", ".json", ".txt") or not f.is_file():
                continue
            text = f.read_text(errors="replace")
            for pattern in _WRITTEN:
                for image in pattern.findall(text):
                    found.setdefault(image, str(Path(f).relative_to(REPO)))
    assert {"mysql:5.6", "severalnines/sysbench", "registry.k8s.io/pause:3.10", "busybox:1.36"} <= set(found)
    missing = {i: where for i, where in found.items() if i not in MEANT_TO_FAIL and images.lookup(i) is None}
    assert missing == {}


@pytest.mark.parametrize("image", ["registry.example.invalid/nope/app:9.9", "mysql:no-such-tag"])
def test_an_image_that_cannot_be_pulled_backs_off(twin, image):
    name = "nopull-" + str(abs(hash(image)) % 10000)
    twin.kubectl("run", name, f"--image={image}", "--restart=Never")
    twin.kubectl("wait", f"pod/{name}", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ImagePullBackOff",
                 "--timeout=60s")
    pod = twin.kubectl_json("get", "pod", name)
    assert pod["status"]["phase"] == "Pending"
    assert image in pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"]
    events = twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name}")["items"]
    messages = {e["message"] for e in events}
    assert any(m.startswith(f'Failed to pull image "{image}": ') for m in messages)
    assert f'Back-off pulling image "{image}"' in messages and "Error: ImagePullBackOff" in messages
    twin.kubectl("delete", "pod", name, "--wait=true")


def waiting_states_until(twin, name: str, resource_version: str, reason: str) -> list[dict]:
    """The waiting states of the pod's first container, as a watch from `resource_version` sees them, up to and
    including the first with `reason`. The kubelet keeps retrying the pull, so a later read may already show the
    next ErrImagePull: only the watch sees each state the kubelet wrote."""
    from kubernetes import watch

    core = client.CoreV1Api(twin.api_client())
    seen: list[dict] = []
    for ev in watch.Watch().stream(core.list_namespaced_pod, "default", field_selector=f"metadata.name={name}",
                                   resource_version=resource_version, timeout_seconds=60):
        statuses = ev["object"].status.container_statuses or []
        waiting = statuses[0].state.waiting if statuses and statuses[0].state else None
        state = None if waiting is None else {
            "reason": waiting.reason, "message": waiting.message, "phase": ev["object"].status.phase}
        if state and (not seen or seen[-1] != state):
            seen.append(state)
        if waiting is not None and waiting.reason == reason:
            return seen
    raise AssertionError(f"pod {name} never waited with {reason}; it waited with {seen}")


def test_a_tag_the_registry_does_not_have_ends_in_image_pull_backoff_and_a_real_one_runs(twin):
    """`kubectl run p1 --image=nginx:pull`: nginx exists, the tag does not, so containerd's resolve answers
    NotFound; the kubelet reports ErrImagePull, then backs off (ImagePullBackOff). nginx:1.27 runs."""
    # `kubectl get -o json` prints a List without the collection's resourceVersion: the client's list has it
    since = client.CoreV1Api(twin.api_client()).list_namespaced_pod("default").metadata.resource_version
    twin.kubectl("run", "p1", "--image=nginx:pull")
    twin.kubectl("run", "p2", "--image=nginx:1.27")
    full = "docker.io/library/nginx:pull"
    err = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{full}": failed to resolve reference '
           f'"{full}": {full}: not found')
    assert waiting_states_until(twin, "p1", since, "ImagePullBackOff") == [
        {"reason": "ContainerCreating", "message": None, "phase": "Pending"},
        {"reason": "ErrImagePull", "message": err, "phase": "Pending"},
        {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "nginx:pull": ErrImagePull: {err}',
         "phase": "Pending"}]
    events = twin.kubectl_json("get", "events", "--field-selector", "involvedObject.name=p1")["items"]
    said = [(e["type"], e["reason"], e["message"]) for e in events]
    for event in (("Normal", "Pulling", 'Pulling image "nginx:pull"'),
                  ("Warning", "Failed", f'Failed to pull image "nginx:pull": {err}'),
                  ("Warning", "Failed", "Error: ErrImagePull"),
                  ("Normal", "BackOff", 'Back-off pulling image "nginx:pull"'),
                  ("Warning", "Failed", "Error: ImagePullBackOff")):
        assert event in said
    twin.kubectl("wait", "pod/p2", "--for=condition=Ready", "--timeout=60s")
    assert twin.kubectl_json("get", "pod", "p2")["status"]["containerStatuses"][0]["imageID"].startswith(
        "docker.io/library/nginx@sha256:")
    twin.kubectl("delete", "pod", "p1", "p2", "--wait=true")


@needs_host
def test_the_pod_says_what_really_runs(twin):
    twin.kubectl("run", "db", "--image=mysql:5.6", "--env=MYSQL_ROOT_PASSWORD=pw")
    twin.kubectl("wait", "pod/db", "--for=condition=Ready", "--timeout=120s")
    pod = twin.kubectl_json("get", "pod", "db")
    said = pod["metadata"]["annotations"][images.ANNOTATION_PREFIX + "db"]
    assert said.startswith("mysql:5.6: ") and "MariaDB" in said
    assert pod["status"]["containerStatuses"][0]["imageID"].startswith("docker.io/library/mysql@sha256:")
    twin.kubectl("delete", "pod", "db", "--wait=true")


def test_kubectl_run_sleep_stays_running_until_deleted(twin):
    twin.kubectl("run", "sleeper", "--image=busybox:1.36", "--restart=Never", "--", "sleep", "3600")
    twin.kubectl("wait", "pod/sleeper", "--for=condition=Ready", "--timeout=60s")
    # a pod that ended would have turned Succeeded; it is still Running when the delete comes
    assert twin.kubectl_json("get", "pod", "sleeper")["status"]["phase"] == "Running"
    twin.kubectl("delete", "pod", "sleeper", "--wait=true", "--timeout=60s")
    assert twin.kubectl("get", "pod", "sleeper", check=False).returncode != 0


def test_a_server_image_serves_until_deleted_whatever_the_restart_policy(twin):
    # nginx run by its entrypoint does not end by itself, also in a pod that would not restart it
    twin.kubectl("run", "web", "--image=nginx:1.27", "--restart=Never")
    twin.kubectl("wait", "pod/web", "--for=condition=Ready", "--timeout=60s")
    # a command that ends after a second of real time: by then a simulated run of a batch container (seconds of
    # cluster time, hundredths of a second of wall time here) would long have ended nginx too
    twin.kubectl("run", "batch", "--image=busybox:1.36", "--restart=Never", "--", "sh", "-c", "sleep 1; exit 0")
    twin.kubectl("wait", "pod/batch", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=60s")
    web = twin.kubectl_json("get", "pod", "web")["status"]
    assert web["phase"] == "Running" and "running" in web["containerStatuses"][0]["state"], web


LOOP = "for i in 1 2 3 4 5; do echo line $i; sleep 0.3; done; echo oops >&2; exit 3"


@needs_host
def test_logs_follow_the_real_output_until_the_container_ends(twin):
    twin.kubectl("run", "talker", "--image=xridge/fio", "--restart=Never", "--command", "--", "sh", "-c", LOOP)
    twin.kubectl("wait", "pod/talker", "--for=condition=Ready", "--timeout=60s")
    followed = twin.kubectl("logs", "-f", "talker", "--timestamps", timeout=60).stdout.splitlines()
    # -f returned because the container ended, so it saw every line, each stamped
    assert [ln.split(" ", 1)[1] for ln in followed] == [f"line {i}" for i in range(1, 6)] + ["oops"]
    stamps = [ln.split(" ", 1)[0] for ln in followed]
    assert stamps == sorted(stamps) and all(s.endswith("Z") for s in stamps)
    twin.kubectl("wait", "pod/talker", "--for=jsonpath={.status.phase}=Failed", "--timeout=60s")
    st = twin.kubectl_json("get", "pod", "talker")["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (st["exitCode"], st["reason"]) == (3, "Error")
    assert twin.kubectl("logs", "talker", "--tail=2").stdout == "line 5\noops\n"
    assert twin.kubectl("logs", "talker", "--since=1h").stdout.count("\n") == 6
    twin.kubectl("delete", "pod", "talker", "--wait=true")


def test_logs_of_a_container_waiting_for_its_image_say_so(twin):
    twin.kubectl("run", "nolog", "--image=registry.example.invalid/nope/app:9.9", "--restart=Never")
    twin.kubectl("wait", "pod/nolog", "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ImagePullBackOff",
                 "--timeout=60s")
    out = twin.kubectl("logs", "nolog", check=False)
    assert out.returncode != 0 and "is waiting to start: trying and failing to pull image" in out.stderr
    twin.kubectl("delete", "pod", "nolog", "--wait=true")


@pytest.fixture(scope="module")
def shell_pod(twin):
    """A busybox pod (simulated main process) with an emptyDir: exec runs in a view of it on the host."""
    twin.kubectl("apply", "-f", "-", input="""
apiVersion: v1
kind: Pod
metadata: {name: shell}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [sleep, "3600"]
    env: [{name: GREETING, value: hello}]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes: [{name: scratch, emptyDir: {}}]
""")
    twin.kubectl("wait", "pod/shell", "--for=condition=Ready", "--timeout=60s")
    yield "shell"
    twin.kubectl("delete", "pod", "shell", "--wait=true")


@needs_host
def test_exec_streams_stdout_stderr_and_the_exit_code(twin, shell_pod):
    out = twin.kubectl("exec", shell_pod, "--", "sh", "-c", 'echo "$GREETING out"; echo err >&2; hostname; exit 7',
                       check=False)
    assert out.returncode == 7
    assert out.stdout == "hello out\nshell\n"
    assert "err\n" in out.stderr and "command terminated with exit code 7" in out.stderr
    assert twin.kubectl("exec", shell_pod, "--", "true").returncode == 0


@needs_host
def test_exec_passes_stdin_through(twin, shell_pod):
    data = "".join(f"line {i}\n" for i in range(2000))  # several WebSocket frames
    out = twin.kubectl("exec", "-i", shell_pod, "--", "sh", "-c", "tr a-z A-Z; echo end", input=data)
    assert out.stdout == data.upper() + "end\n"


@needs_host
def test_exec_of_a_missing_container_fails_like_the_api(twin, shell_pod):
    out = twin.kubectl("exec", shell_pod, "-c", "nope", "--", "true", check=False)
    assert out.returncode != 0 and "container nope is not valid for pod shell" in out.stderr


@needs_host
def test_a_command_that_ends_at_once_still_gives_kubectl_its_exit_status(twin, shell_pod):
    # kubectl cp asks `test -d` first; client-go drops a frame for a stream it has not yet made, so a status
    # sent with (or before) the handshake was lost and kubectl saw success
    for _ in range(20):
        out = twin.kubectl("exec", shell_pod, "--", "test", "-d", "/scratch/nope", check=False)
        assert (out.returncode, "Unknown stream id" in out.stderr) == (1, False), out.stderr


@needs_host
def test_cp_both_ways_through_a_volume_and_the_root(twin, shell_pod, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("payload\n" * 100)
    twin.kubectl("cp", str(src), f"{shell_pod}:/scratch/in.txt")
    twin.kubectl("cp", str(src), f"{shell_pod}:/tmp/in.txt")
    assert twin.kubectl("exec", shell_pod, "--", "wc", "-l", "/scratch/in.txt", "/tmp/in.txt").stdout.split()[0] == "100"
    back = tmp_path / "back.txt"
    twin.kubectl("cp", f"{shell_pod}:/scratch/in.txt", str(back))
    assert back.read_text() == src.read_text()
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a").write_text("A")
    (d / "b").write_text("B")
    twin.kubectl("cp", str(d), f"{shell_pod}:/scratch/dir")
    assert twin.kubectl("exec", shell_pod, "--", "cat", "/scratch/dir/a", "/scratch/dir/b").stdout == "AB"


@needs_host
@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux script for a terminal")
def test_exec_with_a_tty(twin, shell_pod):
    # kubectl -it needs a terminal on its side: script(1) gives it one
    out = subprocess.run(["script", "-qec", f"kubectl exec -it {shell_pod} -- sh -c 'tty; exit 4'", "/dev/null"],
                         env=twin.env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert "/dev/pts/" in out.stdout
    assert out.returncode == 4


@needs_host
@pytest.mark.parametrize("policy,code,phase,reason", [("Never", 0, "Succeeded", "Completed"),
                                                      ("Never", 1, "Failed", "Error"),
                                                      ("OnFailure", 0, "Succeeded", "Completed")])
def test_the_exit_code_of_a_real_process_sets_the_pod_phase(twin, policy, code, phase, reason):
    name = f"exit-{policy.lower()}-{code}"
    twin.kubectl("run", name, "--image=xridge/fio", f"--restart={policy}", "--command", "--", "sh", "-c", f"exit {code}")
    twin.kubectl("wait", f"pod/{name}", f"--for=jsonpath={{.status.phase}}={phase}", "--timeout=60s")
    st = twin.kubectl_json("get", "pod", name)["status"]["containerStatuses"][0]
    assert (st["state"]["terminated"]["exitCode"], st["state"]["terminated"]["reason"]) == (code, reason)
    twin.kubectl("delete", "pod", name, "--wait=true")


RESTARTS_ONCE = """
apiVersion: v1
kind: Pod
metadata: {name: again}
spec:
  restartPolicy: Always
  volumes: [{name: state, emptyDir: {}}]
  containers:
  - name: main
    image: xridge/fio
    volumeMounts: [{name: state, mountPath: /state}]
    # each instance counts itself in the emptyDir (which outlives restarts); the first fails, the second stays
    command: [sh, -c, 'n=$(( $(cat /state/n 2>/dev/null || echo 0) + 1 )); echo $n > /state/n; echo "instance $n";
              if [ $n -ge 2 ]; then exec sleep 3600; fi; exit 1']
"""


def _first_line_followed(twin: Twin, pod: str) -> str:
    """The first line `kubectl logs -f` streams: the running instance's output, waited for as it arrives."""
    proc = subprocess.Popen(["kubectl", "logs", "-f", pod], env=twin.env(), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        return proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait(timeout=30)


@needs_host
def test_logs_previous_shows_the_instance_before_the_restart(twin, api):
    twin.kubectl("apply", "-f", "-", input=RESTARTS_ONCE)
    twin.kubectl("wait", "pod/again", "--for=jsonpath={.status.containerStatuses[0].restartCount}=1", "--timeout=120s")
    assert _first_line_followed(twin, "again") == "instance 2\n"
    assert twin.kubectl("logs", "again").stdout == "instance 2\n"  # the current instance only
    assert twin.kubectl("logs", "again", "--previous").stdout == "instance 1\n"
    assert twin.kubectl("logs", "again", "-p", "--timestamps").stdout.split(" ", 1)[1] == "instance 1\n"
    last = twin.kubectl_json("get", "pod", "again")["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    assert client.CoreV1Api(api).read_namespaced_pod_log("again", "default", previous=True) == "instance 1\n"
    twin.kubectl("delete", "pod", "again", "--wait=true")


def test_logs_previous_without_a_restart_is_the_kubelets_400(twin, api, shell_pod):
    out = twin.kubectl("logs", shell_pod, "--previous", check=False)
    assert out.returncode != 0
    assert out.stderr.strip() == ('Error from server (BadRequest): previous terminated container "main" in pod '
                                  f'"{shell_pod}" not found')
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(api).read_namespaced_pod_log(shell_pod, "default", previous=True)
    assert e.value.status == 400
