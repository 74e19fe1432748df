"""twin/calibration.yaml against the seeds' figures, and the calibration API other controllers read.

The figures checked here are what the file predicts from its means (a batch of N operations under a global lock
takes N x (median + serial); under Trident's concurrent core N x serial, each call's figures scaled by its rank
in the busy run, backlog_factor); benchmarks/calibration.py measures what the running twin does
(docs/calibration.md)."""
from __future__ import annotations

import importlib.util

import pytest

from tests.support.twin import REPO
from twin import calibration


def _seed002():
    """Seed 002's tables by batch size, as benchmarks/calibration.py states them, keyed by calibration.yaml's
    operations."""
    spec = importlib.util.spec_from_file_location("calibration_cli", REPO / "benchmarks" / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = {"create": "create_volume", "snapshot": "create_snapshot", "clone": "clone_volume"}
    return {n: {driver: {names.get(step, step): figures for step, figures in steps.items()}
                for driver, steps in table.items()}
            for n, table in module.SEED002.items()}


SEED002 = _seed002()  # {volumes: {driver: {operation: (seconds with concurrency OFF, ON)}}}
SEED002_OFF_ON = SEED002[100]
OPERATIONS = ("create_volume", "publish", "unpublish", "create_snapshot", "clone_volume", "delete_clone",
              "delete_snapshot", "delete_volume")


@pytest.fixture(scope="module")
def cal():
    return calibration.load()


def serial_mean(cal, driver, op):
    spec = cal.spec(driver, op)
    return calibration.mean({"median": spec["serial"], "sigma": spec.get("sigma", 0)})


def predicted(cal, driver, op, volumes):
    """(OFF, ON) seconds of a batch of `volumes` calls: the k-th call of the busy run has backlog k."""
    median = sum(cal.backlog_factor(driver, op, "median", k) for k in range(1, volumes + 1)) * cal.mean(driver, op)
    serial = sum(cal.backlog_factor(driver, op, "serial", k) for k in range(1, volumes + 1)) * serial_mean(cal, driver, op)
    return median + serial, serial


@pytest.mark.parametrize("volumes", sorted(SEED002))
@pytest.mark.parametrize("driver", sorted(SEED002_OFF_ON))
def test_trident_tables_follow_seed_002(cal, driver, volumes):
    for op in OPERATIONS:
        assert cal.spec(driver, op)["serial"] > 0  # every CSI call is calibrated, also those the seed lacks
        assert cal.spec(driver, op)["serial_1000"] > 0
    assert set(SEED002[volumes][driver]) == set(SEED002_OFF_ON[driver])  # every step the seed has, at both sizes
    for op, (off, on) in SEED002[volumes][driver].items():
        predicted_off, predicted_on = predicted(cal, driver, op, volumes)
        # both leave room for what the rest of the pipeline adds (sidecars, binding, kubelet): a few seconds,
        # which weigh most in the shortest steps (SAN unpublish, 22 s)
        assert 0.75 * off < predicted_off < 1.05 * off, (driver, op, predicted_off, off)
        assert 0.65 * on < predicted_on < 1.05 * on, (driver, op, predicted_on, on)


@pytest.mark.parametrize("volumes", sorted(SEED002))
@pytest.mark.parametrize("driver", sorted(SEED002_OFF_ON))
def test_unpublish_with_the_kubelets_share_follows_seed_002(cal, driver, volumes):
    """The unpublish step holds the kubelet's container stop and unmount besides the detaches, OFF as well as ON:
    the SAN steps are 22-27 s at 100 volumes, so that ~0.8 s must be left out of the Trident figures there."""
    kubelet = cal.section("kubelet")
    share = calibration.mean(kubelet["container_stop"]) + calibration.mean(kubelet["unmount_by_driver"]["csi.trident.netapp.io"])
    off, on = SEED002[volumes][driver]["unpublish"]
    predicted_off, predicted_serial = predicted(cal, driver, "unpublish", volumes)
    predicted_on = predicted_serial + cal.mean(driver, "unpublish") + share  # the first call's overlapping part
    assert abs((predicted_off + share) / off - 1) < 0.05, (driver, volumes, predicted_off + share, off)
    assert abs(predicted_on / on - 1) < 0.05, (driver, volumes, predicted_on, on)


def test_backlog_factor_keeps_100_and_clamps_past_1000(cal):
    d, op = "ontap-nas", "create_volume"
    spec = cal.spec(d, op)
    # up to the low anchor every call pays the 100-volume figure, so 100-volume runs are what they were
    assert all(cal.backlog_factor(d, op, part, k) == 1.0 for part in ("median", "serial") for k in (1, 50, 100))
    # the n-th call pays the run's increase: 1000 calls total 1000 x serial_1000 to rounding
    total = sum(cal.backlog_factor(d, op, "serial", k) for k in range(1, 1001)) * spec["serial"]
    assert abs(total - 1000 * spec["serial_1000"]) < 0.01
    # past the high anchor each call pays the 1000-volume figure, no extrapolation
    assert abs(cal.backlog_factor(d, op, "serial", 5000) * spec["serial"] - spec["serial_1000"]) < 1e-9
    # the seed's nas create gets slower per volume with the batch, its unpublish faster
    assert cal.backlog_factor(d, op, "serial", 500) > 1 > cal.backlog_factor(d, "unpublish", "serial", 500)
    # operations without a second anchor (ACK) do not depend on load
    assert cal.backlog_factor("diskplugin.csi.alibabacloud.com", "attach", "median", 900) == 1.0


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
