"""The twin installs external-snapshotter's real CRDs (twin/fleet/crds/snapshot/, v8 line) and honours them as
kube-apiserver's apiextensions does: the printer columns in `kubectl get`, required fields, enums, pruning of
unknown fields (or a strict decoding error under kubectl's fieldValidation=Strict), and `oneOf` of `required`
alternatives with the kube-openapi message."""
from __future__ import annotations

import json

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.twin.storage_helpers import apply, kube_wait, pvc_manifest

G, V = "snapshot.storage.k8s.io", "v1"


def snapshot(name: str, spec: dict) -> dict:
    return {"apiVersion": f"{G}/{V}", "kind": "VolumeSnapshot", "metadata": {"name": name}, "spec": spec}


def header_and_rows(out: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln.split() for ln in out.strip().splitlines()]
    return lines[0], lines[1:]


def rejected(api, body: dict, plural: str = "volumesnapshots", namespace: str | None = "default") -> dict:
    """The Status of a create the API server refuses (fails the test if it is accepted)."""
    co = client.CustomObjectsApi(api)
    with pytest.raises(ApiException) as e:
        if namespace:
            co.create_namespaced_custom_object(G, V, namespace, plural, body)
        else:
            co.create_cluster_custom_object(G, V, plural, body)
    assert e.value.status == 422, e.value.body
    return json.loads(e.value.body)


def test_get_prints_the_crd_columns_of_a_ready_snapshot(twin):
    apply(twin, pvc_manifest("cols", "ontap-nas", mode="ReadWriteMany"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/cols")
    apply(twin, snapshot("cols-snap", {"volumeSnapshotClassName": "trident-snapshotclass",
                                       "source": {"persistentVolumeClaimName": "cols"}}))
    kube_wait(twin, "jsonpath={.status.readyToUse}=true", "volumesnapshot/cols-snap")

    head, rows = header_and_rows(twin.kubectl("get", "volumesnapshots", "cols-snap").stdout)
    assert head == ["NAME", "READYTOUSE", "SOURCEPVC", "SOURCESNAPSHOTCONTENT", "RESTORESIZE", "SNAPSHOTCLASS",
                    "SNAPSHOTCONTENT", "CREATIONTIME", "AGE"]
    vs = twin.kubectl_json("get", "volumesnapshot", "cols-snap")
    content = vs["status"]["boundVolumeSnapshotContentName"]
    row = rows[0]
    assert row[:3] == ["cols-snap", "true", "cols"]
    assert "1Gi" in row and "trident-snapshotclass" in row and content in row

    head, rows = header_and_rows(twin.kubectl("get", "volumesnapshotcontents", content).stdout)
    assert head == ["NAME", "READYTOUSE", "RESTORESIZE", "DELETIONPOLICY", "DRIVER", "VOLUMESNAPSHOTCLASS",
                    "VOLUMESNAPSHOT", "VOLUMESNAPSHOTNAMESPACE", "AGE"]
    # RestoreSize is an integer column over status.restoreSize (bytes, int64 in the content's schema)
    assert rows[0][:8] == [content, "true", str(1024 ** 3), "Delete", "csi.trident.netapp.io", "trident-snapshotclass",
                           "cols-snap", "default"]

    head, rows = header_and_rows(twin.kubectl("get", "volumesnapshotclasses", "trident-snapshotclass").stdout)
    assert head == ["NAME", "DRIVER", "DELETIONPOLICY", "AGE"]
    assert rows[0][:3] == ["trident-snapshotclass", "csi.trident.netapp.io", "Delete"]


def test_a_snapshot_without_source_is_invalid(api):
    st = rejected(api, snapshot("no-source", {"volumeSnapshotClassName": "trident-snapshotclass"}))
    assert st["reason"] == "Invalid"
    assert st["message"] == 'VolumeSnapshot.snapshot.storage.k8s.io "no-source" is invalid: spec.source: Required value'
    assert st["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.source"}]


def test_required_content_fields_and_enums_are_enforced(api):
    content = {"apiVersion": f"{G}/{V}", "kind": "VolumeSnapshotContent", "metadata": {"name": "bad-content"},
               "spec": {"driver": "csi.trident.netapp.io", "deletionPolicy": "Keep", "source": {"snapshotHandle": "h"}}}
    st = rejected(api, content, "volumesnapshotcontents", namespace=None)
    causes = {(c["field"], c["message"]) for c in st["details"]["causes"]}
    assert ("spec.deletionPolicy", 'Unsupported value: "Keep": supported values: "Delete", "Retain"') in causes
    assert ("spec.volumeSnapshotRef", "Required value") in causes

    cls = {"apiVersion": f"{G}/{V}", "kind": "VolumeSnapshotClass", "metadata": {"name": "bad-class"},
           "driver": "csi.trident.netapp.io", "deletionPolicy": "Keep", "parameters": {"n": 1}}
    st = rejected(api, cls, "volumesnapshotclasses", namespace=None)
    causes = {(c["field"], c["message"]) for c in st["details"]["causes"]}
    assert ("deletionPolicy", 'Unsupported value: "Keep": supported values: "Delete", "Retain"') in causes
    assert ("parameters.n", 'Invalid value: "number": parameters.n in body must be of type string: "number"') in causes


def test_unknown_spec_fields_are_pruned_or_strictly_rejected(twin, api):
    body = snapshot("pruned", {"source": {"persistentVolumeClaimName": "nope"}, "retention": "7d"})
    created = client.CustomObjectsApi(api).create_namespaced_custom_object(G, V, "default", "volumesnapshots", body)
    assert "retention" not in created["spec"]
    assert created["spec"]["source"] == {"persistentVolumeClaimName": "nope"}

    # kubectl create/apply ask for fieldValidation=Strict (--validate=strict, the default)
    body["metadata"]["name"] = "strict"
    p = twin.kubectl("create", "-f", "-", input=yaml.safe_dump(body), check=False)
    assert p.returncode != 0
    assert 'strict decoding error: unknown field "spec.retention"' in p.stderr
    assert twin.kubectl("get", "volumesnapshot", "strict", check=False).returncode != 0


def cluster_crd(group: str, kind: str, spec_properties: dict, **version: object) -> str:
    """A cluster-scoped CRD of one served version whose spec holds `spec_properties`, as kubectl apply input."""
    plural = kind.lower() + "s"
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                       "metadata": {"name": f"{plural}.{group}"},
                       "spec": {"group": group, "scope": "Cluster",
                                "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
                                "versions": [{"name": "v1", "served": True, "storage": True, **version, "schema": {
                                    "openAPIV3Schema": {"type": "object", "properties": {
                                        "spec": {"type": "object", "properties": spec_properties}}}}}]}})


# upstream external-snapshotter's v7 VolumeSnapshotContent source, its oneOf as it was written there
ONE_OF_CRD = cluster_crd("oneof.example.com", "Source", {"source": {
    "type": "object", "properties": {"snapshotHandle": {"type": "string"}, "volumeHandle": {"type": "string"}},
    "oneOf": [{"required": ["snapshotHandle"]}, {"required": ["volumeHandle"]}]}})


def test_one_of_required_alternatives(twin, api):
    twin.kubectl("apply", "-f", "-", input=ONE_OF_CRD)
    kube_wait(twin, "condition=Established", "crd/sources.oneof.example.com", namespace=None)
    co = client.CustomObjectsApi(api)

    def create(name: str, source: dict) -> ApiException | None:
        body = {"apiVersion": "oneof.example.com/v1", "kind": "Source", "metadata": {"name": name},
                "spec": {"source": source}}
        try:
            co.create_cluster_custom_object("oneof.example.com", "v1", "sources", body)
        except ApiException as e:
            return e
        return None

    assert create("one", {"volumeHandle": "v"}) is None
    both = create("both", {"volumeHandle": "v", "snapshotHandle": "s"})
    assert both is not None and both.status == 422
    st = json.loads(both.body)
    assert st["message"] == ('Source.oneof.example.com "both" is invalid: <nil>: Invalid value: "": "spec.source" must '
                             'validate one and only one schema (oneOf). Found 2 valid alternatives')
    none = create("none", {})
    assert none is not None and none.status == 422
    st = json.loads(none.body)
    # two causes: the message is apimachinery's aggregate, in brackets
    assert st["message"] == ('Source.oneof.example.com "none" is invalid: [<nil>: Invalid value: "": "spec.source" must '
                             'validate one and only one schema (oneOf). Found none valid, '
                             'spec.source.snapshotHandle: Required value]')
    causes = st["details"]["causes"]
    assert causes == [{"reason": "FieldValueInvalid", "field": "<nil>", "message": 'Invalid value: "": "spec.source" '
                       'must validate one and only one schema (oneOf). Found none valid'},
                      {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.source.snapshotHandle"}]


COLUMNS_CRD = cluster_crd("columns.example.com", "Gauge", {"level": {"type": "integer"}},
                          additionalPrinterColumns=[{"name": "Level", "type": "integer", "jsonPath": ".spec.level"}])


def test_declared_columns_come_without_a_default_age(twin):
    """apiextensions serves the Age column only to a CRD that declares no columns (apihelpers'
    serveDefaultColumnsIfEmpty); a CRD with its own columns gets Name and those, nothing more."""
    twin.kubectl("apply", "-f", "-", input=COLUMNS_CRD)
    kube_wait(twin, "condition=Established", "crd/gauges.columns.example.com", namespace=None)
    gauge = {"apiVersion": "columns.example.com/v1", "kind": "Gauge", "metadata": {"name": "g1"}, "spec": {"level": 7}}
    twin.kubectl("apply", "-f", "-", input=json.dumps(gauge))
    header, rows = header_and_rows(twin.kubectl("get", "gauges").stdout)
    assert header == ["NAME", "LEVEL"] and rows == [["g1", "7"]]
    header, _ = header_and_rows(twin.kubectl("get", "tridentversions", "-A").stdout + "\n")
    assert header[-1] == "AGE"  # a CRD without columns (Trident's) keeps the default one
