"""-e cleanup=false keeps a CSI lifecycle run's objects; playbooks/cleanup.yml removes them afterwards."""
from __future__ import annotations

import json

from tests.support.twin import REPO

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"
CLEANUP = REPO / "playbooks" / "cleanup.yml"


def test_cleanup_false_keeps_the_objects_until_cleanup_yml(twin, tmp_path):
    run = twin.playbook(LIFECYCLE, extra_vars={"volumes": 4, "steps": "create_volume,publish", "cleanup": False,
                                               "reports_dir": str(tmp_path)})
    assert run.rc == 0, run.stdout[-4000:]
    [run_dir] = [p for p in (tmp_path / "localhost").iterdir() if p.is_dir()]
    run_id = run_dir.name
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["status"] == "ok"
    assert "cleanup" not in doc["variants"][0]["runs"][0]  # the repetition's own cleanup did not run
    sel = "storageperf.k8s/run-id=" + run_id
    [ns] = [n["metadata"]["name"] for n in twin.kubectl_json("get", "namespaces", "-l", sel)["items"]]
    pvcs = twin.kubectl_json("get", "pvc", "-n", ns)["items"]
    assert len(pvcs) == 4 and {p["status"]["phase"] for p in pvcs} == {"Bound"}
    assert len(twin.kubectl_json("get", "pods", "-n", ns)["items"]) == 1
    # the run is over: no live Lease holds the objects
    assert twin.kubectl_json("get", "leases", "-n", ns)["items"] == []

    removed = twin.playbook(CLEANUP, extra_vars={"run_id": run_id})
    assert removed.rc == 0, removed.stdout[-3000:]
    assert removed.task("Delete the run's objects")["result"]["found"]["Namespace"] == [ns]
    assert twin.kubectl_json("get", "namespaces", "-l", sel)["items"] == []
    assert [pv for pv in twin.kubectl_json("get", "pv")["items"]
            if (pv["spec"].get("claimRef") or {}).get("namespace") == ns] == []
