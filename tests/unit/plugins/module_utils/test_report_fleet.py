"""fleet.py and fleet_render.py: real result and advice documents of several clusters -> one validated fleet document, Markdown, HTML."""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_charts, fleet_schema
from tests.support import report_samples as sample

REPO = Path(__file__).resolve().parents[4]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_result(root: Path, cluster: str, volumes: int, failure: bool = False) -> str:
    """The seed document scaled to `volumes`, written where a fleet playbook's host writes it."""
    doc = sample.csi_lifecycle(volumes=volumes, with_objects=False, failure=failure)
    doc["run_id"] = "csi_lifecycle-20260620T090000Z-%06d" % volumes
    return D.write_atomic(doc, str(root / cluster))


@pytest.fixture
def three(tmp_path):
    return [{"cluster": c, "path": write_result(tmp_path, c, v)}
            for c, v in (("hangzhou", 100), ("beijing", 200), ("shanghai", 300))]


def advice(states: dict[str, str], reasons: dict[str, list[str]] | None = None) -> dict:
    reasons = reasons or {}
    return {"cluster": {"server": "https://10.0.0.1:6443", "version": "v1.34.9"},
            "tunings": [{"name": n, "state": s, "reasons": reasons.get(n, []), "current": {}, "recommended": {},
                         "expected": "faster", "seed": "002", "apply_with": "storageperf.k8s.tune_trident"}
                        for n, s in states.items()],
            "summary": {s: sum(1 for v in states.values() if v == s)
                        for s in ("on", "available", "blocked", "not_applicable")}}


def test_three_clusters_give_three_rows_with_their_own_figures(three):
    fleet = F.build_fleet(three, "fleet-20260620T093000Z")
    assert [r["cluster"] for r in fleet["clusters"]] == ["hangzhou", "beijing", "shanghai"]
    assert fleet["summary"] == {"clusters": 3, "ok": 3, "failed": 0, "failed_clusters": []}
    assert fleet["benchmark"] == "csi_lifecycle" and fleet["variants"] == ["concurrency off", "concurrency on"]
    assert [s["name"] for s in fleet["steps"]][:2] == ["create_volume", "publish"]
    sums = [[v["sum_wall_s"] for v in r["variants"]] for r in fleet["clusters"]]
    # the seed's 28m 35s / 3m 40s at 100 volumes, scaled by volume count
    assert sums[0] == pytest.approx([1715.0, 220.0]) and sums[2] == pytest.approx([3 * 1715.0, 3 * 220.0])
    first = fleet["clusters"][0]
    create = first["variants"][0]["steps"][0]
    assert (create["name"], create["wall_s"], create["unit"]) == ("create_volume", 417.0, "vol")
    assert create["rate"] == pytest.approx(100 / 417.0)
    assert create["text"] == "6m 57s · 0.24 vol/s"
    assert first["speedup"]["baseline"] == "concurrency off" and first["speedup"]["candidate"] == "concurrency on"
    assert first["speedup"]["steps"]["create_volume"] == pytest.approx(417 / 41.0)
    assert first["speedup"]["overall"] == pytest.approx(1715 / 220.0)
    assert first["source"] == three[0]["path"] and first["run_id"].endswith("000100")
    assert fleet_schema.validate_fleet(fleet, use_jsonschema=False) is fleet


def test_a_failed_cluster_is_a_row_and_the_others_keep_their_numbers(three):
    entries = three[:2] + [{"cluster": "shanghai", "path": None, "document": None,
                            "error": "no result: the host failed or was unreachable"}]
    fleet = F.build_fleet(entries, "fleet-x")
    assert fleet["summary"] == {"clusters": 3, "ok": 2, "failed": 1, "failed_clusters": ["shanghai"]}
    bad = fleet["clusters"][2]
    assert bad["status"] == "error" and bad["error"] == "no result: the host failed or was unreachable"
    assert "variants" not in bad
    assert fleet["clusters"][1]["variants"][1]["sum_wall_s"] == pytest.approx(440.0)
    md = FR.to_markdown(fleet)
    assert "| shanghai | error: no result: the host failed or was unreachable | — | — | — |" in md
    assert "| beijing | ok | 57m 10s | 7m 20s | ~7.8× overall |" in md


def test_unreadable_files_and_failed_steps_are_reported_per_cluster(tmp_path, three):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    entries = [three[0],
               {"cluster": "missing", "path": str(tmp_path / "nowhere" / "result.json")},
               {"cluster": "broken", "path": str(broken)},
               {"cluster": "partial", "path": write_result(tmp_path, "partial", 100, failure=True)},
               {"cluster": "late", "path": three[1]["path"], "error": "the host failed after writing its result"}]
    fleet = F.build_fleet(entries, "fleet-x")
    rows = {r["cluster"]: r for r in fleet["clusters"]}
    assert rows["missing"]["status"] == "error" and "cannot read" in rows["missing"]["error"]
    assert rows["broken"]["status"] == "error" and "not valid JSON" in rows["broken"]["error"]
    # a document whose step timed out keeps every other figure and says what broke
    assert rows["partial"]["status"] == "failed"
    on = rows["partial"]["variants"][1]["steps"]
    assert [s["status"] for s in on if s["name"] == "delete_clone"] == ["timeout"]
    assert on[0]["wall_s"] == 41.0
    assert rows["late"]["status"] == "failed" and rows["late"]["variants"][0]["sum_wall_s"] == pytest.approx(3430.0)
    assert fleet["summary"]["ok"] == 1 and fleet["summary"]["failed"] == 4
    md = FR.to_markdown(fleet)
    assert "timeout (1 error, 3 unfinished)" in md


def test_advice_entries_give_the_cluster_by_tuning_table(tmp_path):
    a = tmp_path / "a.json"
    a.write_text(json.dumps(advice({"trident_concurrency": "available", "parallel_attach": "not_applicable"},
                                   {"trident_concurrency": ["Trident 26.06 supports concurrent core"]})))
    entries = [{"cluster": "ontap", "path": str(a)},
               {"cluster": "ack", "document": advice({"parallel_attach": "on", "trident_concurrency": "blocked"},
                                                     {"trident_concurrency": ["Trident is 24.02", "needs >= 25.06"]})},
               {"cluster": "down", "error": "unreachable"}]
    fleet = F.build_fleet(entries, "fleet-advice")
    assert fleet["kind"] == "advice" and fleet["tunings"] == ["trident_concurrency", "parallel_attach"]
    assert fleet["summary"]["states"] == {"on": 1, "available": 1, "blocked": 1, "not_applicable": 1}
    assert fleet["summary"]["failed_clusters"] == ["down"]
    table = FR.advice_table(fleet)
    cells = {row[0]["text"]: [c["text"] for c in row[1:]] for row in table["rows"]}
    assert cells == {"ontap": ["ok", "available [1]", "n/a"], "ack": ["ok", "blocked [2]", "on"],
                     "down": ["error: unreachable", "—", "—"]}
    assert [c["cls"] for c in table["rows"][1][2:]] == ["fail", "ok"]
    assert FR.advice_notes(fleet)[1] == (2, "ack", "trident_concurrency", "blocked", "Trident is 24.02; needs >= 25.06")
    md = FR.to_markdown(fleet)
    assert "2. **ack** / trident_concurrency (blocked): Trident is 24.02; needs >= 25.06" in md


def test_kind_is_detected_and_mixing_kinds_fails_naming_the_clusters(three):
    with pytest.raises(F.FleetInputError, match="mix result documents and advice documents.*x: advice"):
        F.build_fleet(three + [{"cluster": "x", "document": advice({"t": "on"})}], "fleet-x")
    forced = F.build_fleet(three[:1] + [{"cluster": "x", "document": advice({"t": "on"})}], "fleet-x", kind="bench")
    assert forced["clusters"][1]["status"] == "error" and "advice document, not bench" in forced["clusters"][1]["error"]


@pytest.mark.parametrize("entries, words", [
    ([], "non-empty list"),
    ([{"cluster": ""}], "entries[0].cluster"),
    ([{"cluster": "a", "error": "x"}, {"cluster": "a", "error": "y"}], "entries[1].cluster: 'a' appears twice"),
    ([{"cluster": "a"}], "no path, no document and no error"),
    ([{"cluster": "a", "error": "x", "host": "h"}], "unknown key(s) host"),
    ([{"cluster": "a", "path": "p", "document": {"variants": []}}], "path or document, not both"),
])
def test_bad_entries_fail_naming_the_field(entries, words):
    with pytest.raises(F.FleetInputError) as err:
        F.build_fleet(entries, "fleet-x")
    assert words in str(err.value)


def test_bad_name_fails_before_anything_is_read():
    with pytest.raises(F.FleetInputError, match="name '../x' must be a directory name"):
        F.build_fleet([{"cluster": "a", "error": "x"}], "../x")


def test_schema_names_the_bad_field(three):
    fleet = F.build_fleet(three, "fleet-x")
    for use_jsonschema in (True, False):
        bad = copy.deepcopy(fleet)
        bad["clusters"][1]["status"] = "great"
        with pytest.raises(fleet_schema.FleetValidationError) as err:
            fleet_schema.validate_fleet(bad, use_jsonschema=use_jsonschema)
        assert err.value.problems[0].startswith("clusters[1].status: 'great'")


def test_fleet_schema_json_is_in_sync():
    """Regenerate with: python -m ansible_collections.storageperf.k8s.plugins.module_utils.report.fleet_schema
    > docs/fleet.schema.json"""
    assert (REPO / "docs" / "fleet.schema.json").read_text(encoding="utf-8") == fleet_schema.schema_json()


def test_html_page_holds_the_tables_and_the_chart(three):
    fleet = F.build_fleet(three[:2] + [{"cluster": "shanghai", "error": "unreachable"}], "fleet-x")
    html = FR.to_html(fleet)
    assert html.startswith("<!DOCTYPE html>") and 'id="fleet-sums"' in html and 'id="fleet-steps"' in html
    assert "<td class=\"fail\">error: unreachable</td>" in html
    assert "http://" not in html and "https://" not in html.replace("https://10.0.0.1:6443", "")
    if not fleet_charts.HAS_MATPLOTLIB:
        pytest.skip("matplotlib is not installed")
    start = html.index('<figure id="chart-fleet-sums"><img alt="')
    src = html[start:].split('src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    assert base64.b64decode(src).startswith(PNG_MAGIC)


def test_advice_html_has_the_state_chart():
    fleet = F.build_fleet([{"cluster": "a", "document": advice({"t1": "on", "t2": "blocked"}, {"t2": ["why"]})},
                           {"cluster": "b", "error": "unreachable"}], "fleet-x")
    html = FR.to_html(fleet)
    assert '<td class="ok">on</td>' in html and '<td class="fail">blocked [1]</td>' in html
    assert '<ol class="reasons">' in html
    if fleet_charts.HAS_MATPLOTLIB:
        assert '<figure id="chart-fleet-states">' in html


def test_write_is_atomic_idempotent_and_check_mode_writes_nothing(tmp_path, three):
    fleet = F.build_fleet(three, "fleet-x")
    dry = FR.write_fleet(fleet, str(tmp_path / "out"), check_mode=True)
    assert all(w["changed"] for w in dry.values()) and not (tmp_path / "out").exists()
    first = FR.write_fleet(fleet, str(tmp_path / "out"))
    assert sorted(Path(w["path"]).name for w in first.values()) == ["fleet.html", "fleet.json", "fleet.md"]
    assert json.loads(Path(first["json"]["path"]).read_text())["summary"]["clusters"] == 3
    second = FR.write_fleet(F.build_fleet(three, "fleet-x"), str(tmp_path / "out"))
    assert not any(w["changed"] for w in second.values())
