"""Pods on the twin as a user meets them: images that cannot be pulled, what really runs, exec, cp, logs.

Images come from the catalogue twin/images.yaml; everything else goes through kubectl. Waits are
`kubectl wait` on conditions and jsonpaths, never sleeps.
"""
from __future__ import annotations

import os
import shutil

import pytest

from tests.support.twin import Twin
from twin import exec_runner, images

needs_host = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root, nsenter, unshare, ip, mount and chroot")


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("podsreal") / "twin", nodes=1, time_scale=0.01) as t:
        yield t


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
