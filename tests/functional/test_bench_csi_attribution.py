"""Seed 002's method in the CSI lifecycle benchmark: compare switches Trident's concurrent core AND the
snapshot-controller's client limits (OFF = both at upstream defaults, ON = both tuned), and attribution measures the
middle variant too, so each knob's share of a step's speedup is visible. Only ratios measured in one run are asserted.
"""
from __future__ import annotations

import pytest

from tests.functional.test_bench_csi_lifecycle import PLAYBOOK, leftovers, result_of

STEPS = ["create_volume", "create_snapshot", "delete_snapshot", "delete_volume"]
VARIANTS = ["off", "concurrency only", "concurrency + snapshot-controller"]


def snapshot_controller_args(twin) -> list[str]:
    deployments = twin.kubectl_json("get", "deployments", "-A", "-l", "app.kubernetes.io/name=snapshot-controller")["items"]
    if not deployments:
        deployments = [twin.kubectl_json("get", "deployment", "snapshot-controller", "-n", "kube-system")]
    return deployments[0]["spec"]["template"]["spec"]["containers"][0].get("args", [])


def rate(doc: dict, variant: str, step: str) -> float:
    runs = next(v for v in doc["variants"] if v["name"] == variant)["runs"]
    s = next(s for s in runs[0]["steps"] if s["name"] == step)
    assert s["status"] == "ok", s
    return s["rate"]


@pytest.mark.long
def test_attribution_measures_each_knob_in_one_run(twin_factory, tmp_path):
    # Time scale 0.2, as the snapshot pacing test: at 0.03 the tuned and untuned snapshot-controller both finished
    # 60 snapshots in ~3.7 s of wall time, the twin's own CPU time for their ~540 API writes, so the ratio measured
    # this machine. At 0.2 the token bucket (30 x 9 calls at QPS 5: ~52 simulated s, ~10 s of wall time) and
    # ONTAP's serialized section decide the step times.
    twin = twin_factory(nodes=3, time_scale=0.2)
    run = twin.playbook(PLAYBOOK, extra_vars={"volumes": 30, "attribution": True, "steps": ",".join(STEPS),
                                              "reports_dir": str(tmp_path / "reports")})
    assert run.rc == 0, run.stdout[-4000:]
    doc = result_of(tmp_path / "reports")
    assert [v["name"] for v in doc["variants"]] == VARIANTS
    settings = {v["name"]: v["settings"] for v in doc["variants"]}
    assert settings["off"] == {"enableConcurrency": False, "snapshotController": "upstream defaults"}
    assert settings["concurrency only"] == {"enableConcurrency": True, "snapshotController": "upstream defaults"}
    assert settings["concurrency + snapshot-controller"] == {
        "enableConcurrency": True, "snapshotController": "worker-threads 25, kube-api-qps 75, kube-api-burst 150"}
    # concurrency is what speeds volume creation; the snapshot-controller's limits are what pace snapshots
    assert rate(doc, "concurrency only", "create_volume") / rate(doc, "off", "create_volume") > 1.5
    assert (rate(doc, "concurrency + snapshot-controller", "create_snapshot")
            / rate(doc, "concurrency only", "create_snapshot")) > 1.5
    # the run leaves both knobs on, as compare does, and nothing of its own behind
    args = snapshot_controller_args(twin)
    assert "--kube-api-qps=75" in args and "--kube-api-burst=150" in args, args
    assert leftovers(twin, doc["run_id"]) == {}
    report = next((tmp_path / "reports" / "localhost").iterdir()) / "report.md"
    assert "concurrency + snapshot-controller" in report.read_text()


def test_compare_without_snapshot_steps_leaves_the_snapshot_controller_alone(twin, tmp_path):
    before = snapshot_controller_args(twin)
    run = twin.playbook(PLAYBOOK, extra_vars={"volumes": 4, "compare": True, "steps": "create_volume,delete_volume",
                                              "reports_dir": str(tmp_path / "reports")})
    assert run.rc == 0, run.stdout[-4000:]
    doc = result_of(tmp_path / "reports")
    assert [v["name"] for v in doc["variants"]] == ["concurrency off", "concurrency on"]
    assert {v["settings"]["snapshotController"] for v in doc["variants"]} == {"as it is"}
    assert snapshot_controller_args(twin) == before
    assert "snapshot-controller left as it is" in " ".join(doc.get("notes", []))
