"""links.py and the pages that use it: fleet -> each cluster's report, history -> each run's report, rollout -> its
probes' reports. Every link is a relative path from the page's own directory to a page that exists, so the tree
holds when reports_upload copies it into a bucket; a page that was never drawn gets no link."""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from urllib.parse import unquote

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import links as L
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import render as RR
from tests.support import report_samples as sample
from tests.support import rollout_samples

BASE = sample.csi_lifecycle(volumes=100, with_objects=False)


def result(root: Path, cluster: str, day: int, page: bool = True) -> str:
    """A run of `cluster` on June `day` at <root>/<cluster>/<run_id>/result.json, with its report.html when page."""
    doc = copy.deepcopy(BASE)
    doc["run_id"] = "csi_lifecycle-202606%02dT090000Z-%s" % (day, cluster[-1] * 6)
    doc["started"] = "2026-06-%02dT09:00:00.000000Z" % day
    path = D.write_atomic(doc, str(root / cluster))
    if page:
        Path(path).with_name(L.REPORT_PAGE).write_text("<html>%s</html>" % doc["run_id"], encoding="utf-8")
    return path


def hrefs(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', html)


def md_links(md: str) -> list[str]:
    return re.findall(r"\]\(([^)]*)\)", md)


def assert_links_hold(page: Path, links: list[str]) -> None:
    """Each link is relative and names a file that exists from the page's directory."""
    for link in links:
        assert not link.startswith(("/", "file:")) and "://" not in link, link
        assert (page.parent / unquote(link)).is_file(), link


def test_href_is_relative_quoted_and_only_to_a_file_that_exists(tmp_path):
    target = tmp_path / "prod a" / "run-1" / "report.html"
    target.parent.mkdir(parents=True)
    assert L.href(str(target), str(tmp_path / "fleet-1")) is None  # not written yet
    target.write_text("x")
    assert L.href(str(target), str(tmp_path / "fleet-1")) == "../prod%20a/run-1/report.html"
    assert L.href(str(target), str(target.parent)) == "report.html"
    # a relative target and page directory are taken from the same working directory
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert L.href("prod a/run-1/report.html", "history") == "../prod%20a/run-1/report.html"
    finally:
        os.chdir(cwd)
    assert L.href(None, str(tmp_path)) is None and L.href(str(tmp_path), str(tmp_path)) is None  # a directory
    assert L.page_beside(str(target.with_name("result.json"))) == str(target)
    assert L.page_beside(str(target.parent), L.ADVICE_PAGE) == str(target.parent / "advice.html")
    assert L.page_beside(None) is None


def test_fleet_links_each_cluster_to_its_report_and_a_cluster_without_one_to_nothing(tmp_path):
    entries = [{"cluster": "hangzhou", "path": result(tmp_path, "hangzhou", 20)},
               {"cluster": "beijing", "path": result(tmp_path, "beijing", 20, page=False)},  # report.html not drawn
               {"cluster": "shenzhen", "error": "API server unreachable"}]
    written = FR.write_fleet(F.build_fleet(entries, "fleet-20260620T093000Z"), str(tmp_path))
    html_path, md_path = Path(written["html"]["path"]), Path(written["markdown"]["path"])
    html, md = html_path.read_text(), md_path.read_text()
    run = "csi_lifecycle-20260620T090000Z-uuuuuu"
    # the cluster in the main table and its run in Sources
    assert hrefs(html) == ["../hangzhou/%s/report.html" % run] * 2
    assert '<td class=""><a href="../hangzhou/%s/report.html">hangzhou</a></td>' % run in html
    assert "| [hangzhou](../hangzhou/%s/report.html) |" % run in md and "| beijing |" in md
    assert_links_hold(html_path, hrefs(html))
    assert_links_hold(md_path, md_links(md))
    # rendered without the directory it is written to (a test's, the role's console table): no links at all
    assert "<a href" not in FR.to_html(F.build_fleet(entries, "fleet-1"), charts=False)


def test_fleet_of_advice_links_each_cluster_to_its_advice_page(tmp_path):
    advice = {"cluster": {"server": "https://10.0.0.1:6443"}, "summary": {"on": 1},
              "tunings": [{"name": "trident_concurrency", "state": "on", "reasons": []}]}
    folder = tmp_path / "ack-prod" / "advice"
    folder.mkdir(parents=True)
    (folder / "advice-20260620T090000Z.json").write_text(D.dumps(advice))
    (folder / "advice.html").write_text("<html></html>")
    written = FR.write_fleet(F.build_fleet([{"cluster": "ack-prod", "path": str(folder / "advice-20260620T090000Z.json")}],
                                           "advice-1"), str(tmp_path))
    html = Path(written["html"]["path"]).read_text()
    assert hrefs(html) == ["../ack-prod/advice/advice.html"] * 2


def test_history_links_every_run_and_the_regression_to_their_reports(tmp_path):
    reports = tmp_path / "reports"
    for day in range(1, 6):
        result(reports, "prod-a", day, page=day != 2)  # run 2's page was never drawn
    slow = copy.deepcopy(BASE)
    slow["run_id"], slow["started"] = "csi_lifecycle-20260606T090000Z-aaaaaa", "2026-06-06T09:00:00.000000Z"
    for v in slow["variants"]:
        for r in v["runs"]:
            for s in r["steps"]:
                s["wall_s"] *= 3.0 if s["name"] == "publish" else 1.0
        del v["summary"]
    Path(D.write_atomic(D.finalize(slow), str(reports / "prod-a"))).with_name("report.html").write_text("x")
    history = H.build_history(H.find_results(str(reports)))
    assert history["regressions"]
    written = HR.write_history(history, str(reports / "history"))
    html_path, md_path = Path(written["html"]["path"]), Path(written["markdown"]["path"])
    html, md = html_path.read_text(), md_path.read_text()
    links = hrefs(html)
    assert "../prod-a/csi_lifecycle-20260606T090000Z-aaaaaa/report.html" in links
    assert not any("20260602" in link for link in links)
    # two series (concurrency off and on): five runs with a page each, and the regressions of both
    assert len(links) == 2 * 5 + len(history["regressions"])
    assert_links_hold(html_path, links)
    assert_links_hold(md_path, md_links(md))


def test_rollout_links_the_probes_whose_reports_exist(tmp_path):
    doc = rollout_samples.document()
    record = doc["clusters"]["twin-1"]
    baseline = tmp_path / "twin-1" / record["baseline"]["run_id"]
    baseline.mkdir(parents=True)
    (baseline / "report.html").write_text("x")
    record["baseline"]["result"] = str(baseline / "result.json")
    record["after"]["result"] = str(tmp_path / "twin-1" / record["after"]["run_id"] / "result.json")  # no page
    written = RR.write_rollout(doc, str(tmp_path / "rollout-r1"))
    html_path = Path(written["html"]["path"])
    html = html_path.read_text()
    assert hrefs(html) == ["../twin-1/%s/report.html" % record["baseline"]["run_id"]]
    assert_links_hold(html_path, hrefs(html))
    assert "[baseline report](../twin-1/" in Path(written["md"]["path"]).read_text()
