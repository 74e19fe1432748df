"""The advisor's verdicts from flag values and the seed table, without a cluster."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.advice import advisor
from ansible_collections.storageperf.k8s.plugins.module_utils.advice.seeds import ORDER, TUNINGS

SNAPSHOT = TUNINGS["snapshot_controller_tuning"]["recommended"]


def test_unset_flags_count_as_the_binary_defaults():
    values = {"worker_threads": None, "kube_api_qps": None, "kube_api_burst": None}
    eff = advisor._effective(values, advisor.SNAPSHOT_CONTROLLER_DEFAULT_WORKERS)
    assert eff == {"worker_threads": 10, "kube_api_qps": 5, "kube_api_burst": 10}
    assert advisor._short_of(eff, SNAPSHOT) == ["kube_api_burst", "kube_api_qps", "worker_threads"]


def test_values_at_or_above_the_recommendation_are_tuned_and_unreadable_ones_are_not():
    eff = advisor._effective({"worker_threads": "25", "kube_api_qps": "100.0", "kube_api_burst": "$(BURST)"}, 10)
    assert eff == {"worker_threads": 25, "kube_api_qps": 100, "kube_api_burst": None}
    assert advisor._short_of(eff, SNAPSHOT) == ["kube_api_burst"]


def test_every_tuning_has_one_row_with_seed_figure_and_how_to_apply_it():
    assert set(ORDER) == set(TUNINGS)
    for name in ORDER:
        row = advisor.entry(name, "available")
        assert row["seed"] in ("000", "001", "002") and row["expected"] and row["apply_with"]
        assert set(row) == {"name", "state", "reasons", "current", "recommended", "expected", "expected_speedup",
                            "seed", "apply_with"}
        assert row["expected_speedup"] is None or row["expected_speedup"] > 1
    # an entry's recommendation is a copy: a caller editing it does not edit the table
    advisor.entry("snapshot_controller_tuning", "on")["recommended"]["kube_api_qps"] = 1
    assert TUNINGS["snapshot_controller_tuning"]["recommended"]["kube_api_qps"] == 75


def test_trident_figures_follow_the_backend_drivers():
    assert advisor._trident_expected(["ontap-san"]) == "ONTAP SAN +449% (~5.5x); 100 volumes 17m31s -> 3m58s (seed 002)"
    assert advisor._trident_expected(["azure-netapp-files"]) == TUNINGS["trident_concurrency"]["expected"]


def test_expected_speedups_are_the_seed_ratios():
    assert advisor.entry("parallel_attach", "available")["expected_speedup"] == round(199 / 37, 2)
    assert advisor.entry("snapshot_controller_tuning", "available")["expected_speedup"] == round(143 / 17, 2)
    assert advisor.entry("csi_sidecar_tuning", "available")["expected_speedup"] is None
    by_driver = TUNINGS["trident_concurrency"]["expected_speedup_by_driver"]
    assert by_driver["ontap-nas"] == 8.1 and TUNINGS["trident_concurrency"]["expected_speedup"] == min(by_driver.values())


def test_trident_speedup_is_the_least_of_the_cluster_drivers():
    assert advisor._trident_expected_speedup(["ontap-nas"]) == 8.1
    assert advisor._trident_expected_speedup(["ontap-nas", "ontap-san"]) == 5.5
    # a driver the seed did not measure adds nothing; none known falls back to the least of all
    assert advisor._trident_expected_speedup(["ontap-nas", "azure-netapp-files"]) == 8.1
    assert advisor._trident_expected_speedup(["azure-netapp-files"]) == 3.9
    assert advisor._trident_expected_speedup([]) == 3.9


def test_summary_counts_every_state():
    rows = [{"state": s} for s in ("on", "on", "blocked", "not_applicable")]
    assert advisor.summarize(rows) == {"on": 2, "available": 0, "blocked": 1, "not_applicable": 1}
