"""bench/sweep.py: a sweep's sizes are checked, naming `sweep` and the fix, and run ascending."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle, runner
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import sweep as SW


@pytest.mark.parametrize("sizes", [[], None, [10, 100, 1000], [1000, 10], [1, 2]])
def test_good_sizes_or_no_sweep_pass(sizes):
    assert SW.sizes_problem(sizes) is None


@pytest.mark.parametrize("sizes,words", [
    ([100, 0], ["sweep [100, 0]", "at least 1", "not 0"]),
    ([-5, 10], ["not -5"]),
    ([10, True], ["not True"]),
    ([10, 100, 10], ["10 given more than once"]),
    ([100], ["at least two sizes", "set volumes"]),
])
def test_bad_sizes_are_named_with_the_fix(sizes, words):
    msg = SW.sizes_problem(sizes)
    assert all(w in msg for w in words), msg
    assert msg.startswith("sweep [") and "e.g. sweep: [10, 100, 1000]" in msg


def test_sizes_run_ascending():
    assert SW.ordered([1000, 10, 100]) == [10, 100, 1000]
    assert SW.ordered(None) == []


def test_the_lifecycle_plan_refuses_bad_sizes_and_records_good_ones():
    assert any("sweep [5, 5]" in p for p in csi_lifecycle.problems({"storage_class": "x", "sweep": [5, 5]}))
    plan = csi_lifecycle.Plan({"storage_class": "x", "volumes": 20, "sweep": [20, 5]})
    facts = csi_lifecycle.facts(plan)
    assert facts["sweep"] == [5, 20] and "volumes" not in facts and "pods" not in facts
    assert csi_lifecycle.sweep_point(plan) == {"parameter": "volumes", "value": 20}
    assert runner.title("csi_lifecycle", facts) == "CSI lifecycle sweep at 5, 20 volumes (4 PVCs per pod)"
    assert csi_lifecycle.sweep_point(csi_lifecycle.Plan({"storage_class": "x", "volumes": 20})) is None
