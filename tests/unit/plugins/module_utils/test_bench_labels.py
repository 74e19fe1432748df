"""bench/labels.py: run ids that are label values, and owner namespace names that Kubernetes accepts."""
from __future__ import annotations

import re

from hypothesis import given, strategies as st

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import new_run_id

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_generated_run_ids_are_valid_label_values():
    for bench in ("csi_lifecycle", "attach_stress"):
        assert L.run_id_problem(new_run_id(bench)) is None


def test_bad_run_ids_are_refused_with_the_fix():
    assert "at most 63" in L.run_id_problem("x" * 64)
    assert "at most 63" in L.run_id_problem("has space")
    assert L.run_id_problem("-run") is not None
    assert "empty" in L.run_id_problem("")


@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=40), st.integers(1, 20), st.integers(1, 99))
def test_owner_namespace_is_always_a_valid_namespace_name(run_id, benchmark, variant, rep):
    ns = L.owner_namespace(run_id, benchmark, variant, rep)
    assert len(ns) <= 63 and DNS1123.match(ns), ns


def test_owner_namespaces_differ_per_run_variant_and_repetition():
    names = {L.owner_namespace(r, "csi_lifecycle", v, k) for r in ("a", "b") for v in (1, 2) for k in (1, 2)}
    assert len(names) == 8


def test_selector_of_one_run_and_of_all_runs():
    assert L.run_selector("abc") == "storageperf.k8s/run-id=abc"
    assert L.run_selector(None) == "storageperf.k8s/run-id"
    assert L.run_labels("abc", "csi_lifecycle") == {"storageperf.k8s/run-id": "abc",
                                                    "storageperf.k8s/benchmark": "csi_lifecycle"}
    assert L.label_value("concurrency on") == "concurrency-on"
