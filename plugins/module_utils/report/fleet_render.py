# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet document (fleet.py) as tables, Markdown and a self-contained HTML page, and writing them.

    write_fleet(fleet, "reports")   # reports/<name>/fleet.json, fleet.md, fleet.html (atomic, only what changed)

Tables use tables.py's cell model and render.py's Markdown/HTML table functions inside render.py's
page shell, so a fleet page looks and reads like a run's report.html.
"""
from __future__ import annotations

import os
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import advice_render as AR
from ansible_collections.storageperf.k8s.plugins.module_utils.report import links as L
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import dumps
from ansible_collections.storageperf.k8s.plugins.module_utils.report.history_render import history_link
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell, humanize

FILENAMES = {"json": "fleet.json", "markdown": "fleet.md", "html": "fleet.html"}
# cell classes of render.CSS: on = ok (green, FLEET_CSS), available = warn, blocked = fail, n/a = skip
STATE_CLS = {"on": "ok", "available": "warn", "blocked": "fail", "not_applicable": "skip"}
STATE_TEXT = {"on": "on", "available": "available", "blocked": "blocked", "not_applicable": "n/a"}


# --- tables (tables.py cell model) ------------------------------------------------------------
def _status_cell(row: dict[str, Any]) -> dict[str, Any]:
    text = row["status"]
    if row.get("error"):
        text += ": " + row["error"]
    elif row.get("reason"):
        text += ": " + row["reason"]
    return cell(text, "" if row["status"] == "ok" else "fail")


def cluster_pages(fleet: dict[str, Any], base: str | None) -> dict[str, str]:
    """{cluster: link} to each cluster's page beside its document (report.html, or advice.html for advice), relative
    to base (the fleet's directory); only the pages that exist: a failed cluster has none."""
    if not base:
        return {}
    page = L.ADVICE_PAGE if fleet["kind"] == "advice" else L.REPORT_PAGE
    links = {r["cluster"]: L.href(L.page_beside(r.get("source"), page), base) for r in fleet["clusters"]}
    return {c: h for c, h in links.items() if h}


def sums_table(fleet: dict[str, Any], pages: dict[str, str] | None = None) -> dict[str, Any]:
    """Cluster | Status | <variant> sum ... | <last> vs <first>: one row per cluster, failed ones included; the cluster
    links to its report where pages (cluster_pages) has one."""
    pages = pages or {}
    variants = fleet.get("variants") or []
    ratio = len(variants) >= 2
    headers = ["Cluster", "Status"] + ["%s · sum of step times" % v for v in variants]
    if ratio:
        headers.append("%s vs %s (throughput)" % (variants[-1], variants[0]))
    rows = []
    for r in fleet["clusters"]:
        row = [L.linked(cell(r["cluster"]), pages.get(r["cluster"])), _status_cell(r)]
        by_name = {v["name"]: v for v in r.get("variants") or []}
        for v in variants:
            total = (by_name.get(v) or {}).get("sum_wall_s")
            row.append(cell(stats.format_duration(total), "" if total is not None else "missing"))
        if ratio:
            sp = r.get("speedup") or {}
            row.append(cell(stats.format_ratio(sp.get("overall"), approx=True) + (" overall" if sp.get("overall") else ""),
                            "ratio"))
        rows.append(row)
    return {"id": "fleet-sums", "title": "Clusters", "headers": headers, "rows": rows, "left": 2,
            "note": "Sum of the median step times per variant. Ratio: %s throughput / %s throughput over the "
                    "steps that succeeded in both." % (variants[-1], variants[0]) if ratio else
                    "Sum of the median step times per variant."}


def steps_table(fleet: dict[str, Any]) -> dict[str, Any] | None:
    """Cluster | Step | <variant> ... | speedup: every step's time and rate on every cluster."""
    variants = fleet.get("variants") or []
    steps = fleet.get("steps") or []
    if not steps:
        return None
    ratio = len(variants) >= 2
    headers = ["Cluster", "Step"] + list(variants)
    if ratio:
        headers.append("%s vs %s" % (variants[-1], variants[0]))
    rows = []
    for r in fleet["clusters"]:
        if r["status"] == "error":
            rows.append([cell(r["cluster"]), _status_cell(r)] + [cell(stats.DASH, "missing")] * (len(headers) - 2))
            continue
        by_name = {v["name"]: {s["name"]: s for s in v["steps"]} for v in r.get("variants") or []}
        step_ratios = (r.get("speedup") or {}).get("steps") or {}
        for i, st in enumerate(steps):
            row = [cell(r["cluster"] if i == 0 else ""), cell(st["label"])]
            for v in variants:
                s = (by_name.get(v) or {}).get(st["name"])
                if s is None or s["status"] == "missing":
                    row.append(cell(stats.DASH, "missing"))
                else:
                    cls = "" if s["status"] == "ok" and s.get("ok_runs") == s.get("runs") else (
                        "warn" if s["status"] == "ok" or s.get("wall_s") is not None else
                        ("fail" if s["status"] in ("failed", "timeout") else "skip"))
                    row.append(cell(s["text"], cls))
            if ratio:
                row.append(cell(stats.format_ratio(step_ratios.get(st["name"])), "ratio"))
            rows.append(row)
    return {"id": "fleet-steps", "title": "Step times per cluster", "headers": headers, "rows": rows, "left": 2,
            "note": "Median over repetitions: wall time of the whole batch · objects per second."}


def cluster_time_table(fleet: dict[str, Any]) -> dict[str, Any] | None:
    """Cluster | Step | <variant> · cluster time [| seed | ours ÷ seed] ...: the step times of every cluster that ran
    scaled (a twin: its row carries time_scale), as bench reports show them; None when no cluster did."""
    variants = fleet.get("variants") or []
    scaled = [r for r in fleet["clusters"] if r.get("time_scale") and r["status"] != "error"]
    if not scaled or not fleet.get("steps"):
        return None
    figures = {r["cluster"]: {v["name"]: {s["name"]: s for s in v["steps"]} for v in r.get("variants") or []}
               for r in scaled}
    seeded = [v for v in variants if any(s.get("seed_s") for f in figures.values() for s in (f.get(v) or {}).values())]
    headers = ["Cluster", "Step"]
    for v in variants:
        headers.append("%s · %s" % (v, T.CLUSTER_TIME))
        if v in seeded:
            headers += ["%s · seed" % v, T.SEED_RATIO]
    rows = []
    for r in scaled:
        for i, st in enumerate(fleet["steps"]):
            row = [cell("%s · time scale %g" % (r["cluster"], r["time_scale"]) if i == 0 else ""), cell(st["label"])]
            for v in variants:
                s = (figures[r["cluster"]].get(v) or {}).get(st["name"]) or {}
                ours = s["wall_s"] / r["time_scale"] if s.get("wall_s") is not None else None
                row.append(cell(stats.format_duration(ours), "" if ours is not None else "missing"))
                if v in seeded:
                    row += T.seed_cells(ours, s.get("seed_s"))
            rows.append(row)
        rows.append(_cluster_time_sum(figures[r["cluster"]], variants, seeded, r["time_scale"]))
    return {"id": "fleet-cluster-time", "title": "Step times in cluster time", "headers": headers, "rows": rows,
            "left": 2, "note": T.SCALED_NOTE + (T.SEED_NOTE if seeded else "")}


def _cluster_time_sum(figures: dict[str, Any], variants: list[str], seeded: list[bool], scale: float) -> list[dict[str, Any]]:
    """The cluster's sum of step times (its sums-table figure, sum_wall_s) in cluster time, and the seed's sum over the
    same steps when every one of them has a seed figure."""
    row = [cell("", "sum"), cell("Sum of step times", "sum")]
    for v in variants:
        timed = [s for s in (figures.get(v) or {}).values() if s.get("wall_s") is not None]
        ours = sum(s["wall_s"] for s in timed) / scale if timed else None
        row.append(cell(stats.format_duration(ours), "sum"))
        if v in seeded:
            seed = sum(s["seed_s"] for s in timed) if timed and all(s.get("seed_s") for s in timed) else None
            row += [dict(c, cls=(c["cls"] + " sum").strip()) for c in T.seed_cells(ours, seed)]
    return row


def advice_table(fleet: dict[str, Any], pages: dict[str, str] | None = None) -> dict[str, Any]:
    """Cluster x tuning: the state in each cell, [n] pointing at the cell's reasons in advice_notes(); the cluster
    links to its advice page where pages has one."""
    tunings = fleet.get("tunings") or []
    pages = pages or {}
    headers = ["Cluster", "Status"] + [humanize(t) for t in tunings]
    rows, n = [], 0
    for r in fleet["clusters"]:
        if r["status"] == "error":
            rows.append([cell(r["cluster"]), _status_cell(r)] + [cell(stats.DASH, "missing")] * len(tunings))
            continue
        cells = {t["name"]: t for t in r.get("tunings") or []}
        row = [L.linked(cell(r["cluster"]), pages.get(r["cluster"])), _status_cell(r)]
        for name in tunings:
            t = cells.get(name)
            if t is None:
                row.append(cell(stats.DASH, "missing"))
                continue
            text = STATE_TEXT[t["state"]]
            if t["reasons"]:
                n += 1
                text += " [%d]" % n
            row.append(cell(text, STATE_CLS[t["state"]]))
        rows.append(row)
    return {"id": "fleet-advice", "title": "Tunings per cluster", "headers": headers, "rows": rows,
            "left": len(headers),
            "note": "on: already applied · available: can be applied · blocked: cannot be applied yet "
                    "(see the reasons) · n/a: does not apply to this cluster."}


def advice_notes(fleet: dict[str, Any]) -> list[tuple[int, str, str, str, str]]:
    """[(n, cluster, tuning, state, reasons text)] in the numbering of advice_table()."""
    out, n = [], 0
    for r in fleet["clusters"]:
        if r["status"] == "error":
            continue
        cells = {t["name"]: t for t in r.get("tunings") or []}
        for name in fleet.get("tunings") or []:
            t = cells.get(name)
            if t and t["reasons"]:
                n += 1
                out.append((n, r["cluster"], name, STATE_TEXT[t["state"]], "; ".join(t["reasons"])))
    return out


def fleet_tables(fleet: dict[str, Any], pages: dict[str, str] | None = None) -> list[dict[str, Any]]:
    if fleet["kind"] == "advice":
        return [advice_table(fleet, pages)]
    return [t for t in (sums_table(fleet, pages), steps_table(fleet), cluster_time_table(fleet)) if t]


def clusters_facts(fleet: dict[str, Any], pages: dict[str, str] | None = None) -> dict[str, Any]:
    """Cluster | API server | version | run | source: where each row's figures came from, the run linked to its
    report where pages has one."""
    pages = pages or {}
    rows = [[cell(r["cluster"]), cell(r.get("server") or stats.DASH), cell(r.get("version") or stats.DASH),
             L.linked(cell(r.get("run_id") or stats.DASH), pages.get(r["cluster"])), cell(r.get("source") or stats.DASH)]
            for r in fleet["clusters"]]
    return {"id": "fleet-sources", "title": "Sources", "headers": ["Cluster", "API server", "Version", "Run", "Document"],
            "rows": rows, "left": 5, "note": ""}


# --- rendering --------------------------------------------------------------------------------
def _headline(fleet: dict[str, Any]) -> str:
    s = fleet["summary"]
    text = "%d cluster%s · %d ok · %d failed" % (s["clusters"], "" if s["clusters"] == 1 else "s", s["ok"], s["failed"])
    if s["failed_clusters"]:
        text += " (%s)" % ", ".join(s["failed_clusters"])
    return text


def to_markdown(fleet: dict[str, Any], history: str | None = None, pages: dict[str, str] | None = None) -> str:
    out = ["# %s" % fleet["title"], "", "Fleet report `%s` · %s" % (fleet["name"], _headline(fleet)), ""]
    if history:  # the link line to <reports_dir>/history/history.html (docs/history.md)
        out += ["History and regressions of every cluster: [history](%s)" % history, ""]
    for table in fleet_tables(fleet, pages):
        out.append(R.table_markdown(table))
    notes = advice_notes(fleet) if fleet["kind"] == "advice" else []
    if notes:
        out += ["### Reasons", ""]
        out += ["%d. **%s** / %s (%s): %s" % (n, R._md_escape(c), R._md_escape(t), st, R._md_escape(why))
                for n, c, t, st, why in notes]
        out.append("")
    out += apply_markdown(fleet)
    out.append(R.table_markdown(clusters_facts(fleet, pages)))
    return "\n".join(out).rstrip() + "\n"


def _actionable(fleet: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """[(cluster, tuning cell)] that can be applied or are blocked, with a command or apply_with to say how."""
    if fleet["kind"] != "advice":
        return []
    return [(r["cluster"], dict(t, apply={"command": t.get("command"), "rollout_command": t.get("rollout_command")}))
            for r in fleet["clusters"] if r["status"] != "error"
            for t in r.get("tunings") or [] if t["state"] in AR.ACTIONABLE and AR.commands(t)]


def apply_markdown(fleet: dict[str, Any]) -> list[str]:
    """The advisor section: per cluster and tuning, the expected gain and the commands that apply it."""
    todo = _actionable(fleet)
    if not todo:
        return []
    out = ["### How to apply", ""]
    for cluster, t in todo:
        why = AR.blockers(t)
        out.append("**%s** / %s (%s)%s" % (R._md_escape(cluster), R._md_escape(t["name"]), STATE_TEXT[t["state"]],
                                           ": first " + R._md_escape("; ".join(why)) if why else ""))
        out.append("")
        if AR.gain_text(t):
            out += ["expected: %s" % R._md_escape(AR.gain_text(t)), ""]
        for label, command in AR.commands(t):
            out += ["%s:" % label, "", "```", command, "```", ""]
    return out


# a failed cluster's status holds its error: it wraps, so that the ratio column is never pushed out of sight
FLEET_CSS = ("ol.reasons{padding-left:22px}ol.reasons li{margin:2px 0}"
             "table[id^=\"fleet-\"] th,table[id^=\"fleet-\"] td:nth-child(2){white-space:normal;min-width:8em}"
             # on paper (about 700 px) eight columns of 8em would not fit: the widths come from the cells there
             "@media print{table[id^=\"fleet-\"] th,table[id^=\"fleet-\"] td:nth-child(2){min-width:0}}"
             + AR.ADVICE_CSS)


def _cards(fleet: dict[str, Any]) -> str:
    s = fleet["summary"]
    cards = [("clusters", str(s["clusters"])), ("ok", str(s["ok"])), ("failed", str(s["failed"]))]
    if fleet["kind"] == "advice":
        cards += [(STATE_TEXT[k], str(v)) for k, v in s["states"].items()]
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%s</div></div>' % (R.esc(k), R.esc(v))
                   for k, v in cards)


def to_html(fleet: dict[str, Any], charts: bool = True, history: str | None = None,
            pages: dict[str, str] | None = None) -> str:
    """history: the link to the history page; pages: cluster_pages(), the links to the clusters' own pages."""
    status = "ok" if fleet["summary"]["failed"] == 0 else "failed"
    body = ["<main>", "<h1>%s</h1>" % R.esc(fleet["title"]),
            '<p class="sub"><span class="badge %s">%s</span> fleet report <code>%s</code> · %s</p>' % (
                status, status, R.esc(fleet["name"]), R.esc(_headline(fleet))),
            '<div class="cards">%s</div>' % _cards(fleet)]
    if history:
        body.append('<p class="sub">History and regressions of every cluster: <a href="%s">history</a></p>'
                    % R.esc(history))
    chart_list = []
    if charts:
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_charts

        chart_list = fleet_charts.all_charts(fleet)
        if not fleet_charts.HAS_MATPLOTLIB:
            body.append('<p class="note">Charts need matplotlib on the host that renders the report.</p>')
    for table in fleet_tables(fleet, pages):
        body.append("<h2>%s</h2>" % R.esc(table["title"]))
        body.append(R.table_html(table))
    notes = advice_notes(fleet) if fleet["kind"] == "advice" else []
    if notes:
        body.append('<h2>Reasons</h2><ol class="reasons">')
        body += ["<li><b>%s</b> / %s (%s): %s</li>" % (R.esc(c), R.esc(t), R.esc(st), R.esc(why))
                 for _, c, t, st, why in notes]
        body.append("</ol>")
    todo = _actionable(fleet)
    if todo:
        by_id = {id(t): c for c, t in todo}
        body += ["<h2>How to apply</h2>", AR.apply_html([t for _, t in todo],
                                                        lambda t: "%s / %s" % (by_id[id(t)], t["name"]))]
    body += R.figures_html(chart_list)
    body.append("<h2>Sources</h2>")
    body.append(R.table_html(clusters_facts(fleet, pages), "facts"))
    body.append("<footer>storageperf.k8s fleet schema v%s</footer>" % R.esc(fleet["fleet_schema_version"]))
    body.append("</main>")
    return R.page_html(fleet["title"], body, extra_css=FLEET_CSS)


def render_fleet(fleet: dict[str, Any], history: str | None = None, base: str | None = None) -> dict[str, str]:
    """base: the directory the pages are written to, for their relative links to the clusters' pages."""
    pages = cluster_pages(fleet, base)
    return {"json": dumps(fleet), "markdown": to_markdown(fleet, history, pages),
            "html": to_html(fleet, history=history, pages=pages)}


def write_fleet(fleet: dict[str, Any], reports_dir: str, check_mode: bool = False) -> dict[str, dict[str, Any]]:
    """Write <reports_dir>/<name>/fleet.json|fleet.md|fleet.html atomically (only what changed).

    Returns {format: {"path", "changed"}}; in check mode nothing is written and changed says
    whether it would have been.
    """
    out_dir = os.path.join(reports_dir, fleet["name"])
    return R.write_texts(render_fleet(fleet, history_link(reports_dir, out_dir), out_dir), out_dir, FILENAMES,
                         check_mode=check_mode)


def table_lines(fleet: dict[str, Any]) -> list[str]:
    """The main table as Markdown lines, for the role's debug output and set_stats."""
    table = fleet_tables(fleet)[0]
    return R.table_markdown(dict(table, title="", note="")).splitlines()
