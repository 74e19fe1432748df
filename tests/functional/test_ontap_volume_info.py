"""ontap_volume_info against the twin's ONTAP (REST, and ZAPI through netapp-lib) and the PVs its Trident made.

The ONTAP endpoint comes from inventories/twin/group_vars/all/ontap.yml (the twin's cloud.json) and the user and
password from the environment (the twin's DIR/env, ONTAP_USERNAME / ONTAP_PASSWORD), as a user's playbook would get
them. What ONTAP lists must match the PVs' internal names exactly, and be empty after cleanup.
"""
from __future__ import annotations

import yaml
from kubernetes import client

from tests.support.waits import watch_until
from tests.twin.storage_helpers import admin

NS = "ontap-check"
CLAIMS = {"nas": ("ontap-nas", 3), "naseco": ("ontap-nas-economy", 2), "saneco": ("ontap-san-economy", 2),
          "san": ("ontap-san", 1)}
CONNECTION = {"hostname": "{{ ontap_hostname }}", "ca_cert": "{{ ontap_ca_cert }}", "svm": "{{ ontap_svm }}"}


def trident_pvs(core):
    return [pv for pv in core.list_persistent_volume().items
            if pv.spec.csi and pv.spec.csi.driver == "csi.trident.netapp.io"]


def info_task(title, register, ignore_errors=False, **params):
    t = {"name": title, "storageperf.k8s.ontap_volume_info": dict(CONNECTION, **params), "register": register}
    if ignore_errors:
        t["ignore_errors"] = True
    return t


def write_play(path, tasks):
    path.write_text(yaml.safe_dump([{"name": "ONTAP check", "hosts": "localhost", "gather_facts": False,
                                     "tasks": tasks}], sort_keys=False))
    return path


def task_result(run, name):
    """The result of the task named exactly `name`, with `failed` from the recorded status (not in the result)."""
    rec = next(r for r in reversed(run.results) if r["task"] == name)
    return dict(rec["result"], failed=rec["status"] == "failed")


def test_ontap_listing_matches_pvs_over_rest_and_zapi_and_is_empty_after_cleanup(twin, tmp_path):
    core = client.CoreV1Api(twin.api_client())
    core.create_namespace({"metadata": {"name": NS}})
    for short, (sc, count) in CLAIMS.items():
        for i in range(count):
            core.create_namespaced_persistent_volume_claim(NS, {
                "metadata": {"name": f"{short}-{i}"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                         "resources": {"requests": {"storage": "1Gi"}}}})
    total = sum(c for _, c in CLAIMS.values())
    watch_until(core.list_namespaced_persistent_volume_claim, lambda pvcs: sum(p.status.phase == "Bound" for p in pvcs)
                == total, "PVCs bound", NS)
    pvs = trident_pvs(core)
    names = sorted(pv.spec.csi.volume_attributes["internalName"] for pv in pvs)
    by_class = {pv.spec.storage_class_name: pv.spec.csi.volume_attributes["internalName"] for pv in pvs}

    def of_class(sc):
        return sorted(pv.spec.csi.volume_attributes["internalName"] for pv in pvs if pv.spec.storage_class_name == sc)

    password = twin.cloud["ontap"]["password"]

    run = twin.playbook(write_play(tmp_path / "with_pvs.yml", [
        info_task("REST", "rest", expected=names),
        info_task("ZAPI", "zapi", use_rest="never", expected=names, page_size=3),
        info_task("REST by PV name, one PV forgotten", "partial",
                  expected=[pv.metadata.name for pv in pvs if pv.spec.csi.volume_attributes["internalName"]
                            != by_class["ontap-nas"]]),
        info_task("REST in pages of two", "paged", page_size=2),
        info_task("Wrong password", "wrong", True, password="not-the-password"),
        info_task("Wrong password over ZAPI", "wrong_zapi", True, password="not-the-password", use_rest="never"),
    ]))
    assert run.rc == 0, run.stdout + run.stderr

    def result(name):
        return task_result(run, name)

    rest, zapi = result("REST"), result("ZAPI")
    assert rest["api"] == "rest" and zapi["api"] == "zapi"
    for res in (rest, zapi):
        assert res["internal_names"] == names
        assert res["leaked"] == [] and res["missing"] == [] and res["empty_pools"] == []
        assert res["ontap_version"].startswith("NetApp Release 9.18.1")
        kinds = sorted(v["kind"] for v in res["volumes"])
        # one FlexVol per ontap-nas / ontap-san PV; one pool FlexVol each for the qtrees and the LUNs
        assert kinds == ["lun_pool", "qtree_pool"] + ["volume"] * 4, kinds
        assert res["count"] == 6
        assert sorted(q["name"] for q in res["qtrees"]) == of_class("ontap-nas-economy")
        assert sorted(lun["name"] for lun in res["luns"]) == of_class("ontap-san-economy")
        assert all(lun["path"] == f"/vol/{lun['volume']}/{lun['name']}" for lun in res["luns"])
        assert all(v["svm"] == "svm0" and v["state"] == "online" for v in res["volumes"])
    assert [(v["name"], v["size"]) for v in rest["volumes"]] == [(v["name"], v["size"]) for v in zapi["volumes"]]
    assert zapi["requests"] >= 1 + 3  # version + volumes in pages of 3 (6 volumes) + qtrees + LUNs
    # the ZAPI session asked ONTAP's ONTAPI version first (at 1.0), then spoke 1.170 (9.18.1 serves 1.281; the
    # collection caps at what it was written for); the wrong-password run never got past authentication
    calls = admin(twin, "ontap")["zapi_calls"]
    assert calls[0] == ["system-get-ontapi-version", "1.0"], calls
    assert {tuple(c) for c in calls[1:]} >= {("system-get-version", "1.170"), ("volume-get-iter", "1.170")}, calls
    assert all(version == "1.170" for _, version in calls[1:]) and len(calls) == zapi["requests"], calls

    partial = result("REST by PV name, one PV forgotten")
    assert [(x["name"], x["kind"]) for x in partial["leaked"]] == [(by_class["ontap-nas"], "volume")]
    paged = result("REST in pages of two")
    assert paged["internal_names"] == names and paged["requests"] >= 1 + 3  # 6 volumes in pages of 2

    for name in ("Wrong password", "Wrong password over ZAPI"):
        res = result(name)
        assert res["failed"] and "rejected the credentials (401 Unauthorized)" in res["msg"]
    assert password not in run.stdout + run.stderr
    assert "not-the-password" not in run.stdout + run.stderr

    # cleanup: delete the claims; Trident deletes the volumes, qtrees, LUNs and the emptied pools
    core.delete_namespace(NS)

    def no_trident_pvs(pvs):
        return not [pv for pv in pvs if pv.spec.csi and pv.spec.csi.driver == "csi.trident.netapp.io"]

    watch_until(core.list_persistent_volume, no_trident_pvs, "Trident PVs deleted")
    after = twin.playbook(write_play(tmp_path / "after_cleanup.yml", [
        info_task("REST after cleanup", "rest_after", expected=[]),
        info_task("ZAPI after cleanup", "zapi_after", use_rest="never", expected=[]),
    ]))
    assert after.rc == 0, after.stdout + after.stderr
    for name in ("REST after cleanup", "ZAPI after cleanup"):
        res = task_result(after, name)
        assert res["volumes"] == [] and res["count"] == 0 and res["qtrees"] == [] and res["luns"] == []
        assert res["leaked"] == [] and res["internal_names"] == []
