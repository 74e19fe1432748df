"""rollout/render.py: rollout.md and rollout.html say every decision, reason and figure; the page stands alone."""
from __future__ import annotations

import re
from pathlib import Path

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import render as RR
from tests.support import rollout_samples as sample

REPO = Path(__file__).resolve().parents[4]
EXAMPLE = REPO / "docs" / "rollout-example.md"


def test_markdown_has_the_headline_the_waves_decisions_reasons_and_figures():
    md = RR.to_markdown(sample.document())
    assert "# Rollout of trident_concurrency (trident_concurrency-1a2b3c)" in md
    assert "3 clusters: 2 promoted, 1 rolled back; wave 2 of 2 done" in md
    assert "### Wave 1 · passed · 0 failed" in md and "### Wave 2 · passed · 1 failed" in md
    row = next(line for line in md.splitlines() if line.startswith("| twin-3 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["twin-3", "rolled back", "the observed speedup 1.4x (95% CI 0.9x to 1.8x) is below the required 2.78x",
                     "1.4× (95% CI 0.9× – 1.8×)", "≥ 2.8×", "0.210", "0 → 2", "FailedAttachVolume", "verified"]
    # the gate's step table of the rolled-back cluster marks the step that got worse
    assert "| publish | 900ms | 1.4s | — | — | — | — | +50.0% | ≤ +20.0% | worse |" in md
    assert "- earlier: 2026-12-06T04:59:00Z: pending (not started yet)" in md


def test_an_inconclusive_gate_and_its_bounds_are_named():
    records = sample.records()
    back = records["twin-3"]
    back["gate"] = dict(back["gate"], decision="inconclusive", gain=dict(
        back["gate"]["gain"], ci_low=1.5, ci_high=3.1, observed_speedup=2.2, degrees_of_freedom=2.0,
        repetitions={"baseline": 2, "candidate": 5}))
    md = RR.to_markdown(D.assemble(records))
    row = next(line for line in md.splitlines() if line.startswith("| twin-3 |"))
    assert "rolled back · gate inconclusive" in row and "2.2× (95% bounds 1.5× – 3.1×, 2+5 repetitions, df 2)" in row


def test_a_halted_rollout_says_where_and_why():
    md = RR.to_markdown(D.assemble(sample.records(), waves=3, max_fail_percentage=0))
    assert ("3 clusters: 2 promoted, 1 rolled back; halted at wave 2: 1 of 2 clusters rolled back or failed (50%), "
            "above max_fail_percentage 0%") in md
    assert "**halted**" in md
    # the same failures in the last wave halt nothing: the run is done, not halted
    last = RR.to_markdown(sample.document(max_fail_percentage=0))
    assert "halted" not in last and "**done**" in last and "### Wave 2 · done · 1 failed" in last


def test_progress_is_said_while_a_wave_is_pending():
    records = sample.records()
    records["twin-2"] = D.new_record(sample.ROLLOUT, "twin-2", 2, "pending", "not started yet",
                                     updated="2026-12-06T04:59:00Z")
    assert RR.headline(D.assemble(records)).endswith("; wave 1 of 2 done, wave 2 pending")


def test_html_is_self_contained_and_has_the_same_figures():
    html = RR.to_html(sample.document())
    assert html.startswith("<!DOCTYPE html>")
    for text in ("twin-1", "promoted", "rolled back", "1.4× (95% CI 0.9× – 1.8×)", "≥ 2.8×", "FailedAttachVolume",
                 "the observed speedup 1.4x (95% CI 0.9x to 1.8x) is below the required 2.78x", "<svg"):
        assert text in html, text
    # nothing loaded from elsewhere: no src/href other than the page's own anchors, no @import
    assert re.findall(r'(?:src|href)="(?!#|data:)[^"]*"', html) == [] and "@import" not in html


def test_html_escapes_a_cluster_name_and_reason():
    records = sample.records()
    evil = "twin<script>alert(1)"  # a record's cluster holds no "/" (it is the file's name), so no closing tag here
    records[evil] = dict(records.pop("twin-1"), cluster=evil, reason='"quoted" & <b>bold</b></script>')
    html = RR.to_html(D.assemble(records))
    assert "<script>" not in html and "<b>bold</b>" not in html and "</script>" not in html
    assert "twin&lt;script&gt;alert(1)" in html and "&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


def test_writing_twice_changes_nothing_and_check_mode_writes_nothing(tmp_path):
    doc = sample.document()
    dry = RR.write_rollout(doc, str(tmp_path), check_mode=True)
    assert all(w["changed"] for w in dry.values()) and list(tmp_path.iterdir()) == []
    first = RR.write_rollout(doc, str(tmp_path))
    assert sorted(Path(w["path"]).name for w in first.values()) == ["rollout.html", "rollout.json", "rollout.md"]
    assert not any(w["changed"] for w in RR.write_rollout(sample.document(), str(tmp_path)).values())


def test_docs_rollout_example_is_the_renderers_output():
    """Regenerate with the snippet at the end of docs/rollout-example.md (headings one level down)."""
    demoted = re.sub(r"^(#+) ", r"#\1 ", RR.to_markdown(sample.document()), flags=re.M)
    assert demoted in EXAMPLE.read_text(encoding="utf-8")
