# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each tuning is expected to bring, from the seed documents, and what applies it: the one table.

Every figure the advisor quotes lives here, with the seed it comes from, so that a figure is corrected in
one place; the step times it divides come from report/seed_figures.py, the seeds' measured figures.
docs/reference/seeds.md summarises the seeds (000 ACK parallel attach, 001 PMEM, 002
Trident concurrent core and the snapshot-controller, 003 GlusterD).

`expected_speedup` is the same figure as a number (baseline time / tuned time), for the guarded rollout's gate
(rollout/gate.py): it asks the data for a share of it (min_gain_fraction). None where the seed gives no
before/after ratio of the tuning on one cluster.
"""
from __future__ import annotations

from typing import Any, TypedDict

from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import (
    ISSUE_1344, SEED000, SEED002_SIDECARS, SEED002_SNAPSHOT_CONTROLLER)


class _SeedRow(TypedDict):
    """One tuning's row: its seed, the figure (text, and as a number when the seed gives a before/after ratio), what
    applies it and the settings it recommends."""

    seed: str
    expected: str
    expected_speedup: float | None
    apply_with: str
    recommended: dict[str, Any]


class SeedRow(_SeedRow, total=False):
    """What some rows add: figures per backend driver (trident_concurrency), what applies the tuning in another setup."""

    expected_by_driver: dict[str, str]
    expected_speedup_by_driver: dict[str, float]
    apply_with_without_trident: str
    apply_with_operator: str


TUNINGS: dict[str, SeedRow] = {
    "parallel_attach": {
        "seed": "000",
        # the seed's own run: `date` before and after `kubectl rollout status` (19:21:36 -> 19:24:55, 20:02:54 -> 20:03:31)
        "expected": "28 pods x 2 disks on one node: 3m19s -> 37s to start, ~5x (seed 000)",
        "expected_speedup": round(SEED000["serial"] / SEED000["parallel"], 2),  # 199 s / 37 s = 5.38
        "apply_with": "storageperf.k8s.enable_parallel_attach",
        "recommended": {"provisioner_feature_gates": {"DiskADController": True, "DiskParallelAttach": True},
                        "csi_plugin_feature_gates": {"DiskADController": True},
                        "ecs_tags": {"supportConcurrencyAttach": "true"}},
    },
    "trident_concurrency": {
        "seed": "002",
        # per backend driver: NetApp's average over all operations, and the 100-volume benchmark's sum of step times
        "expected_by_driver": {
            "ontap-nas": "ONTAP NAS +707% (~8.1x); 100 volumes 28m35s -> 3m40s",
            "ontap-nas-economy": "ONTAP NAS economy +472% (~5.7x); 100 volumes 20m52s -> 4m27s",
            "ontap-san": "ONTAP SAN +449% (~5.5x); 100 volumes 17m31s -> 3m58s",
            "ontap-san-economy": "ONTAP SAN economy +285% (~3.9x); 100 volumes 9m41s -> 3m04s",
        },
        "expected_speedup_by_driver": {"ontap-nas": 8.1, "ontap-nas-economy": 5.7, "ontap-san": 5.5,
                                       "ontap-san-economy": 3.9},
        "expected": "3.9x to 8.1x volume operations per second, by backend driver (seed 002)",
        # without a known driver the least of them: a gate asking for more would fail a change that did its part
        "expected_speedup": 3.9,
        "apply_with": "storageperf.k8s.tune_trident",
        "recommended": {"enableConcurrency": True},
    },
    "snapshot_controller_tuning": {
        "seed": "002",
        "expected": ("80 snapshots 143s -> 17s (external-snapshotter issue 1344, cited by seed 002); with Trident's "
                     "concurrent core, 100 snapshots 3m03s -> 16s, which the seed reaches only with this tuning"),
        "expected_speedup": round(ISSUE_1344["default"] / ISSUE_1344["tuned"], 2),  # 143 s / 17 s = 8.41, the tuning alone
        "apply_with": "storageperf.k8s.tune_trident",
        "apply_with_without_trident": "role storageperf.k8s.snapshot_controller_tuning",
        # the seed's `kubectl edit` of the snapshot-controller
        "recommended": dict(SEED002_SNAPSHOT_CONTROLLER),
    },
    "csi_sidecar_tuning": {
        "seed": "002",
        "expected": ("no figure of its own: the sidecars Trident's operator renders under concurrency (25 workers, "
                     "QPS max(k8sAPIQPS/4, 10) = 25, burst 50) are part of seed 002's 3.9x-8.1x"),
        "expected_speedup": None,
        "apply_with": "module storageperf.k8s.csi_sidecar_tuning",
        "apply_with_operator": "storageperf.k8s.tune_trident (its operator renders the sidecars' flags)",
        "recommended": dict(SEED002_SIDECARS),
    },
    "pmem_storageclasses": {
        "seed": "001",
        "expected": ("fio 4k randwrite, 50 jobs: PMEM-LVM 92.0k IOPS / 381 MB/s vs SSD 37.3k / 153 MB/s (~2.5x); "
                     "sysbench MySQL 122,156 vs 49,812 per second (seed 001)"),
        # two StorageClasses side by side, not one cluster before and after a change
        "expected_speedup": None,
        "apply_with": "storageperf.k8s.deploy_pmem",
        "recommended": {"storageclasses": ["csi-pmem-lvm", "csi-pmem-direct"]},
    },
}

ORDER = ("parallel_attach", "trident_concurrency", "snapshot_controller_tuning", "csi_sidecar_tuning",
         "pmem_storageclasses")
