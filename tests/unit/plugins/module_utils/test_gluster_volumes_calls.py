"""Bulk volume creation stays O(N) in gluster CLI calls.

A fake `gluster` executable logs every invocation (one line each) and answers like an empty pool; the
gluster_volumes logic runs against it for N and 2N volumes. At the seed's 2000 volumes a per-volume read of
the pool (`volume info`, as looping gluster.gluster.gluster_volume does) would make the task quadratic.
"""
from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.volumes import reconcile_volumes

# One short line per call, appended (O_APPEND): parallel calls do not interleave.
FAKE_GLUSTER = """#!/bin/sh
printf '%s\\n' "$*" >> {log}
case "$*" in
  "--mode=script volume list") echo "No volumes present in cluster" >&2 ;;
esac
exit 0
"""


def params(**given) -> dict:
    return {"names": None, "prefix": None, "count": None, "start_index": 1, "replica": 3, "peers": None,
            "bricks_root": None, "bricks_roots": None, "state": "present", "start": True, "force": True,
            "options": {}, "parallel": 4, "gluster_cli": "gluster", "timeout": 600, **given}


@pytest.fixture
def fake_gluster(tmp_path: Path):
    log = tmp_path / "calls.log"
    script = tmp_path / "gluster"
    script.write_text(FAKE_GLUSTER.format(log=shlex.quote(str(log))))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def create(fake_gluster, count: int, **extra) -> tuple[dict, list[list[str]]]:
    script, log = fake_gluster
    if log.exists():
        os.unlink(log)
    result = reconcile_volumes(params(prefix="spbench", count=count, peers=["10.0.0.11", "10.0.0.12", "10.0.0.13"],
                                      bricks_root="/data/bricks", gluster_cli=str(script), **extra))
    calls = [line.split()[1:] for line in log.read_text().splitlines()]  # without --mode=script
    return result, calls


@pytest.mark.parametrize("options", [{}, {"performance.quick-read": "off"}])
def test_creating_2n_volumes_costs_twice_the_calls_of_n(fake_gluster, options):
    n = 8
    small, small_calls = create(fake_gluster, n, options=options)
    large, large_calls = create(fake_gluster, 2 * n, options=options)
    assert small["created_count"] == n and large["created_count"] == 2 * n
    # The module counts what the CLI saw.
    assert small["cli_calls"] == len(small_calls) and large["cli_calls"] == len(large_calls)
    ratio = len(large_calls) / len(small_calls)
    assert 1.8 <= ratio <= 2.2, (len(small_calls), len(large_calls))
    # One read of the pool for the whole task, none per volume: a read's output grows with the pool.
    reads = [c for c in large_calls if c[:2] in (["volume", "list"], ["volume", "info"])]
    assert reads == [["volume", "list"]]
    per_volume: dict[str, int] = {}
    for call in large_calls:
        for word in call:
            if word.startswith("spbench") and ":" not in word:
                per_volume[word] = per_volume.get(word, 0) + 1
    # create, start, and one set per option: the same constant for every volume.
    assert set(per_volume.values()) == {2 + len(options)}
