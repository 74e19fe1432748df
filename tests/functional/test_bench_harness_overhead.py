"""benchmarks/harness_overhead.py runs and prints both methods (its figures are the benchmark's, not asserted)."""
from __future__ import annotations

import re
import subprocess

from tests.support.twin import REPO, VENV_BIN


def test_harness_overhead_prints_both_methods_for_100_pvcs():
    proc = subprocess.run([str(VENV_BIN / "python"), str(REPO / "benchmarks" / "harness_overhead.py"),
                           "--sizes", "100", "--repeat", "1"], cwd=REPO, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert "| 100 | kubectl apply + get every 1s |" in out, out + proc.stderr
    row = re.search(r"\| 100 \| bench engine \(watch\) \| [\d.]+s \| (\d+) \|", out)
    assert row, out
    # requests are counted at the twin: N creates + one list and one watch per kind
    assert int(row.group(1)) <= 110
    assert re.search(r"N=100: engine [\d.]+s vs polling [\d.]+s", out)
