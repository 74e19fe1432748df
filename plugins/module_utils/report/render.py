# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a result document as Markdown (the seed's table layout) or a self-contained HTML page.

    render(doc, ["json", "markdown", "html"]) -> {"json": text, "markdown": text, "html": text}
    write_reports(doc, out_dir, formats)      -> {"json": {"path", "changed"}, ...}

The HTML page has no external references: inline CSS, charts as base64 PNG (charts.py).
"""
from __future__ import annotations

import os
from html import escape as _escape
from typing import Any, Iterable

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from ansible_collections.storageperf.k8s.plugins.module_utils.report.compare import headline
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    dumps, ensure_summaries, summaries, write_text_atomic, RESULT_FILE,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import humanize

FORMATS = ("json", "markdown", "html")
MIN_CHART_TEXT_PX = 9.0 * 110 / 72.0  # charts.MIN_TEXT_PX (charts.py imports matplotlib, so not imported here)
FILENAMES = {"json": RESULT_FILE, "markdown": "report.md", "html": "report.html"}


def esc(text: object) -> str:
    return _escape(str(text), quote=True)


def title_of(doc: dict[str, Any]) -> str:
    return doc.get("title") or "%s benchmark" % humanize(doc.get("benchmark", "result"))


# --- Markdown ---------------------------------------------------------------------------
def _md_escape(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_markdown(table: dict[str, Any]) -> str:
    lines = []
    if table.get("title"):
        lines += ["### " + table["title"], ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in table["headers"]) + " |")
    # first column left, figures right-aligned
    left = table.get("left", 1)
    lines.append("|" + "|".join(["---"] * left + ["---:"] * (len(table["headers"]) - left)) + "|")
    for row in table["rows"]:
        # a reported figure (a reference variant's, not measured here) in italics, as the HTML page sets it
        cells = [("_%s_" if "reported" in c.get("cls", "").split() else "%s") % _md_cell(c) for c in row]
        if row and "sum" in row[0].get("cls", ""):
            cells = ["**%s**" % c if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    if table.get("note"):
        lines += ["", "_%s_" % table["note"]]
    return "\n".join(lines) + "\n"


def _md_cell(c: dict[str, Any]) -> str:
    # a cell with an href (links.linked) links to another page of the reports directory
    text = _md_escape(c["text"])
    return "[%s](%s)" % (text.replace("[", "\\[").replace("]", "\\]"), c["href"]) if c.get("href") and text else text


def to_markdown(doc: dict[str, Any]) -> str:
    doc = ensure_summaries(doc)
    out = ["# %s" % title_of(doc), ""]
    status = doc.get("status", "")
    out.append("Run `%s` · status **%s**%s · %s" % (
        doc.get("run_id", ""), status, (" (%s)" % doc["reason"]) if doc.get("reason") else "",
        _span(doc)))
    out.append("")
    for table in T.all_tables(doc):
        out.append(table_markdown(table))
    facts = T.facts_table(doc)
    out.append("### Run")
    out.append("")
    out.append("| | |")
    out.append("|---|---|")
    for k, v in facts["rows"]:
        out.append("| %s | %s |" % (_md_escape(k["text"]), _md_escape(v["text"])))
    out.append("")
    problems = T.problem_list(doc)
    if problems:
        out += ["### Problems", ""]
        out += ["- %s%s" % (("**%s**: " % _md_escape(w)) if w else "", _md_escape(p)) for w, p in problems]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _span(doc: dict[str, Any]) -> str:
    try:
        import datetime

        def parse(s: str) -> datetime.datetime:
            return datetime.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")

        secs = (parse(doc["finished"]) - parse(doc["started"])).total_seconds()
        return "took %s" % stats.format_duration(secs)
    except (KeyError, TypeError, ValueError):
        return "started %s" % doc.get("started", "?")


# --- HTML -------------------------------------------------------------------------------
CSS = """
:root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--bg:#ffffff;--head:#f3f4f6;--ok:#047857;--fail:#b91c1c;--warn:#b45309}
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg);margin:0}
main{max-width:1180px;margin:0 auto;padding:28px 32px 48px}
h1{font-size:24px;margin:0 0 6px}
h2{font-size:17px;margin:34px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
.sub{color:var(--muted);margin:0 0 18px}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-weight:600;font-size:12px;color:#fff;vertical-align:2px}
.badge.ok{background:var(--ok)}.badge.failed{background:var(--fail)}.badge.interrupted{background:var(--warn)}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:14px 0 6px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:150px}
.card .k{color:var(--muted);font-size:12px}.card .v{font-size:20px;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--head);font-weight:600}
th:first-child,td:first-child{text-align:left}
tbody th[scope=row]{background:none;font-weight:500;text-align:left}
table.left2 th:nth-child(2),table.left2 td:nth-child(2){text-align:left}
td.ratio{font-weight:600}
tr.sum td{font-weight:700;border-top:2px solid #9ca3af}
td.reported{font-style:italic}table.wrap1 td:first-child{white-space:normal}
td.fail{color:var(--fail)}td.warn{color:var(--warn)}td.skip,td.missing{color:var(--muted)}
table.facts td{text-align:left;white-space:normal}table.facts td.key{color:var(--muted);width:220px}
.note{color:var(--muted);font-size:12px;margin:4px 0 0}
figure{margin:10px 0 18px}figure img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px}
figcaption{color:var(--muted);font-size:12px;margin-top:4px}
ul.problems{padding-left:18px}ul.problems li{margin:2px 0}
#warnings td:nth-child(-n+3){text-align:left;white-space:normal}
#cluster-time th,#metrics th{white-space:normal}
footer{margin-top:40px;color:var(--muted);font-size:12px}
@media print{@page{margin:12mm}main{max-width:none;padding:0}.scroll{overflow:visible}th,td{white-space:normal;padding:4px 6px}
table.facts td{overflow-wrap:anywhere}table.facts td.key{width:auto}
figure,tr,.card{break-inside:avoid}h2{break-after:avoid}a{color:inherit}}
"""


def table_html(table: dict[str, Any], cls: str = "") -> str:
    # a table wider than the page scrolls inside its own box, so the page itself never overflows on screen (the
    # metrics table turns instead of growing past four figures: tables.WIDE_METRIC_COLUMNS)
    parts = ['<div class="scroll"><table class="%s" id="%s">' % (esc((cls + " left%d" % table.get("left", 1)).strip()), esc(table.get("id", "")))]
    if any(table["headers"]):
        parts.append("<thead><tr>%s</tr></thead>" % "".join("<th>%s</th>" % esc(h) for h in table["headers"]))
    parts.append("<tbody>")
    for row in table["rows"]:
        tr_cls = "sum" if row and "sum" in row[0].get("cls", "") else ""
        parts.append('<tr class="%s">%s</tr>' % (tr_cls, "".join(_cell_html(c) for c in row)))
    parts.append("</tbody></table></div>")
    if table.get("note"):
        parts.append('<p class="note">%s</p>' % esc(table["note"]))
    return "\n".join(parts)


def _cell_html(c: dict[str, Any]) -> str:
    # a row's own header (the turned metrics table's "clat mean (µs)"): its unit is its row's, as a th's is its column's
    if "rowhead" in c.get("cls", "").split():
        return '<th scope="row" class="%s">%s</th>' % (esc(c["cls"]), esc(c["text"]))
    text = esc(c["text"])
    if c.get("href"):  # links.linked: another page of the reports directory, by a relative path
        text = '<a href="%s">%s</a>' % (esc(c["href"]), text)
    return '<td class="%s">%s</td>' % (esc(c.get("cls", "")), text)


def _cards(doc: dict[str, Any]) -> str:
    cards = []
    variants = summaries(doc)
    table = T.operations_table(doc)
    if table:  # the same figures as the table's sum row, so the page never disagrees with itself
        sums = table["rows"][-1]
        for i, (vname, _) in enumerate(variants):
            cards.append(("%s · sum of step times" % vname, sums[i + 1]["text"]))
        if len(variants) == 2:
            # the benchmark's own headline (compare.HEADLINES): the sum row's ratio unless the seed names a step
            head = headline(doc)
            text = head["text"] if head and head["step"] and head["text"] else sums[-1]["text"]
            cards.append(("%s vs %s" % (variants[1][0], variants[0][0]), text))
    nsteps = sum(len(r.get("steps", [])) for v in doc.get("variants", []) for r in v.get("runs", []))
    cards.append(("steps measured", str(nsteps)))
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%s</div></div>' % (esc(k), esc(v))
                   for k, v in cards)


def to_html(doc: dict[str, Any], charts: bool = True) -> str:
    doc = ensure_summaries(doc)
    status = doc.get("status", "interrupted")
    body = ["<main>", "<h1>%s</h1>" % esc(title_of(doc)),
            '<p class="sub"><span class="badge %s">%s</span> run <code>%s</code> · %s%s</p>' % (
                esc(status), esc(status), esc(doc.get("run_id", "")), esc(_span(doc)),
                (" · " + esc(doc["reason"])) if doc.get("reason") else ""),
            '<div class="cards">%s</div>' % _cards(doc)]
    chart_list = []
    if charts:
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import charts as C

        chart_list = C.all_charts(doc)
        if not C.HAS_MATPLOTLIB:
            body.append('<p class="note">Charts need matplotlib on the host that renders the report.</p>')
    for table in T.all_tables(doc):
        body.append("<h2>%s</h2>" % esc(table["title"]))
        body.append(table_html(table, table.get("cls", "")))
    body += figures_html(chart_list)
    problems = T.problem_list(doc)
    if problems:
        body.append("<h2>Problems</h2><ul class=\"problems\">")
        body += ["<li>%s%s</li>" % (("<b>%s</b>: " % esc(w)) if w else "", esc(p)) for w, p in problems]
        body.append("</ul>")
    body.append("<h2>Run</h2>")
    body.append(table_html(T.facts_table(doc), "facts"))
    body.append('<footer>storageperf.k8s result schema v%s · %s</footer>' % (
        esc(doc.get("schema_version", "?")), esc(doc.get("finished") or doc.get("started") or "")))
    body.append("</main>")
    return page_html(title_of(doc), body)


def figures_html(chart_list: list[dict[str, Any]]) -> list[str]:
    """The "Charts" section: each chart (charts.py shape) as an embedded PNG figure."""
    if not chart_list:
        return []
    out = ["<h2>Charts</h2>"]
    for c in chart_list:
        # data-text-px: the chart's smallest text in PNG pixels (charts.MIN_TEXT_PX), for the layout test
        out.append('<figure id="%s"><img alt="%s" data-text-px="%.2f" src="data:image/png;base64,%s">'
                   '<figcaption>%s</figcaption></figure>'
                   % (esc(c["id"]), esc(c["alt"]), MIN_CHART_TEXT_PX, c["png"], esc(c["title"])))
    return out


def page_html(title: str, body: Iterable[str], extra_css: str = "") -> str:
    """The self-contained page shell (inline CSS, no external references) around body parts."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>%s</title><style>%s%s</style></head><body>\n%s\n</body></html>\n"
            % (esc(title), CSS, extra_css, "\n".join(body)))


# --- all formats ------------------------------------------------------------------------
def render(doc: dict[str, Any], formats: Iterable[str] = FORMATS) -> dict[str, str]:
    """{format: text} for the requested formats (json, markdown, html)."""
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError("unknown report format(s) %s; choose from %s" % (", ".join(bad), ", ".join(FORMATS)))
    out = {}
    for f in formats:
        if f == "json":
            out[f] = dumps(ensure_summaries(doc))
        elif f == "markdown":
            out[f] = to_markdown(doc)
        else:
            out[f] = to_html(doc)
    return out


def write_reports(doc: dict[str, Any], output_dir: str, formats: Iterable[str] = FORMATS, check_mode: bool = False) -> dict[str, dict[str, Any]]:
    """Render and write each format into output_dir atomically.

    Returns {format: {"path": ..., "changed": bool}}; in check mode nothing is written and
    changed says whether it would have been.
    """
    return write_texts(render(doc, formats), output_dir, FILENAMES, check_mode=check_mode)


def write_texts(texts: dict[str, str], output_dir: str, filenames: dict[str, str], check_mode: bool = False) -> dict[str, dict[str, Any]]:
    """Write {format: text} into output_dir as filenames[format], atomically and only what changed.

    Returns {format: {"path": ..., "changed": bool}}; in check mode nothing is written and changed says
    whether it would have been.
    """
    out = {}
    for f, text in texts.items():
        path = os.path.abspath(os.path.join(output_dir, filenames[f]))
        if check_mode:
            try:
                with open(path, "rb") as fh:
                    changed = fh.read() != text.encode("utf-8")
            except OSError:
                changed = True
        else:
            changed = write_text_atomic(path, text)
        out[f] = {"path": path, "changed": changed}
    return out
