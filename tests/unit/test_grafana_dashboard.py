"""extensions/grafana/storageperf.json: every PromQL expression of the dashboard (panels and template variables)
names only metrics that metric_families.py exports, and every exported family is shown somewhere."""
from __future__ import annotations

import json
import re
from pathlib import Path

from ansible_collections.storageperf.k8s.plugins.module_utils.report.metric_families import FAMILIES, label_names

DASHBOARD = Path(__file__).resolve().parents[2] / "extensions" / "grafana" / "storageperf.json"
METRIC = re.compile(r"\bstorageperf_[a-z0-9_]+")


def expressions(dash):
    for panel in dash["panels"]:
        for target in panel["targets"]:
            yield panel["title"], target["expr"]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            yield "variable " + var["name"], var["query"]["query"]


def test_every_expression_names_only_exported_metrics_and_their_labels():
    dash = json.loads(DASHBOARD.read_text())
    shown = set()
    for where, expr in expressions(dash):
        names = set(METRIC.findall(expr))
        assert names, f"{where}: {expr!r} names no storageperf metric"
        assert names <= set(FAMILIES), f"{where}: {sorted(names - set(FAMILIES))} are not exported"
        shown |= names
        # label matchers {label=~...} and by (label) name labels every named metric carries
        labels = set(re.findall(r"([a-z_]+)\s*=~?", expr)) | set(re.findall(r"by \(([a-z_]+)\)", expr))
        for name in names:
            assert labels <= set(label_names(name)), f"{where}: {name} has no label {sorted(labels - set(label_names(name)))}"
    assert shown == set(FAMILIES), f"exported but not on the dashboard: {sorted(set(FAMILIES) - shown)}"
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])
