"""The rollout gate's published error rates hold: benchmarks/gate_calibration.py, run smaller, gives the table of
docs/rollout-gate.md within its Monte-Carlo error, and the simulation computes what judge() computes from documents.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import validate
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate as G
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate_stats as S
from benchmarks import gate_calibration as C

REPO = Path(__file__).resolve().parents[4]
# the four kinds of dependence the targets are stated for (docs/rollout-gate.md, "Calibration")
TARGETED = ("independent latencies", "repetition effects sd 0.2", "drift: after-probe 10 % faster",
            "drift: after-probe 10 % slower", "unequal: 3 x 10 ops at sigma 0.3 against 4 x 1 at sigma 1.0")
REPLICATIONS = 3000
PUBLISHED = 10000  # the replications of the published table (the script's default)


def published() -> dict[str, dict[str, float]]:
    """{scenario: {column: share}} of the table between the calibration markers of docs/rollout-gate.md."""
    text = (REPO / "docs" / "rollout-gate.md").read_text()
    table = text.split("<!-- gate_calibration: begin -->")[1].split("<!-- gate_calibration: end -->")[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        pct = [float(c.rstrip(" %")) / 100 for c in cells[1:5]]
        rows[cells[0]] = dict(zip(("type_i", "coverage", "power_1_2", "power_1_5"), pct), rounds_1_5=float(cells[5]))
    return rows


@pytest.fixture(scope="module")
def table():
    return published()


@pytest.fixture(scope="module")
def rerun():
    return {r["scenario"]: r for r in C.calibrate(REPLICATIONS, seed=1)}


def test_the_table_meets_the_targets(table):
    assert set(table) == {s["name"] for s in C.SCENARIOS}
    for name in TARGETED:
        assert table[name]["type_i"] <= 0.05 and table[name]["coverage"] >= 0.93, (name, table[name])


@pytest.mark.parametrize("column, cells", [("type_i", 1), ("coverage", 3), ("power_1_2", 1), ("power_1_5", 1)])
def test_a_smaller_run_holds_the_published_figures(table, rerun, column, cells):
    for name, row in table.items():
        p = row[column]
        # 4 standard errors of the difference of two binomial shares (the table's and this run's), at least 0.3 %:
        # a share of 0 % or 100 % has no spread of its own
        se = math.sqrt(max(p * (1 - p), 0.001) * (1 / (PUBLISHED * cells) + 1 / (REPLICATIONS * cells)))
        assert abs(rerun[name][column] - p) <= max(4 * se, 0.003), (name, column, rerun[name][column], p)
        assert abs(rerun[name]["rounds_1_5"] - row["rounds_1_5"]) <= 1, name


def _doc(run_id: str, logs: np.ndarray) -> dict:
    """A result document whose repetition r, step s has the latencies exp(logs[r, s])."""
    doc = D.new_result("csi_lifecycle", run_id=run_id, started="2026-12-06T05:00:00.000000Z")
    variant = D.add_variant(doc, "as configured")
    for rep in logs:
        run = D.add_run(variant, started="2026-12-06T05:00:00.000000Z")
        for name, lat in zip(("create_volume", "publish"), np.exp(rep)):
            D.add_step(run, name, count=len(lat), wall_s=float(lat.max()), unit="vol",
                       objects=[{"name": "%s-%03d" % (name, i), "latency": float(x)} for i, x in enumerate(lat)])
        D.finish_run(run, finished="2026-12-06T05:05:00.000000Z")
    return validate(D.finalize(doc, finished="2026-12-06T05:05:00.000000Z"))


def test_the_simulation_computes_what_the_gate_computes_from_documents():
    rng = np.random.default_rng(7)
    for shape_b, shape_c in ((C.PROBE, C.PROBE), (C.SCENARIOS[4]["baseline"], C.SCENARIOS[4]["candidate"])):
        lb = np.log(C.STEP_SCALES)[None, :, None] + rng.normal(0, shape_b["sigma"], (
            shape_b["repetitions"], 2, shape_b["operations"]))
        lc = np.log(C.STEP_SCALES)[None, :, None] - 0.8 + rng.normal(0, shape_c["sigma"], (
            shape_c["repetitions"], 2, shape_c["operations"]))
        # the latencies as the documents store them (microseconds)
        lb, lc = np.log(np.round(np.exp(lb), 6)), np.log(np.round(np.exp(lc), 6))
        zb, zc = S.scores(lb.mean(axis=-1)[None], lc.mean(axis=-1)[None])
        b = S.bounds(zb, zc, C.CONFIDENCE, S.DRIFT_PCT)
        g = G.judge(_doc("b", lb), _doc("c", lc), expected_speedup=C.EXPECTED, min_gain_fraction=C.FRACTION,
                    confidence=C.CONFIDENCE)["gain"]
        assert g["ci_low"] == pytest.approx(math.exp(float(b["low"][0])), rel=1e-5)
        assert g["ci_high"] == pytest.approx(math.exp(float(b["high"][0])), rel=1e-5)
        assert g["observed_speedup"] == pytest.approx(math.exp(float(b["estimate"][0])), rel=1e-5)
        assert g["required_speedup"] == C.REQUIRED


def test_the_script_prints_the_table_the_docs_show(capsys, tmp_path):
    assert C.main(["--replications", "200", "--seed", "3", "--json", str(tmp_path / "rows.json")]) == 0
    out = capsys.readouterr().out
    text = (REPO / "docs" / "rollout-gate.md").read_text()
    header = out.splitlines()[:2]
    assert "\n".join(header) in text.split("<!-- gate_calibration: begin -->")[1]
    assert [line.split("|")[1].strip() for line in out.splitlines()[2:2 + len(C.SCENARIOS)]] == list(published())
    assert "200 simulated clusters per cell, seed 3, required 1.75x" in out and (tmp_path / "rows.json").is_file()
