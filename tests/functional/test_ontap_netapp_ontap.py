"""NetApp's own REST library (netapp-ontap) reads the twin's ONTAP: volumes, SVMs and aggregates, as
collections with fields, as single records by uuid, and a 404 for a uuid that does not exist."""
from __future__ import annotations

import time

import pytest
from kubernetes import client
from netapp_ontap import HostConnection, config
from netapp_ontap.error import NetAppRestError
from netapp_ontap.resources import Aggregate, Svm, Volume

CLAIMS = 3


@pytest.fixture
def ontap(twin, monkeypatch):
    core = client.CoreV1Api(twin.api_client())
    core.create_namespace({"metadata": {"name": "nlib"}})
    for i in range(CLAIMS):
        core.create_namespaced_persistent_volume_claim("nlib", {
            "metadata": {"name": f"nas-{i}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ontap-nas",
                     "resources": {"requests": {"storage": "2Gi"}}}})
    deadline = time.monotonic() + 120
    while sum(p.status.phase == "Bound" for p in core.list_namespaced_persistent_volume_claim("nlib").items) < CLAIMS:
        assert time.monotonic() < deadline, "PVCs not bound"
        time.sleep(0.2)
    cfg = twin.cloud["ontap"]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cfg["ca_cert"])  # the library verifies TLS through requests
    host, port = cfg["management_lif"].rsplit(":", 1)
    monkeypatch.setattr(config, "CONNECTION", HostConnection(host, cfg["username"], cfg["password"], port=int(port)))
    pvs = [pv for pv in core.list_persistent_volume().items if pv.spec.csi.driver == "csi.trident.netapp.io"]
    return cfg, sorted(pv.spec.csi.volume_attributes["internalName"] for pv in pvs)


def test_netapp_ontap_reads_volumes_svms_and_aggregates(ontap):
    cfg, internal_names = ontap
    svms = list(Svm.get_collection(fields="name,state,subtype,aggregates,nfs,iscsi,ipspace"))
    assert [s.name for s in svms] == [cfg["svm"]]
    svm = svms[0]
    assert svm.state == "running" and svm.nfs.enabled and svm.iscsi.enabled and svm.ipspace.name == "Default"

    aggrs = list(Aggregate.get_collection(fields="name,state,node,space,block_storage"))
    assert len(aggrs) == 1 and aggrs[0].state == "online"
    assert [a.name for a in svm.aggregates] == [aggrs[0].name]
    space = aggrs[0].space.block_storage
    assert space.size == space.used + space.available and space.used >= CLAIMS * 2 * 1024**3
    assert aggrs[0].block_storage.primary.raid_type

    vols = list(Volume.get_collection(name="trident_*", fields="name,size,svm.name,aggregates,space"))
    assert sorted(v.name for v in vols) == internal_names
    assert all(v.size == 2 * 1024**3 and v.svm.name == svm.name for v in vols)
    assert {a.name for v in vols for a in v.aggregates} == {aggrs[0].name}

    # single records by uuid, as Resource.get() fetches them
    one = Volume(uuid=vols[0].uuid)
    one.get(fields="name,state")
    assert (one.name, one.state) == (vols[0].name, "online")
    again = Svm(uuid=svm.uuid)
    again.get()
    assert again.name == svm.name and again.language
    aggr = Aggregate(uuid=aggrs[0].uuid)
    aggr.get(fields="space")
    assert aggr.space.block_storage.size == space.size


def test_an_unknown_uuid_is_404(ontap):
    with pytest.raises(NetAppRestError) as e:
        Svm(uuid="00000000-0000-0000-0000-000000000000").get()
    assert e.value.http_err_response.http_response.status_code == 404
    assert e.value.http_err_response.http_response.json()["error"]["code"] == "4"
