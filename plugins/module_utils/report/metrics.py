# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each measured metric is: its label, how its value is written, and which direction is better.

The comparison (compare.py), the tables (tables.py) and the charts (charts.py) read the same registry.
"""
from __future__ import annotations

from typing import Any, Iterable, overload


from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import summaries

# Known metrics: key -> (label, kind, better). kind picks the formatter; better is the
# direction used for ratios ("higher": candidate/baseline, "lower": baseline/candidate).
METRICS = {
    "iops": ("IOPS", "number", "higher"),
    "read_iops": ("read IOPS", "number", "higher"),
    "write_iops": ("write IOPS", "number", "higher"),
    "bw_bytes": ("throughput", "bytes_rate", "higher"),
    "read_bw_bytes": ("read throughput", "bytes_rate", "higher"),
    "write_bw_bytes": ("write throughput", "bytes_rate", "higher"),
    "tps": ("transactions/s", "number", "higher"),
    "qps": ("queries/s", "number", "higher"),
    "events_per_s": ("events/s", "number", "higher"),
    "handshake_s": ("handshake", "duration", "lower"),
    # the gluster handshake's milestones (gluster/handshake.py) the seed names, then `volume info all` and the creation
    # of the count's new volumes, labelled as the handshake table heads them. A figure against a step parameter is a
    # column of that table only when registered here (parameters.py): the restart command's return (restart_s) and
    # the first `volume list` answer (volume_list_s) stay unregistered, shown in the measured metrics table only
    "peers_connected_s": ("all peers Connected", "duration", "lower"),
    "volume_status_s": ("volume status answers", "duration", "lower"),
    "volume_info_s": ("volume info", "duration", "lower"),
    "create_s": ("create (this step)", "duration", "lower"),
    "volumes": ("volumes", "number", None),
    # counts of what a step touched: never a figure to rank a variant by
    "attachments": ("attachments", "number", None),
    "created": ("volumes created", "number", None),
    "create_cli_calls": ("create CLI calls", "number", None),
    "handshake_polls": ("handshake polls", "number", None),
}
PRIMARY_METRICS = ("iops", "tps", "qps", "bw_bytes", "handshake_s")
BELOW_SUFFIX = "_below_s"


def metric_info(key: str) -> tuple[str, str, str | None]:
    """(label, kind, better) for a metric key; unknown keys are guessed from their suffix."""
    if key in METRICS:
        return METRICS[key]
    if key.endswith(BELOW_SUFFIX):
        # an upper bound (the figure was below the tool's printed resolution): shown, never ranked
        return (key[:-len(BELOW_SUFFIX)].replace("_", " "), "below", None)
    if key.endswith("_s") or key.endswith("_seconds"):
        return (key.replace("_", " "), "duration", "lower")
    if key.endswith("_ns"):
        return (key.replace("_", " "), "duration_ns", "lower")
    if key.endswith("_bytes") or key.endswith("_bps"):
        return (key.replace("_", " "), "bytes_rate", "higher")
    if "lat" in key or "error" in key or "fail" in key:
        return (key.replace("_", " "), "number", "lower")
    return (key.replace("_", " "), "number", "higher")


DURATION_KINDS = ("duration", "below", "duration_ns")
# (unit, seconds per unit) a duration column is written in, chosen by the column's largest value; µs for fio's
# completion latencies (PMEM's 10 µs would read "0.01 ms")
_COLUMN_UNITS = (("µs", 1e-6), ("ms", 0.001), ("s", 1.0), ("min", 60.0))


@overload
def _seconds(key: str, value: None) -> None:
    ...


@overload
def _seconds(key: str, value: float) -> float:
    ...


def _seconds(key: str, value: float | None) -> float | None:
    return None if value is None else (value / 1e9 if metric_info(key)[1] == "duration_ns" else float(value))


def column_unit(key: str, values: Iterable[float | None]) -> str | None:
    """The one unit of a duration metric's column ("µs", "ms", "s" or "min"), or None for other metrics."""
    if metric_info(key)[1] not in DURATION_KINDS:
        return None
    secs = [abs(_seconds(key, v)) for v in values if v is not None]
    top = max(secs) if secs else 0.0
    return "µs" if 0 < top < 0.001 else "ms" if top < 1.0 else "s" if top < 600 else "min"


def column_label(key: str, unit: str | None) -> str:
    """The column header: the metric's label, its unit in parentheses ("attach max (ms)", not "attach max s")."""
    label = metric_info(key)[0]
    if not unit:
        return label
    for suffix in (" seconds", " s", " ns"):
        if label.endswith(suffix):
            label = label[:-len(suffix)]
    return "%s (%s)" % (label, unit)


def format_in_unit(key: str, value: float | None, unit: str | None) -> str:
    """A duration metric in its column's unit ("417 ms"); other metrics as format_metric writes them."""
    if not unit or value is None:
        return format_metric(key, value)
    per = dict(_COLUMN_UNITS)[unit]
    number = _seconds(key, value) / per
    text = ("%.0f" if abs(number) >= 100 else "%.1f" if abs(number) >= 10 else "%.2f") % number
    return "%s%s %s" % ("< " if metric_info(key)[1] == "below" else "", text, unit)


def format_metric(key: str, value: float | None) -> str:
    kind = metric_info(key)[1]
    if kind == "duration":
        return stats.format_duration(value)
    if kind == "below":
        return stats.DASH if value is None else "< " + stats.format_duration(value)
    if kind == "duration_ns":
        return stats.format_duration(None if value is None else value / 1e9)
    if kind == "bytes_rate":
        return stats.format_bytes_rate(value)
    return stats.format_number(value)


def better_ratio(key: str, baseline: float | None, candidate: float | None) -> float | None:
    """How many times better the candidate is for this metric (>1 = better), or None."""
    better = metric_info(key)[2]
    if better == "higher":
        return stats.ratio(baseline, candidate)
    if better == "lower":
        return stats.ratio(candidate, baseline)
    return None


def metric_keys(doc: dict[str, Any]) -> list[str]:
    keys = []
    for _, steps in summaries(doc):
        for s in steps.values():
            for k in s.get("metrics") or {}:
                if k not in keys:
                    keys.append(k)
    known = [k for k in METRICS if k in keys]
    return known + [k for k in keys if k not in known]


def primary_metric(keys: Iterable[str]) -> str | None:
    for k in PRIMARY_METRICS:
        if k in keys:
            return k
    for k in keys:
        if metric_info(k)[2]:
            return k
    return None
