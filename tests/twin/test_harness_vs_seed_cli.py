"""benchmarks/harness_vs_seed.py --reports: the result.json documents the playbooks write, read back per step and
scaled to cluster seconds beside the seeds (documents built here, so no twin or playbook has to run)."""
from __future__ import annotations

import json
import subprocess

from benchmarks.calibration import SEED002
from tests.support.twin import REPO, VENV_BIN

SCRIPT = REPO / "benchmarks" / "harness_vs_seed.py"
TIME_SCALE = 0.05
# seed 002's ontap-nas at 100 volumes, (OFF s, ON s), under the collection's step names
NAS = {{"create": "create_volume", "snapshot": "create_snapshot", "clone": "clone_from_snapshot"}.get(step, step): figures
       for step, figures in SEED002[100]["ontap-nas"].items()}


def _doc(benchmark: str, started: str, params: dict, variants: dict[str, dict[str, float]]) -> dict:
    """A result document as bench_measure writes it: variants, each with one run of steps and their wall_s."""
    def run(steps: dict[str, float]) -> dict:
        return {"steps": [{"name": s, "status": "ok", "wall_s": wall} for s, wall in steps.items()]}

    return {"benchmark": benchmark, "started": started, "parameters": params,
            "variants": [{"name": name, "runs": [run(steps)]} for name, steps in variants.items()]}


def _write(root, run_id: str, doc: dict) -> None:
    (root / run_id).mkdir(parents=True)
    (root / run_id / "result.json").write_text(json.dumps(doc))


def _run(*args):
    return subprocess.run([str(VENV_BIN / "python"), str(SCRIPT), *args], cwd=REPO, check=True, capture_output=True,
                          text=True, timeout=120).stdout


def test_reports_are_scaled_back_and_compared_step_by_step(tmp_path):
    # every step at exactly the seed's figure times the time scale, except concurrency on's create at twice it
    on = {s: f[1] * TIME_SCALE for s, f in NAS.items()} | {"create_volume": 2 * NAS["create_volume"][1] * TIME_SCALE}
    _write(tmp_path, "csi", _doc("csi_lifecycle", "2026-12-04T18:00:00Z", {"storage_class": "ontap-nas", "volumes": 100},
                                 {"concurrency off": {s: f[0] * TIME_SCALE for s, f in NAS.items()},
                                  "concurrency on": on}))
    # an older run of the same class is left out: the newest run of each storage class is the one shown
    _write(tmp_path, "older", _doc("csi_lifecycle", "2026-12-04T17:00:00Z", {"storage_class": "ontap-nas", "volumes": 100},
                                   {"concurrency off": {"create_volume": 1.0}, "concurrency on": {"create_volume": 1.0}}))
    _write(tmp_path, "attach", _doc("attach_stress", "2026-12-04T18:00:00Z", {},
                                    {"parallel attach off": {"scale_up": 199 * TIME_SCALE, "scale_down": 170 * TIME_SCALE},
                                     "parallel attach on": {"scale_up": 37 * TIME_SCALE, "scale_down": 171 * TIME_SCALE}}))
    out = _run("--reports", str(tmp_path), "--time-scale", str(TIME_SCALE))
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in out.splitlines()
            if line.startswith("| ")}
    assert rows["create"] == ["6m57s", "6m57s", "1.00", "41s", "1m22s", "2.00 !", "10.2x", "5.1x !"]  # "!": outside 20 %
    for step in ("publish", "unpublish", "snapshot", "clone", "delete_clone", "delete_snapshot", "delete_volume"):
        assert rows[step][2] == rows[step][5] == "1.00", (step, rows[step])
    assert rows["serial (parallel attach off)"][1:] == ["3m19s", "1.00"]
    assert rows["parallel (parallel attach on)"][1:] == ["37s", "1.00"]
    # 8 OFF + 8 ON + 8 ratios + seed 000's 3: all but create ON and create's ratio within 20 %
    assert "Within 20% of the seed: 25 of 27 figures. Furthest: ontap-nas create ON 2.00, ontap-nas create OFF/ON ratio 0.50" in out
