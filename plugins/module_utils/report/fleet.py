# -*- coding: utf-8 -*-
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: every cluster's result (or advice) side by side, as JSON, Markdown and HTML.

    entries = [{"cluster": "prod-a", "path": "reports/prod-a/<run_id>/result.json"},
               {"cluster": "prod-b", "error": "no result: the host failed or was unreachable"}]
    doc = build_fleet(entries, name="fleet-20260620T090000Z")   # validated fleet document
    write_fleet(doc, "reports")                                 # reports/<name>/fleet.json|md|html

A cluster without a document is a row with its error, never dropped: a fleet report that silently
loses the one broken cluster would say the fleet is fine. Figures come from the result documents'
summaries (document.summarize_variant) and compare.speedups; cells are tables.py cells, rendered
by render.py's Markdown/HTML table functions inside render.py's page shell.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
from ansible_collections.storageperf.k8s.plugins.module_utils.report.compare import speedups
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    dumps, step_names, write_text_atomic,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.fleet_schema import (
    ADVICE_STATES, FLEET_SCHEMA_VERSION, KINDS, validate_fleet,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import (
    ResultValidationError, validate,
)

FILENAMES = {"json": "fleet.json", "markdown": "fleet.md", "html": "fleet.html"}
ENTRY_KEYS = ("cluster", "path", "document", "error")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NO_RESULT = "no result: the host failed or was unreachable"
# cell classes of render.CSS: on = ok (green, FLEET_CSS), available = warn, blocked = fail, n/a = skip
STATE_CLS = {"on": "ok", "available": "warn", "blocked": "fail", "not_applicable": "skip"}
STATE_TEXT = {"on": "on", "available": "available", "blocked": "blocked", "not_applicable": "n/a"}
STATE_COLOURS = {"on": "#047857", "available": "#e69f00", "blocked": "#b91c1c", "not_applicable": "#c4c8cf"}


class FleetInputError(ValueError):
    """An entry is malformed; the message names the entry and the field."""


# --- input ------------------------------------------------------------------------------
def check_entries(entries):
    """Validate the entry list before anything is read or written; returns clean copies."""
    if not isinstance(entries, list) or not entries:
        raise FleetInputError("entries must be a non-empty list of {cluster, path, document, error}")
    out, seen = [], set()
    for i, e in enumerate(entries):
        where = "entries[%d]" % i
        if not isinstance(e, dict):
            raise FleetInputError("%s must be a mapping {cluster, path, document, error}, got %r" % (where, e))
        unknown = sorted(k for k in e if k not in ENTRY_KEYS)
        if unknown:
            raise FleetInputError("%s: unknown key(s) %s; an entry has only %s"
                                  % (where, ", ".join(unknown), ", ".join(ENTRY_KEYS)))
        cluster = e.get("cluster")
        if not isinstance(cluster, str) or not cluster.strip():
            raise FleetInputError("%s.cluster must be the cluster's (inventory host's) name, got %r" % (where, cluster))
        if cluster in seen:
            raise FleetInputError("%s.cluster: %r appears twice; give every cluster one entry" % (where, cluster))
        seen.add(cluster)
        path, document, error = e.get("path"), e.get("document"), e.get("error")
        if path is not None and not isinstance(path, str):
            raise FleetInputError("%s.path must be a file path or null, got %r" % (where, path))
        if document is not None and not isinstance(document, dict):
            raise FleetInputError("%s.document must be a mapping or null, got %s" % (where, type(document).__name__))
        if path and document:
            raise FleetInputError("%s: give path or document, not both" % where)
        if not path and not document and not error:
            raise FleetInputError("%s (%s): no path, no document and no error; say why the cluster has no result"
                                  % (where, cluster))
        out.append({"cluster": cluster, "path": path or None, "document": document or None,
                    "error": str(error) if error else None})
    return out


def detect_kind(doc):
    if isinstance(doc, dict) and "tunings" in doc:
        return "advice"
    if isinstance(doc, dict) and "variants" in doc:
        return "bench"
    return None


def _read(path):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8")), None
    except (IOError, OSError) as e:
        return None, "cannot read %s: %s" % (path, e.strerror or e)
    except ValueError as e:
        return None, "%s is not valid JSON: %s" % (path, e)


def load_entries(entries):
    """[(entry, document or None, load error or None)]: unreadable files become errors, not exceptions."""
    out = []
    for e in entries:
        doc, err = e["document"], None
        if e["path"]:
            path = e["path"]
            if os.path.isdir(path):
                found = [n for n in ("result.json", "advice.json") if os.path.isfile(os.path.join(path, n))]
                path = os.path.join(path, found[0] if found else "result.json")
            doc, err = _read(path)
        if doc is not None and detect_kind(doc) is None:
            doc, err = None, "%s is neither a result document (variants) nor an advice document (tunings)" % (
                e["path"] or "document")
        out.append((e, doc, err))
    return out


# --- building -----------------------------------------------------------------------------
def build_fleet(entries, name, kind=None, title=None):
    """The validated fleet document for these entries (see module docstring)."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise FleetInputError("name %r must be a directory name: letters, digits, '.', '_' and '-', "
                              "starting with a letter or digit" % (name,))
    if kind is not None and kind not in KINDS:
        raise FleetInputError("kind must be one of %s, got %r" % (", ".join(KINDS), kind))
    loaded = load_entries(check_entries(entries))
    kinds = sorted(set(detect_kind(d) for _, d, _ in loaded if d is not None))
    if kind is None:
        if len(kinds) > 1:
            raise FleetInputError("the entries mix result documents and advice documents (%s); "
                                  "build one fleet report per kind" % ", ".join(
                                      "%s: %s" % (e["cluster"], detect_kind(d)) for e, d, _ in loaded if d))
        kind = kinds[0] if kinds else "bench"
    rows = []
    for e, doc, err in loaded:
        if doc is not None and detect_kind(doc) != kind:
            doc, err = None, "%s holds a%s %s document, not %s" % (
                e["path"] or "document", "n" if kind == "bench" else "", detect_kind(doc), kind)
        row = (_bench_row if kind == "bench" else _advice_row)(e, doc, err)
        rows.append(row)
    fleet = {"fleet_schema_version": FLEET_SCHEMA_VERSION, "kind": kind, "name": name, "clusters": rows}
    if kind == "bench":
        _bench_columns(fleet, [d for _, d, _ in loaded if d is not None and detect_kind(d) == "bench"])
    else:
        _advice_columns(fleet)
    fleet["title"] = title or _default_title(fleet)
    fleet["summary"] = _summary(fleet)
    return validate_fleet(fleet)


def _base_row(e, doc, err):
    row = {"cluster": e["cluster"], "status": "ok", "error": err or e["error"], "source": e["path"]}
    cluster = (doc or {}).get("cluster") or {}
    for key in ("server", "version"):
        if cluster.get(key):
            row[key] = str(cluster[key])
    return row


def _bench_row(e, doc, err):
    row = _base_row(e, doc, err)
    if doc is None:
        row["status"] = "error"
        row["error"] = row["error"] or NO_RESULT
        return row
    try:
        validate(doc)
    except ResultValidationError as exc:
        row.update(status="error", error="%s: %s" % (e["path"] or "document", exc))
        return row
    doc = R.ensure_summaries(doc)
    row["status"] = doc.get("status", "interrupted")
    if row["error"] and row["status"] == "ok":
        row["status"] = "failed"  # the document is fine but the host failed after writing it
    for key in ("run_id", "benchmark", "reason", "started", "finished"):
        if doc.get(key) is not None:
            row[key] = doc[key]
    row["variants"] = []
    names = step_names(doc)
    for vname, steps in T.summaries(doc):
        figures = [_step_figures(n, steps.get(n)) for n in names]
        summ = next(v.get("summary") for v in doc["variants"] if v["name"] == vname)
        row["variants"].append({"name": vname, "steps": figures, "sum_wall_s": summ.get("sum_wall_s")})
    row["speedup"] = None
    if len(doc["variants"]) >= 2:
        sp = speedups(doc, doc["variants"][0]["name"], doc["variants"][-1]["name"])
        if sp:
            row["speedup"] = {"baseline": sp["baseline"], "candidate": sp["candidate"], "overall": sp["overall"],
                              "steps": dict((s["step"], s["speedup"]) for s in sp["steps"])}
    return row


def _step_figures(name, s):
    if s is None:
        return {"name": name, "status": "missing", "wall_s": None, "rate": None, "text": stats.DASH}
    out = {"name": name, "status": s.get("status", "ok"),
           "wall_s": s["wall_s"]["median"] if s.get("wall_s") else None,
           "rate": s["rate"]["median"] if s.get("rate") else None,
           "runs": s.get("runs", 0), "ok_runs": s.get("ok_runs", 0),
           "text": T.operation_cell(s)["text"]}
    for key in ("unit", "count"):
        if s.get(key) is not None:
            out[key] = s[key]
    return out


def _bench_columns(fleet, docs):
    variants, steps, labels, benchmarks = [], [], {}, []
    for doc in docs:
        if doc.get("benchmark") not in benchmarks:
            benchmarks.append(doc.get("benchmark"))
        for v in doc.get("variants", []):
            if v["name"] not in variants:
                variants.append(v["name"])
        for n in step_names(doc):
            if n not in steps:
                steps.append(n)
                labels[n] = T.step_label(doc, n)
    fleet["benchmark"] = benchmarks[0] if len(benchmarks) == 1 else None
    fleet["variants"] = variants
    fleet["steps"] = [{"name": n, "label": labels[n]} for n in steps]


def _advice_row(e, doc, err):
    row = _base_row(e, doc, err)
    if doc is None:
        row["status"] = "error"
        row["error"] = row["error"] or NO_RESULT
        return row
    tunings = doc.get("tunings")
    if not isinstance(tunings, list):
        row.update(status="error", error="%s: tunings must be a list" % (e["path"] or "document"))
        return row
    cells = []
    for i, t in enumerate(tunings):
        state = (t or {}).get("state")
        if not isinstance(t, dict) or not t.get("name") or state not in ADVICE_STATES:
            row.update(status="error", error="%s: tunings[%d] needs a name and a state among %s" % (
                e["path"] or "document", i, ", ".join(ADVICE_STATES)))
            return row
        cell = {"name": str(t["name"]), "state": state, "reasons": [str(r) for r in t.get("reasons") or []]}
        if t.get("expected"):
            cell["expected"] = str(t["expected"])
        cells.append(cell)
    row["tunings"] = cells
    row["counts"] = dict((s, sum(1 for c in cells if c["state"] == s)) for s in ADVICE_STATES)
    if row["error"]:
        row["status"] = "failed"
    return row


def _advice_columns(fleet):
    names = []
    for row in fleet["clusters"]:
        for t in row.get("tunings") or []:
            if t["name"] not in names:
                names.append(t["name"])
    fleet["tunings"] = names


def _default_title(fleet):
    n = len(fleet["clusters"])
    if fleet["kind"] == "advice":
        return "Tuning advice across %d cluster%s" % (n, "" if n == 1 else "s")
    bench = fleet.get("benchmark")
    what = "%s benchmark" % bench if bench else "Benchmarks"
    return "%s across %d cluster%s" % (what, n, "" if n == 1 else "s")


def _summary(fleet):
    rows = fleet["clusters"]
    failed = [r["cluster"] for r in rows if r["status"] != "ok"]
    out = {"clusters": len(rows), "ok": len(rows) - len(failed), "failed": len(failed), "failed_clusters": failed}
    if fleet["kind"] == "advice":
        out["states"] = dict((s, sum((r.get("counts") or {}).get(s, 0) for r in rows)) for s in ADVICE_STATES)
    return out


# --- tables (tables.py cell model) ------------------------------------------------------------
def _status_cell(row):
    text = row["status"]
    if row.get("error"):
        text += ": " + row["error"]
    elif row.get("reason"):
        text += ": " + row["reason"]
    return T.cell(text, "" if row["status"] == "ok" else "fail")


def sums_table(fleet):
    """Cluster | Status | <variant> sum ... | <last> vs <first>: one row per cluster, failed ones included."""
    variants = fleet.get("variants") or []
    ratio = len(variants) >= 2
    headers = ["Cluster", "Status"] + ["%s · sum of step times" % v for v in variants]
    if ratio:
        headers.append("%s vs %s (throughput)" % (variants[-1], variants[0]))
    rows = []
    for r in fleet["clusters"]:
        row = [T.cell(r["cluster"]), _status_cell(r)]
        by_name = dict((v["name"], v) for v in r.get("variants") or [])
        for v in variants:
            total = (by_name.get(v) or {}).get("sum_wall_s")
            row.append(T.cell(stats.format_duration(total), "" if total is not None else "missing"))
        if ratio:
            sp = r.get("speedup") or {}
            row.append(T.cell(stats.format_ratio(sp.get("overall"), approx=True) + (" overall" if sp.get("overall") else ""),
                              "ratio"))
        rows.append(row)
    return {"id": "fleet-sums", "title": "Clusters", "headers": headers, "rows": rows, "left": 2,
            "note": "Sum of the median step times per variant. Ratio: %s throughput / %s throughput over the "
                    "steps that succeeded in both." % (variants[-1], variants[0]) if ratio else
                    "Sum of the median step times per variant."}


def steps_table(fleet):
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
            rows.append([T.cell(r["cluster"]), _status_cell(r)] + [T.cell(stats.DASH, "missing")] * (len(headers) - 2))
            continue
        by_name = dict((v["name"], dict((s["name"], s) for s in v["steps"])) for v in r.get("variants") or [])
        step_ratios = (r.get("speedup") or {}).get("steps") or {}
        for i, st in enumerate(steps):
            row = [T.cell(r["cluster"] if i == 0 else ""), T.cell(st["label"])]
            for v in variants:
                s = (by_name.get(v) or {}).get(st["name"])
                if s is None or s["status"] == "missing":
                    row.append(T.cell(stats.DASH, "missing"))
                else:
                    cls = "" if s["status"] == "ok" and s.get("ok_runs") == s.get("runs") else (
                        "warn" if s["status"] == "ok" or s.get("wall_s") is not None else
                        ("fail" if s["status"] in ("failed", "timeout") else "skip"))
                    row.append(T.cell(s["text"], cls))
            if ratio:
                row.append(T.cell(stats.format_ratio(step_ratios.get(st["name"])), "ratio"))
            rows.append(row)
    return {"id": "fleet-steps", "title": "Step times per cluster", "headers": headers, "rows": rows, "left": 2,
            "note": "Median over repetitions: wall time of the whole batch · objects per second."}


def advice_table(fleet):
    """Cluster x tuning: the state in each cell, [n] pointing at the cell's reasons in advice_notes()."""
    tunings = fleet.get("tunings") or []
    headers = ["Cluster", "Status"] + [T.humanize(t) for t in tunings]
    rows, n = [], 0
    for r in fleet["clusters"]:
        if r["status"] == "error":
            rows.append([T.cell(r["cluster"]), _status_cell(r)] + [T.cell(stats.DASH, "missing")] * len(tunings))
            continue
        cells = dict((t["name"], t) for t in r.get("tunings") or [])
        row = [T.cell(r["cluster"]), _status_cell(r)]
        for name in tunings:
            t = cells.get(name)
            if t is None:
                row.append(T.cell(stats.DASH, "missing"))
                continue
            text = STATE_TEXT[t["state"]]
            if t["reasons"]:
                n += 1
                text += " [%d]" % n
            row.append(T.cell(text, STATE_CLS[t["state"]]))
        rows.append(row)
    return {"id": "fleet-advice", "title": "Tunings per cluster", "headers": headers, "rows": rows,
            "left": len(headers),
            "note": "on: already applied · available: can be applied · blocked: cannot be applied yet "
                    "(see the reasons) · n/a: does not apply to this cluster."}


def advice_notes(fleet):
    """[(n, cluster, tuning, state, reasons text)] in the numbering of advice_table()."""
    out, n = [], 0
    for r in fleet["clusters"]:
        if r["status"] == "error":
            continue
        cells = dict((t["name"], t) for t in r.get("tunings") or [])
        for name in fleet.get("tunings") or []:
            t = cells.get(name)
            if t and t["reasons"]:
                n += 1
                out.append((n, r["cluster"], name, STATE_TEXT[t["state"]], "; ".join(t["reasons"])))
    return out


def fleet_tables(fleet):
    if fleet["kind"] == "advice":
        return [advice_table(fleet)]
    return [t for t in (sums_table(fleet), steps_table(fleet)) if t]


def clusters_facts(fleet):
    """Cluster | API server | version | source: where each row's figures came from."""
    rows = [[T.cell(r["cluster"]), T.cell(r.get("server") or stats.DASH), T.cell(r.get("version") or stats.DASH),
             T.cell(r.get("run_id") or stats.DASH), T.cell(r.get("source") or stats.DASH)] for r in fleet["clusters"]]
    return {"id": "fleet-sources", "title": "Sources", "headers": ["Cluster", "API server", "Version", "Run", "Document"],
            "rows": rows, "left": 5, "note": ""}


# --- rendering --------------------------------------------------------------------------------
def _headline(fleet):
    s = fleet["summary"]
    text = "%d cluster%s · %d ok · %d failed" % (s["clusters"], "" if s["clusters"] == 1 else "s", s["ok"], s["failed"])
    if s["failed_clusters"]:
        text += " (%s)" % ", ".join(s["failed_clusters"])
    return text


def to_markdown(fleet):
    out = ["# %s" % fleet["title"], "", "Fleet report `%s` · %s" % (fleet["name"], _headline(fleet)), ""]
    for table in fleet_tables(fleet):
        out.append(R.table_markdown(table))
    notes = advice_notes(fleet) if fleet["kind"] == "advice" else []
    if notes:
        out += ["### Reasons", ""]
        out += ["%d. **%s** / %s (%s): %s" % (n, R._md_escape(c), R._md_escape(t), st, R._md_escape(why))
                for n, c, t, st, why in notes]
        out.append("")
    out.append(R.table_markdown(clusters_facts(fleet)))
    return "\n".join(out).rstrip() + "\n"


FLEET_CSS = "td.ok{color:var(--ok);font-weight:600}ol.reasons{padding-left:22px}ol.reasons li{margin:2px 0}"


def _cards(fleet):
    s = fleet["summary"]
    cards = [("clusters", str(s["clusters"])), ("ok", str(s["ok"])), ("failed", str(s["failed"]))]
    if fleet["kind"] == "advice":
        cards += [(STATE_TEXT[k], str(v)) for k, v in s["states"].items()]
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%s</div></div>' % (R.esc(k), R.esc(v))
                   for k, v in cards)


def to_html(fleet, charts=True):
    status = "ok" if fleet["summary"]["failed"] == 0 else "failed"
    body = ["<main>", "<h1>%s</h1>" % R.esc(fleet["title"]),
            '<p class="sub"><span class="badge %s">%s</span> fleet report <code>%s</code> · %s</p>' % (
                status, status, R.esc(fleet["name"]), R.esc(_headline(fleet))),
            '<div class="cards">%s</div>' % _cards(fleet)]
    chart_list = []
    if charts:
        from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_charts

        chart_list = fleet_charts.all_charts(fleet)
        if not fleet_charts.HAS_MATPLOTLIB:
            body.append('<p class="note">Charts need matplotlib on the host that renders the report.</p>')
    for table in fleet_tables(fleet):
        body.append("<h2>%s</h2>" % R.esc(table["title"]))
        body.append(R.table_html(table))
    notes = advice_notes(fleet) if fleet["kind"] == "advice" else []
    if notes:
        body.append('<h2>Reasons</h2><ol class="reasons">')
        body += ["<li><b>%s</b> / %s (%s): %s</li>" % (R.esc(c), R.esc(t), R.esc(st), R.esc(why))
                 for _, c, t, st, why in notes]
        body.append("</ol>")
    body += R.figures_html(chart_list)
    body.append("<h2>Sources</h2>")
    body.append(R.table_html(clusters_facts(fleet), "facts"))
    body.append("<footer>storageperf.k8s fleet schema v%s</footer>" % R.esc(fleet["fleet_schema_version"]))
    body.append("</main>")
    return R.page_html(fleet["title"], body, extra_css=FLEET_CSS)


def render_fleet(fleet):
    return {"json": dumps(fleet), "markdown": to_markdown(fleet), "html": to_html(fleet)}


def write_fleet(fleet, reports_dir, check_mode=False):
    """Write <reports_dir>/<name>/fleet.json|fleet.md|fleet.html atomically (only what changed).

    Returns {format: {"path", "changed"}}; in check mode nothing is written and changed says
    whether it would have been.
    """
    out_dir = os.path.abspath(os.path.join(reports_dir, fleet["name"]))
    out = {}
    for fmt, text in render_fleet(fleet).items():
        path = os.path.join(out_dir, FILENAMES[fmt])
        if check_mode:
            try:
                with open(path, "rb") as fh:
                    changed = fh.read() != text.encode("utf-8")
            except (IOError, OSError):
                changed = True
        else:
            changed = write_text_atomic(path, text)
        out[fmt] = {"path": path, "changed": changed}
    return out


def table_lines(fleet):
    """The main table as Markdown lines, for the role's debug output and set_stats."""
    table = fleet_tables(fleet)[0]
    return R.table_markdown(dict(table, title="", note="")).splitlines()
