# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fio: its JSON output read back into figures (IOPS, bandwidth, completion latency percentiles).

Output shape (fio 3.x ``--output-format=json``, see docs/reference/tooling.md): ``jobs[]`` with ``jobname``,
``groupid``, ``error``, ``job options`` and per direction (``read``/``write``/``trim``) ``iops``,
``bw_bytes`` (older fio: ``bw`` in KiB/s), ``runtime`` (ms), ``total_ios`` and ``clat_ns``
(``min max mean stddev percentile{"99.000000": ns}``; fio 2.x: ``clat`` in microseconds).

The text this module gets is what a person gets: a pod log or a file that may hold fio's own
warnings (``fio: io_u error ...``), a shell's messages and the JSON document. parse() finds the
document in it, and when stray lines were written into the middle of it (stderr and stdout share a
pod log) drops the lines that cannot be JSON and tries again. Everything else is kept in ``noise``
so a report can show it.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

DIRECTIONS = ("read", "write", "trim")
# percentile key in fio's JSON -> our key
PERCENTILES = (("50.000000", "p50"), ("90.000000", "p90"), ("99.000000", "p99"), ("99.900000", "p99_9"))

_DOC_START = re.compile(r'\{\s*"(fio version|jobs|global options|timestamp)"')
# a line of fio's pretty-printed JSON starts with one of these (after indentation)
_JSON_LINE = re.compile(r'^\s*([{}\[\]"]|-?\d|true\b|false\b|null\b|$)')


class FioError(StoragePerfError, ValueError):
    """fio output that holds no usable result, or a job definition fio would refuse."""


# ------------------------------------------------------------------------------------------------
# reading the output
# ------------------------------------------------------------------------------------------------
def find_document(text: object) -> tuple[dict[str, Any], list[str]]:
    """(document, noise lines) from text holding one fio JSON document among other lines."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise FioError("fio output must be text, got %s" % type(text).__name__)
    decoder = json.JSONDecoder()
    starts = [m.start() for m in _DOC_START.finditer(text)]
    for start in starts:
        try:
            doc, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("jobs"), list):
            return doc, _lines(text[:start]) + _lines(text[end:])
    # stray lines inside the document: keep only lines that can be JSON, from the first start on
    for start in starts:
        head, body = text[:start], text[start:]
        kept: list[str] = []
        dropped: list[str] = []
        for line in body.splitlines():
            (kept if _JSON_LINE.match(line) else dropped).append(line)
        cleaned = "\n".join(kept)
        try:
            doc, end = decoder.raw_decode(cleaned)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("jobs"), list):
            return doc, _lines(head) + [d for d in dropped if d.strip()] + _lines(cleaned[end:])
    sample = "; ".join(_lines(text)[:3]) or "(empty)"
    if starts:
        raise FioError("fio output holds an incomplete JSON document (fio killed, or the file cut short?); "
                       "first lines: %s" % sample)
    raise FioError("fio output holds no JSON document: run fio with --output-format=json (and --output=FILE); "
                   "first lines: %s" % sample)


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _latency_ns(io: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """{min,max,mean,stddev,p50,p90,p99,p99_9} in ns from clat_ns / lat_ns (or fio 2.x clat in us)."""
    src, scale = io.get(key + "_ns"), 1.0
    if not isinstance(src, dict):
        src, scale = io.get(key), 1000.0
    if not isinstance(src, dict):
        return None
    out: dict[str, Any] = {}
    for k in ("min", "max", "mean", "stddev"):
        v = _num(src.get(k))
        out[k] = None if v is None else v * scale
    pct = src.get("percentile") or {}
    for fio_key, ours in PERCENTILES:
        v = _num(pct.get(fio_key))
        out[ours] = None if v is None else v * scale
    out["samples"] = int(_num(src.get("N")) or 0) or None
    out["bins"] = src.get("bins") if isinstance(src.get("bins"), dict) else None
    return out


def _direction(io: object) -> dict[str, Any] | None:
    """One direction of one job, or None when it did no I/O (latency bins kept until groups are merged)."""
    if not isinstance(io, dict):
        return None
    total = int(_num(io.get("total_ios")) or 0)
    io_bytes = _num(io.get("io_bytes")) or 0
    if total == 0 and io_bytes == 0:
        return None
    bw = _num(io.get("bw_bytes"))
    if bw is None and _num(io.get("bw")) is not None:
        bw = _num(io.get("bw")) * 1024.0  # type: ignore[operator]  # not None: checked above; KiB/s before fio 3.0
    return {"iops": _num(io.get("iops")) or 0.0, "bw_bytes": bw or 0.0, "io_bytes": io_bytes,
            "runtime_ms": _num(io.get("runtime")) or 0.0, "total_ios": total,
            "clat_ns": _latency_ns(io, "clat"), "lat_ns": _latency_ns(io, "lat")}


def _job(raw: Mapping[str, Any], global_options: Mapping[str, Any]) -> dict[str, Any]:
    options = dict(global_options)
    options.update(raw.get("job options") or {})
    job: dict[str, Any]
    job = {"name": str(raw.get("jobname", "")), "groupid": int(_num(raw.get("groupid")) or 0),
           "error": int(_num(raw.get("error")) or 0), "options": options}
    for d in DIRECTIONS:
        io = _direction(raw.get(d))
        if io:
            job[d] = io
    job["iops"] = sum(job[d]["iops"] for d in DIRECTIONS if d in job)
    job["bw_bytes"] = sum(job[d]["bw_bytes"] for d in DIRECTIONS if d in job)
    return job


def _merge_bins(bins_list: Iterable[Mapping[Any, Any]]) -> dict[int, int]:
    total: dict[int, int] = {}
    for bins in bins_list:
        for k, v in bins.items():
            total[int(k)] = total.get(int(k), 0) + int(v)
    return total


def _bins_percentile(bins: Mapping[int, int], p: float) -> float | None:
    """Closest rank over fio's latency bins (ns -> count), as fio computes its own percentiles."""
    n = sum(bins.values())
    if not n:
        return None
    rank = max(1, int(-(-n * p // 100)))
    seen = 0
    for k in sorted(bins):
        seen += bins[k]
        if seen >= rank:
            return float(k)
    return float(max(bins))


def _merge_latency(parts: Iterable[tuple[Any, int]]) -> tuple[dict[str, Any] | None, bool]:
    """Latency of a group from its jobs' latencies: exact for min/max/mean; percentiles from bins
    (fio --output-format=json+) when every job has them, else the worst job's (approximate)."""
    parts = [(lat, ios) for lat, ios in parts if lat]
    if not parts:
        return None, False
    if len(parts) == 1:
        out = dict(parts[0][0])
        out.pop("bins", None)
        return out, False
    ios = sum(n for _, n in parts) or 1
    mins = [p["min"] for p, _ in parts if p["min"] is not None]
    maxs = [p["max"] for p, _ in parts if p["max"] is not None]
    out = {"min": min(mins) if mins else None, "max": max(maxs) if maxs else None,
           "mean": sum((p["mean"] or 0.0) * n for p, n in parts) / ios, "stddev": None,
           "samples": sum(p.get("samples") or 0 for p, _ in parts) or None}
    approximate = False
    if all(p.get("bins") for p, _ in parts):
        bins = _merge_bins([p["bins"] for p, _ in parts])
        for fio_key, ours in PERCENTILES:
            out[ours] = _bins_percentile(bins, float(fio_key))
    else:
        approximate = True
        for _, ours in PERCENTILES:
            values = [p[ours] for p, _ in parts if p.get(ours) is not None]
            out[ours] = max(values) if values else None
    return out, approximate


def _group(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    first = jobs[0]
    group: dict[str, Any]
    group = {"groupid": first["groupid"], "name": first["name"], "jobs": len(jobs),
             "job_names": sorted({j["name"] for j in jobs}), "options": first["options"],
             "error": max(j["error"] for j in jobs), "approximate": False}
    for d in DIRECTIONS:
        ios = [j[d] for j in jobs if d in j]
        if not ios:
            continue
        clat, approx_c = _merge_latency([(io["clat_ns"], io["total_ios"]) for io in ios])
        lat, _ = _merge_latency([(io["lat_ns"], io["total_ios"]) for io in ios])
        group["approximate"] = group["approximate"] or approx_c  # clat is what the steps report
        group[d] = {"iops": sum(io["iops"] for io in ios), "bw_bytes": sum(io["bw_bytes"] for io in ios),
                    "io_bytes": sum(io["io_bytes"] for io in ios), "total_ios": sum(io["total_ios"] for io in ios),
                    "runtime_ms": max(io["runtime_ms"] for io in ios), "clat_ns": clat, "lat_ns": lat}
    group["iops"] = sum(group[d]["iops"] for d in DIRECTIONS if d in group)
    group["bw_bytes"] = sum(group[d]["bw_bytes"] for d in DIRECTIONS if d in group)
    return group


def step_name(text: object) -> str:
    """A result-document step name from a fio job name (randwrite_4k, rand_100write_4k ...)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", str(text)).strip("_").lower()
    return name or "fio"


def step_label(options: Mapping[str, Any], jobs: int) -> str:
    """'randwrite 4k psync iodepth 1 ×50', the seed's job in a few words."""
    parts = [options.get("rw") or options.get("readwrite") or "read", options.get("bs") or options.get("blocksize") or "4k",
             options.get("ioengine") or "psync"]
    if options.get("iodepth"):
        parts.append("iodepth %s" % options["iodepth"])
    numjobs = options.get("numjobs") or jobs
    parts.append("\u00d7%s" % numjobs)
    return " ".join(str(p) for p in parts)


def _step(group: Mapping[str, Any]) -> dict[str, Any]:
    """The group as a result-document step (docs/results.md): metrics, and latency in seconds."""
    dirs = [d for d in DIRECTIONS if d in group]
    metrics: dict[str, Any] = {"iops": round(group["iops"], 3), "bw_bytes": round(group["bw_bytes"], 3)}
    if len(dirs) > 1:
        for d in dirs:
            metrics["%s_iops" % d] = round(group[d]["iops"], 3)
            metrics["%s_bw_bytes" % d] = round(group[d]["bw_bytes"], 3)
    # completion latency of the direction that did most of the I/O (a mixed job's reads, say)
    main = max(dirs, key=lambda d: group[d]["total_ios"]) if dirs else None
    latency: dict[str, float] | None = None
    clat = group[main]["clat_ns"] if main else None
    if clat and all(clat.get(k) is not None for k in ("min", "max", "mean", "p50", "p90", "p99")):
        latency = {k: clat[k] / 1e9 for k in ("min", "p50", "p90", "p99", "max", "mean")}
        if clat.get("p99_9") is not None:
            latency["p99_9"] = clat["p99_9"] / 1e9
        metrics["clat_mean_ns"] = round(clat["mean"], 1)  # the seed's "lat avg" column
    step: dict[str, Any]
    step = {"name": step_name(group["name"]), "label": step_label(group["options"], group["jobs"]),
            "status": "ok" if not group["error"] else "failed",
            "wall_s": round(max([group[d]["runtime_ms"] for d in dirs] or [0]) / 1000.0, 3),
            "metrics": metrics, "latency": latency}
    if group["error"]:
        step["reason"] = "fio reported error %d (errno) in job %s" % (group["error"], group["name"])
    if not dirs:
        step["status"] = "failed"
        step["reason"] = "job %s did no I/O" % group["name"]
    return step


def parse(text: object) -> dict[str, Any]:
    """Summary of fio output: {fio_version, jobs[], groups[], steps[], noise[], errors[]}.

    jobs: one per entry of fio's ``jobs`` (one per group with group_reporting); groups: the jobs
    merged by ``groupid``; steps: one per group, shaped as result-document steps.
    """
    doc, noise = find_document(text)
    global_options = doc.get("global options") or {}
    jobs = [_job(raw, global_options) for raw in doc["jobs"] if isinstance(raw, dict)]
    if not jobs:
        raise FioError("fio output holds a JSON document without jobs: did every job fail to start? %s"
                       % ("; ".join(noise[:3]) or ""))
    by_group: dict[int, list[dict[str, Any]]] = {}
    order: list[int] = []
    for j in jobs:
        if j["groupid"] not in by_group:
            by_group[j["groupid"]] = []
            order.append(j["groupid"])
        by_group[j["groupid"]].append(j)
    groups = [_group(by_group[g]) for g in order]
    steps = [_step(g) for g in groups]
    seen: dict[str, int] = {}
    for s in steps:  # step names must be unique in a run
        n = seen.get(s["name"], 0)
        seen[s["name"]] = n + 1
        if n:
            s["name"] = "%s_%d" % (s["name"], n + 1)
    for j in jobs:
        for d in DIRECTIONS:
            for key in ("clat_ns", "lat_ns"):
                if d in j and j[d].get(key):
                    j[d][key].pop("bins", None)
    for g in groups:
        for d in DIRECTIONS:
            for key in ("clat_ns", "lat_ns"):
                if d in g and g[d].get(key):
                    g[d][key].pop("bins", None)
    errors = ["job %s: error %d" % (j["name"], j["error"]) for j in jobs if j["error"]]
    errors += ["group %s: no completion-latency percentiles (gtod_reduce=1 or clat_percentiles=0?)" % g["name"]
               for i, g in enumerate(groups) if steps[i]["latency"] is None and steps[i]["status"] == "ok"]
    errors += [line for line in noise if line.startswith("fio:") or "error" in line.lower()]
    return {"fio_version": doc.get("fio version"), "timestamp": doc.get("timestamp"), "jobs": jobs,
            "groups": groups, "steps": steps, "noise": noise, "errors": errors}
