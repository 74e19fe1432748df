"""extensions/grafana/storageperf.json: every PromQL expression of the dashboard (panels and template variables)
names only metrics that metric_families.py exports, with labels they carry, every exported family is shown
somewhere, a panel's unit is the one its metrics' suffix names, and a legend names only labels its query keeps.
(tests/functional/test_metrics_prometheus.py runs every panel's query against a real Prometheus.)"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ansible_collections.storageperf.k8s.plugins.module_utils.report import metric_families as MF
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import METRICS

DASHBOARD = Path(__file__).resolve().parents[2] / "extensions" / "grafana" / "storageperf.json"
METRIC = re.compile(r"\bstorageperf_[a-z0-9_]+")
LABEL_LIST = re.compile(r"\b(?:by|without|on|group_left)\s*\(([a-z_, ]*)\)")
# the Grafana unit of a family, by its name's suffix (the naming guide's one unit per metric)
UNITS = (("_timestamp_seconds", "dateTimeAsIso"), ("_seconds", "s"), ("_bytes_per_second", "Bps"),
         ("_per_second", "ops"), ("_ratio", "x"))


def exported():
    """Every family a document can give whose name is known in advance: the fixed ones and the measured figures
    of the keys metrics.py registers."""
    return set(MF.FAMILIES) | {MF.measured_family(key)[0] for key in METRICS}


def expressions(dash):
    for panel in dash["panels"]:
        for target in panel["targets"]:
            yield panel["title"], target["expr"]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            yield "variable " + var["name"], var["query"]["query"]


def unit_of(name):
    return next((unit for suffix, unit in UNITS if name.endswith(suffix)), "none")


def kept_labels(expr):
    """The labels a query's result series carry: an aggregation's `by` list, else the metrics' own (and __name__
    while no operator drops it) with a join's group_left labels."""
    aggregation = re.match(r"\s*\w+ by \(([a-z_, ]*)\)", expr)
    if aggregation:
        return {label.strip() for label in aggregation.group(1).split(",")}
    labels = set.intersection(*(set(MF.label_names(n)) for n in METRIC.findall(expr)))
    joined = re.search(r"group_left \(([a-z_, ]*)\)", expr)
    if joined:
        labels |= {label.strip() for label in joined.group(1).split(",")}
    return labels if re.search(r"[-*/+]\s|\bon \(", expr) else labels | {"__name__"}


def test_every_expression_names_only_exported_metrics_and_their_labels():
    dash = json.loads(DASHBOARD.read_text())
    shown = set()
    for where, expr in expressions(dash):
        names = set(METRIC.findall(expr))
        assert names, f"{where}: {expr!r} names no storageperf metric"
        assert names <= exported(), f"{where}: {sorted(names - exported())} are not exported"
        shown |= names
        # label matchers {label=~...} and by/without/on/group_left (label, ...) name labels every named metric carries
        labels = set(re.findall(r"([a-z_]+)\s*=~?", expr))
        labels |= {label.strip() for found in LABEL_LIST.findall(expr) for label in found.split(",")}
        for name in names:
            assert labels <= set(MF.label_names(name)) | set(MF.INFO_LABELS), \
                f"{where}: {name} has no label {sorted(labels - set(MF.label_names(name)))}"
    assert shown == exported(), f"exported but not on the dashboard: {sorted(exported() - shown)}"
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


def test_a_time_series_panel_shows_one_unit_and_its_legends_name_labels_its_queries_keep():
    dash = json.loads(DASHBOARD.read_text())
    for panel in dash["panels"]:
        if panel["type"] != "timeseries":
            continue
        units = {unit_of(n) for t in panel["targets"] for n in METRIC.findall(t["expr"])
                 if n not in (MF.INFO, "storageperf_step_ok", "storageperf_run_ok")}  # a join, a 0/1 flag counted
        assert units <= {panel["fieldConfig"]["defaults"]["unit"]}, f"{panel['title']}: {units} under one axis"
        for target in panel["targets"]:
            legend = set(re.findall(r"\{\{(\w+)\}\}", target["legendFormat"]))
            assert legend <= kept_labels(target["expr"]), \
                f"{panel['title']}: legend {sorted(legend - kept_labels(target['expr']))} is empty for {target['expr']}"


def test_a_latest_run_table_shows_the_run_id_from_the_info_series():
    dash = json.loads(DASHBOARD.read_text())
    [table] = [p for p in dash["panels"] if p["type"] == "table"]
    exprs = [t["expr"] for t in table["targets"]]
    assert any(e.startswith(MF.INFO) for e in exprs)
    assert all(t.get("instant") and t.get("format") == "table" for t in table["targets"])
    assert table["transformations"][0]["id"] == "merge"
