"""bench/runner.py: one table of benchmarks; what differs between them is an attribute of the entry."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle, runner

ENTRY = ("BENCHMARK", "PARAMS", "DEFAULTS", "TITLE", "SWEEP_TITLE", "SHARED_NAMESPACE", "problems", "Plan", "preflight",
         "facts", "sweep_point", "plan_messages", "run")


@pytest.mark.parametrize("name", sorted(runner.BENCHMARKS))
def test_every_entry_carries_what_the_runner_asks_of_it(name):
    entry = runner.BENCHMARKS[name]
    assert entry.BENCHMARK == name
    assert [a for a in ENTRY if not hasattr(entry, a)] == []


def test_attach_stress_gets_the_seed_defaults_when_they_are_not_given():
    params = runner.parameters("attach_stress", {"replicas": None, "storage_class": ""})
    assert params["replicas"] == attach_stress.SEED_REPLICAS == 28
    assert params["storage_class"] == attach_stress.SEED_STORAGE_CLASS == "alibabacloud-disk"
    assert runner.parameters("attach_stress", {"replicas": 3})["replicas"] == 3


def test_a_benchmark_reads_only_its_own_parameters():
    given = {"volumes": 10, "replicas": 5, "storage_class": "fast"}
    assert runner.parameters("csi_lifecycle", given) == {"volumes": 10, "storage_class": "fast"}
    assert "volumes" not in runner.parameters("attach_stress", given)


def test_only_csi_lifecycle_preflight_says_it_skips_the_snapshot_steps():
    plan = csi_lifecycle.Plan({"storage_class": "fast", "volumes": 1})
    plan.snapshot_skip = "no VolumeSnapshotClass"
    assert runner.BENCHMARKS["csi_lifecycle"].plan_messages(plan, preflight=True) == [
        "snapshot steps will be skipped: no VolumeSnapshotClass"]
    assert runner.BENCHMARKS["csi_lifecycle"].plan_messages(plan) == []
    assert runner.title("csi_lifecycle", {"volumes": 1, "pods": 1, "pvcs_per_pod": 4}).startswith("CSI lifecycle at 1")
