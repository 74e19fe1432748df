# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The history document (history.py) as tables, Markdown and a self-contained HTML page, and writing them.

    write_history(history, "reports/history")   # history.json, history.md, history.html (atomic, only what changed)

Tables use tables.py's cell model and render.py's Markdown/HTML table functions inside render.py's page
shell, as fleet_render.py does, so the history reads like a run's report.html and the fleet report.
"""
from __future__ import annotations

import os
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import links as L
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import dumps
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell

DIRNAME = "history"
# history-state.json: what was reported, read by the next history so that a regression is reported once
FILENAMES = {"json": "history.json", "markdown": "history.md", "html": "history.html", "state": "history-state.json"}
FLAG = "▲"


def _size_text(series: dict[str, Any]) -> str:
    return stats.DASH if series["size"] is None else "%s %s" % (series["size"], series["size_parameter"] or "")


def _series_title(series: dict[str, Any]) -> str:
    return "%s · %s · %s%s%s" % (series["cluster"], series["benchmark"], series["variant"],
                                 "" if series["size"] is None else " · " + _size_text(series),
                                 " · " + series["config_text"] if series.get("config_text") else "")


# --- links to the runs' own pages ----------------------------------------------------------------
def run_pages(history: dict[str, Any], base: str | None) -> dict[tuple[str, str], str]:
    """{(cluster, run id): link} to each run's report.html beside its result.json, relative to base (the history's
    directory); only the pages that exist (a run read from a bucket, or whose report was not drawn, has none)."""
    if not base:
        return {}
    links = {(s["cluster"], r["run_id"]): L.href(L.page_beside(r.get("source")), base)
             for s in history["series"] for r in s["runs"]}
    return {k: h for k, h in links.items() if h}


# --- tables (tables.py cell model) ------------------------------------------------------------
def regressions_table(history: dict[str, Any], pages: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """Cluster | Benchmark | Variant | Size | Slower since | Step | Before | After | Change | p | Reported: what AWX
    alerts on (the new ones) and what it was told before (known since run <id>); a run links to its report where
    pages (run_pages) has one."""
    pages = pages or {}
    rows = []
    for r in history["regressions"] + history["known_regressions"]:
        known = r["known_since"]
        rows.append([cell(r["cluster"]), cell(r["benchmark"]), cell(r["variant"] + (" [%s]" % _config(r) if r["config"] else "")),
                     cell(stats.DASH if r["size"] is None else str(r["size"])),
                     L.linked(cell(r["run_id"]), pages.get((r["cluster"], r["run_id"]))), cell(r["step"]),
                     cell(stats.format_duration(r["baseline"])), cell(stats.format_duration(r["candidate"]), "fail"),
                     cell("+%.1f%%" % r["change_pct"], "fail"), cell("%.2g" % r["pvalue"]),
                     cell("known since run %s" % known if known else "new", "" if known else "fail")])
    if not rows:
        rows = [[cell("none: no step of any series is slower since a change point by the minimum effect", "ok")]
                + [cell("")] * 10]
    b = history["baseline"]
    return {"id": "history-regressions", "title": "Regressions in the latest runs", "left": 6, "rows": rows,
            "headers": ["Cluster", "Benchmark", "Variant", "Size", "Slower since run", "Step", "Before", "After",
                        "Change", "p", "Reported"],
            "note": "Per series (cluster, benchmark, variant, size, settings) and step, each ok run's geometric mean "
                    "of its operations' latencies; a regression is a change point at p ≤ %g whose level is at least "
                    "+%g%% above the level before it (+%g%% when the new level is the newest run alone); %s. Before "
                    "and After are those levels. Each is reported once: later histories say since when it is known."
                    % (b["max_pvalue"], b["min_effect_pct"], b["single_run_effect_pct"], b["method"])}


def _config(regression: dict[str, Any]) -> str:
    return ", ".join("%s %s" % kv for kv in regression["config"].items())


def series_table(series: dict[str, Any], pages: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """Run | Started | Status | <step> ...: every run of one series, oldest first, the flagged cells marked; a run
    links to its report where pages (run_pages) has one."""
    steps = series["steps"]
    pages = pages or {}
    rows = []
    for run in series["runs"]:
        by_name = {s["name"]: s for s in run["steps"]}
        status = run["status"] + (": " + run["reason"] if run.get("reason") else "")
        if not run["baseline"]:
            status += " (%s)" % run["baseline_note"].split(":")[0]
        row = [L.linked(cell(run["run_id"]), pages.get((series["cluster"], run["run_id"]))),
               cell(run["started"][:19].replace("T", " ")),
               cell(status, "" if run["status"] == "ok" else "fail")]
        for st in steps:
            s = by_name.get(st["name"])
            row.append(_step_cell(s))
        rows.append(row)
    return {"id": "history-" + series["id"], "title": _series_title(series), "left": 3, "rows": rows,
            "headers": ["Run", "Started", "Status"] + [st["label"] for st in steps],
            "note": "Median over repetitions: wall time of the batch · objects per second. %s: a regression starts "
                    "at this run (the change of the operations' geometric mean latency and its p follow); ▼ / △: a "
                    "change point that is faster, or slower by less than the minimum effect." % FLAG}


def cluster_time_table(series: dict[str, Any]) -> dict[str, Any] | None:
    """Run | Time scale | <step> · cluster time ...: the runs of this series that ran scaled (a twin's), each step as
    cluster time, as a bench report shows it; with the seed's figure as the last row and each cell's ours ÷ seed in
    brackets where the step repeats a seed's measurement. None when no run of the series ran scaled."""
    runs = [r for r in series["runs"] if r.get("time_scale")]
    if not runs:
        return None
    steps = series["steps"]
    seeds: dict[str, float] = {}
    for run in runs:
        seeds.update((s["name"], s["seed_s"]) for s in run["steps"] if s.get("seed_s"))
    rows = []
    for run in runs:
        by_name = {s["name"]: s for s in run["steps"]}
        row = [cell(run["run_id"]), cell("%g" % run["time_scale"])]
        for st in steps:
            s = by_name.get(st["name"]) or {}
            ours = s["wall_s"] / run["time_scale"] if s.get("wall_s") is not None else None
            text = stats.format_duration(ours)
            if ours is not None and s.get("seed_s"):
                text += " (%.2f)" % (ours / s["seed_s"])
            row.append(cell(text, "" if ours is not None else "missing"))
        rows.append(row)
    if seeds:
        rows.append([cell("seed (field report)", "sum"), cell("")]
                    + [cell(stats.format_duration(seeds.get(st["name"])), "sum") for st in steps])
    headers = ["Run", "Time scale"] + ["%s · %s" % (st["label"], T.CLUSTER_TIME) for st in steps]
    return {"id": "history-%s-cluster-time" % series["id"], "title": "%s · %s" % (_series_title(series), T.CLUSTER_TIME),
            "left": 2, "rows": rows, "headers": headers,
            "note": T.SCALED_NOTE + (T.SEED_NOTE + " In brackets: ours ÷ seed." if seeds else "")}


def _step_cell(s: dict[str, Any] | None) -> dict[str, Any]:
    if s is None:
        return cell(stats.DASH, "missing")
    change = s.get("change")
    if change:
        mark = FLAG if change["regression"] else ("▼" if change["change_pct"] < 0 else "△")
        text = "%s %s %s%.1f%% (p %.2g)" % (s["text"], mark, "+" if change["change_pct"] >= 0 else "",
                                            change["change_pct"], change["pvalue"])
        return cell(text, "fail" if change["regression"] else "")
    return cell(s["text"], "" if s["status"] == "ok" else ("fail" if s["status"] in ("failed", "timeout") else "skip"))


def problems_table(history: dict[str, Any]) -> dict[str, Any] | None:
    rows = [[cell(p.get("cluster") or stats.DASH), cell(p.get("source") or stats.DASH), cell(p["error"], "fail")]
            for p in history["problems"]]
    return {"id": "history-problems", "title": "Documents left out", "left": 3, "rows": rows,
            "headers": ["Cluster", "Document", "Why"], "note": ""} if rows else None


# --- rendering --------------------------------------------------------------------------------
def _n(count: int, word: str) -> str:
    return "%d %s%s" % (count, word, "" if count == 1 or word.endswith("s") else "s")


def _headline(history: dict[str, Any]) -> str:
    s = history["summary"]
    n = _n
    return "%s · %s · %s · %s (%d failed) · %s in the latest runs, %d known before" % (
        n(s["documents"], "document"), n(s["clusters"], "cluster"), n(s["series"], "series"), n(s["runs"], "run"),
        s["failed_runs"], n(s["regressions"], "new regression"), s["known_regressions"])


def to_markdown(history: dict[str, Any], pages: dict[tuple[str, str], str] | None = None) -> str:
    out = ["# %s" % history["title"], "", _headline(history), "", R.table_markdown(regressions_table(history, pages))]
    for s in history["series"]:
        out += [R.table_markdown(t) for t in (series_table(s, pages), cluster_time_table(s)) if t]
    problems = problems_table(history)
    if problems:
        out.append(R.table_markdown(problems))
    return "\n".join(out).rstrip() + "\n"


def _cards(history: dict[str, Any]) -> str:
    s = history["summary"]
    cards = [("new regressions", s["regressions"]), ("known regressions", s["known_regressions"]),
             ("series", s["series"]), ("runs", s["runs"]),
             ("failed runs", s["failed_runs"]), ("clusters", s["clusters"]), ("documents", s["documents"])]
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%s</div></div>' % (R.esc(k), R.esc(v))
                   for k, v in cards)


def to_html(history: dict[str, Any], charts: bool = True, pages: dict[tuple[str, str], str] | None = None) -> str:
    """pages: run_pages(), the links to the runs' own reports."""
    status = "ok" if not history["summary"]["regressions"] else "failed"
    body = ["<main>", "<h1>%s</h1>" % R.esc(history["title"]),
            '<p class="sub"><span class="badge %s">%s</span> %s</p>' % (
                status, "no regression" if status == "ok" else "regression", R.esc(_headline(history))),
            '<div class="cards">%s</div>' % _cards(history)]
    drawn: dict[str, Any] = {"charts": [], "left_out": 0}
    if charts:
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_charts

        drawn = history_charts.all_charts(history)
        if not history_charts.HAS_MATPLOTLIB:
            body.append('<p class="note">Charts need matplotlib on the host that renders the report.</p>')
    by_id = {c["id"]: c for c in drawn["charts"]}
    table = regressions_table(history, pages)
    body += ["<h2>%s</h2>" % R.esc(table["title"]), R.table_html(table)]
    if history["series"]:
        body.append('<h2>Series</h2><p class="note">Each series with its trend chart (two runs or more). Open a '
                    'series for its runs and their cluster times; a series with a regression in force is open.</p>')
    body += [series_html(s, by_id.get("chart-" + s["id"]), pages) for s in history["series"]]
    if drawn["left_out"]:
        body.append('<p class="note">%d more series without regressions have no chart (at most %d charts).</p>'
                    % (drawn["left_out"], len(drawn["charts"])))
    problems = problems_table(history)
    if problems:
        body += ["<h2>%s</h2>" % R.esc(problems["title"]), R.table_html(problems)]
    body.append("<footer>storageperf.k8s history schema v%s</footer>" % R.esc(history["history_schema_version"]))
    body.append("</main>")
    return R.page_html(history["title"], body, extra_css=HISTORY_CSS)


def _series_line(series: dict[str, Any]) -> str:
    """'6 runs · latest 2026-06-20 09:00 ok · ▲ 1 regression in force': what a folded series says of itself."""
    runs, latest = series["runs"], series["runs"][-1]
    text = "%s · latest %s %s" % (_n(len(runs), "run"), latest["started"][:16].replace("T", " "), latest["status"])
    if series["regressions"]:
        text += " · %s %s in force" % (FLAG, _n(series["regressions"], "regression"))
    return text


def series_html(series: dict[str, Any], chart: dict[str, Any] | None = None,
                pages: dict[tuple[str, str], str] | None = None) -> str:
    """One series: its title and _series_line() as the summary of a <details> that folds its runs table and cluster
    times (open when a regression is in force), then its trend chart (all its runs, two or more). 24 runs read in
    about three screens: a line and a chart a series, not a table and a chart a screen tall each, nor a chart of one
    dot."""
    table = series_table(series, pages)
    parts = ['<section class="series" id="series-%s"><details%s><summary><b>%s</b> <span class="sub">· %s</span>'
             '</summary>' % (R.esc(series["id"]), " open" if series["regressions"] else "", R.esc(table["title"]),
                             R.esc(_series_line(series))), R.table_html(table)]
    scaled = cluster_time_table(series)
    if scaled:
        parts += ["<h3>%s</h3>" % R.esc(scaled["title"]), R.table_html(scaled)]
    parts.append("</details>")
    if chart:
        parts += R.figures_html([chart])[1:]  # the figure without another "Charts" heading
    parts.append("</section>")
    return "\n".join(parts)


# a series has a column per step and run ids are long: cells wrap (run ids anywhere) so that every column shows
# at 1280 px instead of hiding behind the table's scroll bar; on screen headers wrap between words only ("Cluste r"
# was a header broken anywhere), on paper's narrower page a long step name must break to fit
HISTORY_CSS = ('td.ok{color:var(--ok);font-weight:600}table[id^="history-"] th{white-space:normal}'
               'table[id^="history-"] td{white-space:normal;overflow-wrap:anywhere}'
               'section.series{border-bottom:1px solid var(--line);padding:7px 0}section.series .sub{margin:0}'
               'section.series summary{cursor:pointer}section.series h3{font-size:14px;margin:12px 0 4px}'
               'section.series figure{margin:8px 0 4px}'
               # paper cannot unfold: every series prints open (::details-content, Chromium 131+, Firefox 143+)
               '@media print{table[id^="history-"] th{overflow-wrap:anywhere}'
               'section.series details::details-content{content-visibility:visible;display:block}}')


def render_history(history: dict[str, Any], charts: bool = True, base: str | None = None) -> dict[str, str]:
    """base: the directory the pages are written to, for their relative links to the runs' reports."""
    pages = run_pages(history, base)
    return {"json": dumps(history), "markdown": to_markdown(history, pages),
            "html": to_html(history, charts=charts, pages=pages), "state": dumps(history["state"])}


def write_history(history: dict[str, Any], output_dir: str, check_mode: bool = False, charts: bool = True) -> dict[str, dict[str, Any]]:
    """Write <output_dir>/history.json|history.md|history.html|history-state.json atomically (only what changed).

    Returns {format: {"path", "changed"}}; in check mode nothing is written and changed says whether it would be.
    """
    return R.write_texts(render_history(history, charts=charts, base=output_dir), output_dir, FILENAMES,
                         check_mode=check_mode)


def history_link(reports_dir: str, from_dir: str) -> str | None:
    """The relative link from a report in from_dir to <reports_dir>/history/history.html, or None when there is none."""
    return L.href(os.path.join(reports_dir, DIRNAME, FILENAMES["html"]), from_dir)


def table_lines(history: dict[str, Any]) -> list[str]:
    """The regressions table as Markdown lines, for the playbook's debug output."""
    return R.table_markdown(dict(regressions_table(history), title="", note="")).splitlines()
