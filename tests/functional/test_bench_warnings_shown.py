"""Injected provision and attach failures (retried, so the run is ok) are shown by reason, with examples."""
from __future__ import annotations

import json

from tests.support.twin import REPO

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"


def fault(twin, name, rule):
    twin.twin_cmd("fault", "--name", name, "--rule", json.dumps(rule))


def test_warnings_show_in_the_console_summary_and_the_reports(twin, tmp_path):
    fault(twin, "provision", {"count": 3, "driver": "csi.trident.netapp.io"})
    fault(twin, "attach", {"count": 2})
    run = twin.playbook(LIFECYCLE, extra_vars={"volumes": 8, "reports_dir": str(tmp_path)})
    assert run.rc == 0, run.stdout[-4000:]
    [run_dir] = [p for p in (tmp_path / "localhost").iterdir() if p.is_dir()]
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["status"] == "ok"  # the controllers retried: every object got there
    steps = {s["name"]: s for s in doc["variants"][0]["runs"][0]["steps"]}
    [prov] = steps["create_volume"]["warnings"]
    assert prov["reason"] == "ProvisioningFailed" and prov["events"] >= 1 and prov["examples"]
    assert "injected fault: provision failed" in prov["message"]
    assert any(w["reason"] == "FailedAttachVolume" for w in steps["publish"]["warnings"])

    console = run.task("Show the report")["result"]["msg"]
    text = "\n".join(console)
    assert "ok with warnings on" in console[1]
    assert "had Warning events" in text and "ProvisioningFailed:" in text and "FailedAttachVolume:" in text
    assert prov["examples"][0] in text

    md = (run_dir / "report.md").read_text()
    assert "### Warnings (" in md and "| ProvisioningFailed | " + prov["examples"][0] in md
    assert "FailedAttachVolume" in md
    html = (run_dir / "report.html").read_text()
    assert 'id="warnings"' in html and "ProvisioningFailed" in html and "FailedAttachVolume" in html
