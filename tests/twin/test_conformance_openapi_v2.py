"""Conformance: /openapi/v2 as kube-apiserver serves it and kubectl 1.32 uses it.

kubectl validates a `kind: List` on the client (the server cannot check a List in one request): it fetches
/openapi/v2 as gnostic protobuf and checks every item against the definition whose
x-kubernetes-group-version-kind names the item's kind. The handler negotiates like kube-openapi's:
JSON or either protobuf name, 406 otherwise, a quoted SHA-512 ETag that If-None-Match answers with 304.
"""
from __future__ import annotations

import json

from tests.twin.test_conformance_discovery import raw

PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
LIST = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed, namespace: default}
  data: {a: "1"}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: listed-reader}
  rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
- apiVersion: snapshot.storage.k8s.io/v1
  kind: VolumeSnapshotClass
  metadata: {name: listed-class}
  driver: csi.example.com
  deletionPolicy: Delete
"""
WIDGETS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.v2.example.com"},
           "spec": {"group": "v2.example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "size": {"type": "integer"}, "note": {"type": "string", "nullable": True}}}}}}}]}}


def _fields(buf: bytes) -> list[tuple[int, bytes | int]]:
    """The top-level fields of a protobuf message (varint and length-delimited ones are all the document has)."""
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        if key & 7 == 0:
            v, i = _varint(buf, i)
            out.append((key >> 3, v))
        elif key & 7 == 2:
            n, i = _varint(buf, i)
            out.append((key >> 3, buf[i:i + n]))
            i += n
        else:
            raise AssertionError(f"wire type {key & 7}")
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def test_json_document_has_builtin_and_crd_definitions_and_paths(twin):
    code, headers, body = raw(twin, "/openapi/v2")
    assert code == 200 and headers["Content-Type"] == "application/json"
    doc = json.loads(body)
    assert doc["swagger"] == "2.0"
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "version": "v1", "kind": "Pod"}]
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert doc["definitions"]["io.k8s.storage.snapshot.v1.VolumeSnapshot"]["x-kubernetes-group-version-kind"][0]["kind"] \
        == "VolumeSnapshot"
    assert "io.netapp.trident.v1.TridentOrchestrator" in doc["definitions"]
    post = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]
    assert post["x-kubernetes-action"] == "post" and "fieldValidation" in {p["name"] for p in post["parameters"]}
    # every reference resolves (kubectl refuses the whole document otherwise)
    refs = {r.rsplit("/", 1)[-1] for r in _refs(doc["definitions"])}
    assert refs <= set(doc["definitions"])


def _refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):  # (JSONSchemaProps also has a property named $ref)
                yield v
            else:
                yield from _refs(v)
    elif isinstance(node, list):
        for x in node:
            yield from _refs(x)


def test_protobuf_etag_and_refused_media_types(twin):
    code, headers, body = raw(twin, "/openapi/v2", accept=PB)
    assert code == 200
    assert headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    fields = _fields(body)
    assert fields[0] == (1, b"2.0")
    # Document.definitions (9) holds one NamedSchema per definition, named as in the JSON
    definitions = [_fields(v)[0][1].decode() for n, v in _fields(dict(fields)[9]) if n == 1]  # type: ignore[arg-type]
    doc = json.loads(raw(twin, "/openapi/v2")[2])
    assert definitions == list(doc["definitions"])
    etag = headers["Etag"]
    assert etag.startswith('"') and len(etag) == 130 and raw(twin, "/openapi/v2")[1]["Etag"] == etag
    assert raw(twin, "/openapi/v2", extra={"If-None-Match": etag})[0] == 304
    assert raw(twin, "/openapi/v2", accept="text/html")[:3:2] == (406, b"")


def test_kubectl_applies_a_list_of_namespaced_and_cluster_scoped_kinds(twin):
    out = twin.kubectl("apply", "-f", "-", input=LIST).stdout
    assert "configmap/listed created" in out and "clusterrole.rbac.authorization.k8s.io/listed-reader created" in out
    assert "volumesnapshotclass.snapshot.storage.k8s.io/listed-class created" in out
    assert twin.kubectl_json("get", "clusterrole", "listed-reader")["rules"][0]["verbs"] == ["get"]
    again = twin.kubectl("apply", "-f", "-", input=LIST.replace('"1"', '"2"')).stdout
    assert "configmap/listed configured" in again and "listed-reader unchanged" in again
    assert twin.kubectl_json("get", "configmap", "listed")["data"] == {"a": "2"}
    assert "FIELD: ports <[]ContainerPort>" in twin.kubectl("explain", "pod.spec.containers.ports").stdout


def test_strict_validation_rejects_an_unknown_field_in_a_list_item(twin):
    bad = LIST.replace("  data: {a: \"1\"}", "  data: {a: \"1\"}\n  bogus: 1").replace("listed", "refused")
    proc = twin.kubectl("apply", "--validate=strict", "-f", "-", input=bad, check=False)
    assert proc.returncode == 1
    assert ('error validating data: ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap; '
            "if you choose to ignore these errors, turn validation off with --validate=false") in proc.stderr
    assert twin.kubectl("get", "configmap", "refused", check=False).returncode != 0


def test_a_new_crds_schema_reaches_the_v2_document(twin):
    etag = raw(twin, "/openapi/v2")[1]["Etag"]
    twin.kubectl("apply", "-f", "-", input=json.dumps(WIDGETS))
    try:
        code, headers, body = raw(twin, "/openapi/v2")
        assert headers["Etag"] != etag
        widget = json.loads(body)["definitions"]["com.example.v2.v1.Widget"]
        assert widget["properties"]["spec"]["properties"]["size"] == {"type": "integer"}
        assert widget["properties"]["spec"]["properties"]["note"] == {}  # nullable: untyped in v2, as the real one
        items = [{"apiVersion": "v2.example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
                  "spec": {"size": 3, "colour": "red"}}]
        proc = twin.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
                            check=False)
        assert 'ValidationError(Widget.spec): unknown field "colour" in com.example.v2.v1.Widget.spec' in proc.stderr
    finally:
        twin.kubectl("delete", "crd", WIDGETS["metadata"]["name"])
