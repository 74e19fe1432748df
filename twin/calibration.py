"""The twin's calibration: latency distributions and concurrency limits from twin/calibration.yaml.

    from twin import calibration
    cal = calibration.load()                      # parsed once per process, cached
    cal.latency("diskplugin.csi.alibabacloud.com", "attach")   # one sample, in REAL-cluster seconds
    cal.serial("ontap-nas", "create_volume")      # seconds in the backend's serialized section (0 if none)
    cal.backlog_factor("ontap-nas", "create_volume", "serial", 640)   # the 640th op of a busy run: x this
    cal.limit("diskplugin.csi.alibabacloud.com", "parallel_attach")   # -> 32
    cal.kubelet_latency("mount", driver="csi.trident.netapp.io")      # driver override, else the generic one

Samples are NOT multiplied by the time scale: controllers pass them to Controller.sleep(), which applies
--time-scale once. Every sample comes from one random.Random seeded by the file's `seed`, so a run repeats
up to the order in which events interleave. TWIN_CALIBRATION=/path/file.yaml loads another file.
"""
from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PATH = Path(__file__).with_name("calibration.yaml")


class CalibrationError(KeyError):
    pass


def sample(spec: Any, rng: random.Random) -> float:
    """One draw from a distribution spec (a number, {median, sigma}, or {min, max})."""
    if spec is None:
        return 0.0
    if isinstance(spec, (int, float)):
        return float(spec)
    if "median" in spec:
        sigma = float(spec.get("sigma", 0))
        median = float(spec["median"])
        return median * math.exp(rng.gauss(0.0, sigma)) if sigma > 0 else median
    if "min" in spec:
        return rng.uniform(float(spec["min"]), float(spec["max"]))
    raise CalibrationError(f"cannot sample {spec!r}")


def mean(spec: Any) -> float:
    """Expected value of a spec (what a table of many operations converges to)."""
    if spec is None:
        return 0.0
    if isinstance(spec, (int, float)):
        return float(spec)
    if "median" in spec:
        return float(spec["median"]) * math.exp(float(spec.get("sigma", 0)) ** 2 / 2)
    return (float(spec["min"]) + float(spec["max"])) / 2


class Calibration:
    def __init__(self, doc: dict[str, Any], seed: int | None = None) -> None:
        self.doc = doc
        self.rng = random.Random(doc.get("seed", 0) if seed is None else seed)

    def section(self, name: str) -> dict[str, Any]:
        """A top-level section as parsed (kubelet, drivers, limits, trident): read-only."""
        return self.doc.get(name) or {}

    def spec(self, driver: str, operation: str) -> Any:
        try:
            return self.doc["drivers"][driver][operation]
        except KeyError:
            raise CalibrationError(f"no calibration for {driver} {operation}") from None

    def latency(self, driver: str, operation: str) -> float:
        """A sample of the operation's (overlapping) latency in real-cluster seconds, unscaled."""
        return sample(self.spec(driver, operation), self.rng)

    def serial(self, driver: str, operation: str) -> float:
        """A sample of the serialized part (same median/sigma shape as `serial` in the file), unscaled."""
        spec = self.spec(driver, operation)
        s = spec.get("serial") if isinstance(spec, dict) else None
        if not s:
            return 0.0
        return sample({"median": s, "sigma": spec.get("sigma", 0)} if isinstance(s, (int, float)) else s, self.rng)

    def mean(self, driver: str, operation: str) -> float:
        return mean(self.spec(driver, operation))

    def _anchors(self, driver: str, operation: str, part: str) -> tuple[float, float, int, int] | None:
        """(figure at the low anchor, at the high anchor, low, high) of `part`, or None if it has no second anchor."""
        spec = self.spec(driver, operation)
        low, high = self.limit("trident", "backlog_low"), self.limit("trident", "backlog_high")
        if not isinstance(spec, dict) or not spec.get(part) or spec.get(f"{part}_{high}") is None:
            return None
        return float(spec[part]), float(spec[f"{part}_{high}"]), low, high

    def batch_mean(self, driver: str, operation: str, part: str, n: int) -> float:
        """`part` (median or serial) averaged over a run of n operations of one kind: the `part` key up to the
        low anchor (limits.trident.backlog_low), the `part_<high>` key from the high one on, log-linear in n
        between them (calibration.yaml, "Load")."""
        a = self._anchors(driver, operation, part)
        if a is None:
            spec = self.spec(driver, operation)
            return float((spec.get(part) if isinstance(spec, dict) else None) or 0.0)
        base, top, low, high = a
        return base * (top / base) ** (math.log(min(max(n, low), high) / low) / math.log(high / low))

    def backlog_factor(self, driver: str, operation: str, part: str, backlog: int) -> float:
        """Multiplier of `part` for the operation that is the `backlog`-th of its kind in one busy run: the
        increase of the run's total, backlog x batch_mean(backlog), over its predecessor's, so a run of n costs
        n x batch_mean(n) and both anchors' tables come out whole. 1 up to the low anchor."""
        a = self._anchors(driver, operation, part)
        if a is None or backlog <= a[2]:
            return 1.0
        n = backlog
        return (n * self.batch_mean(driver, operation, part, n)
                - (n - 1) * self.batch_mean(driver, operation, part, n - 1)) / a[0]

    def limit(self, driver: str, name: str) -> int:
        try:
            return int(self.doc["limits"][driver][name])
        except KeyError:
            raise CalibrationError(f"no limit {name} for {driver}") from None

    def number(self, driver: str, name: str) -> float:
        """A limit that may be fractional (retry intervals, QPS)."""
        try:
            return float(self.doc["limits"][driver][name])
        except KeyError:
            raise CalibrationError(f"no limit {name} for {driver}") from None

    def kubelet_latency(self, operation: str, driver: str | None = None) -> float:
        """mount / unmount / container_start / container_stop / exec_start, with per-driver overrides for (un)mount."""
        kub = self.section("kubelet")
        by_driver = kub.get(f"{operation}_by_driver") or {}
        spec = by_driver.get(driver) if driver else None
        if spec is None:
            spec = kub.get(operation)
        if spec is None:
            raise CalibrationError(f"no kubelet calibration for {operation}")
        return sample(spec, self.rng)

    def trident(self, key: str, sampled: bool = True) -> Any:
        v = self.section("trident").get(key)
        return sample(v, self.rng) if sampled and isinstance(v, (dict, int, float)) else v


_loaded: Calibration | None = None


def load(path: str | Path | None = None, *, reload: bool = False) -> Calibration:
    """Parse the calibration file once per process (the twin, the benchmark) and return it."""
    global _loaded
    if _loaded is None or reload or path is not None:
        p = Path(path or os.environ.get("TWIN_CALIBRATION") or DEFAULT_PATH)
        _loaded = Calibration(yaml.safe_load(p.read_text()))
    return _loaded
