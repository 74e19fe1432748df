# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One cluster's advice (advisor.py's document, with commands.py's `apply`) as words people act on.

    console_lines(advice, "ack-prod")        # a few lines for advise.yml's summary (AWX job output)
    to_markdown(advice, "ack-prod")          # advice.md
    to_html(advice, "ack-prod")              # advice.html (report/render.py's page shell)

Per tuning: its state, what blocks it, what the seed measured for it (`expected`, and `expected_speedup` when the
advisor gives one), and the command that applies it, plus the guarded rollout where there is one.
"""
from __future__ import annotations


import json
import os
from typing import Any, Callable, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import write_text_atomic
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import cell, humanize

FILENAMES = {"markdown": "advice.md", "html": "advice.html"}
STATE_TEXT = {"on": "on", "available": "available", "blocked": "blocked", "not_applicable": "n/a"}
STATE_CLS = {"on": "ok", "available": "warn", "blocked": "fail", "not_applicable": "skip"}
ACTIONABLE = ("available", "blocked")


def blockers(tuning: Mapping[str, Any]) -> list[str]:
    """The reasons that stand in the way (entries starting with "note:" are caveats that block nothing)."""
    return [r for r in tuning.get("reasons") or [] if not str(r).startswith("note:")]


def notes(tuning: Mapping[str, Any]) -> list[str]:
    return [r for r in tuning.get("reasons") or [] if str(r).startswith("note:")]


def gain_text(tuning: Mapping[str, Any]) -> str:
    """The seed's figure, led by the numeric speedup when the advisor gives one (expected_speedup)."""
    speedup = tuning.get("expected_speedup")
    text = str(tuning.get("expected") or "")
    if isinstance(speedup, (int, float)) and not isinstance(speedup, bool):
        lead = stats.format_ratio(float(speedup), approx=True)
        return "%s · %s" % (lead, text) if text else lead
    return text


def commands(tuning: Mapping[str, Any]) -> list[tuple[str, str]]:
    """[(label, command)] that apply the tuning: its playbook, the guarded rollout, or what apply_with names."""
    apply = tuning.get("apply") or {}
    out = []
    if apply.get("command"):
        out.append(("apply", apply["command"]))
    elif tuning.get("apply_with"):
        out.append(("apply with", str(tuning["apply_with"])))
    if apply.get("rollout_command"):
        out.append(("guarded rollout", apply["rollout_command"]))
    return out


def _counts(advice: Mapping[str, Any]) -> str:
    s = advice.get("summary") or {}
    return ", ".join("%d %s" % (s.get(k, 0), STATE_TEXT[k]) for k in STATE_TEXT)


def _cluster_text(advice: Mapping[str, Any], cluster: str) -> str:
    version = (advice.get("cluster") or {}).get("version")
    return "%s (%s)" % (cluster, version) if version else cluster


# --- console ---------------------------------------------------------------------------------
def console_lines(advice: Mapping[str, Any], cluster: str) -> list[str]:
    """A few lines per cluster: the counts, then per tuning to act on its state, blocker or gain, and command."""
    lines = ["%s: %s" % (_cluster_text(advice, cluster), _counts(advice))]
    rest: dict[str, list[str]] = {}
    for t in advice.get("tunings") or []:
        if t["state"] not in ACTIONABLE:
            rest.setdefault(STATE_TEXT[t["state"]], []).append(t["name"])
            continue
        why = blockers(t)
        said = ("blocked by: " + "; ".join(why)) if why else "%s - expected %s" % (t["state"], gain_text(t) or "no figure")
        lines.append("  %s: %s" % (t["name"], said))
        for label, command in commands(t):
            lines.append("    %s: %s" % (label, command))
    if rest:
        lines.append("  " + "; ".join("%s: %s" % (k, ", ".join(v)) for k, v in rest.items()))
    return lines


# --- Markdown --------------------------------------------------------------------------------
def _table(advice: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for t in advice.get("tunings") or []:
        why = blockers(t) + notes(t)
        rows.append([cell(humanize(t["name"])), cell(STATE_TEXT[t["state"]], STATE_CLS[t["state"]]),
                     cell(gain_text(t) or stats.DASH), cell("; ".join(why) or stats.DASH)])
    return {"id": "advice", "title": "Tunings", "headers": ["Tuning", "State", "Expected gain (seed)", "Blocked by / notes"],
            "rows": rows, "left": 4,
            "note": "on: already applied · available: can be applied · blocked: cannot be applied yet · "
                    "n/a: does not apply to this cluster."}


def to_markdown(advice: Mapping[str, Any], cluster: str) -> str:
    out = ["# Tuning advice: %s" % cluster, "", "%s · API server %s" % (
        _counts(advice), (advice.get("cluster") or {}).get("server") or stats.DASH), ""]
    out.append(R.table_markdown(_table(advice)))
    todo = [t for t in advice.get("tunings") or [] if t["state"] in ACTIONABLE and commands(t)]
    if todo:
        out += ["### How to apply", ""]
        for t in todo:
            out.append("**%s** (%s)%s" % (humanize(t["name"]), STATE_TEXT[t["state"]],
                                          ": first " + R._md_escape("; ".join(blockers(t))) if blockers(t) else ""))
            out.append("")
            for label, command in commands(t):
                out += ["%s:" % label, "", "```", command, "```", ""]
    return "\n".join(out).rstrip() + "\n"


# --- HTML ------------------------------------------------------------------------------------
ADVICE_CSS = ("td.ok{color:var(--ok);font-weight:600}#advice td,#advice th{white-space:normal;text-align:left}"
              "pre.cmd{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--head);border-radius:6px;"
              "padding:8px 10px;margin:4px 0 10px;font-size:13px}dl.apply dt{font-weight:600;margin-top:14px}"
              "dl.apply dd{margin:2px 0 0 0}")


def apply_html(tunings: Iterable[Mapping[str, Any]], heading_of: Callable[[Mapping[str, Any]], str] | None = None) -> str:
    """<dl> of every actionable tuning with its commands; heading_of(t) names it (the fleet page adds the cluster)."""
    heading_of = heading_of or (lambda t: humanize(t["name"]))
    parts = ['<dl class="apply">']
    for t in tunings:
        if t["state"] not in ACTIONABLE or not commands(t):
            continue
        why = blockers(t)
        parts.append("<dt>%s <span class=\"%s\">(%s)</span></dt>" % (
            R.esc(heading_of(t)), STATE_CLS[t["state"]], R.esc(STATE_TEXT[t["state"]])))
        if why:
            parts.append("<dd>first: %s</dd>" % R.esc("; ".join(why)))
        if gain_text(t):
            parts.append("<dd>expected: %s</dd>" % R.esc(gain_text(t)))
        for label, command in commands(t):
            parts.append('<dd>%s:<pre class="cmd"><code>%s</code></pre></dd>' % (R.esc(label), R.esc(command)))
    parts.append("</dl>")
    return "\n".join(parts) if len(parts) > 2 else ""


def _cards(advice: Mapping[str, Any]) -> str:
    s = advice.get("summary") or {}
    return "".join('<div class="card"><div class="k">%s</div><div class="v">%d</div></div>' % (R.esc(STATE_TEXT[k]),
                                                                                               s.get(k, 0))
                   for k in STATE_TEXT)


def to_html(advice: Mapping[str, Any], cluster: str) -> str:
    title = "Tuning advice: %s" % cluster
    body = ["<main>", "<h1>%s</h1>" % R.esc(title),
            '<p class="sub">%s · API server <code>%s</code></p>' % (
                R.esc(_cluster_text(advice, cluster)), R.esc((advice.get("cluster") or {}).get("server") or "")),
            '<div class="cards">%s</div>' % _cards(advice), "<h2>Tunings</h2>", R.table_html(_table(advice))]
    how = apply_html(advice.get("tunings") or [])
    if how:
        body += ["<h2>How to apply</h2>", how]
    body.append("</main>")
    return R.page_html(title, body, extra_css=ADVICE_CSS)


def render_advice(advice: Mapping[str, Any], cluster: str) -> dict[str, str]:
    return {"markdown": to_markdown(advice, cluster), "html": to_html(advice, cluster)}


def write_advice(advice: Mapping[str, Any], cluster: str, out_dir: str, check_mode: bool = False) -> dict[str, dict[str, Any]]:
    """<out_dir>/advice.md and advice.html, atomically and only what changed: {format: {"path", "changed"}}."""
    return R.write_texts(render_advice(advice, cluster), out_dir, FILENAMES, check_mode=check_mode)


def write_reports(advice: Mapping[str, Any], cluster: str, out_dir: str, stamp: str) -> dict[str, str]:
    """The advice as <out_dir>/advice-<stamp>.json (one per run, the fleet report's input) and advice.md / advice.html
    (the latest, for people): {json, md, html} paths. Written in check mode too: they describe, they change nothing."""
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.abspath(os.path.join(out_dir, "advice-%s.json" % stamp))
    write_text_atomic(json_path, json.dumps(advice, indent=2, sort_keys=True) + "\n")
    written = write_advice(advice, cluster, out_dir)
    return {"json": json_path, "md": written["markdown"]["path"], "html": written["html"]["path"]}
