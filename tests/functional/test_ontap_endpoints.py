"""The twin's ONTAP management LIF, spoken to by plain HTTP (REST) and by netapp-lib's own ZAPI iterator.

These pin the API shapes ontap_volume_info relies on (query patterns, `fields`, `max_records` + `_links.next`,
401 and 400 error documents, ZAPI next-tag paging, errno 13005, the ONTAPI version check with errno 13010)
without going through the collection.
"""
from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client
from netapp_lib.api.zapi import zapi

from tests.support.waits import watch_until

CLAIMS = [("ontap-nas", 5), ("ontap-nas-economy", 2)]


@pytest.fixture
def ontap(twin):
    core = client.CoreV1Api(twin.api_client())
    core.create_namespace({"metadata": {"name": "lif"}})
    for sc, count in CLAIMS:
        for i in range(count):
            core.create_namespaced_persistent_volume_claim("lif", {
                "metadata": {"name": f"{sc}-{i}"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                         "resources": {"requests": {"storage": "2Gi"}}}})
    watch_until(core.list_namespaced_persistent_volume_claim, lambda pvcs: sum(p.status.phase == "Bound" for p in pvcs)
                == 7, "PVCs bound", "lif")
    cfg = twin.cloud["ontap"]
    pvs = [pv for pv in core.list_persistent_volume().items if pv.spec.csi.driver == "csi.trident.netapp.io"]
    return cfg, {pv.spec.storage_class_name + "/" + pv.spec.csi.volume_attributes["internalName"] for pv in pvs}


def get(cfg, path, password=None):
    ctx = ssl.create_default_context(cafile=cfg["ca_cert"])
    auth = base64.b64encode(f"{cfg['username']}:{password or cfg['password']}".encode()).decode()
    req = urllib.request.Request(cfg["url"] + path, headers={"Authorization": "Basic " + auth,
                                                             "Accept": "application/hal+json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.loads(r.read())


def test_rest_filters_fields_and_pages(ontap):
    cfg, pvs = ontap
    nas = sorted(n.split("/")[1] for n in pvs if n.startswith("ontap-nas/"))
    doc = get(cfg, "/api/storage/volumes?name=trident_pvc_*&fields=size,svm.name")
    assert doc["num_records"] == 5 and sorted(r["name"] for r in doc["records"]) == nas
    rec = doc["records"][0]
    assert set(rec) == {"uuid", "name", "size", "svm", "_links"} and set(rec["svm"]) == {"name"}
    assert rec["size"] == 2 * 1024**3 and rec["svm"]["name"] == cfg["svm"]
    pools = get(cfg, "/api/storage/volumes?name=trident_qtree_pool_*|trident_lun_pool_*")["records"]
    assert len(pools) == 1 and pools[0]["name"].startswith("trident_qtree_pool_")
    assert get(cfg, f"/api/storage/volumes?name=trident_*&name=!{nas[0]}")["num_records"] == 5  # 4 FlexVols + pool
    qtrees = get(cfg, "/api/storage/qtrees?name=trident_*&fields=volume.name")["records"]
    assert sorted(q["name"] for q in qtrees) == sorted(n.split("/")[1] for n in pvs if n.startswith("ontap-nas-economy/"))
    assert {q["volume"]["name"] for q in qtrees} == {pools[0]["name"]}

    # pages of two through _links.next: every record exactly once, and no next link on the last page
    seen, href, pages = [], "/api/storage/volumes?name=trident_*&max_records=2", 0
    while href:
        page = get(cfg, href)
        assert page["num_records"] == len(page["records"]) <= 2
        seen += [r["name"] for r in page["records"]]
        href = page["_links"].get("next", {}).get("href")
        pages += 1
    assert pages == 3 and sorted(seen) == sorted(nas + [pools[0]["name"]])


def test_rest_errors_are_ontap_documents(ontap):
    cfg, _ = ontap
    with pytest.raises(urllib.error.HTTPError) as e:
        get(cfg, "/api/storage/volumes", password="wrong")
    assert e.value.code == 401 and e.value.headers["WWW-Authenticate"].startswith("Basic")
    with pytest.raises(urllib.error.HTTPError) as e:
        get(cfg, "/api/storage/volumes?colour=blue")
    assert e.value.code == 400
    assert json.loads(e.value.read())["error"] == {"message": 'Unexpected argument "colour".', "code": "262179",
                                                   "target": "colour"}


def test_zapi_through_netapp_lib(ontap, monkeypatch):
    cfg, pvs = ontap
    monkeypatch.setenv("SSL_CERT_FILE", cfg["ca_cert"])  # netapp-lib's opener verifies with the default CA store
    host, port = cfg["management_lif"].split(":")
    server = zapi.NaServer(host, username=cfg["username"], password=cfg["password"], transport_type="https", port=port)
    server.set_api_version(1, 170)
    assert server.invoke_successfully(zapi.NaElement("system-get-version"), True) \
        .get_child_content("version").startswith("NetApp Release 9.18.1")
    # netapp-lib's own iterator pages with max-records 50; ask for all volumes of the SVM in one query
    names = []
    for result in zapi.invoke_api(server, "volume-get-iter", is_iter=True,
                                  query={"volume-attributes": {"volume-id-attributes": {"name": "trident_*"}}},
                                  des_result={"volume-attributes": {"volume-id-attributes": {"name": None}}}):
        attrs = result.get_child_by_name("attributes-list")
        for v in attrs.get_children() if attrs is not None else []:
            idattrs = v.get_child_by_name("volume-id-attributes")
            # desired-attributes honoured (tags carry ONTAP's XML namespace)
            assert [c.get_name().rsplit("}", 1)[-1] for c in idattrs.get_children()] == ["name"]
            assert v.get_child_by_name("volume-space-attributes") is None
            names.append(idattrs.get_child_content("name"))
    assert len(names) == 6 and {n for n in names if n.startswith("trident_pvc_")} == {
        n.split("/")[1] for n in pvs if n.startswith("ontap-nas/")}

    # next-tag paging by hand, one record per call
    el = zapi.NaElement("volume-get-iter")
    el.add_new_child("max-records", "1")
    first = server.invoke_successfully(el, True)
    tag = first.get_child_content("next-tag")
    assert first.get_child_content("num-records") == "1" and "<volume-get-iter-key-td>" in tag
    el = zapi.NaElement("volume-get-iter")
    el.add_new_child("max-records", "10")
    el.add_new_child("tag", tag, True)
    rest = server.invoke_successfully(el, True)
    assert rest.get_child_content("num-records") == "5" and rest.get_child_content("next-tag") is None

    with pytest.raises(zapi.NaApiError) as e:
        server.invoke_successfully(zapi.NaElement("snapmirror-get-iter"), True)
    assert e.value.code == "13005"
    bad = zapi.NaServer(host, username=cfg["username"], password="wrong", transport_type="https", port=port)
    with pytest.raises(zapi.NaApiError) as e:
        bad.invoke_successfully(zapi.NaElement("system-get-version"), True)
    assert str(e.value.code) == "401"


def test_zapi_refuses_a_version_above_the_release(twin, monkeypatch):
    """9.18.1 serves ONTAPI 1.281: netapp-lib asking 1.290 gets ONTAP's errno 13010; the version probe still answers."""
    cfg = twin.cloud["ontap"]
    monkeypatch.setenv("SSL_CERT_FILE", cfg["ca_cert"])
    host, port = cfg["management_lif"].split(":")
    server = zapi.NaServer(host, username=cfg["username"], password=cfg["password"], transport_type="https", port=port)
    server.set_api_version(1, 0)
    probe = server.invoke_successfully(zapi.NaElement("system-get-ontapi-version"), True)
    assert (probe.get_child_content("major-version"), probe.get_child_content("minor-version")) == ("1", "281")
    server.set_api_version(1, 281)
    assert server.invoke_successfully(zapi.NaElement("system-get-version"), True).get_child_content("version")
    server.set_api_version(1, 290)
    with pytest.raises(zapi.NaApiError) as e:
        server.invoke_successfully(zapi.NaElement("system-get-version"), True)
    assert e.value.code == "13010" and "API version which is not supported" in e.value.message
    # the raw answer: HTTP 200 and a failed ZAPI result, as ONTAP sends it
    result = server.invoke_elem(zapi.NaElement("volume-get-iter"))
    assert (result.get_attr("status"), result.get_attr("errno")) == ("failed", "13010")
    assert server.invoke_successfully(zapi.NaElement("system-get-ontapi-version"), True) \
        .get_child_content("minor-version") == "281"
