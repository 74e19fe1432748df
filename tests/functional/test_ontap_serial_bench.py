"""An overloaded ONTAP (the twin setting ontap_serial) takes away what Trident's concurrent core gains, so a
guarded rollout of trident_concurrency has something to refuse (issue 30): playbooks/bench_csi_lifecycle.yml's
compare variants (concurrency off, then on) on one twin, with the setting on and then back off. Only ratios of
the same run are compared."""
from __future__ import annotations

from tests.functional.test_bench_csi_lifecycle import PLAYBOOK, result_of


def speedups(twin, reports) -> dict[str, float]:
    """OFF/ON wall time per step, and over the sum of the steps (the report's "overall")."""
    run = twin.playbook(PLAYBOOK, extra_vars={"volumes": 20, "compare": True, "reports_dir": str(reports)})
    assert run.rc == 0, run.stdout[-4000:]
    doc = result_of(reports)
    off, on = ([s for s in v["runs"][0]["steps"] if s["status"] == "ok"] for v in doc["variants"])
    assert [s["name"] for s in off] == [s["name"] for s in on] and len(off) == 8
    out = {a["name"]: a["wall_s"] / b["wall_s"] for a, b in zip(off, on)}
    out["overall"] = sum(s["wall_s"] for s in off) / sum(s["wall_s"] for s in on)
    return out


def test_overloaded_ontap_keeps_trident_concurrency_from_helping(twin, tmp_path):
    twin.twin_cmd("settings", "--set", '{"ontap_serial": true}')
    serial = speedups(twin, tmp_path / "serial")
    twin.twin_cmd("settings", "--set", '{"ontap_serial": false}')  # calls that start afterwards are normal again
    normal = speedups(twin, tmp_path / "normal")
    assert serial["overall"] < 1.5 and normal["overall"] > 2.5, (serial, normal)
    # the steps that are mostly ONTAP work: several times faster normally, about as slow under the setting
    for step in ("create_volume", "clone_from_snapshot"):
        assert serial[step] < 1.5 < 2.5 < normal[step], (step, serial, normal)
