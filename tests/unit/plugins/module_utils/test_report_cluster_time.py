"""Cluster time: the time scale a simulator publishes, read by bench/runner.py, and the report's table of it."""
from __future__ import annotations


class FakeClient:
    def __init__(self, cm):
        self.cm = cm

    def get(self, api_version, kind, name, namespace=None, missing_ok=False):
        assert (kind, namespace, name, missing_ok) == ("ConfigMap", "kube-public", "cluster-time-scale", True)
        return self.cm


def test_time_scale_is_read_from_the_clusters_configmap_and_absent_on_a_real_cluster():
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench import runner

    assert runner.time_scale(FakeClient({"data": {"timeScale": "0.01"}})) == 0.01
    assert runner.time_scale(FakeClient(None)) is None
    assert runner.time_scale(FakeClient({"data": {"timeScale": "fast"}})) is None


def test_cluster_time_table_divides_wall_by_the_scale_and_is_absent_without_one():
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
    from tests.support import report_samples as sample

    doc = sample.csi_lifecycle(volumes=100, with_objects=False)
    assert T.cluster_time_table(doc) is None
    doc["cluster"]["time_scale"] = 0.1
    table = T.cluster_time_table(doc)
    assert table["headers"][1] == "concurrency off · cluster time"
    assert table["rows"][0][1]["text"] == "1h 09m 30s"  # 417 s of wall at 0.1
    assert "cluster time = wall time ÷ 0.1" in table["note"]
