"""twin/host/exec_runner.py and twin/host/backing.py: pods whose images map to programs on this machine run them for real.

The first tests drive the runner directly (no cluster): mount namespace and overlay root, volume binds, exit
codes, $(VAR) expansion, kill on cancel, per-node network namespaces, the MySQL entrypoint with a password that
never reaches the log. The last ones go through a twin with kubectl: a Job's pod log is the program's output,
PMEM volumes sit on a loop-mounted ext4 in /dev/shm and disk volumes in the twin directory, and `twin down`
removes the loop device and the memory file.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from twin.host import exec_runner

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in exec_runner.HOST_TOOLS),
                                reason="host-run containers need root, nsenter, unshare, ip, mount and chroot")

FIO_IMAGE = "registry.cn-hangzhou.aliyuncs.com/eric-dev/sysbench:fio"


@pytest.fixture(autouse=True, scope="module")
def no_leftovers():
    yield
    exec_runner.kill_all()  # the nodes' network namespace holders


def pod(name: str, node: str = "node-a", host_network: bool = False, **spec) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}-{time.monotonic_ns()}"},
            "spec": {"nodeName": node, "hostNetwork": host_network, **spec}}


async def first_of(event: asyncio.Event, task: asyncio.Future, bound: float = 300) -> None:
    """Until the container said what the test waits for, or ended (its exit then shows in the assertions).

    The bound is for a container that hangs silently, not a measurement."""
    said = asyncio.ensure_future(event.wait())
    await asyncio.wait({said, task}, timeout=bound, return_when=asyncio.FIRST_COMPLETED)
    said.cancel()


def run(p: dict, container: dict, mounts: dict[str, str] | None = None) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = asyncio.run(exec_runner.run(p, container, mounts or {}, lines.append))
    return code, lines


def test_which_images_run():
    assert exec_runner.maps(FIO_IMAGE) is (shutil.which("sysbench") is not None)  # sysbench wins over fio
    assert exec_runner.maps("xridge/fio:3.33") is (shutil.which("fio") is not None)
    assert exec_runner.image_kind("mysql:5.6") == exec_runner.image_kind("docker.io/library/mariadb:10.11") == "mysql"
    assert exec_runner.image_kind("severalnines/sysbench") == "sysbench"
    assert exec_runner.maps("registry.k8s.io/pause:3.10") is False
    assert exec_runner.maps("nginx:1.25") is False
    # shell images stay simulated unless the twin setting asks for them (attach benchmarks run hundreds)
    assert exec_runner.maps("busybox:1.36") is False


def test_volumes_are_bound_inside_the_container_only(tmp_path):
    vol = tmp_path / "vol"
    vol.mkdir()
    assert not Path("/data").exists()
    code, lines = run(pod("binds"), {"name": "c", "image": "xridge/fio", "command": ["sh", "-c"],
                                     "args": ["echo hello > /data/out; cat /data/out; touch /outside; "
                                              "grep ' /data ' /proc/mounts | cut -d' ' -f3; hostname; exit 3"]},
                      {"/data": str(vol)})
    assert code == 3
    assert lines[0] == "hello"
    assert lines[1] in ("ext4", "xfs", "btrfs", "tmpfs", "overlay")  # the filesystem of tmp_path, bound
    assert lines[2] == "binds"  # the pod's hostname in its own UTS namespace
    assert (vol / "out").read_text() == "hello\n"
    assert not Path("/data").exists() and not Path("/outside").exists()  # the host's root is untouched


def test_command_args_env_and_var_expansion(tmp_path):
    c = {"name": "c", "image": "xridge/fio", "command": ["sh", "-c", 'echo "$GREETING"; printf "%s\\n" "$@"; exit $CODE', "sh"],
         "args": ["$(WHO)", "$$(WHO)", "$(UNDEFINED)"],
         "env": [{"name": "WHO", "value": "world"}, {"name": "GREETING", "value": "hi-$(WHO)"},
                 {"name": "CODE", "value": "7"}]}
    code, lines = run(pod("env"), c)
    assert code == 7
    # defined variables expanded by the kubelet, $$ a literal $, undefined references left as they are
    assert lines == ["hi-world", "world", "$(WHO)", "$(UNDEFINED)"]


def test_the_default_entrypoint_is_the_program(tmp_path):
    code, lines = run(pod("fio-version"), {"name": "c", "image": "ljishen/fio", "args": ["--version"]})
    assert code == 0 and lines == [subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()]


def test_cancel_kills_the_process_group(tmp_path):
    async def scenario() -> tuple[int, list[int]]:
        p = pod("sleeper", terminationGracePeriodSeconds=1)
        # the container says when its child is running: the test cancels on that line, however long the
        # namespace setup took on this machine
        c = {"name": "c", "image": "xridge/fio", "command": ["sh", "-c", "sleep 1000 & echo started; sleep 1000; wait"]}
        lines: list[str] = []
        started = asyncio.Event()
        task = asyncio.ensure_future(exec_runner.run(p, c, {}, lambda line: (lines.append(line), started.set())))
        await first_of(started, task)
        assert lines == ["started"], lines
        pids = exec_runner.running()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return len(pids), pids

    n, pids = asyncio.run(scenario())
    assert n == 1
    assert exec_runner.running() == []
    for pid in pids:  # the group leader and its children are gone
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
    assert subprocess.run(["pgrep", "-x", "-f", "sleep 1000"], capture_output=True).returncode == 1


SERVER = ("python3 -c \"import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
          "s.bind(('127.0.0.1', 3306)); s.listen(); print('listening', flush=True); c,_=s.accept(); c.sendall(b'hello'); "
          "c.close()\"")
CLIENT = ("python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', 3306), timeout=5); "
          "print(s.recv(5).decode())\"")


def test_host_network_pods_share_their_nodes_network_only():
    async def scenario():
        out: list[str] = []
        listening = asyncio.Event()
        server = asyncio.ensure_future(exec_runner.run(
            pod("db", "node-a", True), {"name": "s", "image": "xridge/fio", "command": ["sh", "-c", SERVER]}, {},
            lambda line: (out.append(line), listening.set())))
        await first_of(listening, server)
        other: list[str] = []
        other_code = await exec_runner.run(pod("elsewhere", "node-b", True),
                                           {"name": "c", "image": "xridge/fio", "command": ["sh", "-c", CLIENT]},
                                           {}, other.append)
        own: list[str] = []
        own_code = await exec_runner.run(pod("own-netns", "node-a", False),
                                         {"name": "c", "image": "xridge/fio", "command": ["sh", "-c", CLIENT]},
                                         {}, own.append)
        same: list[str] = []
        same_code = await exec_runner.run(pod("client", "node-a", True),
                                          {"name": "c", "image": "xridge/fio", "command": ["sh", "-c", CLIENT]},
                                          {}, same.append)
        server_code = await asyncio.wait_for(server, 120)  # it exits once it served the client: a bound for a hang
        return out, (other_code, other), (own_code, own), (same_code, same), server_code

    out, other, own, same, server_code = asyncio.run(scenario())
    assert out == ["listening"]
    assert other[0] != 0 and "Connection refused" in "\n".join(other[1])  # another node's 127.0.0.1
    assert own[0] != 0  # a pod without hostNetwork has its own loopback
    assert same == (0, ["hello"]) and server_code == 0  # hostNetwork on the same node: the seed's setup
    exec_runner.kill_all()


@pytest.mark.skipif(not shutil.which("mariadbd"), reason="MariaDB is not installed")
def test_mysql_image_initialises_the_volume_and_keeps_the_password_out_of_the_log(tmp_path):
    datadir = tmp_path / "mysql"
    datadir.mkdir()
    password = "pa'ss\\word-Zq81"

    async def scenario():
        db_log: list[str] = []
        ready = asyncio.Event()

        def db_line(line: str) -> None:
            db_log.append(line)
            if "ready for connections" in line:
                ready.set()

        db = asyncio.ensure_future(exec_runner.run(
            pod("mysql", "node-m", True, terminationGracePeriodSeconds=10),
            {"name": "mysql", "image": "mysql:5.6", "env": [{"name": "MYSQL_ROOT_PASSWORD", "value": password},
                                                            {"name": "MYSQL_DATABASE", "value": "sbtest"}]},
            {"/var/lib/mysql": str(datadir)}, db_line))
        await first_of(ready, db)
        assert ready.is_set(), db_log[-20:]
        client_log: list[str] = []
        code = await exec_runner.run(
            pod("client", "node-m", True),
            {"name": "c", "image": "severalnines/sysbench",
             "command": ["sh", "-c", "mariadb -h127.0.0.1 -P3306 -uroot -p\"$PW\" -N -e 'SHOW DATABASES' | grep sbtest; "
                                     "mariadb -h127.0.0.1 -uroot -pwrong -e 'SELECT 1' 2>&1 | grep -c 'Access denied'"],
             "env": [{"name": "PW", "value": password}]}, {}, client_log.append)
        db.cancel()
        with pytest.raises(asyncio.CancelledError):
            await db
        return db_log, code, client_log

    db_log, code, client_log = asyncio.run(scenario())
    assert code == 0 and client_log == ["sbtest", "1"], client_log
    assert (datadir / "mysql").is_dir() and (datadir / "ibdata1").exists()  # the datadir is on the volume
    assert any("Initializing database files" in line for line in db_log)
    assert not any("wordZq81" in line or "word-Zq81" in line for line in db_log + client_log)
    exec_runner.kill_all()


def test_mysql_image_without_a_password_refuses_like_the_image(tmp_path):
    if not shutil.which("mariadbd"):
        pytest.skip("MariaDB is not installed")
    code, lines = run(pod("nopw"), {"name": "mysql", "image": "mariadb:10.11"}, {"/var/lib/mysql": str(tmp_path)})
    assert code == 1
    assert any("password option is not specified" in line for line in lines)
    assert list(tmp_path.iterdir()) == []


# --- through a twin ---------------------------------------------------------------------------------
PMEM_SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi-pmem-lvm"},
           "provisioner": "localplugin.csi.alibabacloud.com", "mountOptions": ["dax"],
           "parameters": {"lvmType": "striping", "nodeAffinity": "true", "volumeType": "PMEM"},
           "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}


def job(name: str, claim: str) -> dict:
    script = ("grep ' /data ' /proc/mounts | cut -d' ' -f1,3; "
              "fio --name=w --filename=/data/f --size=4M --bs=4k --rw=randwrite --direct=1 --runtime=1 --time_based "
              "--output-format=json --output=/data/out.json && grep -o '\"fio version\" : \"fio-' /data/out.json")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "fio", "image": "xridge/fio", "command": ["sh", "-c", script],
                                "volumeMounts": [{"name": "d", "mountPath": "/data"}]}],
                "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}]}}}}


def pvc(name: str, sc: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc, "resources": {"requests": {"storage": "1Gi"}}}}


@pytest.mark.skipif(not shutil.which("fio") or not Path("/dev/loop-control").exists(), reason="needs fio and loop devices")
def test_jobs_run_fio_on_pmem_in_memory_and_on_disk(twin):
    twin.label_pmem_node()
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(
        [PMEM_SC, pvc("pmem", "csi-pmem-lvm"), pvc("ssd", "alicloud-disk-topology"), job("on-pmem", "pmem"),
         job("on-ssd", "ssd")]))
    for name in ("on-pmem", "on-ssd"):
        twin.kubectl("wait", "--for=condition=Complete", f"job/{name}", "--timeout=120s")
    pmem_log = twin.kubectl("logs", "job/on-pmem").stdout.splitlines()
    ssd_log = twin.kubectl("logs", "job/on-ssd").stdout.splitlines()
    assert pmem_log[0].startswith("/dev/loop") and pmem_log[0].endswith(" ext4")  # memory-backed ext4
    assert pmem_log[1] == '"fio version" : "fio-'  # fio really ran and wrote its JSON on the volume
    assert not ssd_log[0].startswith("/dev/loop")
    assert ssd_log[1] == pmem_log[1]

    pmem_pv = twin.kubectl_json("get", "pvc", "pmem")["spec"]["volumeName"]
    ssd_pv = twin.kubectl_json("get", "pvc", "ssd")["spec"]["volumeName"]
    mount = twin.dir.resolve() / "backing" / "pmem"
    assert os.path.ismount(mount) and (mount / pmem_pv / "f").stat().st_size == 4 << 20
    assert (twin.dir.resolve() / "backing" / "disk" / ssd_pv / "f").exists()
    image = next(Path("/dev/shm").glob("storageperf-twin-pmem-*.img"))
    device = pmem_log[0].split()[0]
    assert str(image) in subprocess.run(["losetup", device], capture_output=True, text=True).stdout

    twin.down()
    assert not os.path.ismount(mount)
    assert not image.exists()
    # the kernel frees the loop device once the lazily unmounted filesystem's last user is gone, and tells no
    # one (no udev here): polled, with a bound for a device that is never freed, not a measurement
    deadline = time.monotonic() + 120
    while str(image) in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline, f"loop device {device} still holds {image}"
        time.sleep(0.1)
