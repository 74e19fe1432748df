# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How much of the expected gain the rollout gate asks a change to show: the one place of that formula.

gate.py judges with it; the rollout role shows it before it measures, through the required_speedup filter. It is a
file of its own so that the filter, which runs on the controller once per cluster, does not load gate.py's numpy
and scipy (about 0.6 CPU-s) for one line of arithmetic.
"""
from __future__ import annotations


def required_speedup(expected: float, fraction: float) -> float:
    """The speedup the gate asks for: the share `fraction` of the gain of the `expected` speedup (8.1 and 0.25 give
    2.775; an expected 1.0, no gain, asks for no loss)."""
    return 1 + fraction * (expected - 1)
