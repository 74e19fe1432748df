"""Every script in benchmarks/ runs at its smallest size (issue 44 item 8): the figures in docs/ stay reproducible.

Each script runs as a subprocess, as docs/performance.md and docs/calibration.md run it, with the options that make
it small (they start and stop their own twins), and must exit 0 having printed the line or table its figures are
read from. The list is checked against the directory: a new script in benchmarks/ fails here until it is listed in
SMOKE (or, with a reason, in SKIP_SLOW or LIBRARIES). The whole file takes about 70 s on 2 shared CPUs (load 4-5).
"""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.support.twin import REPO, VENV_BIN

BENCHMARKS = REPO / "benchmarks"

# script: (its smallest options, a pattern of what it prints its figures as)
SMOKE: dict[str, tuple[list[str], str]] = {
    "ack_tagging.py": (["--nodes", "100", "--pools", "1", "--latency", "0.01", "--concurrency", "1,2"],
                       # ceil(100 / 50) TagResources; the serial row, then the parallel one, each with its 2 calls
                       r"2 TagResources \+ 1 ModifyClusterNodePool calls to make\n.*speedup\n"
                       r"\s+1\s+[\d.]+\s+[\d.]+\s+2\s+\d+\s+1\.0x\n\s+2\s+[\d.]+\s+[\d.]+\s+2\s+\d+\s+[\d.]+x\n"),
    "calibration.py": (["--time-scale", "0.001", "--only", "seed000"],
                       r"Max disks attaching at once on the node: serial 1, parallel \d+"),
    "controller_cost.py": (["--only", "info", "--fleet", "1", "--tasks", "3"],
                           r"\| `cluster_info\.yml` \| 1 \| [\d.]+ s \|"),
    "harness_overhead.py": (["--sizes", "5", "--repeat", "1"], r"N=5: engine [\d.]+s vs polling [\d.]+s"),
    # the tables of runs already made (a csi_lifecycle result document at 100 volumes, in cluster seconds); its
    # measuring run is in SKIP_SLOW
    "harness_vs_seed.py": (["--reports", "extensions/molecule/bench_report/files", "--time-scale", "1"],
                           r"Seed 002: ontap-nas, 100 volumes .*\n(.*\n)+\| create +\| 6m57s +\|"),
    "history_calibration.py": (["--series", "20"], r"20 series per cell, seed \d+; A/A cells"),
    "gate_calibration.py": (["--replications", "200"], r"200 simulated clusters per cell, seed \d+, required 1\.75x"),
    "history_scale.py": (["--documents", "5", "--clusters", "1", "--no-charts"], r"5 documents, \d+ series, \d+ runs"),
    "import_cost.py": (["--runs", "1"], r"\| import \| seconds \(median\) \|\n\|---\|---\|\n(\| .+ \| [\d.]+ \|\n)+"),
    "snapshot_cpu.py": (["--snapshots", "5", "--rounds", "1", "--time-scale", "0.01"],
                        r"create: CPU per snapshot median [\d.]+ ms"),
    "snapshot_timeline.py": (["--time-scale", "0.01"], r"Create Snapshot ON after create at 0\.01 .*: [\d.]+ s"),
    "twin_api.py": (["--objects", "50", "--watchers", "2", "--watch-procs", "1", "--watch-events", "20",
                     "--creates", "20", "--lists", "2", "--concurrency", "4", "--latency-requests", "10",
                     "--pvcs", "5"], r"get while Trident provisions, one at a time: p50 \(ms\)\s+[\d.]+"),
    "twin_authz_cost.py": (["--bindings", "5", "--n", "200"], r"authorization with a cached decision [\d.]+ us"),
    "twin_profile.py": (["--pvcs", "5", "--time-scale", "0.01", "--watchers", "1", "--events", "20",
                         "--requests", "20", "--no-profile", "--no-snapshots"], r"\| create \| 20 \| [\d.]+s \|"),
}

# script: why its smallest measuring run does not fit this file's budget (reported as skipped, run it by hand)
SKIP_SLOW: dict[str, str] = {
    "harness_vs_seed.py": "measuring: its smallest run (--no-attach --volumes 100 --time-scale 0.001; the seed's "
                          "tables are for 100 and 1000 volumes only) is bench_csi_lifecycle.yml -e compare=true, "
                          "54 s measured, over this file's 30 s per script",
}

# modules of benchmarks/ without a command line of their own
LIBRARIES: dict[str, str] = {
    "seed_method.py": "the seed's kubectl method, a library: snapshot_timeline.py above runs it "
                      "(and calibration.py --method kubectl, tests/twin/test_seed_method.py)",
}

TIMEOUT = 120  # seconds per script; the smallest runs take 1-15 s on 2 shared CPUs


def scripts() -> list[str]:
    return sorted(p.name for p in BENCHMARKS.glob("*.py"))


def test_every_script_in_benchmarks_is_listed():
    listed = [set(SMOKE), set(SKIP_SLOW), set(LIBRARIES)]
    assert not (set(LIBRARIES) & (set(SMOKE) | set(SKIP_SLOW))), "a library has no run of its own"
    missing = set(scripts()) - set().union(*listed)
    assert not missing, (f"benchmarks/{', '.join(sorted(missing))}: add it to SMOKE in {__file__} with its smallest "
                         "options and what it prints (or to SKIP_SLOW with the reason)")
    gone = set().union(*listed) - set(scripts())
    assert not gone, f"{', '.join(sorted(gone))} listed in {__file__} but no longer in benchmarks/"


@pytest.mark.parametrize("script", [s for s in scripts() if s not in LIBRARIES])
def test_benchmark_script_runs_small(script):
    if script not in SMOKE and script in SKIP_SLOW:
        pytest.skip(SKIP_SLOW[script])
    assert script in SMOKE, f"benchmarks/{script} is not listed in SMOKE (test_every_script_in_benchmarks_is_listed)"
    args, printed = SMOKE[script]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "collections"), str(REPO)]))
    proc = subprocess.run([str(VENV_BIN / "python"), str(BENCHMARKS / script), *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"{script} {' '.join(args)}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert re.search(printed, proc.stdout), f"{script} did not print its figures ({printed!r}):\n{proc.stdout[-3000:]}"


@pytest.mark.parametrize("script", sorted(SKIP_SLOW))
def test_benchmark_script_measures(script):
    pytest.skip(SKIP_SLOW[script])
