"""Bad inputs are refused with a message naming the field, before anything is written to the cluster."""
from __future__ import annotations

from tests.support.alibaba import cloud_calls, run_module
from tests.support.twin import REPO

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"
ATTACH = REPO / "playbooks" / "bench_attach_stress.yml"
TUNE = REPO / "playbooks" / "tune_trident.yml"
RUN_LABEL = "storageperf.k8s/run-id"


def labelled(twin):
    """Every object carrying the run-id label, of the kinds a benchmark creates."""
    out = {}
    for kind in ("namespaces", "pvc", "pods", "leases", "statefulsets"):
        items = twin.kubectl_json("get", kind, "-A", "-l", RUN_LABEL)["items"]
        if items:
            out[kind] = [i["metadata"]["name"] for i in items]
    classes = twin.kubectl_json("get", "storageclasses", "-l", RUN_LABEL)["items"]
    if classes:
        out["storageclasses"] = [c["metadata"]["name"] for c in classes]
    return out


def namespaces(twin):
    return sorted(n["metadata"]["name"] for n in twin.kubectl_json("get", "namespaces")["items"])


def failure_message(run):
    failed = [r for r in run.results if r["status"] == "failed"]
    assert failed, run.stdout[-3000:]
    r = failed[-1]["result"]
    return (r.get("msg") or "") + " " + " ".join(r.get("argument_errors") or [])


def test_a_size_that_is_not_a_quantity_creates_nothing(twin, tmp_path):
    before = namespaces(twin)
    run = twin.playbook(LIFECYCLE, extra_vars={"volumes": 4, "size": "abc", "reports_dir": str(tmp_path)})
    assert run.rc != 0
    msg = failure_message(run)
    assert "size 'abc' is not a Kubernetes quantity" in msg and "1Gi" in msg
    assert namespaces(twin) == before and labelled(twin) == {}


def test_volumes_eight_fails_naming_volumes_instead_of_becoming_0(twin, tmp_path):
    before = namespaces(twin)
    run = twin.playbook(LIFECYCLE, extra_vars={"volumes": "eight", "reports_dir": str(tmp_path)})
    assert run.rc != 0
    msg = failure_message(run)
    assert "bench_csi_lifecycle_volumes" in msg and "eight" in msg and "int" in msg
    assert "at least 1" not in msg
    assert namespaces(twin) == before and labelled(twin) == {}


def test_kube_api_qps_abc_fails_naming_it_before_any_change(twin):
    run = twin.playbook(TUNE, extra_vars={"kube_api_qps": "abc"})
    assert run.rc != 0
    assert "kube_api_qps" in failure_message(run) and "float" in failure_message(run)
    assert run.changed_tasks == []
    assert not any("Preflight Trident" in r["task"] for r in run.results)


def test_a_storage_class_typo_is_refused_listing_the_classes_that_exist(twin, tmp_path):
    run = twin.playbook(ATTACH, extra_vars={"storage_class": "alicloud-disk-esd", "replicas": 2,
                                            "reports_dir": str(tmp_path)})
    assert run.rc != 0
    msg = failure_message(run)
    assert "storage_class alicloud-disk-esd does not exist" in msg
    assert "alicloud-disk-essd" in msg and "create_storage_class" in msg
    assert twin.kubectl("get", "storageclass", "alicloud-disk-esd", check=False).returncode != 0
    assert labelled(twin) == {}


def test_a_bad_ack_cluster_id_fails_naming_the_format_without_an_api_call(twin):
    calls = cloud_calls(twin)
    run = run_module(twin, "ack_cluster_info", {"cluster_id": "../../x;rm"})
    assert run.rc != 0
    msg = failure_message(run)
    assert "not an ACK cluster id" in msg and "'c' followed by 32 lowercase hex digits" in msg
    assert cloud_calls(twin) == calls


# maxima (plugins/module_utils/common/limits.py, docs/limits.md) -----------------------------------------
def test_a_hundred_million_volumes_fail_naming_volumes_and_its_maximum_with_nothing_created(twin, tmp_path):
    # it used to build every object name first and was still growing after 120 s: the guard below is that hang
    before = namespaces(twin)
    run = twin.playbook(LIFECYCLE, extra_vars={"volumes": 100000000, "reports_dir": str(tmp_path)}, timeout=120)
    assert run.rc != 0
    msg = failure_message(run)
    assert "bench_csi_lifecycle_volumes=100000000 is above its maximum 5000" in msg and "give at most 5000" in msg
    assert namespaces(twin) == before and labelled(twin) == {}
    assert not list(tmp_path.rglob("result.json"))


def test_the_module_refuses_a_count_above_its_maximum_before_reading_the_cluster(twin, tmp_path):
    run = run_module(twin, "bench_plan", {"attach_stress": {"replicas": 1000}, "reports_dir": str(tmp_path)})
    assert run.rc != 0
    msg = failure_message(run)
    assert "replicas=1000 is above its maximum 64" in msg and "disk" in msg
    assert not list(tmp_path.rglob("result.json")) and labelled(twin) == {}


def test_repeat_and_a_sweep_size_above_their_maxima_are_named_together(twin, tmp_path):
    before = namespaces(twin)
    run = twin.playbook(LIFECYCLE, extra_vars={"repeat": 1000, "sweep": "10,100000", "reports_dir": str(tmp_path)},
                        timeout=120)
    assert run.rc != 0
    msg = failure_message(run)
    assert "bench_csi_lifecycle_repeat=1000 is above its maximum 20" in msg
    assert "bench_csi_lifecycle_sweep entry=100000 is above its maximum 5000" in msg
    assert namespaces(twin) == before and labelled(twin) == {}


def test_an_attach_stress_disk_larger_than_a_cloud_disk_is_refused(twin, tmp_path):
    run = twin.playbook(ATTACH, extra_vars={"bench_attach_stress_size": "100Ti", "replicas": 2, "reports_dir": str(tmp_path)},
                        timeout=120)
    assert run.rc != 0
    assert "bench_attach_stress_size=100Ti is above its maximum 64Ti" in failure_message(run)
    assert labelled(twin) == {}


def test_tune_trident_refuses_a_qps_above_its_maximum_before_any_change(twin):
    run = twin.playbook(TUNE, extra_vars={"kube_api_qps": 1e9})
    assert run.rc != 0
    assert "snapshot_controller_tuning_kube_api_qps=1000000000.0 is above its maximum 5000" in failure_message(run)
    assert run.changed_tasks == []
    assert not any("Preflight Trident" in r["task"] for r in run.results)
