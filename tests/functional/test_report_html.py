"""The report as a person sees it (HTML in headless Chromium) and the compare playbook as CI runs it."""
from __future__ import annotations

import html as html_lib
import json
import os
import random
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from tests.support import chromium as chromium_support
from tests.support import report_samples as sample
from tests.support.twin import REPO, run_playbook

STEPS = [("create_volume", "Create Volume", 417, 41), ("publish", "Publish (Attach)", 140, 21),
         ("unpublish", "Unpublish (Detach)", 140, 26), ("create_snapshot", "Create Snapshot", 183, 16),
         ("clone_from_snapshot", "Clone from Snapshot", 460, 42), ("delete_clone", "Delete Clone", 127, 32),
         ("delete_snapshot", "Delete Snapshot", 124, 16), ("delete_volume", "Delete Volume", 124, 26)]


def build_document(run_id: str, slow_publish: float = 1.0, time_scale: float | None = None) -> dict:
    """Two variants x 8 steps x 100 volumes with per-object timings, shaped like seed 002; with time_scale, as a twin
    at that scale measures it (ontap-nas, walls scaled and a little off the seed's, cluster.time_scale recorded)."""
    rng = random.Random(run_id)
    cluster = {"server": "https://127.0.0.1:6443", "version": "v1.32.1", "nodes": 3}
    params: dict = {"volumes": 100}
    if time_scale:
        cluster["time_scale"] = time_scale
        params["storage_class"] = "ontap-nas"
    doc = D.new_result("csi_lifecycle", run_id=run_id, parameters=params, cluster=cluster,
                       components={"trident": "26.06.0"})
    for vname, on in (("concurrency off", False), ("concurrency on", True)):
        run = D.add_run(D.add_variant(doc, vname, settings={"enableConcurrency": on}))
        for name, label, off_s, on_s in STEPS:
            wall = (on_s if on else off_s) * (slow_publish if name == "publish" else 1.0)
            if time_scale:
                wall *= time_scale * rng.uniform(0.9, 1.15)
            ends = sorted(rng.uniform(0.05, 1.0) * wall for _ in range(99)) + [wall]
            D.add_step(run, name, label=label, count=100, wall_s=wall, unit="vol",
                       objects=[{"name": "pvc-%03d" % i, "start": 0.0, "end": e} for i, e in enumerate(ends)])
    return D.finalize(doc)


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        pytest.skip("no chromium on this machine (apt-get install -y chromium)")
    return exe


def screenshot(html: Path, png: Path, profile: Path) -> None:
    subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", f"--screenshot={png}", "--window-size=1280,2000",
                    html.as_uri()], check=True, capture_output=True, timeout=120)


def test_html_report_renders_in_chromium(tmp_path):
    doc = build_document("csi_lifecycle-20260101T000000Z-f00d01")
    written = render.write_reports(doc, str(tmp_path / doc["run_id"]))
    html = Path(written["html"]["path"])
    png = tmp_path / "report.png"
    screenshot(html, png, tmp_path / "chromium-profile")

    import matplotlib.image as mpimg
    import numpy as np

    pixels = mpimg.imread(str(png))
    assert pixels.shape[0] == 2000 and pixels.shape[1] == 1280
    rgb = (pixels[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3)
    colours = np.unique(rgb, axis=0)
    assert len(colours) > 50, "screenshot looks blank: %d colours" % len(colours)
    # the baseline grey and the candidate blue of the bar chart are on the page
    for colour in ((0x8A, 0x8F, 0x98), (0x00, 0x72, 0xB2)):
        assert (np.abs(rgb.astype(int) - colour).sum(axis=1) < 6).sum() > 500, colour
    text = html.read_text(encoding="utf-8")
    assert "6m 57s · 0.24 vol/s" in text and "~7.8× overall" in text


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)
    base = D.write_atomic(build_document("csi_lifecycle-20260101T000000Z-base01"), str(root))
    cand = D.write_atomic(build_document("csi_lifecycle-20260102T000000Z-cand01", slow_publish=1.3), str(root))
    return root, base, cand


def test_compare_playbook_passes_within_tolerance(results):
    root, base, cand = results
    junit = root / "pass.xml"
    run = run_playbook(REPO / "playbooks" / "compare.yml", record_dir=root, extra_vars={
        "baseline": base, "candidate": cand, "junit_path": str(junit),
        "tolerances": {"create_volume.wall_s": {"max_increase_pct": 5}, "speedup": {"min": 4}}})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task("Compare the candidate")["result"]["verdict"] == "pass"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("3", "0")


def test_compare_playbook_fails_on_broken_threshold(results):
    root, base, cand = results
    junit = root / "fail.xml"
    run = run_playbook(REPO / "playbooks" / "compare.yml", record_dir=root, extra_vars={
        "baseline": base, "candidate": cand, "junit_path": str(junit),
        "tolerances": {"publish.wall_s": {"max_increase_pct": 10}}})
    assert run.rc == 2, run.stdout + run.stderr
    assert "Benchmark comparison failed: 2 of 2 checks failed" in run.stdout
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert len(failures) == 2 and "+30.0% above the baseline" in failures[0].get("message")


def test_compare_playbook_reads_a_baseline_file(results):
    root, base, cand = results
    bfile = root / "baseline.yml"
    bfile.write_text(json.dumps({"baseline": Path(base).relative_to(root).as_posix(),
                                 "tolerances": {"*.p99": {"max_increase_pct": 50}}}))
    run = run_playbook(REPO / "playbooks" / "compare.yml", record_dir=root,
                       extra_vars={"baseline_file": str(bfile), "candidate": cand})
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task("Compare the candidate")["result"]["checks"] == 16


def test_compare_playbook_rejects_bad_tolerance_with_a_clear_message(results):
    root, base, cand = results
    run = run_playbook(REPO / "playbooks" / "compare.yml", record_dir=root, extra_vars={
        "baseline": base, "candidate": cand, "tolerances": {"publish.p99": {"max_increase": 10}}})
    assert run.rc == 2
    assert "unknown limit 'max_increase'" in run.stdout


def test_compare_playbook_without_tolerances_fails_instead_of_passing_unchecked(results):
    root, base, cand = results
    junit = root / "none.xml"
    run = run_playbook(REPO / "playbooks" / "compare.yml", record_dir=root, extra_vars={
        "baseline": base, "candidate": cand, "junit_path": str(junit)})
    assert run.rc == 2
    msg = run.task("Compare the candidate")["result"]["msg"]
    assert "tolerances is empty" in msg and "-e tolerances=" in msg and "docs/results.md" in msg
    assert not junit.exists()  # refused before anything was written


def test_bench_report_role_renders_and_publishes_summary(results, tmp_path):
    root, base, _ = results
    playbook = tmp_path / "report.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: storageperf.k8s.bench_report\n"
        "      vars:\n        bench_report_result: %s\n"
        "    - name: Show the summary fact\n      ansible.builtin.debug:\n        var: storageperf_bench_summary.speedup_text\n" % base)
    first = run_playbook(playbook, record_dir=tmp_path)
    assert first.rc == 0, first.stdout + first.stderr
    rendered = first.task("Render the result document")["result"]
    assert Path(rendered["paths"]["html"]).is_file() and Path(rendered["paths"]["markdown"]).is_file()
    assert "HTML report: " + rendered["paths"]["html"] in first.stdout
    assert first.task("Show the summary fact")["result"]["storageperf_bench_summary.speedup_text"] == "~7.8× overall"
    second = run_playbook(playbook, record_dir=tmp_path)
    assert second.task("Render the result document")["result"]["changed"] is False
    stats = first.task("Publish the summary")["result"]["ansible_stats"]
    data = stats["data"]  # namespaced (docs/awx.md): the fact storageperf_bench_summary is not shadowed in AWX
    assert stats["aggregate"] is True and data["storageperf_stats_bench_last"]["localhost"]["run_id"] in base
    assert data["storageperf_stats_bench_baseline"] == data["storageperf_stats_bench_last"]  # the first benchmark


# Runs in the page after load and leaves its findings as JSON in <pre id="layout-check">, for --dump-dom.
LAYOUT_CHECK = """<script>
window.addEventListener("load", function () {
  var vw = window.innerWidth, out = {viewport: vw, scrollWidth: document.documentElement.scrollWidth, overflow: []};
  document.querySelectorAll("main, main > *, .scroll, figure, img, .card").forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.right > vw + 0.5) out.overflow.push(el.tagName + "#" + el.id + "." + el.className + " right=" + r.right);
  });
  // a table wider than the page must sit in a box that scrolls it
  document.querySelectorAll("table").forEach(function (t) {
    var box = t.closest(".scroll");
    if (t.getBoundingClientRect().right > vw + 0.5 && !(box && getComputedStyle(box).overflowX === "auto"))
      out.overflow.push("TABLE#" + t.id + " unscrolled");
  });
  out.wideTables = Array.prototype.filter.call(document.querySelectorAll(".scroll"),
    function (b) { return b.scrollWidth > b.clientWidth; }).map(function (b) { return b.firstChild.id; });
  out.cards = Array.prototype.map.call(document.querySelectorAll(".card"), function (c) { return c.innerText; });
  var pre = document.createElement("pre"); pre.id = "layout-check"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def wide_metrics_document() -> dict:
    """fio with 16 metrics per step: the 18-column "Measured metrics" table of the issue."""
    doc = D.new_result("fio", run_id="fio-20260101T000000Z-0w1de0", parameters={"bs": "4k"},
                       cluster={"server": "https://127.0.0.1:6443", "version": "v1.32.1", "nodes": 3})
    for vname, scale in (("csi-pmem-lvm", 2.5), ("alicloud-disk-essd-pl1-with-a-long-name", 1.0)):
        run = D.add_run(D.add_variant(doc, vname, settings={"storageClassName": vname}))
        for step in ("randwrite_4k_psync_numjobs_50", "randread_4k_libaio_iodepth_64"):
            metrics = {"iops": 37300.0 * scale, "bw_bytes": 153e6 * scale}
            metrics.update(("%s_%s_counter" % (step.split("_")[0], k), 123456.789 * scale * (i + 1))
                           for i, k in enumerate("alpha beta gamma delta epsilon zeta eta theta iota kappa "
                                                 "lambda mu omicron pi".split()))
            D.add_step(run, step, wall_s=60.0, metrics=metrics,
                       latency={"p50": 0.001, "p99": 0.004 / scale, "max": 0.02})
    return D.finalize(doc)


def layout(html: Path, profile: Path) -> dict:
    """The page's own measurements at 1280 px wide, taken in headless Chromium."""
    probe = html.with_name(html.stem + "-probe.html")
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", LAYOUT_CHECK + "</body>"), encoding="utf-8")
    dom = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={profile}", "--window-size=1280,900", "--virtual-time-budget=10000",
                          "--dump-dom", probe.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    assert found, "the layout probe did not run:\n" + dom[-2000:]
    return json.loads(html_lib.unescape(found.group(1)))


@pytest.mark.parametrize("name", ["attach_stress", "wide_metrics", "csi_lifecycle", "gluster_handshake"])
def test_report_page_fits_1280px(tmp_path, name):
    doc = wide_metrics_document() if name == "wide_metrics" else getattr(sample, name)()
    html = Path(render.write_reports(doc, str(tmp_path), formats=["html"])["html"]["path"])
    found = layout(html, tmp_path / "chromium-profile")
    assert found["viewport"] == 1280
    assert found["scrollWidth"] <= found["viewport"], found
    assert found["overflow"] == [], found
    if name == "wide_metrics":
        assert found["wideTables"] == [], found  # turned (a row per metric): nothing scrolls in its own box
    if name == "attach_stress":
        # the seed's own metric: pod startup (scale-up); scale to 0 stays serial and is not mixed in
        assert "serial attach · sum of step times" in found["cards"][0]
        assert any(c.endswith("~4.7× pod startup") for c in found["cards"]), found["cards"]
        assert not any("overall" in c for c in found["cards"]), found["cards"]
        screenshot(html, tmp_path / "attach_stress.png", tmp_path / "chromium-profile")
        assert (tmp_path / "attach_stress.png").stat().st_size > 10000


def test_layout_probe_sees_an_overflowing_page(tmp_path, monkeypatch):
    # the 18-column table as it was before it turned, without the scroll box, pushes the page past 1280 px: the
    # probe must say so
    monkeypatch.setattr(T, "WIDE_METRIC_COLUMNS", 99)
    html = Path(render.write_reports(wide_metrics_document(), str(tmp_path), formats=["html"])["html"]["path"])
    html.write_text(html.read_text(encoding="utf-8").replace(".scroll{overflow-x:auto;max-width:100%}", ""),
                    encoding="utf-8")
    found = layout(html, tmp_path / "chromium-profile")
    assert found["scrollWidth"] > found["viewport"], found
    assert found["overflow"], found


# --- the four pages people read (issue 32): bench, fleet, history, advisor ----------------------------------------
# Measured in the page after load: anything wider than the viewport (outside a box that scrolls it), visible text
# below 11 px (chart text too: its PNG pixels times the shown scale), and headers whose unit is not their cells' unit.
# pageCheck(true) measures the page laid out for print (tests/support/chromium.py): paper does not scroll, so nothing
# wider than the printable width is excused by a scroll box, and a table cell that is not shown is a hidden column.
# Charts are PNGs whose text is 9 pt at 110 dpi (13.75 px) and which are at most 7.8 in (858 px) wide (charts.fit):
# the 1116 px screen column shows them at full size, paper's printable width (703 px on A4) at 82 % or more, so
# their text is held to 11 px on paper as on screen, the same bar as HTML text.
PRINT_CHART_PX = 11
CHECK_JS = """var PRINT_CHART_PX = %d;
function pageCheck(print) {
  var vw = window.innerWidth, out = {viewport: vw, scrollWidth: document.documentElement.scrollWidth,
                                     overflow: [], small: [], units: [], hidden: []};
  function name(el) { return el.tagName + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : ""); }
  document.querySelectorAll("body *").forEach(function (el) {
    var r = el.getBoundingClientRect(), st = getComputedStyle(el);
    // checkVisibility(): a cell of a folded <details> has its layout but is not shown (content-visibility: hidden)
    if (print && (el.tagName === "TD" || el.tagName === "TH") && (st.display === "none" || st.visibility === "hidden"
        || !r.width || r.right > vw + 0.5 || !el.checkVisibility({contentVisibilityAuto: true})))
      out.hidden.push(name(el.closest("table")) + " column " + (el.cellIndex + 1));
    if (!r.width || !r.height || st.visibility === "hidden" || el.id === "page-check") return;
    var box = el.closest(".scroll");
    if (r.right > vw + 0.5 && (print || !(box && box !== el && getComputedStyle(box).overflowX === "auto")))
      out.overflow.push(name(el) + " right=" + Math.round(r.right));
    var own = Array.prototype.some.call(el.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
    if (own && parseFloat(st.fontSize) < 11) out.small.push(name(el) + " " + st.fontSize + " " + el.textContent.slice(0, 40));
    if (el.tagName === "IMG" && el.dataset.textPx) {
      var px = parseFloat(el.dataset.textPx) * el.clientWidth / el.naturalWidth;
      if (px < (print ? PRINT_CHART_PX : 11)) out.small.push(name(el.parentNode) + " chart text " + px.toFixed(1) + "px");
    }
  });
  var UNIT = /\\((µs|ms|s|min|h)\\)\\s*$|\\s(µs|ms|s|min)$/;
  var CELL = /[0-9]\\s*(µs|ms|s|m|min|h)(?![a-z\\/])/g;
  // a turned table names each row's unit in its row header (<th scope="row">, "clat mean (µs)"): the row's cells use it
  document.querySelectorAll("tbody th[scope=row]").forEach(function (th) {
    var m = th.textContent.trim().match(UNIT), found;
    if (!m) return;
    Array.prototype.forEach.call(th.parentNode.querySelectorAll("td"), function (td) {
      if (th.compareDocumentPosition(td) & Node.DOCUMENT_POSITION_PRECEDING) return;  // the step's name before it
      while ((found = CELL.exec(td.textContent)) !== null)
        if (found[1] !== (m[1] || m[2])) out.units.push(th.closest("table").id + ": " + th.textContent + " over " + td.textContent);
    });
  });
  document.querySelectorAll("table").forEach(function (t) {
    var heads = t.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      var m = th.textContent.trim().match(UNIT);
      if (!m) return;
      var unit = m[1] || m[2];
      t.querySelectorAll("tbody tr").forEach(function (tr) {
        var td = tr.children[col], found;
        if (!td) return;
        while ((found = CELL.exec(td.textContent)) !== null)
          if (found[1] !== unit) out.units.push(t.id + ": " + th.textContent + " over " + td.textContent);
      });
    });
  });
  // a header may wrap between its words or after a hyphen, never inside a word ("Cluste r", "Benchmar k" at
  // 1280 px): a word whose letters lie on more than one line is broken
  out.broken = [];
  document.querySelectorAll("thead th").forEach(function (th) {
    var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node, word, range = document.createRange();
    while ((node = walker.nextNode()) !== null) {
      var re = /[^\\s-]+/g;
      while ((word = re.exec(node.textContent)) !== null) {
        range.setStart(node, word.index); range.setEnd(node, word.index + word[0].length);
        var tops = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width) tops[Math.round(r.top)] = 1; });
        if (Object.keys(tops).length > 1) out.broken.push(th.closest("table").id + ": " + word[0]);
      }
    }
  });
  // a table cut off by its scroll box hides columns (the fleet's speedup column did): none on these pages
  out.clipped = Array.prototype.filter.call(document.querySelectorAll(".scroll"),
    function (b) { return b.scrollWidth > b.clientWidth + 1; }).map(function (b) { return b.firstChild.id; });
  out.height = document.documentElement.scrollHeight;
  return out;
}""" % PRINT_CHART_PX
PAGE_CHECK = """<script>%s
window.addEventListener("load", function () {
  var pre = document.createElement("pre"); pre.id = "page-check"; pre.textContent = JSON.stringify(pageCheck(false));
  document.body.appendChild(pre);
});
</script>""" % CHECK_JS
# STORAGEPERF_SCREENSHOTS=docs/screenshots makes the test (re)write docs/screenshots/<page>.png (scripts/screenshots.sh)
SCREENSHOTS = os.environ.get("STORAGEPERF_SCREENSHOTS")


def measure(html: Path, profile: Path, width: int) -> dict:
    probe = html.with_name(html.stem + "-check.html")
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", PAGE_CHECK + "</body>"), encoding="utf-8")
    dom = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={profile}", f"--window-size={width},900", "--virtual-time-budget=10000",
                          "--dump-dom", probe.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="page-check">(.*?)</pre>', dom, re.S)
    assert found, "the page check did not run:\n" + dom[-2000:]
    return json.loads(html_lib.unescape(found.group(1)))


def attach_document() -> dict:
    """csi_lifecycle with the engine's attachment metrics (a count and attach times in ms), on a twin at 1/100."""
    doc = build_document("csi_lifecycle-20260103T000000Z-a77ac4", time_scale=0.01)
    for v in doc["variants"]:
        for s in v["runs"][0]["steps"]:
            if s["name"] in ("publish", "unpublish"):
                fast = v["name"].endswith("on")
                s["metrics"] = {"attachments": 100, "attach_p50_s": 0.12 if fast else 0.41,
                                "attach_max_s": 0.31 if fast else 0.93}
        v.pop("summary", None)
    return D.finalize(doc)


# the bench pages: csi_lifecycle's attach metrics, seed 001's fio jobs (eight figures a step: the metrics table turned),
# its sysbench tests (four: Step | Variant | figures), and the 18-column fio table of the issue (turned)
BENCH_PAGES = {"bench": attach_document, "fio": sample.fio_jobs, "sysbench": sample.sysbench_classes,
               "fio-wide": wide_metrics_document}
PAGES = list(BENCH_PAGES) + ["fleet", "history", "advice"]


def page(kind: str, root: Path) -> Path:
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import advice_render
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
    from tests.unit.plugins.module_utils.test_advice_render import advice

    if kind in BENCH_PAGES:
        return Path(render.write_reports(BENCH_PAGES[kind](), str(root / kind), formats=["html"])["html"]["path"])
    if kind == "fleet":
        # two twins (cluster time, beside the seed's figures) and a real cluster (no time scale, no cluster time)
        docs = {c: build_document("csi_lifecycle-20260104T000000Z-%s" % c, slow_publish=f, time_scale=scale)
                for c, f, scale in (("hangzhou-prod", 1.0, None), ("twin-1", 1.4, 0.01), ("twin-2", 0.8, 0.02))}
        entries = [{"cluster": c, "path": D.write_atomic(doc, str(root / c))} for c, doc in docs.items()]
        for e in entries:  # each cluster's page, which fleet.html links to
            Path(e["path"]).with_name("report.html").write_text("<!DOCTYPE html><title>run</title>", encoding="utf-8")
        entries.append({"cluster": "shenzhen-dr", "error": "API server unreachable: connection refused"})
        return Path(FR.write_fleet(F.build_fleet(entries, "fleet-20260104T000000Z"), str(root))["html"]["path"])
    if kind == "history":
        # 24 runs: four series of four runs (a real cluster and a twin, two variants each; the fourth day's publish
        # 1.6x slower), and eight series of one run (four other sizes), each run with its report.html, which the
        # history links to
        def dated(doc: dict, day: int) -> dict:
            doc["started"], doc["finished"] = "2026-01-%02dT00:00:00Z" % day, "2026-01-%02dT00:30:00Z" % day
            return doc

        paths = []
        for day, slow in ((1, 1.0), (2, 1.0), (3, 1.05), (4, 1.6)):
            for cluster, letter, scale in (("hangzhou-prod", "h", None), ("twin-1", "t", 0.01)):
                doc = build_document("csi_lifecycle-202601%02dT000000Z-%s15%03d" % (day, letter, day),
                                     slow_publish=slow, time_scale=scale)
                paths.append(D.write_atomic(dated(doc, day), str(root / "runs" / cluster)))
            sized = dated(build_document("csi_lifecycle-202601%02dT000000Z-s15%03d" % (day + 4, day)), day + 4)
            sized["parameters"]["volumes"] = 100 * (day + 1)
            paths.append(D.write_atomic(sized, str(root / "runs" / "hangzhou-prod")))
        for path in paths:
            Path(path).with_name("report.html").write_text("<!DOCTYPE html><title>run</title>", encoding="utf-8")
        history = H.build_history(H.find_results(str(root / "runs")))
        assert history["summary"]["runs"] == 24 and history["summary"]["series"] == 12
        return Path(HR.write_history(history, str(root / "history"))["html"]["path"])
    return Path(advice_render.write_advice(advice(), "ack-prod", str(root / "advice"))["html"]["path"])


@pytest.mark.parametrize("kind", PAGES)
def test_page_reads_well_at_1280_and_1920(tmp_path, kind):
    html = page(kind, tmp_path)
    for width in (1280, 1920):
        found = measure(html, tmp_path / "chromium-profile", width)
        assert found["viewport"] == width
        assert found["scrollWidth"] <= width, found
        assert found["overflow"] == [], found
        assert found["small"] == [], found
        assert found["units"] == [], found
        assert found["clipped"] == [], found
        assert found["broken"] == [], found
        if kind == "history" and width == 1280:  # 24 runs in 12 series, folded: about three screens
            assert found["height"] <= 3000, found["height"]
    if SCREENSHOTS and kind != "fio-wide":  # the synthetic 18 metrics: checked, not shown in docs/
        out = Path(SCREENSHOTS) if Path(SCREENSHOTS).is_absolute() else REPO / SCREENSHOTS
        out.mkdir(parents=True, exist_ok=True)
        from PIL import Image  # matplotlib's dependency: 256 colours keep a page's screenshot small in git

        # <page>.png at 1280 px, <page>-1920.png at 1920 px: the two widths the page is measured at
        for width, png in ((1280, out / (kind + ".png")), (1920, out / ("%s-1920.png" % kind))):
            subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--hide-scrollbars", "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--screenshot={png}",
                            f"--window-size={width},1400", html.as_uri()], check=True, capture_output=True, timeout=120)
            Image.open(png).convert("RGB").quantize(256).save(png, optimize=True)
            assert Image.open(png).size == (width, 1400), png


def measure_print(html: Path, profile: Path, paper: str) -> dict:
    """The page's own measurements laid out for print on this paper's printable width (tests/support/chromium.py)."""
    if not chromium_support.executable():
        pytest.skip("no chromium on this machine (apt-get install -y chromium)")
    found = chromium_support.evaluate_printed(html, CHECK_JS + "\npageCheck(true)", chromium_support.PAPER_WIDTHS[paper],
                                              profile)
    assert found["viewport"] == chromium_support.PAPER_WIDTHS[paper], found
    return found


@pytest.mark.parametrize("kind", PAGES)
def test_page_reads_well_in_print(tmp_path, kind):
    # print media emulated on A4's and Letter's printable width: no scroll bar on paper, so every table fits
    html = page(kind, tmp_path)
    for paper in ("A4", "Letter"):
        found = measure_print(html, tmp_path / "chromium-profile", paper)
        assert found["scrollWidth"] <= found["viewport"], (paper, found)
        assert found["overflow"] == [], (paper, found)
        assert found["hidden"] == [], (paper, found)
        assert found["clipped"] == [], (paper, found)
        assert found["small"] == [], (paper, found)
        assert found["units"] == [], (paper, found)


def test_print_check_sees_a_table_wider_than_the_paper(tmp_path):
    # without the print rules (@media print) the bench page's tables keep their screen layout: on A4 they overflow
    html = page("bench", tmp_path)
    text = html.read_text(encoding="utf-8")
    html.write_text(text.replace("@media print", "@media not all"), encoding="utf-8")
    found = measure_print(html, tmp_path / "chromium-profile", "A4")
    assert found["overflow"] or found["hidden"] or found["clipped"], found


def test_print_check_sees_a_history_series_left_folded_on_paper(tmp_path):
    # without the print rule that unfolds every series (paper cannot), its runs table is laid out but not printed
    html = page("history", tmp_path)
    text = html.read_text(encoding="utf-8")
    html.write_text(text.replace("::details-content{content-visibility:visible;display:block}", "{}"), encoding="utf-8")
    found = measure_print(html, tmp_path / "chromium-profile", "A4")
    assert any(h.startswith("TABLE#history-") for h in found["hidden"]), found


def test_print_check_sees_chart_text_under_11px_on_a_chart_as_wide_as_before(tmp_path, monkeypatch):
    # the step chart drawn 11 in wide, as the charts were before they fitted the printable width: A4 shows it at about
    # 60 %, its text at 8.4 px, and the print check says so
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts

    monkeypatch.setattr(charts, "MAX_WIDTH_IN", 11.0)
    found = measure_print(page("bench", tmp_path), tmp_path / "chromium-profile", "A4")
    assert any("chart-steps" in s and "chart text" in s for s in found["small"]), found


def test_page_check_sees_small_text_and_a_header_unit_its_cells_do_not_use(tmp_path):
    html = page("bench", tmp_path)
    text = html.read_text(encoding="utf-8")
    text = text.replace("footer{margin-top:40px;color:var(--muted);font-size:12px}",
                        "footer{margin-top:40px;color:var(--muted);font-size:9px}")
    text = text.replace("attach max (ms)", "attach max (s)")
    html.write_text(text, encoding="utf-8")
    found = measure(html, tmp_path / "chromium-profile", 1280)
    assert any(s.startswith("FOOTER") for s in found["small"]), found
    assert any("attach max (s) over" in u for u in found["units"]), found


@pytest.mark.parametrize("kind", ["fio", "fio-wide"])
def test_print_check_sees_the_fio_metrics_table_unturned(tmp_path, monkeypatch, kind):
    # the metrics table with a column per figure, as it was before it turned: on A4 it does not fit, and the
    # fio pages' print check fails
    monkeypatch.setattr(T, "WIDE_METRIC_COLUMNS", 99)
    html = page(kind, tmp_path)
    assert "<th>Variant</th>" in html.read_text(encoding="utf-8")
    found = measure_print(html, tmp_path / "chromium-profile", "A4")
    assert found["overflow"] or found["hidden"] or found["clipped"], found


def test_page_check_sees_a_row_unit_its_cells_do_not_use(tmp_path):
    # the turned table says each row's unit in its row header: a row header's unit that its cells do not use is found
    html = page("fio", tmp_path)
    text = html.read_text(encoding="utf-8")
    assert '<th scope="row" class="rowhead">clat mean (µs)</th>' in text
    html.write_text(text.replace("clat mean (µs)", "clat mean (ms)"), encoding="utf-8")
    found = measure(html, tmp_path / "chromium-profile", 1280)
    assert any(u.startswith("metrics: clat mean (ms) over") for u in found["units"]), found


def test_gluster_handshake_table_reads_well_on_screen_and_in_print(tmp_path):
    # gluster_bench_report's page: the table against volume count (report/parameter_table.py) leads it, a timed-out
    # count's reason beside its mode and the seed's long reference names included; it neither scrolls nor loses a
    # column (the page's step-times table, five wide variant columns, scrolls on screen as it did before)
    from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import report as G
    from tests.unit.plugins.module_utils.test_gluster_plan import measured, params
    from tests.unit.plugins.module_utils.test_report_parameters import RUN, TIMED_OUT

    out = G.write_bench_report(params(tmp_path, RUN, measured() + [TIMED_OUT], counts=(20, 50, 100), status="failed"))
    html = Path(out["paths"]["html"])
    assert 'id="parameter-volumes"' in html.read_text(encoding="utf-8")
    for width in (1280, 1920):
        found = measure(html, tmp_path / "chromium-profile", width)
        assert found["scrollWidth"] <= width and found["overflow"] == [], found
        assert "parameter-volumes" not in found["clipped"], found
    for paper in ("A4", "Letter"):
        found = measure_print(html, tmp_path / "chromium-profile", paper)
        assert found["scrollWidth"] <= found["viewport"], (paper, found)
        assert found["overflow"] == [] and found["hidden"] == [] and found["clipped"] == [], (paper, found)
