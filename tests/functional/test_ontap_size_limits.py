"""The twin's ONTAP keeps a FlexVol between 20MB and 100TB (twin/netapp/sizes.py), through NetApp's own clients
(netapp-ontap REST, netapp-lib ZAPI) and through its Trident: a 999Pi PVC fails to provision, as on a real cluster."""
from __future__ import annotations

import pytest
from kubernetes import client
from netapp_lib.api.zapi import zapi
from netapp_ontap import HostConnection, config
from netapp_ontap.error import NetAppRestError
from netapp_ontap.resources import Volume

from tests.support.waits import watch_until

PIB, TIB, GIB, MIB = 1 << 50, 1 << 40, 1 << 30, 1 << 20
TOO_LARGE = 'is too large.  Maximum size is "100TB" ("109951162777600B")'


@pytest.fixture
def rest(twin, monkeypatch):
    cfg = twin.cloud["ontap"]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cfg["ca_cert"])  # the library verifies TLS through requests
    host, port = cfg["management_lif"].rsplit(":", 1)
    monkeypatch.setattr(config, "CONNECTION", HostConnection(host, cfg["username"], cfg["password"], port=int(port)))
    return cfg


def post(cfg, name, size):
    Volume(name=name, svm={"name": cfg["svm"]}, aggregates=[{"name": "aggr1"}], size=size).post()


def error(e):
    return e.value.http_err_response.http_response.status_code, e.value.http_err_response.http_response.json()["error"]


def names(prefix):
    return sorted(v.name for v in Volume.get_collection(name=prefix + "*"))


def test_rest_refuses_a_volume_outside_20mb_to_100tb_and_creates_one_inside(rest):
    with pytest.raises(NetAppRestError) as e:
        post(rest, "limit_huge", 999 * PIB)
    status, err = error(e)
    assert status == 500 and err["message"] == f'Size "999PB" ("{999 * PIB}B") {TOO_LARGE}. '
    with pytest.raises(NetAppRestError) as e:
        post(rest, "limit_tiny", 10 * MIB)
    assert error(e) == (500, {"message": 'Size "10MB" ("10485760B") is too small.  Minimum size is "20MB" ("20971520B"). ',
                              "code": "917534"})
    assert names("limit_") == []

    post(rest, "limit_max", 100 * TIB)
    post(rest, "limit_min", 20 * MIB)
    sizes = {v.name: v.size for v in Volume.get_collection(name="limit_*", fields="size")}
    assert sizes == {"limit_max": 100 * TIB, "limit_min": 20 * MIB}
    with pytest.raises(NetAppRestError) as e:
        post(rest, "limit_max", GIB)
    assert error(e)[0] == 409


def test_zapi_volume_create_keeps_the_same_limits(twin, monkeypatch):
    cfg = twin.cloud["ontap"]
    monkeypatch.setenv("SSL_CERT_FILE", cfg["ca_cert"])  # netapp-lib's opener verifies with the default CA store
    host, port = cfg["management_lif"].split(":")
    server = zapi.NaServer(host, username=cfg["username"], password=cfg["password"], transport_type="https", port=port)
    server.set_api_version(1, 170)

    def create(name, size):
        return server.invoke_successfully(zapi.NaElement.create_node_with_children(
            "volume-create", volume=name, **{"containing-aggr-name": "aggr1", "size": size}), True)

    with pytest.raises(zapi.NaApiError) as e:
        create("zapi_huge", "999p")
    assert TOO_LARGE in e.value.message
    create("zapi_ok", "20g")
    found = zapi.invoke_api(server, "volume-get-iter", is_iter=True,
                            query={"volume-attributes": {"volume-id-attributes": {"name": "zapi_*"}}},
                            des_result={"volume-attributes": {"volume-id-attributes": {"name": None}}})
    listed = [v.get_child_by_name("volume-id-attributes").get_child_content("name")
              for r in found for v in (r.get_child_by_name("attributes-list") or zapi.NaElement("x")).get_children()]
    assert listed == ["zapi_ok"]


def test_a_999pi_claim_fails_to_provision_with_ontaps_message_and_leaves_nothing_on_ontap(twin, rest):
    core = client.CoreV1Api(twin.api_client())
    core.create_namespace({"metadata": {"name": "huge"}})
    core.create_namespaced_persistent_volume_claim("huge", {
        "metadata": {"name": "huge"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ontap-nas",
                 "resources": {"requests": {"storage": "999Pi"}}}})
    events = watch_until(core.list_namespaced_event, lambda evs: any(e.reason == "ProvisioningFailed" for e in evs),
                         "ProvisioningFailed", "huge")
    failed = next(e for e in events if e.reason == "ProvisioningFailed")
    assert TOO_LARGE in failed.message and failed.type == "Warning"
    assert core.read_namespaced_persistent_volume_claim("huge", "huge").status.phase == "Pending"
    assert [pv for pv in core.list_persistent_volume().items if pv.spec.claim_ref.name == "huge"] == []
    assert [v for v in names("trident_") if v] == sorted(
        pv.spec.csi.volume_attributes["internalName"] for pv in core.list_persistent_volume().items
        if pv.spec.csi and pv.spec.csi.driver == "csi.trident.netapp.io")
