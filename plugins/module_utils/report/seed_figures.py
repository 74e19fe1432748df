# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seeds' measured step times (docs/reference/seeds.md), which of them a step of a result document repeats, and
the time scale that turns a twin's wall time into the cluster time they are compared with.

The one source of these figures: the reports set them beside a twin's cluster time (tables.py, fleet.py),
advice/seeds.py derives its expected speedups from them, and benchmarks/calibration.py and
benchmarks/harness_vs_seed.py ("Within 20% of the seed") compare the twin with them.

    seed_figure(doc, variant, "create_volume")  # {"seconds": 417, "seed": "002", "text": "seed 002 ..."} or None

A step has a seed figure only where the run is the seed's own experiment: the same benchmark, batch size and
storage class (seed 002's tables are per backend driver, and the twin names its classes after them), and a variant
whose settings are the seed's OFF or ON. Anything else gets None, never the nearest figure.
"""
from __future__ import annotations

from typing import Any


# seed 000: scale 0 -> 28 pods x 2 disks on one node, `date` around `kubectl rollout status` (3 min 19 s, 37 s)
SEED000 = {"serial": 199.0, "parallel": 37.0}
SEED000_REPLICAS, SEED000_DISKS_PER_POD = 28, 2
# seed 002: (OFF seconds, ON seconds) per batch size, driver and step; a run at N volumes is compared with the
# table for N only (the seed's ON rates do not scale linearly from 100 to 1000, so no table stands for another)
SEED002 = {
    100: {  # "Trident CSI benchmark at 100 volumes (100 vols, 25 pods, 4 PVCs/pod)"
        "ontap-nas": {"create": (417, 41), "publish": (140, 21), "unpublish": (140, 26), "snapshot": (183, 16),
                      "clone": (460, 42), "delete_clone": (127, 32), "delete_snapshot": (124, 16), "delete_volume": (124, 26)},
        "ontap-nas-economy": {"create": (693, 89), "publish": (250, 125), "unpublish": (193, 32), "delete_volume": (116, 21)},
        "ontap-san": {"create": (156, 58), "publish": (83, 31), "unpublish": (22, 22), "snapshot": (182, 16),
                      "clone": (238, 32), "delete_clone": (121, 43), "delete_snapshot": (124, 15), "delete_volume": (125, 21)},
        "ontap-san-economy": {"create": (198, 58), "publish": (83, 31), "unpublish": (27, 22), "delete_volume": (273, 73)},
    },
    1000: {  # "Trident CSI benchmark at 1000 volumes (1000 vols, 250 pods, 4 PVCs/pod)"
        "ontap-nas": {"create": (3451, 630), "publish": (1384, 167), "unpublish": (1420, 156), "snapshot": (1805, 159),
                      "clone": (6060, 401), "delete_clone": (1452, 302), "delete_snapshot": (1244, 124),
                      "delete_volume": (1236, 318)},
        "ontap-nas-economy": {"create": (4287, 710), "publish": (2595, 1141), "unpublish": (1386, 155),
                              "delete_volume": (1165, 163)},
        "ontap-san": {"create": (1648, 477), "publish": (777, 155), "unpublish": (233, 157), "snapshot": (1803, 164),
                      "clone": (3384, 805), "delete_clone": (1454, 257), "delete_snapshot": (1238, 123),
                      "delete_volume": (1238, 263)},
        "ontap-san-economy": {"create": (2689, 581), "publish": (827, 173), "unpublish": (295, 157), "delete_volume": (2815, 333)},
    },
}
# 80 snapshots with the snapshot-controller at its defaults and tuned (external-snapshotter issue 1344, cited by seed 002)
ISSUE_1344 = {"default": 143.0, "tuned": 17.0}
# seed 002's settings: its `kubectl edit` of the snapshot-controller, and the sidecars Trident's operator renders
# under concurrency (25 workers, QPS max(k8sAPIQPS/4, 10) = 25, burst 50); the advisor recommends them and the
# rollout's changes apply them by default
SEED002_SNAPSHOT_CONTROLLER = {"worker_threads": 25, "kube_api_qps": 75, "kube_api_burst": 150}
SEED002_SIDECARS = {"worker_threads": 25, "kube_api_qps": 25, "kube_api_burst": 50}
# the collection's csi_lifecycle step names -> seed 002's
SEED002_STEPS = {"create_volume": "create", "publish": "publish", "unpublish": "unpublish", "create_snapshot": "snapshot",
                 "clone_from_snapshot": "clone", "delete_clone": "delete_clone", "delete_snapshot": "delete_snapshot",
                 "delete_volume": "delete_volume"}
# seed 002's ON had the snapshot-controller tuned as well: these steps of a variant that left it at its defaults
# (attribution's "concurrency only") are not the seed's ON
SNAPSHOT_CONTROLLER_STEPS = ("create_snapshot", "delete_snapshot")
UNTUNED_SNAPSHOT_CONTROLLER = ("upstream defaults", "as it is")


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _volumes(doc: dict[str, Any], variant: dict[str, Any]) -> int | None:
    sweep = variant.get("sweep") or {}
    if sweep.get("value") is not None:
        return _whole(sweep["value"]) if (sweep.get("parameter") or "volumes") == "volumes" else None
    return _whole((doc.get("parameters") or {}).get("volumes"))


def _seed002(doc: dict[str, Any], variant: dict[str, Any], step: str) -> dict[str, Any] | None:
    key = SEED002_STEPS.get(step)
    driver = (doc.get("parameters") or {}).get("storage_class")
    table = SEED002.get(_volumes(doc, variant), {}).get(driver) or {}  # type: ignore[arg-type]  # get(None): no row
    settings = variant.get("settings") or {}
    on = settings.get("enableConcurrency")
    if key not in table or not isinstance(on, bool):
        return None
    if on and step in SNAPSHOT_CONTROLLER_STEPS and settings.get("snapshotController") in UNTUNED_SNAPSHOT_CONTROLLER:
        return None
    return {"seconds": float(table[key][1 if on else 0]), "seed": "002",
            "text": "seed 002, %s, %d volumes, concurrency %s" % (driver, _volumes(doc, variant), "on" if on else "off")}  # type: ignore[str-format]


def _seed000(doc: dict[str, Any], variant: dict[str, Any], step: str) -> dict[str, Any] | None:
    params = doc.get("parameters") or {}
    if step != "scale_up" or _whole(params.get("replicas")) != SEED000_REPLICAS \
            or _whole(params.get("volumes_per_pod", SEED000_DISKS_PER_POD)) != SEED000_DISKS_PER_POD:
        return None
    settings = variant.get("settings") or {}
    parallel, controller = settings.get("DiskParallelAttach"), settings.get("DiskADController")
    if parallel is True and controller in (None, True):
        mode = "parallel"
    elif parallel is False and controller in (None, False):
        mode = "serial"
    else:  # the controller attaching one disk at a time (attribution's middle variant): not a seed's figure
        return None
    return {"seconds": SEED000[mode], "seed": "000",
            "text": "seed 000, %d pods x %d disks, %s attach" % (SEED000_REPLICAS, SEED000_DISKS_PER_POD, mode)}


SEEDS = {"csi_lifecycle": _seed002, "attach_stress": _seed000}


def time_scale(doc: dict[str, Any]) -> float | None:
    """The time scale the cluster ran its latencies at (a simulator's, bench/runner.py), or None on a real cluster:
    cluster time = wall time / time scale, the figure a seed's is set beside."""
    scale = (doc.get("cluster") or {}).get("time_scale")
    return float(scale) if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0 else None


def seed_figure(doc: dict[str, Any], variant: object, step: str) -> dict[str, Any] | None:
    """{"seconds", "seed", "text"} of the seed's measurement this step of this variant repeats, or None."""
    find = SEEDS.get(doc.get("benchmark"))  # type: ignore[arg-type]  # get(None): no seed
    return find(doc, variant, step) if find and isinstance(variant, dict) else None
