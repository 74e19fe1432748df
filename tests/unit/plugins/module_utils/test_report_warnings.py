"""Warning events by reason in step results, the console summary, report.md and report.html."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import warning_summary
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report.summary import summarize


def item(name, *warnings):
    i = Item(name, lambda view: None)
    for n, (reason, message, count, t) in enumerate(warnings):
        i.warnings["ev-%s-%d" % (name, n)] = (reason, message, count, t)
    return i


def doc_with_warnings():
    items = [item("vol-0", ("ProvisioningFailed", "old", 1, 1.0), ("ProvisioningFailed", "new", 2, 2.0)),
             item("vol-1", ("ProvisioningFailed", "x", 1, 0.5)),
             item("vol-2", ("FailedAttachVolume", "attach failed", 1, 3.0)),
             item("vol-3")]
    warnings = warning_summary(items)
    doc = D.new_result("csi_lifecycle", run_id="r1")
    run = D.add_run(D.add_variant(doc, "as configured"))
    D.add_step(run, "create_volume", count=4, wall_s=1.0, unit="vol")
    run["steps"][-1].update(warnings=warnings, warned_objects=3)
    D.finish_run(run)
    D.finalize(doc)
    return doc, warnings


def test_step_warnings_by_reason_with_counts_and_examples():
    _, warnings = doc_with_warnings()
    assert [w["reason"] for w in warnings] == ["ProvisioningFailed", "FailedAttachVolume"]
    prov = warnings[0]
    assert prov["objects"] == 2 and prov["events"] == 4 and prov["examples"] == ["vol-0", "vol-1"]
    assert prov["message"] == "new"  # the latest one


def test_an_ok_run_with_warnings_says_so_everywhere():
    doc, _ = doc_with_warnings()
    D.validate(doc)
    assert doc["status"] == "ok"
    s = summarize(doc)
    assert s["warnings"]["count"] == 3
    text = "\n".join(s["warning_lines"])
    assert "3 objects had Warning events" in text
    assert "ProvisioningFailed: 2 objects, 4 events (e.g. vol-0, vol-1)" in text
    assert "FailedAttachVolume: 1 object, 1 event (e.g. vol-2)" in text
    md = R.to_markdown(doc)
    assert "### Warnings (3 objects)" in md and "| ProvisioningFailed | vol-0, vol-1 | new | 2 | 4 |" in md
    html = R.to_html(doc, charts=False)
    assert 'id="warnings"' in html and "FailedAttachVolume" in html and "vol-2" in html


def test_no_warnings_no_section():
    doc = D.new_result("csi_lifecycle", run_id="r2")
    run = D.add_run(D.add_variant(doc, "v"))
    D.add_step(run, "create_volume", count=1, wall_s=1.0)
    D.finish_run(run)
    D.finalize(doc)
    assert summarize(doc)["warning_lines"] == [] and "Warnings" not in R.to_markdown(doc)


def test_a_disturbed_step_fails_the_run_and_has_no_figures():
    doc = D.new_result("csi_lifecycle", run_id="r3")
    run = D.add_run(D.add_variant(doc, "v"))
    D.add_step(run, "delete_volume", status="disturbed", count=4, wall_s=0.01,
               reason="not a measurement: 4 of 4 objects were gone before the step's request reached them")
    D.finish_run(run)
    D.finalize(doc)
    D.validate(doc)
    assert doc["status"] == "failed"
    step = doc["variants"][0]["summary"]["steps"][0]
    assert step["status"] == "disturbed" and step["wall_s"] is None
    assert "disturbed (not a measurement" in R.to_markdown(doc)
