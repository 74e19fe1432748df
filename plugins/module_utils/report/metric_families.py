# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A result document as Prometheus metric families, as plain data (docs/results.md, "Metrics").

families(doc, cluster) is the one place a document becomes metrics: every benchmark kind goes through it,
and both the Pushgateway push and the metrics.prom text file (io floor, metrics_export.py) are written from
what it returns. Each family is {"name", "type": "gauge", "help", "labels", "samples": [(labels dict, value)]}.

The names follow Prometheus' naming guide: one unit per family, in base units, named by the suffix (_seconds,
_ratio, _bytes_per_second, _per_second; a count or a 0/1 flag has none), so that a sum or a ratio over a family
never mixes a p99 with a wall time or bytes with IOPS. A series is one (cluster, benchmark, variant, step): the run
id and the versions are not labels of the figures (every run would start new series) but of the one
storageperf_run_info series per run, value 1, joined in queries. Label values are identifiers (identifier()), the
variant "concurrency on" is concurrency_on. Variants of reference figures copied from a seed (settings.measured
false, gluster) are not measurements and are left out.
"""
from __future__ import annotations

import datetime
import re
from typing import Any, overload


from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import is_measured, summaries

PREFIX = "storageperf_"
JOB = "storageperf"
# the Pushgateway group of one push: one cluster's one benchmark (docs/results.md says why not the run id)
GROUPING_LABELS = ("cluster", "benchmark")
BASE_LABELS = GROUPING_LABELS
STEP_LABELS = ("variant", "step")
OVERALL_STEP = "overall"  # the speedup of the sum of step times, beside the per-step ones
LATENCY_STATS = ("min", "p50", "p90", "p99", "max", "mean")
INFO = "storageperf_run_info"
INFO_LABELS = ("run_id", "status", "kubernetes_version")  # and <component>_version per document component
MEASURED_PREFIX = "storageperf_measured_"

FAMILIES = {  # name -> (labels beyond cluster/benchmark, help); the measured figures' families are named per key
    INFO: (INFO_LABELS, "The run behind the other series of this cluster and benchmark: its id, status and the "
                        "versions of the cluster and its components as labels, value 1."),
    "storageperf_run_ok": ((), "1 when the run's status is ok, else 0 (the status is a label of storageperf_run_info)."),
    "storageperf_run_finished_timestamp_seconds": ((), "When the run finished, in seconds since the epoch."),
    "storageperf_step_duration_seconds": (
        STEP_LABELS, "Wall time of a benchmark step (whole batch), median over the repetitions whose step is ok."),
    "storageperf_step_objects_per_second": (
        STEP_LABELS, "Objects per second through a benchmark step (count / wall time; the step says which objects), "
                     "median over ok repetitions."),
    "storageperf_step_ok": (STEP_LABELS, "1 when every repetition of the step was ok, else 0."),
    "storageperf_speedup_ratio": (
        ("step", "baseline", "variant"),
        "Throughput ratio of a variant against the document's baseline variant, per step (step overall: the sum "
        "of step times), as in the report's ratio column."),
}
LATENCY_FAMILIES = {stat: "storageperf_step_latency_%s_seconds" % stat for stat in LATENCY_STATS}
FAMILIES.update({name: (STEP_LABELS, "Per-object latency of a benchmark step, the %s over its objects, median over ok "
                                     "repetitions." % stat) for stat, name in LATENCY_FAMILIES.items()})

# measured figures (a step's `metrics` in the document) whose key's suffix alone would name them poorly
MEASURED_NAMES = {
    "iops": "io_operations_per_second", "read_iops": "read_operations_per_second",
    "write_iops": "write_operations_per_second", "bw_bytes": "throughput_bytes_per_second",
    "read_bw_bytes": "read_throughput_bytes_per_second", "write_bw_bytes": "write_throughput_bytes_per_second",
    "tps": "transactions_per_second", "qps": "queries_per_second", "created": "volumes_created",
}
# key suffix -> (family suffix, factor to base units), the document's conventions (docs/results.md, `metrics`):
# the first that matches; _bytes and _bps are throughputs there, bytes per second
_SUFFIXES = (("_below_s", "_upper_bound_seconds", 1.0), ("_per_s", "_per_second", 1.0), ("_ns", "_seconds", 1e-9),
             ("_seconds", "_seconds", 1.0), ("_s", "_seconds", 1.0), ("_bytes", "_bytes_per_second", 1.0),
             ("_bps", "_bytes_per_second", 1.0))
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_.:-]+")
_NOT_NAME = re.compile(r"[^a-z0-9_]+")


def identifier(value: object) -> str:
    """A label value without spaces or punctuation beyond . : - _ ("concurrency off · 100 vol" -> concurrency_off_100_vol)."""
    return _NOT_IDENTIFIER.sub("_", str(value)).strip("_") or "_"


def _name_part(text: str) -> str:
    return _NOT_NAME.sub("_", text.lower()).strip("_") or "value"


def measured_family(key: str) -> tuple[str, float]:
    """(family name, factor to its base unit) of a measured figure's key: iops -> io_operations_per_second."""
    if key in MEASURED_NAMES:
        return MEASURED_PREFIX + MEASURED_NAMES[key], 1.0
    for suffix, unit, factor in _SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return MEASURED_PREFIX + _name_part(key[:-len(suffix)]) + unit, factor
    return MEASURED_PREFIX + _name_part(key), 1.0


def measured_help(name: str) -> str:
    """The HELP of a measured family: from its name only, so every document pushes the same text for it (the
    Pushgateway refuses a push whose HELP differs from another group's for the same name)."""
    return "A figure the benchmark measured in a step (the result document's step metrics), median over ok " \
           "repetitions: %s." % name[len(MEASURED_PREFIX):]


def label_names(name: str) -> tuple[str, ...]:
    if name.startswith(MEASURED_PREFIX):
        return BASE_LABELS + STEP_LABELS
    return BASE_LABELS + FAMILIES[name][0]


@overload
def _median(spread: None) -> None:
    ...


@overload
def _median(spread: dict[str, Any]) -> float:
    ...


def _median(spread: dict[str, Any] | None) -> float | None:
    return None if not spread else spread.get("median")


def _measured(doc: dict[str, Any]) -> list[str]:
    """Names of the variants that hold measurements (not a seed's reference figures)."""
    return [v["name"] for v in doc.get("variants", []) if is_measured(v)]


def _speedup_samples(doc: dict[str, Any], base: dict[str, str], measured: list[str]) -> list[tuple[dict[str, str], float]]:
    """(labels, ratio) of every measured variant against its baseline (the first variant; in a sweep the
    first variant at the same size): the same pairs as the report's ratio columns."""
    variants = doc.get("variants", [])
    out: list[tuple[dict[str, str], float]] = []
    for i, j in enumerate(sweep.baselines(doc)):
        b, c = variants[j]["name"], variants[i]["name"]
        if i == j or b not in measured or c not in measured:
            continue
        sp = compare.speedups(doc, b, c)
        rows = [(r["step"], r["speedup"]) for r in sp["steps"]] + [(OVERALL_STEP, sp["overall"])]  # type: ignore[index]  # two variants
        out.extend((dict(base, step=identifier(step), baseline=identifier(b), variant=identifier(c)), ratio)
                   for step, ratio in rows if ratio is not None)
    return out


def _epoch(iso: str | None) -> float | None:
    try:
        return datetime.datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp() if iso else None
    except ValueError:
        return None


def _info(doc: dict[str, Any], base: dict[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The run_info labels: the run, its status and every version the document names, as <component>_version."""
    versions = {"kubernetes_version": (doc.get("cluster") or {}).get("version") or ""}
    for component, version in sorted((doc.get("components") or {}).items()):
        name = _name_part(component)
        # a label name starts with a letter or _ ("3par" would not), and __ is Prometheus' own
        versions.setdefault(("component_" if name[0].isdigit() else "") + name + "_version", version)
    labels = dict(base, run_id=identifier(doc["run_id"]), status=identifier(doc["status"]),
                  **{k: identifier(v) if v else "" for k, v in versions.items()})
    return tuple(k for k in labels if k not in base), labels


def _step_samples(doc: dict[str, Any], base: dict[str, str]) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The per-step families of the measured variants, by name, measured figures included."""
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    measured = _measured(doc)

    def add(name: str, labels: dict[str, str], value: float | None) -> None:
        if value is not None and all(lb != labels for lb, _ in samples.get(name, [])):  # two keys, one name: first
            samples.setdefault(name, []).append((labels, float(value)))

    for variant, steps in summaries(doc):
        if variant not in measured:
            continue
        for step, s in steps.items():
            labels = dict(base, variant=identifier(variant), step=identifier(step))
            add("storageperf_step_ok", labels, 1.0 if s["ok_runs"] == s["runs"] else 0.0)
            add("storageperf_step_duration_seconds", labels, _median(s.get("wall_s")))
            add("storageperf_step_objects_per_second", labels, _median(s.get("rate")))
            latency = s.get("latency") or {}
            for stat, name in LATENCY_FAMILIES.items():
                add(name, labels, _median(latency.get(stat)))
            for key, spread in sorted((s.get("metrics") or {}).items()):
                name, factor = measured_family(key)
                value = _median(spread)
                add(name, labels, None if value is None else value * factor)
    return samples


def families(doc: dict[str, Any], cluster: str) -> list[dict[str, Any]]:
    """The metric families of one result document measured on `cluster` (the inventory host name): every family of
    FAMILIES (empty ones too, so a push replaces a former run's figures) and the measured figures the document has."""
    base = {"cluster": identifier(cluster), "benchmark": identifier(doc["benchmark"])}
    samples = _step_samples(doc, base)
    samples["storageperf_speedup_ratio"] = _speedup_samples(doc, base, _measured(doc))
    info_labels, info = _info(doc, base)
    samples[INFO] = [(info, 1.0)]
    samples["storageperf_run_ok"] = [(dict(base), 1.0 if doc["status"] == "ok" else 0.0)]
    finished = _epoch(doc.get("finished"))
    samples["storageperf_run_finished_timestamp_seconds"] = [] if finished is None else [(dict(base), finished)]
    out = []
    for name in list(FAMILIES) + sorted(n for n in samples if n not in FAMILIES):
        labels = BASE_LABELS + info_labels if name == INFO else label_names(name)
        out.append({"name": name, "type": "gauge", "help": FAMILIES[name][1] if name in FAMILIES else measured_help(name),
                    "labels": labels, "samples": samples.get(name, [])})
    return out


def grouping_key(doc: dict[str, Any], cluster: object) -> dict[str, str]:
    """The Pushgateway grouping key (beside job=storageperf) of the document's push: the labels of its series."""
    return {"cluster": identifier(cluster), "benchmark": identifier(doc["benchmark"])}
