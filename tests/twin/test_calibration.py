"""twin/calibration.yaml against the seeds' figures, and the calibration API other controllers read.

The figures checked here are what the file predicts from its means (a batch of N operations under a global lock
takes N x (median + serial); under Trident's concurrent core N x serial); benchmarks/calibration.py measures
what the running twin does (docs/calibration.md)."""
from __future__ import annotations

import importlib.util

import pytest

from tests.support.twin import REPO
from twin import calibration


def _seed002_100():
    """Seed 002's 100-volume table, as benchmarks/calibration.py states it, keyed by calibration.yaml's operations."""
    spec = importlib.util.spec_from_file_location("calibration_cli", REPO / "benchmarks" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = {"create": "create_volume", "snapshot": "create_snapshot", "clone": "clone_volume"}
    return {driver: {names.get(step, step): figures for step, figures in steps.items()}
            for driver, steps in module.SEED002[100].items()}


SEED002_OFF_ON = _seed002_100()  # seconds with concurrency OFF and ON
OPERATIONS = ("create_volume", "publish", "unpublish", "create_snapshot", "clone_volume", "delete_clone",
              "delete_snapshot", "delete_volume")


@pytest.fixture(scope="module")
def cal():
    return calibration.load()


def serial_mean(cal, driver, op):
    spec = cal.spec(driver, op)
    return calibration.mean({"median": spec["serial"], "sigma": spec.get("sigma", 0)})


@pytest.mark.parametrize("driver", sorted(SEED002_OFF_ON))
def test_trident_tables_follow_seed_002(cal, driver):
    for op in OPERATIONS:
        assert cal.spec(driver, op)["serial"] > 0  # every CSI call is calibrated, also those the seed lacks
    for op, (off, on) in SEED002_OFF_ON[driver].items():
        predicted_off = 100 * (cal.mean(driver, op) + serial_mean(cal, driver, op))
        predicted_on = 100 * serial_mean(cal, driver, op)
        # both leave room for what the rest of the pipeline adds (sidecars, binding, kubelet): a few seconds,
        # which weigh most in the shortest steps (SAN unpublish, 22 s)
        assert 0.75 * off < predicted_off < 1.05 * off, (driver, op, predicted_off, off)
        assert 0.65 * on < predicted_on < 1.05 * on, (driver, op, predicted_on, on)


def test_disk_attach_follows_seed_000(cal):
    d = "diskplugin.csi.alibabacloud.com"
    serial = 56 * (cal.mean(d, "attach") + cal.mean(d, "attach_hotplug"))
    parallel = cal.mean(d, "attach") + 56 * cal.mean(d, "attach_hotplug")
    kubelet = cal.section("kubelet")
    start = calibration.mean(kubelet["mount_by_driver"][d]) + calibration.mean(kubelet["container_start"])
    # 3 min 19 s serial (incl. ~3 s provisioning), 37 s parallel
    assert 180 < serial + start + cal.mean(d, "create_volume") < 215
    assert 33 < parallel + start < 42
    assert 4.5 < (serial + start) / (parallel + start) < 6.5


def test_limits_are_the_documented_defaults(cal):
    assert cal.limit("diskplugin.csi.alibabacloud.com", "parallel_attach") == 32
    assert cal.limit("diskplugin.csi.alibabacloud.com", "parallel_detach") == 5
    assert cal.limit("trident", "lif_api_calls") == 20
    assert (cal.limit("snapshot-controller", "worker_threads"), cal.number("snapshot-controller", "kube_api_qps"),
            cal.limit("snapshot-controller", "kube_api_burst")) == (10, 5.0, 10)
    # #1344: 80 snapshots in 143 s at QPS 5 / burst 10 means ~9 calls each on the throttled client
    calls = 5 + cal.limit("snapshot-controller", "conflict_retries")
    assert abs((80 * calls - 10) / 5 - 143) < 0.1 * 143
    with pytest.raises(calibration.CalibrationError):
        cal.limit("trident", "no_such_limit")


def test_samples_are_seeded_and_shaped(cal):
    a = calibration.Calibration(cal.doc)
    b = calibration.Calibration(cal.doc)
    draws = [a.latency("ontap-nas", "create_volume") for _ in range(200)]
    assert draws == [b.latency("ontap-nas", "create_volume") for _ in range(200)]
    assert all(d > 0 for d in draws)
    median = sorted(draws)[100]
    assert abs(median / cal.spec("ontap-nas", "create_volume")["median"] - 1) < 0.1
    assert calibration.sample(2.5, a.rng) == 2.5
    u = [calibration.sample({"min": 1, "max": 2}, a.rng) for _ in range(50)]
    assert all(1 <= x <= 2 for x in u) and max(u) - min(u) > 0.5


def test_kubelet_latencies_with_driver_overrides(cal):
    kub = cal.section("kubelet")
    assert {"container_start", "container_stop", "mount", "unmount"} <= set(kub)
    c = calibration.Calibration(dict(cal.doc, kubelet={"mount": 1.0, "mount_by_driver": {"x.csi": 7.0}}))
    assert c.kubelet_latency("mount") == 1.0
    assert c.kubelet_latency("mount", "x.csi") == 7.0
    assert c.kubelet_latency("mount", "other.csi") == 1.0
    with pytest.raises(calibration.CalibrationError):
        c.kubelet_latency("unmount")
