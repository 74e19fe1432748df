"""Conformance: errors come back as metav1.Status objects with the codes and reasons clients act on.

401 without or with a wrong token (raw, Python client, kubectl), 404 NotFound, 409 AlreadyExists
and Conflict, 422 Invalid with details.causes naming the field (also through kubectl), 400 for
bodies that do not decode (wrong types, unknown fields under fieldValidation=Strict), unknown
fields dropped with a Warning header otherwise, 415 for a strategic merge patch of a custom
resource, 403 for content in a terminating or protected namespace, 405 for unsupported verbs.
"""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("errors") / "twin", nodes=1, time_scale=0.01) as t:
        t.kubectl("apply", "-f", "-", input=json.dumps({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.errors.example.com"},
            "spec": {"group": "errors.example.com", "scope": "Namespaced",
                     "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {"type": "object", "properties": {
                             "size": {"type": "integer"}}}}}}}]}}))
        yield t


@pytest.fixture
def ns(twin):
    name = f"e-{uuid.uuid4().hex[:8]}"
    twin.kubectl("create", "namespace", name)
    return name


def raw(t: Twin, method: str, path: str, body: object = None, *, token: str | None = "",
        content_type: str = "application/json") -> tuple[int, dict, dict]:
    ctx = ssl.create_default_context(cafile=str(t.dir / "pki" / "ca.crt"))
    headers = {"Accept": "application/json", "Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token or t.token}"
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(t.server + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, {k: r.headers.get_all(k) for k in r.headers.keys()}, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, {k: e.headers.get_all(k) for k in e.headers.keys()}, json.loads(e.read() or b"{}")


def assert_status(body: dict, code: int, reason: str) -> None:
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure", body
    assert body["code"] == code and body["reason"] == reason, body
    assert body["message"]


# 401 -------------------------------------------------------------------------------------------
def test_401_without_or_with_a_wrong_token(twin):
    for token in (None, "wrong"):
        code, _, body = raw(twin, "GET", "/api/v1/namespaces", token=token)
        assert code == 401
        assert_status(body, 401, "Unauthorized")
    # discovery is refused too; only /version and health are anonymous
    assert raw(twin, "GET", "/apis", token=None)[0] == 401
    assert raw(twin, "GET", "/version", token=None)[0] == 200


def test_401_through_the_python_client_and_kubectl(twin):
    cfg = client.Configuration()
    cfg.host = twin.server
    cfg.ssl_ca_cert = str(twin.dir / "pki" / "ca.crt")
    cfg.api_key = {"authorization": "Bearer wrong"}
    with client.ApiClient(cfg) as bad:
        with pytest.raises(ApiException) as e:
            client.CoreV1Api(bad).list_namespace()
    assert e.value.status == 401 and json.loads(e.value.body)["reason"] == "Unauthorized"
    proc = twin.kubectl("--token", "wrong", "get", "pods", check=False)
    assert proc.returncode != 0
    assert "You must be logged in to the server" in proc.stderr and "Unauthorized" in proc.stderr


# 404 / 409 -------------------------------------------------------------------------------------
def test_404_not_found_status_with_details(twin, api, ns):
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(api).read_namespaced_config_map("nope", ns)
    body = json.loads(e.value.body)
    assert_status(body, 404, "NotFound")
    assert body["message"] == 'configmaps "nope" not found'
    assert body["details"] == {"name": "nope", "kind": "configmaps"}  # Go omits the core group's ""
    proc = twin.kubectl("-n", ns, "get", "configmap", "nope", check=False)
    assert proc.returncode != 0 and 'Error from server (NotFound): configmaps "nope" not found' in proc.stderr
    code, _, body = raw(twin, "GET", "/apis/apps/v1/namespaces/default/nothings")
    assert code == 404 and body["reason"] == "NotFound"
    code, _, body = raw(twin, "POST", "/api/v1/namespaces/no-such-ns/configmaps", {"metadata": {"name": "x"}})
    assert code == 404 and body["message"] == 'namespaces "no-such-ns" not found'


def test_409_already_exists_and_conflict(twin, api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, {"metadata": {"name": "dup"}})
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "dup"}})
    body = json.loads(e.value.body)
    assert_status(body, 409, "AlreadyExists")
    assert body["message"] == 'configmaps "dup" already exists'
    proc = twin.kubectl("-n", ns, "create", "configmap", "dup", check=False)
    assert proc.returncode != 0 and 'configmaps "dup" already exists' in proc.stderr
    cur = core.read_namespaced_config_map("dup", ns)
    stale = dict(api.sanitize_for_serialization(cur), data={"a": "1"})
    core.patch_namespaced_config_map("dup", ns, {"data": {"b": "2"}})
    code, _, body = raw(twin, "PUT", f"/api/v1/namespaces/{ns}/configmaps/dup", stale)
    assert code == 409
    assert_status(body, 409, "Conflict")
    assert "the object has been modified" in body["message"]


# 422 -------------------------------------------------------------------------------------------
BAD_STS = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: bad
spec:
  replicas: -1
  serviceName: bad
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers: [{name: main}]
"""


def test_422_through_kubectl_names_the_fields(twin, ns):
    proc = twin.kubectl("-n", ns, "apply", "-f", "-", input=BAD_STS, check=False)
    assert proc.returncode != 0
    assert 'The StatefulSet "bad" is invalid' in proc.stderr
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in proc.stderr
    assert "spec.template.spec.containers[0].image: Required value" in proc.stderr
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    proc = twin.kubectl("-n", ns, "create", "-f", "-", input=json.dumps(pod), check=False)
    assert "spec.containers[0].image: Required value" in proc.stderr
    assert twin.kubectl("-n", ns, "get", "sts", "bad", check=False).returncode != 0


def test_422_status_carries_causes_with_field_names(api, ns):
    apps = client.AppsV1Api(api)
    body = {"metadata": {"name": "Bad_Name"}, "spec": {
        "replicas": -1, "serviceName": "x", "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_stateful_set(ns, body)
    st = json.loads(e.value.body)
    assert_status(st, 422, "Invalid")
    assert st["details"]["kind"] == "StatefulSet" and st["details"]["group"] == "apps"
    fields = {c["field"]: c["reason"] for c in st["details"]["causes"]}
    assert fields["metadata.name"] == "FieldValueInvalid"
    assert fields["spec.replicas"] == "FieldValueInvalid"
    assert fields["spec.template.metadata.labels"] == "FieldValueInvalid"  # selector does not match
    pvc = {"metadata": {"name": "claim"}, "spec": {"resources": {"requests": {}}}}
    with pytest.raises(ApiException) as e:
        client.CoreV1Api(api).create_namespaced_persistent_volume_claim(ns, pvc)
    fields = {c["field"] for c in json.loads(e.value.body)["details"]["causes"]}
    assert {"spec.accessModes", "spec.resources[storage]"} <= fields


def test_immutable_fields_are_refused_on_update(api, ns):
    storage = client.StorageV1Api(api)
    name = f"sc-{ns}"
    storage.create_storage_class({"metadata": {"name": name}, "provisioner": "a.example.com", "parameters": {"x": "1"}})
    try:
        with pytest.raises(ApiException) as e:
            storage.patch_storage_class(name, {"parameters": {"x": "2"}})
        st = json.loads(e.value.body)
        assert st["code"] == 422 and st["details"]["causes"][0]["field"] == "parameters"
    finally:
        storage.delete_storage_class(name)
    apps = client.AppsV1Api(api)
    apps.create_namespaced_stateful_set(ns, {"metadata": {"name": "imm"}, "spec": {
        "replicas": 0, "serviceName": "imm", "selector": {"matchLabels": {"app": "imm"}},
        "template": {"metadata": {"labels": {"app": "imm"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_stateful_set("imm", ns, {"spec": {"serviceName": "other"}})
    assert e.value.status == 422 and "updates to statefulset spec for fields other than" in e.value.body


# 400 -------------------------------------------------------------------------------------------
def test_400_for_wrong_types_and_strict_unknown_fields(twin, ns):
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "typed"}, "spec": {
        "replicas": "three", "serviceName": "t", "selector": {"matchLabels": {"app": "t"}},
        "template": {"metadata": {"labels": {"app": "t"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    code, _, body = raw(twin, "POST", f"/apis/apps/v1/namespaces/{ns}/statefulsets", sts)
    assert code == 400
    assert_status(body, 400, "BadRequest")
    assert "cannot unmarshal string into Go struct field StatefulSetSpec.spec.replicas of type int32" in body["message"]
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "strict"}, "data": {"a": "1"}, "extra": 1,
          "spec": {"nested": True}}
    code, _, body = raw(twin, "POST", f"/api/v1/namespaces/{ns}/configmaps?fieldValidation=Strict", cm)
    assert code == 400
    assert 'strict decoding error: unknown field "extra", unknown field "spec"' in body["message"]
    code, _, body = raw(twin, "POST", f"/api/v1/namespaces/{ns}/configmaps", b"{not json")
    assert code == 400 and body["reason"] == "BadRequest"


def test_unknown_fields_are_dropped_with_a_warning_without_strict(twin, ns):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warned", "bogusMeta": 1}, "data": {"a": "1"},
          "extra": 1}
    code, headers, body = raw(twin, "POST", f"/api/v1/namespaces/{ns}/configmaps", cm)
    assert code == 201
    assert "extra" not in body and "bogusMeta" not in body["metadata"]
    warnings = headers.get("Warning") or []
    assert any('unknown field \\"extra\\"' in w for w in warnings), warnings
    assert any('unknown field \\"metadata.bogusMeta\\"' in w for w in warnings), warnings
    code, headers, _ = raw(twin, "POST", f"/api/v1/namespaces/{ns}/configmaps?fieldValidation=Ignore",
                           dict(cm, metadata={"name": "ignored"}))
    assert code == 201 and not headers.get("Warning")


# 415 / 405 / 403 -------------------------------------------------------------------------------
def test_415_for_strategic_merge_patch_of_a_custom_resource(twin, api, ns):
    thing = {"apiVersion": "errors.example.com/v1", "kind": "Thing", "metadata": {"name": "t1"}, "spec": {"size": 1}}
    twin.kubectl("-n", ns, "apply", "-f", "-", input=json.dumps(thing))
    code, _, body = raw(twin, "PATCH", f"/apis/errors.example.com/v1/namespaces/{ns}/things/t1", {"spec": {"size": 2}},
                        content_type="application/strategic-merge-patch+json")
    assert code == 415
    assert_status(body, 415, "UnsupportedMediaType")
    proc = twin.kubectl("-n", ns, "patch", "thing", "t1", "--type=strategic", "-p", '{"spec":{"size":2}}', check=False)
    assert proc.returncode != 0
    assert "application/strategic-merge-patch+json is not supported by errors.example.com/v1, Kind=Thing" in proc.stderr
    # merge patch works, and is what kubectl uses by default for custom resources
    twin.kubectl("-n", ns, "patch", "thing", "t1", "--type=merge", "-p", '{"spec":{"size":3}}')
    assert json.loads(twin.kubectl("-n", ns, "get", "thing", "t1", "-o", "json").stdout)["spec"]["size"] == 3
    code, _, body = raw(twin, "PATCH", f"/api/v1/namespaces/{ns}/configmaps/x", {}, content_type="text/plain")
    assert code == 415


def test_405_and_403(twin, ns):
    code, _, body = raw(twin, "POST", f"/api/v1/namespaces/{ns}/configmaps/named", {"metadata": {"name": "named"}})
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    code, _, body = raw(twin, "DELETE", "/api/v1/namespaces/default")
    assert code == 403
    assert_status(body, 403, "Forbidden")
