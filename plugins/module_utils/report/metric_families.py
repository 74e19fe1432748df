# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A result document as Prometheus metric families, as plain data (docs/results.md, "Metrics").

families(doc, cluster) is the one place a document becomes metrics: every benchmark kind goes through it,
and both the Pushgateway push and the metrics.prom text file (io floor, metrics_export.py) are written from
what it returns. Each family is {"name", "type": "gauge", "unit", "help", "samples": [(labels dict, value)]}.

Why these figures: storageperf_step_duration_seconds is the step's wall time (the seeds' own method: start the
clock, submit the batch, stop at the last object), the median over the repetitions whose step is ok, exactly the
figure of the report's tables; one series per (variant, step), so a PromQL query for a step returns one series per
cluster and variant. The per-object latency statistics go into their own family with a `stat` label rather
than into the duration family, so that summing or comparing durations never mixes a p99 with a wall time.
Variants of reference figures copied from a seed (settings.measured false, gluster) are not measurements and are
left out.
"""
from __future__ import annotations

from typing import Any, overload


from ansible_collections.storageperf.k8s.plugins.module_utils.report import compare
from ansible_collections.storageperf.k8s.plugins.module_utils.report import sweep
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import is_measured, summaries

PREFIX = "storageperf_"
JOB = "storageperf"
# the Pushgateway group of one push: one cluster's one benchmark (docs/results.md says why not the run id)
GROUPING_LABELS = ("cluster", "benchmark")
LATENCY_STATS = ("min", "p50", "p90", "p99", "max", "mean")
OVERALL_STEP = "overall"  # the speedup of the sum of step times, beside the per-step ones

FAMILIES = {  # name -> (unit, extra labels beyond cluster/benchmark/run_id, help)
    "storageperf_step_duration_seconds": (
        "seconds", ("variant", "step"),
        "Wall time of a benchmark step (whole batch), median over the repetitions whose step is ok."),
    "storageperf_step_rate": (
        "", ("variant", "step", "unit"),
        "Objects per second through a benchmark step (count / wall time), median over ok repetitions."),
    "storageperf_step_latency_seconds": (
        "seconds", ("variant", "step", "stat"),
        "Per-object latency of a benchmark step (stat: min, p50, p90, p99, max, mean), median over ok repetitions."),
    "storageperf_step_metric": (
        "", ("variant", "step", "metric"),
        "A measured figure of a step (metric: iops, bw_bytes, tps, handshake_s ...), median over ok repetitions."),
    "storageperf_step_ok": (
        "", ("variant", "step"), "1 when every repetition of the step was ok, else 0."),
    "storageperf_speedup": (
        "", ("step", "baseline", "variant"),
        "Throughput ratio of a variant against the document's baseline variant, per step "
        "(step=\"overall\": the sum of step times), as in the report's ratio column."),
    "storageperf_run_ok": ("", ("status",), "1 when the run's status is ok, else 0 (status: ok, failed, interrupted)."),
}
BASE_LABELS = ("cluster", "benchmark", "run_id")


def label_names(name: str) -> tuple[str, ...]:
    return BASE_LABELS + FAMILIES[name][1]


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


def _speedup_samples(doc: dict[str, Any], base: dict[str, Any], measured: list[str]) -> list[tuple[dict[str, Any], float]]:
    """(labels, ratio) of every measured variant against its baseline (the first variant; in a sweep the
    first variant at the same size): the same pairs as the report's ratio columns."""
    variants = doc.get("variants", [])
    out: list[tuple[dict[str, Any], float]] = []
    for i, j in enumerate(sweep.baselines(doc)):
        b, c = variants[j]["name"], variants[i]["name"]
        if i == j or b not in measured or c not in measured:
            continue
        sp = compare.speedups(doc, b, c)
        rows = [(r["step"], r["speedup"]) for r in sp["steps"]] + [(OVERALL_STEP, sp["overall"])]  # type: ignore[index]  # two variants
        out.extend((dict(base, step=step, baseline=b, variant=c), ratio) for step, ratio in rows if ratio is not None)
    return out


def families(doc: dict[str, Any], cluster: str) -> list[dict[str, Any]]:
    """The metric families of one result document measured on `cluster` (the inventory host name)."""
    base = {"cluster": str(cluster), "benchmark": doc["benchmark"], "run_id": doc["run_id"]}
    samples: dict[str, list[tuple[dict[str, Any], float]]] = {name: [] for name in FAMILIES}
    measured = _measured(doc)
    for variant, steps in summaries(doc):
        if variant not in measured:
            continue
        for step, s in steps.items():
            labels = dict(base, variant=variant, step=step)
            samples["storageperf_step_ok"].append((labels, 1.0 if s["ok_runs"] == s["runs"] else 0.0))
            if _median(s.get("wall_s")) is not None:
                samples["storageperf_step_duration_seconds"].append((labels, _median(s["wall_s"])))
            if _median(s.get("rate")) is not None:
                samples["storageperf_step_rate"].append((dict(labels, unit=s.get("unit") or "obj"),
                                                         _median(s["rate"])))
            latency = s.get("latency") or {}
            for stat in LATENCY_STATS:
                if _median(latency.get(stat)) is not None:
                    samples["storageperf_step_latency_seconds"].append((dict(labels, stat=stat),
                                                                        _median(latency[stat])))
            for key, spread in sorted((s.get("metrics") or {}).items()):
                if _median(spread) is not None:
                    samples["storageperf_step_metric"].append((dict(labels, metric=key), _median(spread)))
    samples["storageperf_speedup"] = _speedup_samples(doc, base, measured)
    samples["storageperf_run_ok"] = [(dict(base, status=doc["status"]), 1.0 if doc["status"] == "ok" else 0.0)]
    return [{"name": name, "type": "gauge", "unit": FAMILIES[name][0], "help": FAMILIES[name][2],
             "labels": label_names(name), "samples": [(labels, float(value)) for labels, value in samples[name]]}
            for name in FAMILIES]


def grouping_key(doc: dict[str, Any], cluster: object) -> dict[str, str]:
    """The Pushgateway grouping key (beside job=storageperf) of the document's push."""
    return {"cluster": str(cluster), "benchmark": doc["benchmark"]}
