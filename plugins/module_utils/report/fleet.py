# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: every cluster's result (or advice) side by side, as JSON, Markdown and HTML.

    entries = [{"cluster": "prod-a", "path": "reports/prod-a/<run_id>/result.json"},
               {"cluster": "prod-b", "error": "no result: the host failed or was unreachable"}]
    doc = build_fleet(entries, name="fleet-20260620T090000Z")   # validated fleet document
    fleet_render.write_fleet(doc, "reports")                    # reports/<name>/fleet.json|md|html

A cluster without a document is a row with its error, never dropped: a fleet report that silently
loses the one broken cluster would say the fleet is fine. Figures come from the result documents'
summaries (document.summarize_variant) and compare.speedups; fleet_render.py turns the document
into tables, Markdown and HTML.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.compare import speedups
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import (
    ensure_summaries, get_variant, measured_only, step_names, summaries,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.fleet_schema import (
    ADVICE_STATES, FLEET_SCHEMA_VERSION, KINDS, validate_fleet,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import seed_figure, time_scale
from ansible_collections.storageperf.k8s.plugins.module_utils.report.steps import operation_cell, step_label
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import (
    ResultValidationError, validate,
)

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

ENTRY_KEYS = ("cluster", "path", "document", "error")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
NO_RESULT = "no result: the host failed or was unreachable"


class FleetInputError(StoragePerfError, ValueError):
    """An entry is malformed; the message names the entry and the field."""


# --- input ------------------------------------------------------------------------------
def check_entries(entries: object) -> list[dict[str, Any]]:
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


def detect_kind(doc: object) -> str | None:
    if isinstance(doc, dict) and "tunings" in doc:
        return "advice"
    if isinstance(doc, dict) and "variants" in doc:
        return "bench"
    return None


def _read(path: str) -> tuple[Any, str | None]:
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8")), None
    except OSError as e:
        return None, "cannot read %s: %s" % (path, e.strerror or e)
    except ValueError as e:
        return None, "%s is not valid JSON: %s" % (path, e)


def load_entries(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any, str | None]]:
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
def build_fleet(entries: object, name: str, kind: str | None = None, title: str | None = None) -> dict[str, Any]:
    """The validated fleet document for these entries (see module docstring)."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise FleetInputError("name %r must be a directory name: letters, digits, '.', '_' and '-', "
                              "starting with a letter or digit" % (name,))
    if kind is not None and kind not in KINDS:
        raise FleetInputError("kind must be one of %s, got %r" % (", ".join(KINDS), kind))
    loaded = load_entries(check_entries(entries))
    kinds = sorted({detect_kind(d) for _, d, _ in loaded if d is not None})  # type: ignore[type-var]  # load_entries: a kind each
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
    fleet: dict[str, Any] = {"fleet_schema_version": FLEET_SCHEMA_VERSION, "kind": kind, "name": name, "clusters": rows}
    if kind == "bench":
        _bench_columns(fleet, [d for _, d, _ in loaded if d is not None and detect_kind(d) == "bench"])
    else:
        _advice_columns(fleet)
    fleet["title"] = title or _default_title(fleet)
    fleet["summary"] = _summary(fleet)
    return validate_fleet(fleet)


def _base_row(e: dict[str, Any], doc: dict[str, Any] | None, err: str | None) -> dict[str, Any]:
    row = {"cluster": e["cluster"], "status": "ok", "error": err or e["error"], "source": e["path"]}
    cluster = (doc or {}).get("cluster") or {}
    for key in ("server", "version"):
        if cluster.get(key):
            row[key] = str(cluster[key])
    return row


def _bench_row(e: dict[str, Any], doc: dict[str, Any] | None, err: str | None) -> dict[str, Any]:
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
    # a seed's reference variants (gluster) are the same in every row and no baseline or candidate of a cluster
    doc = measured_only(ensure_summaries(doc))
    row["status"] = doc.get("status", "interrupted")
    if row["error"] and row["status"] == "ok":
        row["status"] = "failed"  # the document is fine but the host failed after writing it
    for key in ("run_id", "benchmark", "reason", "started", "finished"):
        if doc.get(key) is not None:
            row[key] = doc[key]
    if time_scale(doc):  # a twin's: the fleet page shows its cluster time too
        row["time_scale"] = time_scale(doc)
    row["variants"] = []
    names = step_names(doc)
    for vname, steps in summaries(doc):
        figures = [_step_figures(n, steps.get(n), seed_figure(doc, get_variant(doc, vname), n)) for n in names]
        summ = next(v.get("summary") for v in doc["variants"] if v["name"] == vname)
        row["variants"].append({"name": vname, "steps": figures, "sum_wall_s": summ.get("sum_wall_s")})
    row["speedup"] = None
    if len(doc["variants"]) >= 2:
        sp = speedups(doc, doc["variants"][0]["name"], doc["variants"][-1]["name"])
        if sp:
            row["speedup"] = {"baseline": sp["baseline"], "candidate": sp["candidate"], "overall": sp["overall"],
                              "steps": {s["step"]: s["speedup"] for s in sp["steps"]}}
    return row


def _step_figures(name: str, s: dict[str, Any] | None, seed: dict[str, Any] | None = None) -> dict[str, Any]:
    if s is None:
        return {"name": name, "status": "missing", "wall_s": None, "rate": None, "text": stats.DASH}
    out = {"name": name, "status": s.get("status", "ok"),
           "wall_s": s["wall_s"]["median"] if s.get("wall_s") else None,
           "rate": s["rate"]["median"] if s.get("rate") else None,
           "runs": s.get("runs", 0), "ok_runs": s.get("ok_runs", 0),
           "text": operation_cell(s)["text"]}
    for key in ("unit", "count"):
        if s.get(key) is not None:
            out[key] = s[key]
    if seed:
        out["seed_s"] = seed["seconds"]
    return out


def _bench_columns(fleet: dict[str, Any], docs: list[dict[str, Any]]) -> None:
    variants, steps, labels, benchmarks = [], [], {}, []
    for doc in map(measured_only, docs):
        if doc.get("benchmark") not in benchmarks:
            benchmarks.append(doc.get("benchmark"))
        for v in doc.get("variants", []):
            if v["name"] not in variants:
                variants.append(v["name"])
        for n in step_names(doc):
            if n not in steps:
                steps.append(n)
                labels[n] = step_label(doc, n)
    fleet["benchmark"] = benchmarks[0] if len(benchmarks) == 1 else None
    fleet["variants"] = variants
    fleet["steps"] = [{"name": n, "label": labels[n]} for n in steps]


def _advice_row(e: dict[str, Any], doc: dict[str, Any] | None, err: str | None) -> dict[str, Any]:
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
        speedup = t.get("expected_speedup")
        if isinstance(speedup, (int, float)) and not isinstance(speedup, bool):
            cell["expected_speedup"] = float(speedup)
        apply = t.get("apply") if isinstance(t.get("apply"), dict) else {}
        for key in ("command", "rollout_command"):  # what applies it (advice/commands.py), for the advisor section
            if apply.get(key):  # type: ignore[union-attr]  # a dict, checked above
                cell[key] = str(apply[key])  # type: ignore[index]
        if t.get("apply_with"):
            cell["apply_with"] = str(t["apply_with"])
        cells.append(cell)
    row["tunings"] = cells
    row["counts"] = {s: sum(1 for c in cells if c["state"] == s) for s in ADVICE_STATES}
    if row["error"]:
        row["status"] = "failed"
    return row


def _advice_columns(fleet: dict[str, Any]) -> None:
    names = []
    for row in fleet["clusters"]:
        for t in row.get("tunings") or []:
            if t["name"] not in names:
                names.append(t["name"])
    fleet["tunings"] = names


def _default_title(fleet: dict[str, Any]) -> str:
    n = len(fleet["clusters"])
    if fleet["kind"] == "advice":
        return "Tuning advice across %d cluster%s" % (n, "" if n == 1 else "s")
    bench = fleet.get("benchmark")
    what = "%s benchmark" % bench if bench else "Benchmarks"
    return "%s across %d cluster%s" % (what, n, "" if n == 1 else "s")


def _summary(fleet: dict[str, Any]) -> dict[str, Any]:
    rows = fleet["clusters"]
    failed = [r["cluster"] for r in rows if r["status"] != "ok"]
    out = {"clusters": len(rows), "ok": len(rows) - len(failed), "failed": len(failed), "failed_clusters": failed}
    if fleet["kind"] == "advice":
        out["states"] = {s: sum((r.get("counts") or {}).get(s, 0) for r in rows) for s in ADVICE_STATES}
    return out
