"""report/parameters.py and report/parameter_table.py: figures against a step parameter come from the result document,
so every report of a document (gluster_bench_report's own, bench_report's) shows the same table; a document without
parameter steps has none."""
from __future__ import annotations

import re

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import report as G
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import modules as RM
from ansible_collections.storageperf.k8s.plugins.module_utils.report import parameters as P
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from tests.support import report_samples as sample
from tests.unit.plugins.module_utils.test_gluster_plan import MODES, measured, params

RUN = "gluster_volume_scale-20260101T000000Z-d0d0d0"
HEADER = ("| Variant | volumes | handshake | volume info | all peers Connected | volume status answers |"
          " create (this step) |")
TIMED_OUT = {"mode": "brick-multiplex on", "volumes": 100, "error": "handshake not finished 600 s after the restart",
             "create": {"seconds": 0.0, "created_count": 0, "cli_calls": 1},
             "handshake": {"restart_seconds": 3.5, "peers_connected_seconds": 2.0, "polls": 3}}


def section(markdown: str, title: str = "Against volumes") -> str:
    return markdown.split("### " + title + "\n")[1].split("\n### ")[0]


def html_table(html: str, table_id: str = "parameter-volumes") -> str:
    match = re.search(r'<table class="[^"]*" id="%s">.*?</table>' % table_id, html, re.S)
    assert match, "no table %s in the page" % table_id
    return match.group(0)


@pytest.fixture()
def gluster_run(tmp_path):
    return G.write_bench_report(params(tmp_path, RUN, measured() + [TIMED_OUT], counts=(20, 50, 100), status="failed"))


def test_bench_report_of_a_gluster_result_writes_the_modules_own_report_md_and_html(gluster_run, tmp_path):
    paths = gluster_run["paths"]
    own_md, own_html = open(paths["markdown"]).read(), open(paths["html"]).read()
    # rendered again next to result.json, from the document alone: not a byte changes
    again = RM.bench_report({"result": paths["json"], "document": None, "formats": ["markdown", "html"],
                             "output_dir": None, "reports_dir": None})
    assert again["changed_files"] == [] and again["markdown"] == own_md
    # and into another directory: the same table in both formats
    other = RM.bench_report({"result": paths["json"], "document": None, "formats": ["markdown", "html"],
                             "output_dir": str(tmp_path / "elsewhere"), "reports_dir": None})
    md = open(other["paths"]["markdown"]).read()
    table = section(md)
    assert table == section(own_md)
    lines = table.splitlines()  # whole lines: a column more or less fails
    assert HEADER in lines, table
    assert "| brick-multiplex off | 50 | 5.0s | 200ms | 2.5s | 5.0s | 1.0s |" in lines
    assert "| brick-multiplex on | 20 | 600ms | 200ms | 300ms | 600ms | 1.0s |" in lines
    # the timed-out count: its status and reason beside the mode, what it measured before the deadline, no
    # creation time (every volume existed)
    assert ("| brick-multiplex on (failed: handshake not finished 600 s after the restart) | 100 | — | — | 2.0s | — |"
            " — |") in lines
    # the seed's reference rows, after the measured ones, marked as reported with their source
    assert "| _seed: glusterd before the fix (reported)_ | 2000 | 7m 30s | — | — | — | — |" in lines
    assert table.index("brick-multiplex on (failed") < table.index("_seed: glusterd before")
    assert "published figures (%s), not measured here" % G.SEED_SOURCE in table
    # the table leads the report, as the spliced one did
    assert md.index("### Against volumes") < md.index("### Step times")

    html = open(other["paths"]["html"]).read()
    page_table = html_table(html)
    assert page_table == html_table(own_html)
    assert "<th>all peers Connected</th><th>volume status answers</th><th>create (this step)</th>" in page_table
    assert '<td class="reported">seed: glusterd 7 threaded export (reported)</td><td class="">2000</td>' \
           '<td class="">2m 18s</td>' in page_table
    assert '<td class="fail">brick-multiplex on (failed: handshake not finished' in page_table
    assert html.index('id="parameter-volumes"') < html.index('id="operations"')


def test_the_modules_summary_is_the_documents_table_in_seconds(gluster_run):
    doc = D.load(gluster_run["paths"]["json"])
    rows = gluster_run["summary"]
    assert rows == G.summary_rows(doc)
    # the shape the role publishes (facts, set_stats): measured rows by mode and count, then the seed's
    assert [(r["mode"], r["volumes"], r["measured"]) for r in rows] == [
        ("brick-multiplex off", 20, True), ("brick-multiplex off", 50, True), ("brick-multiplex on", 20, True),
        ("brick-multiplex on", 50, True), ("brick-multiplex on", 100, True),
        ("seed: glusterd before the fix (reported)", 2000, False),
        ("seed: glusterd 7 threaded export (reported)", 2000, False)]
    assert rows[1] == {"mode": "brick-multiplex off", "volumes": 50, "measured": True, "handshake_seconds": 5.0,
                       "peers_connected_seconds": 2.5, "volume_status_seconds": 5.0, "volume_info_seconds": 0.2,
                       "create_seconds": 1.0, "error": ""}
    assert rows[4]["handshake_seconds"] is None and rows[4]["create_seconds"] is None
    assert rows[4]["peers_connected_seconds"] == 2.0 and rows[4]["error"].startswith("handshake not finished")
    assert rows[5] == {"mode": "seed: glusterd before the fix (reported)", "volumes": 2000, "measured": False,
                       "handshake_seconds": 450.0}


def test_a_figure_equal_to_the_wall_time_stays_unless_it_is_the_steps_own():
    # the handshake ends when the volume status answers: the same seconds, two figures; handshake_s is the step's
    # own wall time (its primary metric) and gets no second column
    doc = G.build_document(measured(), MODES, reference=False)
    (block,) = P.parameter_blocks(doc)
    assert block["series"] == ["handshake", "volume info"]
    assert block["figures"] == ["peers_connected_s", "volume_status_s", "create_s"]
    row = block["rows"][0]
    assert row["wall_s"] == {"handshake": 2.0, "volume info": 0.2}
    assert row["metrics"]["volume_status_s"] == row["wall_s"]["handshake"]


def test_a_sample_with_parameter_steps_has_the_table_and_one_without_has_none():
    md = R.to_markdown(sample.gluster_handshake())
    assert "| Variant | volumes | restart handshake |" in section(md).splitlines()
    assert "| brick-multiplex off | 500 | 2m 07s |" in section(md).splitlines()
    for doc in (sample.csi_lifecycle(), sample.fio_classes(), sample.sysbench_classes(), sample.attach_stress(),
                sample.csi_sweep()):
        assert P.parameter_blocks(doc) == []
        assert "### Against" not in R.to_markdown(doc)
        assert 'id="parameter-' not in R.to_html(doc, charts=False)


def test_a_long_reason_is_cut_in_the_table_and_whole_in_the_problems():
    reason = "handshake not finished 20 s after the restart, the limit set by timeout=20 (glusterd's own RPC timeout)"
    doc = G.build_document([dict(TIMED_OUT, error=reason)], MODES, reference=False)
    md = R.to_markdown(doc)
    row = next(line for line in section(md).splitlines() if line.startswith("| brick-multiplex on (failed: "))
    assert row.startswith("| brick-multiplex on (failed: handshake not finished 20 s after the restart, the limit"
                          " set by timeout=20 (glu…) | 100 |"), row
    assert reason in section(md, "Problems")
