"""Inputs refused before anything is written: volume sizes (Kubernetes quantity grammar), ACK cluster ids."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import cluster as ack_cluster
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunError
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.quantity import quantity_problem


@pytest.mark.parametrize("value", ["1Gi", "500Mi", "20G", "1.5Gi", "1e9", "100", ".5Gi", "2E3", "+1Ki", "1k"])
def test_kubernetes_quantities_pass(value):
    assert quantity_problem("size", value) is None


@pytest.mark.parametrize("value", ["abc", "", "1 Gi", "1GB", "1gi", "Gi", "1Gi;rm", "--1", "1..2Gi", "1e"])
def test_anything_else_names_the_field_and_gives_examples(value):
    problem = quantity_problem("size", value)
    assert problem.startswith("size ") and "not a Kubernetes quantity" in problem and "1Gi" in problem


@pytest.mark.parametrize("value", ["0", "0Gi", "-1Gi", "0.0"])
def test_sizes_must_be_positive(value):
    assert "must be larger than 0" in quantity_problem("size", value)


def test_both_benchmarks_refuse_a_bad_size_in_their_parameter_checks():
    assert any("size 'abc'" in p for p in csi_lifecycle.problems({"storage_class": "x", "size": "abc"}))
    assert any("size 'abc'" in p for p in attach_stress.problems({"size": "abc"}))
    assert csi_lifecycle.problems({"storage_class": "x", "size": "2Gi"}) == []
    assert attach_stress.problems({"size": "2Gi"}) == []


@pytest.mark.parametrize("cid", ["../../x;rm", "c1", "C0123456789abcdef0123456789abcdef", "c0123456789abcdef0123456789abcdeg",
                                 "c0123456789abcdef0123456789abcdef/../x", "", " c0123456789abcdef0123456789abcdef"])
def test_bad_ack_cluster_ids_are_refused_before_any_call(cid):
    problem = ack_cluster.cluster_id_problem(cid)
    assert "not an ACK cluster id" in problem and "32 lowercase hex" in problem

    class NoCalls:
        def cs(self, *a, **kw):  # pragma: no cover - reaching it is the failure
            raise AssertionError("an API call was made with cluster id %r" % cid)

    with pytest.raises(AliyunError) as err:
        ack_cluster.AckCluster(NoCalls(), cid).detail()
    assert err.value.code == "InvalidClusterId"


def test_a_real_ack_cluster_id_passes():
    assert ack_cluster.cluster_id_problem("c" + "0123456789abcdef" * 2) is None


def test_attach_stress_creates_only_the_seeds_class_unless_asked():
    assert attach_stress.Plan({}).create_missing_class
    assert attach_stress.Plan({"storage_class": "alibabacloud-disk"}).create_missing_class
    assert not attach_stress.Plan({"storage_class": "alicloud-disk-esd"}).create_missing_class
    assert attach_stress.Plan({"storage_class": "mine", "create_storage_class": True}).create_missing_class
