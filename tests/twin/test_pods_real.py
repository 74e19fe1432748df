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
