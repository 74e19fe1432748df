"""What one module process pays before it does anything: Python's start and the imports, by `python -X importtime`.

    .venv/bin/python benchmarks/import_cost.py [--runs 3]

Each row imports in a fresh interpreter (the venv's, as a module run on the controller) and gives the
cumulative import time of the statement's outermost imports as -X importtime reports it (which adds its own
overhead: compare rows, not absolutes), the median of --runs runs (the first run of each row warms the disk cache
and is thrown away); the first row is the wall of `python -c pass`. The rows are the heavy
third-party imports (docs/performance.md, "Imports") and the collection's module_utils that modules import first.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MU = "ansible_collections.storageperf.k8s.plugins.module_utils"
ROWS = [
    ("Python start (python -c pass)", "pass"),
    ("ansible.module_utils.basic (every module)", "import ansible.module_utils.basic"),
    ("kubernetes client", "import kubernetes.client"),
    ("Alibaba Cloud SDK (aliyunsdkcore, as ack/aliyun.py)", "from aliyunsdkcore.client import AcsClient"),
    ("matplotlib (Agg, pyplot: charts.py)", "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot"),
    ("scipy.stats (not used by the collection)", "import scipy.stats"),
    ("prometheus_client", "import prometheus_client"),
    ("boto3 (reports_upload, bench_history with a bucket)", "import boto3"),
    ("jsonschema", "import jsonschema"),
    (f"{MU}.report.modules (bench_report, fleet_report...)", f"import {MU}.report.modules"),
    (f"{MU}.bench.modules (bench_plan, bench_measure, bench_finish)", f"import {MU}.bench.modules"),
]


MARK = "-- measured from here --"


def seconds(statement: str) -> float | None:
    """The statement's imports in a fresh interpreter: the sum of the cumulative times -X importtime gives its
    outermost imports (what the interpreter imported at start is before the mark), or None when not installed."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           f"import sys; sys.stderr.write({MARK!r} + '\\n'); {statement}"],
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO / "collections")},
                          timeout=120)
    if proc.returncode != 0:
        return None
    total = 0
    for line in proc.stderr.split(MARK, 1)[1].splitlines():
        fields = line.split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2][1:].startswith(" "):
            total += int(fields[1])  # microseconds, outermost imports only (nested ones are inside them)
    return total / 1e6


def start() -> float:
    """Wall of `python -c pass` (the interpreter's own start, site and all)."""
    import time
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print("| import | seconds (median) |")
    print("|---|---|")
    for name, statement in ROWS:
        measure = start if statement == "pass" else (lambda s=statement: seconds(s))
        measure()  # warm the disk cache
        got = [measure() for _ in range(args.runs)]
        values = [g for g in got if g is not None]
        print(f"| {name} | {statistics.median(values):.3f} |" if values else f"| {name} | not installed |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
