# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gluster_volume_scale benchmark as a result document (module_utils/report); its reports are the shared ones.

A point is what the bench tasks collected at one volume count in one mode:
    {"mode": "brick-multiplex off", "volumes": 200, "create": {gluster_volumes result},
     "handshake": {gluster_handshake_bench result}}
Each mode is a variant; each count gives a `handshake_<N>` and a `volume_info_<N>` step carrying
parameter {name: volumes, value: N}, which the shared renderer charts as time against volume count and tables
(report/parameters.py: a row per mode and count, the handshake's milestones from its metrics, the seed's reference
rows marked reported), so bench_report on result.json writes the same report.md and report.html as this module.
The document carries the run's plan (gluster/plan.py) under `plan`, as the bench engine's documents do.
"""
from __future__ import annotations

import os

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster import plan as PL
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import parameters as P
from ansible_collections.storageperf.k8s.plugins.module_utils.report import render as R

BENCHMARK = PL.BENCHMARK
TITLE = "GlusterFS: peer handshake after a glusterd restart, against volume count"
# Seed 003 (gluster-users, 2019-03-29): glusterd_add_volumes_to_export_dict() on a 16 vCPU, 32 GB, 3-node
# cluster at about 2000 volumes, before and after the multi-threaded export (GlusterFS 7).
SEED_REFERENCE: list[dict] = [
    {"mode": "seed: glusterd before the fix (reported)", "volumes": 2000, "handshake_seconds": 450.0},
    {"mode": "seed: glusterd 7 threaded export (reported)", "volumes": 2000, "handshake_seconds": 138.0},
]
# the reference variants' source, which the handshake table's note names beside the rows marked reported
SEED_SOURCE = "seed 003: 16 vCPU, 32 GB RAM, 3 nodes, ~2000 volumes"
SEED_NOTE = ("Reference rows are the seed's published figures (16 vCPU, 32 GB RAM, 3 nodes, ~2000 volumes: "
             "7.5 min before, 2 min 18 s after the threaded export dictionary), not measured here.")
HANDSHAKE = "handshake"  # the series of the handshake steps: the table's handshake column
METRIC_KEYS = (("peers_connected_seconds", "peers_connected_s"), ("volume_list_seconds", "volume_list_s"),
               ("volume_status_seconds", "volume_status_s"), ("restart_seconds", "restart_s"),
               ("volume_info_seconds", "volume_info_s"))


def point_metrics(point: dict) -> dict:
    hs = point.get("handshake") or {}
    create = point.get("create") or {}
    metrics = {"volumes": point["volumes"], "handshake_s": hs.get("handshake_seconds")}
    for src, dst in METRIC_KEYS:
        if hs.get(src) is not None:
            metrics[dst] = hs[src]
    if create.get("seconds") is not None:
        # a count whose volumes all existed created nothing: no creation time to report (the table's "—", not "0µs")
        if create.get("created_count", 1):
            metrics["create_s"] = create["seconds"]
        metrics["created"] = create.get("created_count", 0)
    if create.get("cli_calls") is not None:
        metrics["create_cli_calls"] = create["cli_calls"]
    if hs.get("polls") is not None:
        metrics["handshake_polls"] = hs["polls"]
    return metrics


def build_document(points: list[dict], modes: list[dict], run_id: str | None = None, parameters: dict | None = None,
                   cluster: dict | None = None, components: dict | None = None, status: str | None = None,
                   reason: str | None = None, reference: bool = True, started: str | None = None,
                   plan: dict | None = None) -> dict:
    doc = D.new_result(BENCHMARK, run_id=run_id or None, parameters=parameters, cluster=cluster,
                       components=components, title=TITLE, started=started)
    if plan:
        doc["plan"] = plan
    for mode in modes:
        variant = D.add_variant(doc, mode["name"], settings=mode.get("settings") or {})
        run = D.add_run(variant)
        for point in sorted((p for p in points if p["mode"] == mode["name"]), key=lambda p: p["volumes"]):
            n = point["volumes"]
            hs = point.get("handshake") or {}
            failed = point.get("error")
            D.add_step(run, f"handshake_{n}", status="failed" if failed else "ok",
                       label=f"Restart handshake, {n} volumes", wall_s=hs.get("handshake_seconds"),
                       metrics={k: v for k, v in point_metrics(point).items() if v is not None},
                       parameter={"name": "volumes", "value": n, "series": HANDSHAKE},
                       reason=failed or None, errors=[{"object": f"{n} volumes", "reason": failed}] if failed else None)
            if hs.get("volume_info_seconds") is not None:
                D.add_step(run, f"volume_info_{n}", label=f"volume info all, {n} volumes",
                           wall_s=hs["volume_info_seconds"], count=hs.get("volume_info_count"), unit="vol",
                           parameter={"name": "volumes", "value": n, "series": "volume info"})
    if reference:
        for ref in SEED_REFERENCE:
            variant = D.add_variant(doc, ref["mode"], settings={"source": SEED_SOURCE, "measured": False})
            run = D.add_run(variant)
            D.add_step(run, f"handshake_{ref['volumes']}", label=f"Restart handshake, {ref['volumes']} volumes",
                       wall_s=ref["handshake_seconds"],
                       metrics={"volumes": ref["volumes"], "handshake_s": ref["handshake_seconds"]},
                       parameter={"name": "volumes", "value": ref["volumes"], "series": HANDSHAKE})
        doc["notes"] = [SEED_NOTE]
    doc.setdefault("notes", []).append(
        "Times come from one monotonic clock in the gluster_handshake_bench module, started just before the "
        "restart command; each milestone is the first poll that saw it (error at most one poll interval).")
    D.finalize(doc, status=status, reason=reason)
    return doc


SUMMARY_KEYS = (("peers_connected_seconds", "peers_connected_s"), ("volume_status_seconds", "volume_status_s"),
                ("volume_info_seconds", "volume_info_s"), ("create_seconds", "create_s"))


def summary_rows(doc: dict) -> list[dict]:
    """The module's `summary`: the document's handshake table (report/parameters.py) as seconds, measured rows by
    mode and count, then the seed's reference rows."""
    block = next((b for b in P.parameter_blocks(doc) if b["name"] == "volumes"), None)
    rows = []
    for r in block["rows"] if block else []:
        row = {"mode": r["variant"], "volumes": r["value"], "measured": r["measured"],
               "handshake_seconds": r["wall_s"].get(HANDSHAKE)}
        if r["measured"]:
            row.update({key: r["metrics"].get(metric) for key, metric in SUMMARY_KEYS}, error=r["reason"] or "")
        rows.append(row)
    return sorted(rows, key=lambda r: (not r["measured"], r["mode"] if r["measured"] else "", r["volumes"]))


def write_all(doc: dict, reports_dir: str, check_mode: bool = False) -> dict:
    """result.json (atomic, validated), report.md and report.html (the shared renderer's, handshake table and
    charts included)."""
    run_dir = os.path.join(reports_dir, doc["run_id"])
    paths = {"json": os.path.abspath(D.result_path(reports_dir, doc["run_id"])),
             "markdown": os.path.abspath(os.path.join(run_dir, "report.md")),
             "html": os.path.abspath(os.path.join(run_dir, "report.html"))}
    if check_mode:
        return paths
    D.write_atomic(doc, reports_dir)
    R.write_reports(doc, run_dir, formats=("markdown", "html"))
    return paths


def write_bench_report(p: dict, check_mode: bool = False) -> dict:
    """Check the points against the modes and the plan against the one stored under the run id, then write
    result.json (with the plan), report.md and report.html (gluster_bench_report)."""
    names = [m.get("name") for m in p["modes"]]
    if not all(names) or len(set(names)) != len(names):
        raise StoragePerfError(f"modes need unique non-empty names; got {names}")
    bad = [i for i, pt in enumerate(p["points"]) if pt.get("mode") not in names or not isinstance(pt.get("volumes"), int)]
    if bad:
        raise StoragePerfError(f"points {bad} need mode (one of {names}) and an integer volumes")
    plan = PL.stored_plan(p["modes"], p["parameters"], p["cluster"], p["components"])
    PL.check_same_plan(p["reports_dir"], p["run_id"], plan)
    try:
        doc = build_document(p["points"], p["modes"], run_id=p["run_id"] or None, parameters=p["parameters"],
                             cluster=p["cluster"], components=p["components"], status=p["status"],
                             reason=p["reason"], reference=p["reference"], started=p["started"], plan=plan)
        paths = write_all(doc, p["reports_dir"], check_mode=check_mode)
    except (ValueError, OSError) as exc:
        raise StoragePerfError(f"cannot write the gluster benchmark report: {exc}") from exc
    return dict(changed=not check_mode, run_id=doc["run_id"], paths=paths, summary=summary_rows(doc), status=doc["status"],
                progress=PL.progress_line(p["points"], plan))
