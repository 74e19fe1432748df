"""playbooks/bench_attach_stress.yml on a twin: seed 000's test, parallel attach off vs on, in one run."""
from __future__ import annotations

import json

from benchmarks.calibration import SEED000
from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "bench_attach_stress.yml"


def test_attach_stress_compare_parallel_is_faster_than_serial(twin_factory, tmp_path):
    # Time scale 0.05, the demo's: 56 serial attaches then take ~10 s against ~2 s in parallel, so the CPU time
    # the twin and the harness need for 28 pods (seconds on a busy 2-CPU machine, not scaled) cannot hide the
    # difference the test is about (serial/parallel 0.92-0.95 of the seed's at 0.05, loaded or with a CPU hog
    # beside it; 0.83-0.86 at 0.01 and 0.03, and 0.50 at 0.01 with the hog: docs/calibration.md).
    twin = twin_factory(nodes=3, time_scale=0.05)
    reports = tmp_path / "reports"
    run = twin.playbook(PLAYBOOK, extra_vars={"compare": True, "reports_dir": str(reports)})
    assert run.rc == 0, run.stdout[-4000:]
    [run_dir] = [p for p in (reports / "localhost").iterdir() if p.is_dir()]
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["status"] == "ok"
    replicas = doc["parameters"]["replicas"]
    assert replicas == 28 and doc["parameters"]["disk_limit"] == 56
    off, on = ({s["name"]: s for s in v["runs"][0]["steps"]} for v in doc["variants"])
    assert [v["name"] for v in doc["variants"]] == ["parallel attach off", "parallel attach on"]
    for steps in (off, on):
        up, down = steps["scale_up"], steps["scale_down"]
        assert up["status"] == down["status"] == "ok"
        assert up["count"] == down["count"] == replicas
        # every disk's VolumeAttachment timed, attached before its pod counted as started
        ends = {o["name"]: o["end"] for o in up["objects"]}
        assert len(up["attachments"]) == 2 * replicas
        for a in up["attachments"]:
            assert a["attached"] is not None and a["attached"] <= ends[a["item"]] + 1e-6
        assert all(a["detached"] is not None for a in down["attachments"])
    # parallel attach starts the pods faster, by the seed's ratio within 20 % (a ratio from one run)
    ratio = off["scale_up"]["wall_s"] / on["scale_up"]["wall_s"]
    seed = SEED000["serial"] / SEED000["parallel"]
    assert 0.8 <= ratio / seed <= 1.2, "serial/parallel = %.2f, seed 000 %.2f" % (ratio, seed)
    # the seed's StatefulSet and StorageClass are gone with everything else of the run
    sel = "storageperf.k8s/run-id=" + doc["run_id"]
    assert twin.kubectl_json("get", "namespaces", "-l", sel)["items"] == []
    assert twin.kubectl_json("get", "storageclass", "-l", sel)["items"] == []
    assert twin.kubectl_json("get", "volumeattachments")["items"] == []


def test_replicas_beyond_the_node_disk_limit_are_capped_with_a_message(twin, tmp_path):
    run = twin.playbook(PLAYBOOK, extra_vars={"replicas": 40, "reports_dir": str(tmp_path / "reports")}, check=True)
    assert run.rc == 0, run.stdout[-3000:]
    pre = run.task("Check the inputs and the node")["result"]
    assert pre["plan"]["replicas"] == 28 and pre["plan"]["replicas_requested"] == 40
    assert any("replicas capped from 40 to 28" in m and "56 disks" in m for m in pre["messages"])
    assert twin.kubectl_json("get", "statefulsets", "-A")["items"] == []
