# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysbench 1.0.x output read back into figures: transactions and queries per second, latency.

Three sources, best first, all optional and all read from the same text (a pod log):
- the JSON report hook ``sysbench.hooks.report_cumulative = sysbench.report_json`` (docs/reference/tooling.md):
  ``{"time", "threads", "tps", "qps": {"total", "reads", "writes", "other"}, "latency" (ms at
  --percentile), "errors", "reconnects"}`` (per second). Intermediate and cumulative reports each
  open their own ``[``, which sysbench closes only when that Lua state exits (after whatever the
  wrapper prints), so the output is read object by object, the last one being the cumulative report;
- the line ``{"storageperf": {...}}`` the collection's Lua wrapper adds (latency min/avg/max in ms,
  events, total time, the percentile asked for);
- ``--histogram=on``: "Latency histogram (values are in milliseconds)" with ``value | *** count``
  rows, from which p50/p90/p95/p99/p99.9 are computed (closest rank, as sysbench does);
- without the hook, the default text report (``transactions: N (X per sec.)``, ``Latency (ms):``).
Intermediate reports (``[ 1s ] thds: ...``) and anything else are kept as ``noise``.

Each source prints latency at its own resolution (``RESOLUTION_MS``): the JSON and text reports with two
decimals of a millisecond, so a fast device's 4 us reads ``0.00``. Such a value is not a measurement of
zero: it is kept as printed in ``latency_ms`` and named in ``latency_below_ms`` with the bound, and the
step carries it as an upper bound (``latency_p95_below_s``), which reports show as ``< 10µs``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)
TESTS = ("oltp_insert", "oltp_point_select", "oltp_read_write", "oltp_read_only", "oltp_write_only",
         "oltp_update_index", "oltp_update_non_index", "oltp_delete", "select_random_points", "select_random_ranges",
         "bulk_insert")

_HIST_ROW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*\|[* ]*?\s*(\d+)\s*$")
_HIST_HEAD = "Latency histogram (values are in milliseconds)"
_VERSION = re.compile(r"^sysbench (\d+\.\d+(?:\.\d+)?)")
_THREADS = re.compile(r"^Number of threads:\s*(\d+)")
_TEXT_RATE = re.compile(r"^\s*(transactions|queries|ignored errors|reconnects):\s*(\d+)\s*\(([\d.]+) per sec\.\)")
_TEXT_QUERY = re.compile(r"^\s*(read|write|other|total):\s*(\d+)\s*$")
_TEXT_LAT = re.compile(r"^\s*(min|avg|max|sum|(\d+(?:\.\d+)?)th percentile):\s*([\d.]+)\s*$")
_TEXT_TIME = re.compile(r"^\s*total time:\s*([\d.]+)s")
_TEXT_EVENTS = re.compile(r"^\s*total number of events:\s*(\d+)")
_INTERMEDIATE = re.compile(r"^\[ *\d+s *\] thds:")
# printf precision of each source's latency, in ms: report_json and the text report "%4.2f", the histogram
# "%12.3f", the collection's wrapper "%.6f"
RESOLUTION_MS = {"report": 0.01, "histogram": 0.001, "wrapper": 0.000001}


class SysbenchError(StoragePerfError, ValueError):
    """sysbench output without a result."""


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _objects(text: str) -> list[tuple[dict[str, Any], int, int]]:
    """Every JSON object in text, with its span: sysbench's report objects, our wrapper's line."""
    decoder = json.JSONDecoder()
    out: list[tuple[dict[str, Any], int, int]] = []
    i = text.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            out.append((obj, i, end))
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return out


def _report_objects(text: str) -> list[tuple[dict[str, Any], int, int]]:
    return [(o, s, e) for o, s, e in _objects(text) if "tps" in o or "storageperf" in o]


def _histogram(lines: Iterable[str]) -> list[tuple[float, int]]:
    """[(value_ms, count)] of the last latency histogram in the output."""
    rows: list[tuple[float, int]]
    last: list[tuple[float, int]] | None
    rows, inside, last = [], False, None
    for line in lines:
        if line.strip() == _HIST_HEAD:
            inside, rows = True, []
            continue
        if inside:
            m = _HIST_ROW.match(line)
            if m:
                rows.append((float(m.group(1)), int(m.group(2))))
            elif "distribution" in line:
                continue
            else:
                inside = False
                last = rows
    if inside:
        last = rows
    return last or []


def histogram_percentile(rows: Sequence[tuple[float, int]], p: float) -> float | None:
    """Closest rank over (value, count) rows: the first value where the running count reaches p%."""
    total = sum(c for _, c in rows)
    if not total:
        return None
    rank = max(1, int(-(-total * p // 100)))
    seen = 0
    for value, count in sorted(rows):
        seen += count
        if seen >= rank:
            return value
    return max(v for v, _ in rows)


def _pct_key(p: float) -> str:
    return ("p%g" % p).replace(".", "_")


def parse(text: object, name: str | None = None) -> dict[str, Any]:
    """Summary of sysbench output: {sysbench_version, threads, source, tps, qps, reads_per_s, writes_per_s,
    other_per_s, errors_per_s, reconnects_per_s, time_s, events, percentile, latency_ms{...}, histogram_rows,
    intermediate, noise, step}. name: the test (oltp_insert ...) for the step."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise SysbenchError("sysbench output must be text, got %s" % type(text).__name__)
    lines = text.splitlines()
    out: dict[str, Any]
    out = {"sysbench_version": None, "threads": None, "source": None, "tps": None, "qps": None,
           "reads_per_s": None, "writes_per_s": None, "other_per_s": None, "errors_per_s": None,
           "reconnects_per_s": None, "time_s": None, "events": None, "percentile": None,
           "latency_ms": {}, "latency_below_ms": {}, "histogram_rows": 0, "intermediate": 0, "noise": []}
    resolution: dict[str, float] = {}
    for line in lines:
        m = _VERSION.match(line)
        if m and not out["sysbench_version"]:
            out["sysbench_version"] = m.group(1)
        m = _THREADS.match(line)
        if m:
            out["threads"] = int(m.group(1))
        if _INTERMEDIATE.match(line):
            out["intermediate"] += 1

    reports = _report_objects(text)
    spans = [(s, e) for _, s, e in reports]
    cumulative = [o for o, _, _ in reports if "tps" in o]
    extra = [o["storageperf"] for o, _, _ in reports if isinstance(o.get("storageperf"), dict)]
    if cumulative:
        last = cumulative[-1]  # with a JSON intermediate hook too, the cumulative report comes last
        qps: dict[str, Any] = last.get("qps") if isinstance(last.get("qps"), dict) else {"total": last.get("qps")}  # type: ignore[assignment]  # dict: checked
        out.update(source="json", tps=_num(last.get("tps")), qps=_num(qps.get("total")),
                   reads_per_s=_num(qps.get("reads")), writes_per_s=_num(qps.get("writes")),
                   other_per_s=_num(qps.get("other")), errors_per_s=_num(last.get("errors")),
                   reconnects_per_s=_num(last.get("reconnects")), time_s=_num(last.get("time")))
        if _num(last.get("latency")) is not None:
            out["latency_ms"]["pct"] = _num(last.get("latency"))
            resolution["pct"] = RESOLUTION_MS["report"]
    if extra:
        e = extra[-1]
        for key in ("min", "avg", "max"):
            if _num(e.get("latency_%s_ms" % key)) is not None:
                out["latency_ms"][key] = _num(e.get("latency_%s_ms" % key))
                resolution[key] = RESOLUTION_MS["wrapper"]
        out["events"] = int(_num(e.get("events")) or 0) or out["events"]
        if _num(e.get("time_total")):
            out["time_s"] = _num(e.get("time_total"))  # the JSON's "time" is rounded to whole seconds
        out["percentile"] = _num(e.get("percentile"))
        if _num(e.get("threads")):
            out["threads"] = int(_num(e.get("threads")))  # type: ignore[arg-type]  # not None: checked above

    if not cumulative:
        _parse_text_report(lines, out)
        for key in out["latency_ms"]:
            resolution.setdefault(key, RESOLUTION_MS["report"])
    if out["tps"] is None:
        sample = "; ".join(line.strip() for line in lines if line.strip())[:300] or "(empty)"
        raise SysbenchError("sysbench output holds no result (neither the JSON report hook nor the text report): "
                            "did the run start? Output: %s" % sample)

    rows = _histogram(lines)
    out["histogram_rows"] = len(rows)
    if rows:
        for p in PERCENTILES:
            out["latency_ms"][_pct_key(p)] = histogram_percentile(rows, p)
            resolution[_pct_key(p)] = RESOLUTION_MS["histogram"]
    if "pct" in out["latency_ms"]:
        pct = out["percentile"] or 95.0
        if _pct_key(pct) not in out["latency_ms"]:
            out["latency_ms"][_pct_key(pct)] = out["latency_ms"]["pct"]
            resolution[_pct_key(pct)] = resolution["pct"]
        out["percentile"] = pct
        del out["latency_ms"]["pct"]
    out["latency_below_ms"] = {k: resolution[k] for k, v in out["latency_ms"].items()
                               if v is not None and v <= 0 and k in resolution}

    out["noise"] = _noise(lines, text, spans)
    out["step"] = step(out, name)
    return out


def _parse_text_report(lines: Iterable[str], out: dict[str, Any]) -> None:
    section: str | None = None
    for line in lines:
        if line.strip().startswith("queries performed"):
            section = "queries"
        elif line.strip().startswith("Latency (ms)"):
            section = "latency"
        m = _TEXT_RATE.match(line)
        if m:
            rate = float(m.group(3))
            key = {"transactions": "tps", "queries": "qps", "ignored errors": "errors_per_s",
                   "reconnects": "reconnects_per_s"}[m.group(1)]
            out[key] = rate
            if key == "tps":
                out["events"] = out["events"] or int(m.group(2))
            out["source"] = "text"
            continue
        m = _TEXT_TIME.match(line)
        if m:
            out["time_s"] = float(m.group(1))
            continue
        m = _TEXT_EVENTS.match(line)
        if m:
            out["events"] = int(m.group(1))
            continue
        if section == "queries":
            m = _TEXT_QUERY.match(line)
            if m:
                out["_%s_count" % m.group(1)] = int(m.group(2))
        if section == "latency":
            m = _TEXT_LAT.match(line)
            if m:
                if m.group(2):
                    out["percentile"] = float(m.group(2))
                    out["latency_ms"]["pct"] = float(m.group(3))
                elif m.group(1) in ("min", "avg", "max"):
                    out["latency_ms"][m.group(1)] = float(m.group(3))
    if out["tps"] is None and out["events"] is not None and out["time_s"]:
        # a Lua test without SQL (no "transactions:" line): events per second is its throughput
        out["tps"] = round(out["events"] / out["time_s"], 2)
        out["source"] = "text"
    if out["time_s"]:
        for kind in ("read", "write", "other"):
            count = out.pop("_%s_count" % kind, None)
            if count is not None:
                out["%ss_per_s" % kind if kind != "other" else "other_per_s"] = round(count / out["time_s"], 2)
    for k in [k for k in out if k.startswith("_")]:
        del out[k]


def _noise(lines: list[str], text: str, spans: Iterable[tuple[int, int]]) -> list[str]:
    """Lines that are neither sysbench's banner, its reports, nor the histogram."""
    covered: set[int] = set()
    offset = 0
    starts: list[int] = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    for s, e in spans:
        for i, st in enumerate(starts):
            if s <= st + len(lines[i]) and st < e:
                covered.add(i)
    known = re.compile(r"^(sysbench \d|Running the test|Number of threads|Initializing|Threads started|"
                       r"Report intermediate|Latency histogram|\s+value\s+-+|\s*\d+(\.\d+)?\s*\|.*\d$|"
                       r"\[ *\d+s *\] thds:|SQL statistics|General statistics|Latency \(ms\)|Threads fairness|"
                       r"\s+(queries performed|read|write|other|total|transactions|queries|ignored errors|reconnects|"
                       r"total time|total number of events|min|avg|max|sum|\d+(\.\d+)?th percentile|events \(avg|"
                       r"execution time \(avg)\b|[\[\],{}]$|Random number generator|Prepar|Creating|Inserting|Dropping)")
    return [line.rstrip() for i, line in enumerate(lines) if line.strip() and i not in covered and not known.match(line)]


def step_name(test: str) -> str:
    """A result-document step name from a sysbench test's name."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", test).strip("_").lower() or "sysbench"


def step(summary: Mapping[str, Any], name: str | None = None) -> dict[str, Any]:
    """The run as a result-document step (docs/results.md): tps/qps metrics, latency in seconds."""
    lat = summary["latency_ms"]
    below = summary.get("latency_below_ms") or {}
    metrics: dict[str, Any] = {"tps": summary["tps"], "qps": summary["qps"]}
    if summary.get("errors_per_s"):
        metrics["errors_per_s"] = summary["errors_per_s"]

    def latency_metric(key: str, metric: str) -> None:
        # a value printed as 0 becomes its upper bound under a key of its own, never a measured 0
        if key in below:
            metrics[metric + "_below_s"] = below[key] / 1000.0
        elif lat.get(key) is not None:
            metrics[metric + "_s"] = lat[key] / 1000.0

    latency_metric("avg", "latency_avg")
    latency: dict[str, float] | None = None
    if all(lat.get(k) is not None and k not in below for k in ("min", "avg", "max", "p50", "p90", "p99")):
        latency = {"min": lat["min"] / 1000.0, "p50": lat["p50"] / 1000.0, "p90": lat["p90"] / 1000.0,
                   "p99": lat["p99"] / 1000.0, "max": lat["max"] / 1000.0, "mean": lat["avg"] / 1000.0}
        for k in ("p95", "p99_9"):
            if lat.get(k) is not None:
                latency[k] = lat[k] / 1000.0
    pct = summary.get("percentile")
    if latency is None and pct and lat.get(_pct_key(pct)) is not None:
        # no histogram: sysbench's own percentile is all there is, kept as a metric
        latency_metric(_pct_key(pct), "latency_%s" % _pct_key(pct))
    test = name or "sysbench"
    label = test.replace("_", " ")
    if summary.get("threads"):
        label += " \u00d7%d threads" % summary["threads"]
    out: dict[str, Any]
    out = {"name": step_name(test), "label": label,
           "status": "ok", "wall_s": summary.get("time_s"), "metrics": metrics, "latency": latency}
    if not summary["tps"]:
        out["status"] = "failed"
        out["reason"] = "no transaction completed (tps 0): check the database and the sysbench options"
    return out
