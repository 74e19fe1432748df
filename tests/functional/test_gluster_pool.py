"""The gluster_volume_scale role, its modules and playbooks against a real 3-peer glusterd pool.

The pool (scripts/gluster-pool.sh) runs real glusterd 10.x processes in network namespaces on this machine;
playbooks reach the peers through inventories/gluster-local with GLUSTER_POOL_DIR pointing at the pool.
Needs root and glusterd; skipped otherwise. About 2-3 minutes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.twin import REPO, run_playbook

POOL_SCRIPT = REPO / "scripts" / "gluster-pool.sh"
INVENTORY = REPO / "inventories" / "gluster-local"
PREFIX = "sptest"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("glusterd"),
                                reason="needs root and glusterd (apt-get install glusterfs-server)")

ROLE_PLAYBOOK = """
- name: Pool, options and volumes through the role
  hosts: gluster
  gather_facts: false
  roles:
    - role: storageperf.k8s.gluster_volume_scale
"""


def pool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(POOL_SCRIPT), *args], text=True, capture_output=True, timeout=300)


@pytest.fixture
def pool_dir(tmp_path_factory):
    # a pool per test (5 s up, 5 s down, little CPU): each test starts from the state it makes itself, whichever
    # worker runs it and in whatever order pytest-xdist's worksteal hands this file's tests out
    directory = tmp_path_factory.mktemp("gluster-pool")
    try:
        up = pool("up", "--dir", str(directory))
        assert up.returncode == 0, up.stderr
        yield directory
    finally:
        pool("down", "--dir", str(directory))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("gluster-work")
    (d / "role.yml").write_text(ROLE_PLAYBOOK)
    return d


def gluster(pool_dir: Path, peer: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(pool_dir / f"peer{peer}" / "gluster"), "--mode=script", *args],
                          text=True, capture_output=True, timeout=120)


def volumes(pool_dir: Path, peer: int = 1) -> list[str]:
    proc = gluster(pool_dir, peer, "volume", "list")
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.split() if line]


def play(pool_dir: Path, work: Path, playbook: str | Path, extra: dict | None = None, check: bool = False):
    env = {**os.environ, "GLUSTER_POOL_DIR": str(pool_dir)}
    return run_playbook(playbook, extra_vars=extra, inventory=INVENTORY, env=env, record_dir=work, check=check,
                        timeout=900)


def role(pool_dir, work, count, check=False, **extra):
    return play(pool_dir, work, work / "role.yml",
                {"gluster_volume_scale_prefix": PREFIX, "gluster_volume_scale_count": count, **extra}, check=check)


def test_pool_peers_connected_after_probe(pool_dir, work):
    run = role(pool_dir, work, 0)
    assert run.rc == 0, run.stdout[-3000:]
    assert run.task("Probe every peer")["result"]["probed"] == ["10.244.77.12", "10.244.77.13"]
    for peer in (1, 2, 3):
        proc = gluster(pool_dir, peer, "peer", "status")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("Peer in Cluster (Connected)") == 2, proc.stdout
    again = role(pool_dir, work, 0)
    assert again.rc == 0
    assert again.task("Probe every peer")["result"]["changed"] is False


def test_bad_input_names_the_field_and_changes_nothing(pool_dir, work):
    before = volumes(pool_dir)
    run = role(pool_dir, work, 5, gluster_volume_scale_replica=2)
    assert run.rc != 0
    failed = run.task("Create the missing volumes")
    assert failed["status"] == "failed"
    assert "replica=2" in failed["result"]["msg"] and "peers has 3" in failed["result"]["msg"]
    assert volumes(pool_dir) == before

    run = role(pool_dir, work, 0, gluster_volume_scale_vol_count_per_thread=20, gluster_volume_scale_brick_multiplex=False)
    assert run.rc != 0
    msg = run.task("Set glusterd's cluster-wide options")["result"]["msg"]
    assert "vol_count_per_thread" in msg and "brick_multiplex: true" in msg
    get = gluster(pool_dir, 1, "volume", "get", "all", "glusterd.vol_count_per_thread")
    assert "100 (DEFAULT)" in get.stdout


def test_create_20_volumes_then_rerun_creates_none(pool_dir, work):
    first = role(pool_dir, work, 20)
    assert first.rc == 0, first.stdout[-3000:]
    created = first.task("Create the missing volumes")["result"]
    assert created["created_count"] == 20 and created["changed"] is True
    names = volumes(pool_dir)
    assert [n for n in names if n.startswith(PREFIX)] == [f"{PREFIX}{i:04d}" for i in range(1, 21)]
    # every peer sees them, and they are started with one brick per peer
    assert len(volumes(pool_dir, 3)) == len(names)
    info = gluster(pool_dir, 2, "volume", "info", f"{PREFIX}0020").stdout
    assert "Status: Started" in info and "Number of Bricks: 1 x 3 = 3" in info

    second = role(pool_dir, work, 20)
    assert second.rc == 0
    again = second.task("Create the missing volumes")["result"]
    assert again["changed"] is False and again["created_count"] == 0 and again["existing_count"] == 20
    assert second.changed_tasks == []


def have_20_volumes(pool_dir: Path, work: Path) -> None:
    assert role(pool_dir, work, 20).rc == 0


def test_check_mode_plans_without_creating(pool_dir, work):
    have_20_volumes(pool_dir, work)
    run = role(pool_dir, work, 23, check=True)
    assert run.rc == 0
    planned = run.task("Create the missing volumes")["result"]
    assert planned["created"] == [f"{PREFIX}0021", f"{PREFIX}0022", f"{PREFIX}0023"]
    assert f"{PREFIX}0021" not in volumes(pool_dir)


def test_restart_handshake_measured_and_reported(pool_dir, work):
    reports = work / "reports"
    run = play(pool_dir, work, REPO / "playbooks" / "bench_gluster.yml",
               {"volume_counts": [20], "reports_dir": str(reports), "gluster_volume_scale_prefix": PREFIX})
    assert run.rc == 0, run.stdout[-3000:]
    hs = run.task("time the handshake")["result"]
    assert hs["volume_count"] == 20
    assert hs["handshake_seconds"] > 0
    assert hs["handshake_seconds"] >= hs["peers_connected_seconds"] > 0
    assert set(hs["connected_seconds_by_peer"]) == {"gluster1", "gluster2", "gluster3"}
    assert hs["volume_info_count"] == 20
    # the restarted glusterd is a new process and the pool is whole again
    for peer in (1, 2, 3):
        assert gluster(pool_dir, peer, "peer", "status").stdout.count("(Connected)") == 2

    facts = run.task("Publish the summary as facts")["result"]["ansible_facts"]["gluster_bench"]
    doc = json.loads(Path(facts["paths"]["json"]).read_text())
    assert doc["status"] == "ok" and doc["benchmark"] == "gluster_volume_scale"
    measured = [v for v in doc["variants"] if not v["name"].startswith("seed")]
    step = measured[0]["runs"][0]["steps"][0]
    assert step["metrics"]["handshake_s"] == hs["handshake_seconds"]
    assert "7m 30s" in Path(facts["paths"]["markdown"]).read_text()
    assert "data:image/png;base64" in Path(facts["paths"]["html"]).read_text()
    stats = run.task("set_stats")["result"]["ansible_stats"]["data"]["storageperf_stats_gluster_bench"]
    assert stats["run_id"] == doc["run_id"]
    # one model: the plan stored once (bench_plan's shape), the bench engine's progress line after the count
    mode = measured[0]["name"]
    assert doc["plan"]["variants"] == [mode] and doc["plan"]["options"]["volume_counts"] == [20]
    assert run.task("Show the progress line")["result"]["msg"].startswith(
        f"gluster_volume_scale · {mode} #1 · Restart handshake, 20 volumes: 1/1 volume counts done, ")


def test_handshake_that_never_completes_ends_the_run_at_its_deadline(pool_dir, work):
    # Peer 2's glusterd is frozen right after peer 3 restarts: its socket still accepts, nothing answers, so
    # the pool never becomes whole, as at seed 003's ~2000 volumes. The run must say so and end.
    reports = work / "reports-timeout"
    frozen = pool_dir / "peer2" / "glusterd.pid"
    timeout = 20
    restart = f"{pool_dir}/peer3/restart && kill -STOP $(cat {frozen})"
    try:
        run = play(pool_dir, work, REPO / "playbooks" / "bench_gluster.yml",
                   {"volume_counts": [20], "reports_dir": str(reports), "gluster_volume_scale_prefix": PREFIX,
                    "gluster_volume_scale_bench_timeout": timeout, "gluster_restart_cmd": restart})
    finally:
        subprocess.run(["kill", "-CONT", frozen.read_text().strip()], check=False)
    assert run.rc != 0
    hs = run.task("time the handshake")
    assert hs["status"] == "failed"
    result = hs["result"]
    assert "handshake not finished" in result["msg"] and f"timeout={timeout}" in result["msg"]
    assert result["rpc_timeout_exceeded"] is False
    assert timeout <= result["waited_seconds"] < 2 * timeout
    facts = run.task("Publish the summary as facts")["result"]["ansible_facts"]["gluster_bench"]
    doc = json.loads(Path(facts["paths"]["json"]).read_text())
    assert doc["status"] == "failed" and "handshake not finished" in doc["reason"]
    step = next(v for v in doc["variants"] if not v["name"].startswith("seed"))["runs"][0]["steps"][0]
    assert step["status"] == "failed" and "handshake not finished" in step["reason"]
    # Thawed, peer 2 lets the pool become whole again: the next run measures a handshake as usual.
    again = play(pool_dir, work, REPO / "playbooks" / "bench_gluster.yml",
                 {"volume_counts": [20], "reports_dir": str(reports), "gluster_volume_scale_prefix": PREFIX})
    assert again.rc == 0, again.stdout[-3000:]


def test_unwritable_reports_dir_fails_before_any_volume_or_restart(pool_dir, work):
    # the plan goes into result.json first: a reports_dir under a file fails there, with nothing created
    blocker = work / "not-a-directory"
    blocker.write_text("")
    before = volumes(pool_dir)
    run = play(pool_dir, work, REPO / "playbooks" / "bench_gluster.yml",
               {"volume_counts": [25], "reports_dir": str(blocker / "reports"), "gluster_volume_scale_prefix": PREFIX})
    assert run.rc != 0
    failed = run.task("Write result.json, report.md and report.html (interrupted)")
    assert failed["status"] == "failed" and "cannot write the gluster benchmark report" in failed["result"]["msg"]
    assert volumes(pool_dir) == before
    assert [r["task"] for r in run.results if r["action"].endswith(("gluster_volumes", "gluster_handshake_bench"))] == []


def test_cleanup_leaves_no_volume_and_no_brick(pool_dir, work):
    have_20_volumes(pool_dir, work)
    run = play(pool_dir, work, REPO / "playbooks" / "cleanup_gluster.yml", {"prefix": PREFIX})
    assert run.rc == 0, run.stdout[-3000:]
    assert run.task("Delete the volumes")["result"]["deleted_count"] == 20
    assert [n for n in volumes(pool_dir) if n.startswith(PREFIX)] == []
    for peer in (1, 2, 3):
        assert list((pool_dir / f"peer{peer}" / "bricks").glob(f"{PREFIX}*")) == []
    again = play(pool_dir, work, REPO / "playbooks" / "cleanup_gluster.yml", {"prefix": PREFIX})
    assert again.rc == 0 and again.changed_tasks == []


def test_pool_down_leaves_no_namespace_and_no_process(pool_dir):
    env = dict(line.split("=", 1) for line in (pool_dir / "pool.env").read_text().split())
    prefix = f"spgl-{env['GLUSTER_POOL_ID']}-"
    down = pool("down", "--dir", str(pool_dir))
    assert down.returncode == 0, down.stderr
    namespaces = subprocess.run(["ip", "netns", "list"], text=True, capture_output=True).stdout
    assert prefix not in namespaces
    leftovers = subprocess.run(["pgrep", "-af", str(pool_dir)], text=True, capture_output=True).stdout
    assert leftovers == ""
    assert pool("down", "--dir", str(pool_dir)).returncode == 0  # idempotent
