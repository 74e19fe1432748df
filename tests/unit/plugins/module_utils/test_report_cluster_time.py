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


def _twin(doc, scale=0.01):
    """The document as a twin at this scale measures it: walls scaled, cluster.time_scale recorded."""
    doc["cluster"]["time_scale"] = scale
    for v in doc["variants"]:
        for r in v["runs"]:
            for s in r["steps"]:
                if s.get("wall_s") is not None:
                    s["wall_s"] *= scale * 1.1  # 10 % slower than the seed
        v.pop("summary", None)
    return doc


def test_a_step_has_the_seeds_figure_only_where_the_run_repeats_the_seeds_experiment():
    from ansible_collections.storageperf.k8s.plugins.module_utils.report.seed_figures import seed_figure
    from tests.support import report_samples as sample

    doc = sample.csi_lifecycle(volumes=100, with_objects=False)  # ontap-nas, 100 volumes, concurrency off / on
    off, on = doc["variants"]
    assert seed_figure(doc, off, "create_volume")["seconds"] == 417
    assert seed_figure(doc, on, "create_volume") == {
        "seconds": 41.0, "seed": "002", "text": "seed 002, ontap-nas, 100 volumes, concurrency on"}
    # attribution's "concurrency only" left the snapshot-controller at its defaults: not the seed's ON for snapshots
    only = {"name": "concurrency only", "settings": {"enableConcurrency": True, "snapshotController": "upstream defaults"}}
    assert seed_figure(doc, only, "create_snapshot") is None and seed_figure(doc, only, "create_volume")["seconds"] == 41
    assert seed_figure(doc, {"name": "as configured", "settings": {}}, "create_volume") is None
    doc["parameters"]["volumes"] = 50  # the seed has tables for 100 and 1000 volumes only
    assert seed_figure(doc, off, "create_volume") is None
    doc["parameters"].update(volumes=1000, storage_class="ontap-san-economy")
    assert seed_figure(doc, off, "delete_volume")["seconds"] == 2815 and seed_figure(doc, off, "create_snapshot") is None

    attach = {"benchmark": "attach_stress", "parameters": {"replicas": 28, "volumes_per_pod": 2}}
    assert seed_figure(attach, {"settings": {"DiskParallelAttach": False}}, "scale_up")["seconds"] == 199
    assert seed_figure(attach, {"settings": {"DiskParallelAttach": True}}, "scale_up")["seconds"] == 37
    assert seed_figure(attach, {"settings": {"DiskADController": True, "DiskParallelAttach": False}}, "scale_up") is None
    assert seed_figure(attach, {"settings": {"DiskParallelAttach": True}}, "scale_down") is None
    attach["parameters"]["replicas"] = 12
    assert seed_figure(attach, {"settings": {"DiskParallelAttach": True}}, "scale_up") is None


def test_the_cluster_time_table_sets_the_seeds_figure_and_ours_over_it_beside_each_step():
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import tables as T
    from tests.support import report_samples as sample

    table = T.cluster_time_table(_twin(sample.csi_lifecycle(volumes=100, with_objects=False)))
    assert table["headers"][:4] == ["Operation", "concurrency off · cluster time", "concurrency off · seed 002",
                                    "ours ÷ seed"]
    create = [c["text"] for c in table["rows"][0]]
    assert create == ["Create Volume", "7m 39s", "6m 57s", "1.10", "45s", "41s", "1.10"]
    assert [c["text"] for c in table["rows"][-1]][2:4] == ["28m 35s", "1.10"]  # the seed's sum of step times
    assert "ours ÷ seed near 1.00" in table["note"]
    # a run that is not the seed's experiment has cluster time and no seed columns
    doc = _twin(sample.csi_lifecycle(volumes=100, with_objects=False))
    doc["parameters"]["storage_class"] = "gold"
    assert T.cluster_time_table(doc)["headers"] == ["Operation", "concurrency off · cluster time",
                                                    "concurrency on · cluster time"]


def test_fleet_and_history_show_cluster_time_for_twins_and_none_for_a_real_cluster(tmp_path):
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H
    from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR
    from tests.support import report_samples as sample

    real = sample.csi_lifecycle(volumes=100, with_objects=False)
    twin = _twin(sample.csi_lifecycle(volumes=100, with_objects=False), 0.02)
    fleet = F.build_fleet([{"cluster": "prod", "document": real}, {"cluster": "twin-1", "document": twin}], "f")
    assert "time_scale" not in fleet["clusters"][0] and fleet["clusters"][1]["time_scale"] == 0.02
    table = FR.cluster_time_table(fleet)
    assert table["headers"][2:5] == ["concurrency off · cluster time", "concurrency off · seed", "ours ÷ seed"]
    assert [c["text"] for c in table["rows"][0]][:5] == ["twin-1 · time scale 0.02", "Create Volume", "7m 39s",
                                                         "6m 57s", "1.10"]
    assert len(table["rows"]) == 9  # the twin's 8 steps and their sum; the real cluster has no cluster time
    assert [c["text"] for c in table["rows"][-1]][1:5] == ["Sum of step times", "31m 27s", "28m 35s", "1.10"]
    assert "Step times in cluster time" in FR.to_markdown(fleet)
    real_only = F.build_fleet([{"cluster": "prod", "document": real}], "f")
    assert FR.cluster_time_table(real_only) is None and "cluster time" not in FR.to_markdown(real_only)

    D.write_atomic(real, str(tmp_path / "prod"))
    D.write_atomic(twin, str(tmp_path / "twin-1"))
    history = H.build_history(H.find_results(str(tmp_path)))
    by_cluster = {(s["cluster"], s["variant"]): s for s in history["series"]}
    assert HR.cluster_time_table(by_cluster[("prod", "concurrency off")]) is None
    table = HR.cluster_time_table(by_cluster[("twin-1", "concurrency off")])
    assert table["headers"][:3] == ["Run", "Time scale", "Create Volume · cluster time"]
    assert [c["text"] for c in table["rows"][0]][1:3] == ["0.02", "7m 39s (1.10)"]
    assert [c["text"] for c in table["rows"][-1]][:3] == ["seed (field report)", "", "6m 57s"]
    assert ("twin-1 · csi_lifecycle · concurrency off · 100 volumes · enableConcurrency False, storage_class ontap-nas"
            " · cluster time") in HR.to_markdown(history)
