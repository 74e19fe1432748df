"""benchmarks/history_calibration.py: the seeded simulation's table is the one docs/history.md publishes."""
from __future__ import annotations

import importlib.util
import sys

from tests.support.twin import REPO


def test_the_calibration_table_in_the_docs_is_the_simulations_output():
    spec = importlib.util.spec_from_file_location("history_calibration", REPO / "benchmarks" / "history_calibration.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["history_calibration"] = module
    spec.loader.exec_module(module)
    rows = module.calibrate()
    assert module.table(rows) in (REPO / "docs" / "history.md").read_text()
    default = rows[0]
    # what the docs claim of the default rule: A/A under load stays near 1 %, a doubling is caught at once
    assert default["aa_3_then_3_loaded"] <= 0.01 and default["aa_quiet"] <= 0.01
    assert default["slow_100"]["detected"] >= 0.95 and default["slow_100"]["median_delay"] == 1
