"""bench/runner.py: one table of benchmarks; what differs between them is an attribute of the entry."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle, runner

ENTRY = ("BENCHMARK", "OPTIONS", "READ_BY_PREFLIGHT", "SWEEP_PARAMETER", "TITLE", "SWEEP_TITLE", "SHARED_NAMESPACE",
         "problems", "Plan", "preflight", "facts", "sweep_point", "cleans_up", "plan_messages", "run")


@pytest.mark.parametrize("name", sorted(runner.BENCHMARKS))
def test_every_entry_carries_what_the_runner_asks_of_it(name):
    entry = runner.BENCHMARKS[name]
    assert entry.BENCHMARK == name
    assert [a for a in ENTRY if not hasattr(entry, a)] == []


def test_attach_stress_gets_the_seed_defaults_when_they_are_not_given():
    # the defaults are the OPTIONS spec's (bench_plan's attach_stress suboptions), the one place they are written
    plan = attach_stress.Plan({"replicas": None, "storage_class": ""})
    assert plan.replicas == attach_stress.SEED_REPLICAS == 28
    assert plan.storage_class == attach_stress.SEED_STORAGE_CLASS == "alibabacloud-disk"
    assert attach_stress.Plan({"replicas": 3}).replicas == 3


def test_a_benchmark_takes_only_its_own_options():
    # bench_plan gives each benchmark its own suboption: the two option sets are separate specs
    assert "volumes" in csi_lifecycle.OPTIONS and "volumes" not in attach_stress.OPTIONS
    assert "replicas" in attach_stress.OPTIONS and "replicas" not in csi_lifecycle.OPTIONS


def test_the_stored_plan_runs_again_without_the_cluster():
    plan = csi_lifecycle.Plan({"storage_class": "fast", "volumes": 4, "sweep": [2, 4]})
    plan.provisioner, plan.snapshot_class, plan.attach_required = "csi.example", "snap", False
    stored = runner.stored_plan("csi_lifecycle", {"storage_class": "fast", "volumes": 4, "sweep": [2, 4]}, plan,
                                {"engine": {}, "variants": [], "repeat": 1})
    again = runner.restored_plan(stored, point=2)
    assert (again.volumes, again.provisioner, again.snapshot_class, again.attach_required) == (2, "csi.example", "snap", False)
    assert stored["options"]["pvcs_per_pod"] == 4  # the spec's default, stored with the plan
    with pytest.raises(runner.BenchProblem, match="sweep_point is required"):
        runner.restored_plan(stored)
    with pytest.raises(runner.BenchProblem, match="sweep_point 3 is not one of the run's sizes"):
        runner.restored_plan(stored, point=3)


def test_only_csi_lifecycle_preflight_says_it_skips_the_snapshot_steps():
    plan = csi_lifecycle.Plan({"storage_class": "fast", "volumes": 1})
    plan.snapshot_skip = "no VolumeSnapshotClass"
    assert runner.BENCHMARKS["csi_lifecycle"].plan_messages(plan, preflight=True) == [
        "snapshot steps will be skipped: no VolumeSnapshotClass"]
    assert runner.BENCHMARKS["csi_lifecycle"].plan_messages(plan) == []
    assert runner.title("csi_lifecycle", {"volumes": 1, "pods": 1, "pvcs_per_pod": 4}).startswith("CSI lifecycle at 1")
