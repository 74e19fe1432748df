# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout document (document.assemble) as rollout.md and a self-contained rollout.html, and writing them.

    write_rollout(doc, rollout_dir)   # rollout.json, rollout.md, rollout.html (atomic, only what changed)

Tables use report/tables.py's cell model and report/render.py's Markdown/HTML tables inside its page shell, as
the fleet report and the history do; the one picture is an inline SVG (observed speedup, its confidence interval
and the required speedup per cluster), so the page needs nothing but itself.
"""
from __future__ import annotations

import os
from typing import Any, Mapping


from ansible_collections.storageperf.k8s.plugins.module_utils.report import links as L
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import dumps
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.schema import DECISIONS

FILENAMES = {"json": "rollout.json", "md": "rollout.md", "html": "rollout.html"}
WORDS = {"promoted": "promoted", "rolled_back": "rolled back", "failed": "failed", "skipped": "skipped",
         "pending": "pending", "aborted": "aborted"}
# cell classes of report/render.py's CSS (ok: ROLLOUT_CSS)
DECISION_CLS = {"promoted": "ok", "rolled_back": "fail", "failed": "fail", "skipped": "skip", "pending": "warn",
                "aborted": "skip"}
DASH = stats.DASH


def title_of(doc: Mapping[str, Any]) -> str:
    r = doc["rollout"]
    return doc.get("title") or "Rollout of %s (%s)" % (r["change"], r["id"])


def headline(doc: Mapping[str, Any]) -> str:
    """'3 clusters: 2 promoted, 1 rolled back; wave 2 of 2 done' or '...; halted at wave 1: <why>'."""
    n = len(doc["clusters"])
    counts = ", ".join("%d %s" % (len(doc["summary"][d]), WORDS[d]) for d in DECISIONS if doc["summary"][d])
    text = "%d cluster%s: %s" % (n, "" if n == 1 else "s", counts or "no record yet")
    if doc["halted"]:
        return text + "; halted at " + doc["halted"]["reason"]
    if doc.get("paused"):
        left = doc["paused"]["left"]
        return text + "; paused after wave %d, %s left for a later run" % (doc["paused"]["after_wave"], ", ".join(left))
    waves = doc["waves"]
    done = 0
    for w in waves:
        if w["verdict"] == "pending":
            break
        done += 1
    if not waves:
        return text
    if done == len(waves):
        return text + "; wave %d of %d done" % (done, len(waves))
    if done == 0:
        return text + "; wave 1 of %d in progress" % len(waves)
    return text + "; wave %d of %d done, wave %d pending" % (done, len(waves), done + 1)


def state_of(doc: Mapping[str, Any]) -> tuple[str, str]:
    """(badge class of report/render.py's CSS, word): halted, paused, in progress, aborted, done."""
    if doc["halted"]:
        return "failed", "halted"
    if doc.get("paused"):
        return "interrupted", "paused"
    if any(w["verdict"] == "pending" for w in doc["waves"]):
        return "interrupted", "in progress"
    if doc["waves"] and all(w["verdict"] in ("aborted", "skipped") for w in doc["waves"]):
        return "interrupted", "aborted"
    return "ok", "done"


def decision_text(record: Mapping[str, Any]) -> tuple[str, str]:
    """(text, cell class) of a cluster's decision, telling apart a cluster taken up from an interrupted run, one
    skipped because the change was already on, and one the run never reached."""
    decision, state = record["decision"], record.get("state")
    if decision == "pending" and state in (None, "planned"):
        return "not reached", "missing"
    text = WORDS[decision]
    if decision == "pending":
        text += " (%s)" % str(state).replace("_", " ")
    elif decision == "skipped" and str(record.get("reason", "")).startswith("already on"):
        text = "skipped: already on"
    if (record.get("gate") or {}).get("decision") == "inconclusive":
        text += " · gate inconclusive"
    if record.get("resumed_from"):
        text += " · resumed from %s" % record["resumed_from"].replace("_", " ")
    if record.get("drift"):
        text += " · drift"
    return text, DECISION_CLS[decision]


# --- figures as text ------------------------------------------------------------------------------------
def _gain(record: Mapping[str, Any]) -> dict[str, Any]:
    return (record.get("gate") or {}).get("gain") or {}


def speedup_text(record: Mapping[str, Any]) -> str:
    g = _gain(record)
    if g.get("observed_speedup") is None:
        return DASH
    text = stats.format_ratio(g["observed_speedup"])
    if g.get("ci_low") is not None and g.get("ci_high") is not None:
        conf = "%s%% " % _num(g["confidence"] * 100) if g.get("confidence") else ""
        if g.get("degrees_of_freedom") is not None:  # the repetition-level gate: two one-sided bounds, drift included
            text += " (%sbounds %s – %s, %s repetitions, df %s)" % (
                conf, stats.format_ratio(g["ci_low"]), stats.format_ratio(g["ci_high"]),
                "%s+%s" % tuple((g.get("repetitions") or {}).get(k, "?") for k in ("baseline", "candidate")),
                _num(g["degrees_of_freedom"]))
        else:
            text += " (%sCI %s – %s)" % (conf, stats.format_ratio(g["ci_low"]), stats.format_ratio(g["ci_high"]))
    return text


def required_text(record: Mapping[str, Any]) -> str:
    g = _gain(record)
    return DASH if g.get("required_speedup") is None else "≥ " + stats.format_ratio(g["required_speedup"])


def p_text(record: Mapping[str, Any]) -> str:
    p = _gain(record).get("p_value")
    if p is None:
        return DASH
    return "< 0.001" if p < 0.001 else "%.3f" % p


def failed_ops_text(record: Mapping[str, Any]) -> str:
    ops = (record.get("gate") or {}).get("failed_operations") or {}
    if not ops:
        return DASH
    return "%s → %s" % tuple(DASH if ops.get(k) is None else str(ops[k]) for k in ("baseline", "candidate"))


def warnings_text(record: Mapping[str, Any]) -> str:
    gate = record.get("gate")
    if gate is None:
        return DASH
    return ", ".join(gate.get("new_warnings") or []) or "none"


def rollback_text(record: Mapping[str, Any]) -> str:
    rb = record.get("rollback")
    if not rb:
        return DASH
    if not rb["done"]:
        return "not done" + (": " + rb["detail"] if rb.get("detail") else "")
    return "verified" if rb["verified"] else "not verified" + (": " + rb["detail"] if rb.get("detail") else "")


def _num(value: float) -> str:
    return ("%.2f" % value).rstrip("0").rstrip(".")


# --- tables (report/tables.py cell model) ----------------------------------------------------------------
WAVE_HEADERS = ["Cluster", "Decision", "Reason", "Speedup, baseline → after", "Required", "p", "Failed operations",
                "New warnings", "Rollback"]


def wave_table(doc: Mapping[str, Any], wave: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for name in wave["clusters"]:
        r = doc["clusters"][name]
        fails = (r.get("gate") or {}).get("failed_operations") or {}
        rows.append([cell(name), cell(*decision_text(r)), cell(r["reason"] + (" Drift: %s." % r["drift"]
                                                                              if r.get("drift") else "")),
                     cell(speedup_text(r), "ratio" if r.get("gate") else "missing"), cell(required_text(r)),
                     cell(p_text(r)), cell(failed_ops_text(r), "fail" if fails.get("candidate") else ""),
                     cell(warnings_text(r), "warn" if (r.get("gate") or {}).get("new_warnings") else ""),
                     cell(rollback_text(r), "ok" if (r.get("rollback") or {}).get("verified") else "")])
    if not rows:
        rows = [[cell("no cluster recorded in this wave yet", "missing")] + [cell("")] * (len(WAVE_HEADERS) - 1)]
    title = "Wave %d · %s · %d failed" % (wave["wave"], wave["verdict"], wave["failed"])
    return {"id": "wave-%d" % wave["wave"], "title": title,
            "headers": WAVE_HEADERS, "rows": rows, "left": 3,
            "note": "Speedup: how many times faster the judged operations got, the baseline's latency divided by "
                    "the latency after the change (above 1 is faster), with its lower and upper bounds (each one-sided "
                    "at the gate's confidence, the drift allowance included); required: the least speedup the gate "
                    "accepts, which the lower bound must clear; p: the test's p-value. Failed operations and warnings: "
                    "baseline → after."}


def steps_table(name: str, record: Mapping[str, Any]) -> dict[str, Any] | None:
    """Step | p50, p95, p99 before and after | Change | Tolerance | Worse: the gate's steps of one cluster."""
    steps = (record.get("gate") or {}).get("steps") or []
    if not steps:
        return None
    rows = [[cell(s["name"])]
            + [cell(stats.format_duration(s.get("%s_%s" % (side, q)))) for q in ("p50", "p95", "p99")
               for side in ("baseline", "candidate")]
            + [cell(stats.format_pct(s.get("change_pct"))),
               cell(DASH if s.get("tolerance_pct") is None else "≤ %s" % stats.format_pct(s["tolerance_pct"])),
               cell("worse" if s.get("worse") else "no", "fail" if s.get("worse") else "")]
            for s in steps]
    return {"id": "steps-%s" % name, "title": "", "rows": rows,
            "headers": ["Step", "p50 before", "p50 after", "p95 before", "p95 after", "p99 before", "p99 after",
                        "Change", "Tolerance", "Worse"],
            "note": "Per-object latency of each step in the baseline and after the change: median, 95th and 99th "
                    "percentiles; change and tolerance are the medians'."}


def facts_table(doc: Mapping[str, Any]) -> dict[str, Any]:
    r = doc["rollout"]
    rows = [("Rollout", r["id"]), ("Change", "%s (state %s)" % (r["change"], r["state"])),
            ("Parameters", ", ".join("%s=%s" % (k, _compact(v)) for k, v in sorted(r["parameters"].items())) or DASH),
            ("max_fail_percentage", "%s%%" % _num(doc["max_fail_percentage"])), ("Latest record", doc["generated"])]
    rows += [("Source", s) for s in doc["sources"]]
    return {"id": "rollout-facts", "title": "Rollout", "headers": ["", ""], "left": 2,
            "rows": [[cell(k, "key"), cell(str(v))] for k, v in rows], "note": ""}


def _compact(value: object) -> str:
    return value if isinstance(value, str) else dumps(value).replace("\n", "").replace("  ", "")


def _probe_line(record: Mapping[str, Any]) -> str:
    parts = []
    for key, word in (("baseline", "baseline"), ("after", "after")):
        probe = record.get(key)
        if probe:
            parts.append("%s run %s%s" % (word, probe.get("run_id") or probe.get("result") or DASH,
                                          " (reused)" if probe.get("reused") else ""))
    return " · ".join(parts)


def probe_links(record: Mapping[str, Any], base: str | None) -> list[tuple[str, str]]:
    """[(label, href)] of the probes' report.html beside their result.json, relative to the rollout's directory
    (base), so that the links hold wherever the reports directory is copied or uploaded; only the pages that exist
    (a record read from a bucket names a path of the machine that probed)."""
    out = []
    for key in ("baseline", "after"):
        link = L.href(L.page_beside((record.get(key) or {}).get("result")), base) if base else None
        if link:
            out.append(("%s report" % key, link))
    return out


def cluster_sections(doc: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], str, dict[str, Any] | None, list[str], list[str]]]:
    """[(name, record, probe line, steps table, gate reasons, history lines)] of the clusters with more to say."""
    out = []
    for name, r in doc["clusters"].items():
        if not (r.get("gate") or r.get("rollback") or r["history"]):
            continue
        history = ["%s: %s (%s)" % (h["updated"], WORDS[h["decision"]], h["reason"]) for h in r["history"]]
        out.append((name, r, _probe_line(r), steps_table(name, r), (r.get("gate") or {}).get("reasons") or [],
                    history))
    return out


# --- Markdown ------------------------------------------------------------------------------------------------
def to_markdown(doc: Mapping[str, Any], base: str | None = None) -> str:
    r = doc["rollout"]
    out = ["# %s" % title_of(doc), "",
           "Rollout `%s` · change `%s` · **%s** · %s" % (r["id"], r["change"], state_of(doc)[1], headline(doc)), ""]
    for wave in doc["waves"]:
        out.append(R.table_markdown(wave_table(doc, wave)))
    for name, record, probes, steps, reasons, history in cluster_sections(doc):
        out += ["### %s · %s" % (R._md_escape(name), WORDS[record["decision"]]), ""]
        if probes:
            links = "".join(" · [%s](%s)" % (label, href) for label, href in probe_links(record, base))
            out += [R._md_escape(probes) + links, ""]
        if steps:
            out.append(R.table_markdown(steps))
        out += ["- gate: %s" % R._md_escape(x) for x in reasons]
        if record.get("rollback") and record["rollback"].get("detail"):
            out.append("- rollback: %s" % R._md_escape(record["rollback"]["detail"]))
        out += ["- earlier: %s" % R._md_escape(x) for x in history]
        if reasons or history or (record.get("rollback") or {}).get("detail"):
            out.append("")
    if doc.get("problems"):
        out += ["### Records left out", ""] + ["- %s: %s" % (R._md_escape(p["source"]), R._md_escape(p["error"]))
                                               for p in doc["problems"]] + [""]
    out.append(R.table_markdown(facts_table(doc)))
    return "\n".join(out).rstrip() + "\n"


# --- HTML ------------------------------------------------------------------------------------------------------
ROLLOUT_CSS = ("td.ok{color:var(--ok);font-weight:600}"
               "table[id^=wave] th{white-space:normal}"
               "table[id^=wave] th:nth-child(-n+3),table[id^=wave] td:nth-child(-n+3){text-align:left}"
               "table[id^=wave] td:nth-child(3){white-space:normal;min-width:220px}table[id^=wave] td:nth-child(4){white-space:normal}"
               "table[id^=wave] td:nth-child(n+8){white-space:normal}"
               "ul.gate{padding-left:18px}svg.speedups{max-width:100%;height:auto}")


def _cards(doc: Mapping[str, Any]) -> str:
    cards = [("clusters", len(doc["clusters"]))] + [(WORDS[d], len(doc["summary"][d])) for d in DECISIONS
                                                    if doc["summary"][d]]
    cards.append(("waves", len(doc["waves"])))
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%s</div></div>' % (R.esc(k), R.esc(v))
                   for k, v in cards)


def speedup_svg(doc: Mapping[str, Any]) -> str:
    """Horizontal bars of the observed speedups, their CI as a whisker, the required speedup as a tick; '' without."""
    rows = [(n, _gain(r), r["decision"]) for n, r in doc["clusters"].items()
            if _gain(r).get("observed_speedup") is not None]
    if not rows:
        return ""
    top = max(max(g.get(k) or 0 for k in ("observed_speedup", "ci_high", "required_speedup")) for _, g, _ in rows)
    top = max(top * 1.1, 1.0)
    left, width, step = 150, 460, 26

    def x(value: float) -> float:  # one scale for bars, whiskers and ticks
        return left + width * float(value) / top

    colour = {"promoted": "#047857", "rolled_back": "#b91c1c"}
    parts = ['<svg class="speedups" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" '
             'aria-label="observed speedup per cluster">' % (left + width + 70, step * len(rows) + 30)]
    parts.append('<line x1="%.1f" y1="4" x2="%.1f" y2="%d" stroke="#9ca3af" stroke-dasharray="3,3"/>'
                 % (x(1), x(1), step * len(rows) + 6))
    for i, (name, g, decision) in enumerate(rows):
        y = 8 + i * step
        parts.append('<text x="%d" y="%d" text-anchor="end" font-size="12">%s</text>' % (left - 8, y + 13, R.esc(name)))
        parts.append('<rect x="%d" y="%d" width="%.1f" height="16" fill="%s" opacity="0.8"/>'
                     % (left, y + 2, x(g["observed_speedup"]) - left, colour.get(decision, "#6b7280")))
        if g.get("ci_low") is not None and g.get("ci_high") is not None:
            parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#111827" stroke-width="1.5"/>'
                         % (x(g["ci_low"]), y + 10, x(g["ci_high"]), y + 10))
        if g.get("required_speedup") is not None:
            parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#b45309" stroke-width="2.5"/>'
                         % (x(g["required_speedup"]), y, x(g["required_speedup"]), y + 20))
        parts.append('<text x="%.1f" y="%d" font-size="12">%s</text>'
                     % (x(max(g["observed_speedup"], g.get("ci_high") or 0)) + 6, y + 13,
                        R.esc(stats.format_ratio(g["observed_speedup"]))))
    parts.append('<text x="%.1f" y="%d" font-size="11" fill="#6b7280" text-anchor="middle">1×</text>'
                 % (x(1), step * len(rows) + 22))
    parts.append("</svg>")
    return "".join(parts)


def to_html(doc: Mapping[str, Any], base: str | None = None) -> str:
    cls, word = state_of(doc)
    r = doc["rollout"]
    body = ["<main>", "<h1>%s</h1>" % R.esc(title_of(doc)),
            '<p class="sub"><span class="badge %s">%s</span> rollout <code>%s</code> · change <code>%s</code> · %s</p>'
            % (cls, R.esc(word), R.esc(r["id"]), R.esc(r["change"]), R.esc(headline(doc))),
            '<div class="cards">%s</div>' % _cards(doc)]
    for wave in doc["waves"]:
        table = wave_table(doc, wave)
        body += ["<h2>%s</h2>" % R.esc(table["title"]), R.table_html(table)]
    svg = speedup_svg(doc)
    if svg:
        body += ["<h2>Speedups</h2>", '<figure id="speedups">%s<figcaption>Bars: observed speedup (after / before); '
                 'black line: its confidence interval; orange tick: the required speedup; dashed: 1×.</figcaption>'
                 '</figure>' % svg]
    for name, record, probes, steps, reasons, history in cluster_sections(doc):
        body.append("<h2>%s · %s</h2>" % (R.esc(name), R.esc(WORDS[record["decision"]])))
        if probes:
            links = "".join(' · <a href="%s">%s</a>' % (R.esc(href), R.esc(label))
                            for label, href in probe_links(record, base))
            body.append('<p class="sub">%s%s</p>' % (R.esc(probes), links))
        if steps:
            body.append(R.table_html(steps))
        items = ["gate: " + x for x in reasons]
        if (record.get("rollback") or {}).get("detail"):
            items.append("rollback: " + record["rollback"]["detail"])
        items += ["earlier: " + x for x in history]
        if items:
            body.append('<ul class="gate">%s</ul>' % "".join("<li>%s</li>" % R.esc(x) for x in items))
    if doc.get("problems"):
        body.append('<h2>Records left out</h2><ul class="problems">%s</ul>' % "".join(
            "<li><b>%s</b>: %s</li>" % (R.esc(p["source"]), R.esc(p["error"])) for p in doc["problems"]))
    body += ["<h2>Rollout</h2>", R.table_html(facts_table(doc), "facts"),
             "<footer>storageperf.k8s rollout schema v%s · %s</footer>" % (R.esc(doc["schema_version"]),
                                                                           R.esc(doc["generated"])), "</main>"]
    return R.page_html(title_of(doc), body, extra_css=ROLLOUT_CSS)


def render_rollout(doc: Mapping[str, Any], base: str | None = None) -> dict[str, str]:
    """base: the directory the pages are written to, for their relative links to the probes' reports."""
    return {"json": dumps(doc), "md": to_markdown(doc, base), "html": to_html(doc, base)}


def write_rollout(doc: Mapping[str, Any], output_dir: str, check_mode: bool = False) -> dict[str, dict[str, Any]]:
    """rollout.json, rollout.md, rollout.html into output_dir, atomically and only what changed -> {fmt: {path, changed}}."""
    return R.write_texts(render_rollout(doc, os.path.abspath(output_dir)), output_dir, FILENAMES, check_mode=check_mode)
