"""Conformance: the twin refuses what kube-apiserver 1.32 refuses, with the same Status.

Through kubectl and the kubernetes Python client: Secret data that is not base64 and quantities that do not
parse (400 BadRequest, the decoder's message), names, nodeName, labels and selectors, quantities out of range,
Secret keys (422 Invalid, details.causes with reason and field as the real server writes them), and updates
of PVCs, PVs and StorageClasses that the server keeps immutable (422) or its PersistentVolumeClaimResize
admission refuses (403). kubernetes.core's k8s module reports the server's message.
"""
from __future__ import annotations

import json
import uuid

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.support.twin import COLLECTIONS

SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"


def refused(call, *args) -> tuple[int, dict]:
    with pytest.raises(ApiException) as e:
        call(*args)
    body = json.loads(e.value.body)
    assert body["kind"] == "Status" and body["code"] == e.value.status, body
    return e.value.status, body


def causes(body: dict) -> dict[str, tuple[str, str]]:
    """field -> (reason, message) of a 422's details.causes."""
    assert body["reason"] == "Invalid", body
    return {c["field"]: (c["reason"], c["message"]) for c in body["details"]["causes"]}


def claim(name: str, storage: object = "1Gi", sc: str = "alicloud-disk-ssd", **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                     "resources": {"requests": {"storage": storage}}, **spec}}


def pod(name: str, **spec: object) -> dict:
    c = {"name": "c", "image": "busybox:1.36", "command": ["sleep", "inf"]}
    c.update(spec.pop("container", {}))  # type: ignore[arg-type]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [c], **spec}}


# Secret data ----------------------------------------------------------------------------------
def test_secret_data_must_be_base64(twin, api, ns):
    twin.kubectl("-n", ns, "create", "secret", "generic", "encoded", "--from-literal=password=admin")
    assert twin.kubectl_json("-n", ns, "get", "secret", "encoded")["data"] == {"password": "YWRtaW4="}

    raw = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "plain"}, "data": {"password": "YWRt****"}}
    proc = twin.kubectl("-n", ns, "apply", "-f", "-", input=yaml.safe_dump(raw), check=False)
    assert proc.returncode != 0
    assert ('Error from server (BadRequest): error when creating "STDIN": Secret in version "v1" cannot be handled '
            'as a Secret: illegal base64 data at input byte 4') in proc.stderr
    assert twin.kubectl("-n", ns, "get", "secret", "plain", check=False).returncode != 0

    code, body = refused(client.CoreV1Api(api).create_namespaced_secret, ns,
                         {"metadata": {"name": "plain"}, "data": {"user": "admin"}})
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4'
    # stringData takes plain text; the server stores it base64-encoded in data
    created = client.CoreV1Api(api).create_namespaced_secret(ns, {"metadata": {"name": "strings"},
                                                                  "stringData": {"user": "admin"}})
    assert created.data == {"user": "YWRtaW4="}


def test_secret_keys_and_types(api, ns):
    core = client.CoreV1Api(api)
    _, body = refused(core.create_namespaced_secret, ns, {"metadata": {"name": "keys"}, "stringData": {"bad key": "x"}})
    reason, message = causes(body)["data[bad key]"]
    assert reason == "FieldValueInvalid"
    assert message == ('Invalid value: "bad key": a valid config key must consist of alphanumeric characters, \'-\', '
                       "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                       "'[-._a-zA-Z0-9]+')")
    _, body = refused(core.create_namespaced_secret, ns, {"metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
                                                          "stringData": {"tls.crt": "x"}})
    assert causes(body) == {"data[tls.key]": ("FieldValueRequired", "Required value")}
    core.create_namespaced_secret(ns, {"metadata": {"name": "typed"}, "stringData": {"a": "b"}})
    _, body = refused(core.patch_namespaced_secret, "typed", ns, {"type": "example.com/custom"})
    assert causes(body) == {"type": ("FieldValueInvalid", 'Invalid value: "example.com/custom": field is immutable')}


# names ------------------------------------------------------------------------------------------
def test_names_and_node_name(twin, api, ns):
    core = client.CoreV1Api(api)
    _, body = refused(core.create_namespaced_config_map, ns, {"metadata": {"name": "Bad_Name"}})
    reason, message = causes(body)["metadata.name"]
    assert reason == "FieldValueInvalid" and message.startswith(f'Invalid value: "Bad_Name": {SUBDOMAIN}')
    _, body = refused(core.create_namespace, {"metadata": {"name": "has.dots"}})
    assert "a lowercase RFC 1123 label must consist of" in causes(body)["metadata.name"][1]
    _, body = refused(core.create_namespaced_service, ns, {"metadata": {"name": "1svc"}, "spec": {
        "ports": [{"port": 80}]}})
    assert causes(body)["metadata.name"] == (
        "FieldValueInvalid", 'Invalid value: "1svc": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")

    # seed 001's placeholder, pasted as is
    bad = pod("pinned", nodeName="<NODE name of worker node>")
    proc = twin.kubectl("-n", ns, "apply", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert proc.returncode != 0
    assert ('The Pod "pinned" is invalid: spec.nodeName: Invalid value: "<NODE name of worker node>": '
            f"{SUBDOMAIN}") in proc.stderr
    _, body = refused(core.create_namespaced_pod, ns, bad)
    assert causes(body)["spec.nodeName"][0] == "FieldValueInvalid"


# quantities -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("storage", "error"), [
    ("10Gii", "unable to parse quantity's suffix"),
    ("10GB", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("Gi", "unable to parse numeric part of quantity"),
])
def test_quantities_that_do_not_parse_are_400(api, ns, storage, error):
    code, body = refused(client.CoreV1Api(api).create_namespaced_persistent_volume_claim, ns, claim("q", storage))
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == ('PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: '
                               + error)


def test_quantities_out_of_range_are_422(twin, api, ns):
    core = client.CoreV1Api(api)
    _, body = refused(core.create_namespaced_persistent_volume_claim, ns, claim("zero", "0"))
    assert causes(body) == {"spec.resources[storage]": ("FieldValueInvalid", 'Invalid value: "0": must be greater than zero')}
    _, body = refused(core.create_namespaced_pod, ns, pod("res", container={"resources": {
        "requests": {"cpu": "-100m", "memory": "2Gi", "gpu": "1"}, "limits": {"memory": "1Gi"}}}))
    got = causes(body)
    res = "spec.containers[0].resources"
    assert got[f"{res}.requests[cpu]"] == ("FieldValueInvalid", 'Invalid value: "-100m": must be greater than or equal to 0')
    assert got[f"{res}.requests"] == ("FieldValueInvalid",
                                      'Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi')
    assert got[f"{res}.requests[gpu]"] == ("FieldValueInvalid",
                                           'Invalid value: "gpu": must be a standard resource for containers')
    proc = twin.kubectl("-n", ns, "apply", "-f", "-", input=yaml.safe_dump(claim("zero", "0")), check=False)
    assert ('The PersistentVolumeClaim "zero" is invalid: spec.resources[storage]: Invalid value: "0": must be '
            "greater than zero") in proc.stderr


# labels and selectors ---------------------------------------------------------------------------
def test_labels_and_selectors(twin, api, ns):
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sel", "labels": {"tier": "bad value!"}},
           "spec": {"selector": {"matchLabels": {"app": "sel"}, "matchExpressions": [
               {"key": "tier", "operator": "Equals", "values": ["a"]},
               {"key": "zone", "operator": "In"},
               {"key": "bad key/x/y", "operator": "Exists", "values": ["v"]}]},
               "template": {"metadata": {"labels": {"app": "sel"}}, "spec": pod("x")["spec"]}}}
    _, body = refused(client.AppsV1Api(api).create_namespaced_deployment, ns, dep)
    got = causes(body)
    sel = "spec.selector.matchExpressions"
    assert got[f"{sel}[0].operator"] == ("FieldValueInvalid", 'Invalid value: "Equals": not a valid selector operator')
    assert got[f"{sel}[1].values"] == ("FieldValueRequired",
                                       "Required value: must be specified when `operator` is 'In' or 'NotIn'")
    assert got[f"{sel}[2].values"] == ("FieldValueForbidden", "Forbidden: may not be specified when `operator` is "
                                                              "'Exists' or 'DoesNotExist'")
    assert got[f"{sel}[2].key"][1].startswith('Invalid value: "bad key/x/y": a qualified name must consist of')
    assert got["metadata.labels"][1].startswith('Invalid value: "bad value!": a valid label must be an empty string')
    pvc = claim("picky", selector={"matchExpressions": [{"key": "disk", "operator": "Gt", "values": ["1"]}]})
    _, body = refused(client.CoreV1Api(api).create_namespaced_persistent_volume_claim, ns, pvc)
    assert causes(body)["spec.selector.matchExpressions[0].operator"][0] == "FieldValueInvalid"
    proc = twin.kubectl("-n", ns, "apply", "-f", "-", input=yaml.safe_dump(dep), check=False)
    assert 'The Deployment "sel" is invalid: ' in proc.stderr
    assert f"{sel}[0].operator: Invalid value: \"Equals\": not a valid selector operator" in proc.stderr


# immutability -----------------------------------------------------------------------------------
def bound_claim(twin, ns: str, name: str, sc: str) -> None:
    twin.kubectl("-n", ns, "apply", "-f", "-", input=yaml.safe_dump(claim(name, sc=sc)))
    twin.kubectl("-n", ns, "wait", "--for=jsonpath={.status.phase}=Bound", f"pvc/{name}", "--timeout=120s")


def test_pvc_spec_after_creation_and_resize(twin, api, ns):
    core, storage = client.CoreV1Api(api), client.StorageV1Api(api)
    fixed = f"fixed-{ns}"
    storage.create_storage_class({"metadata": {"name": fixed}, "provisioner": "diskplugin.csi.alibabacloud.com",
                                  "parameters": {"type": "cloud_ssd"}, "allowVolumeExpansion": False})
    try:
        bound_claim(twin, ns, "grows", "alicloud-disk-ssd")  # allowVolumeExpansion: true
        bound_claim(twin, ns, "stays", fixed)
        core.patch_namespaced_persistent_volume_claim("grows", ns, {"spec": {"resources": {"requests": {"storage": "2Gi"}}}})
        assert twin.kubectl_json("-n", ns, "get", "pvc", "grows")["spec"]["resources"]["requests"]["storage"] == "2Gi"

        code, body = refused(core.patch_namespaced_persistent_volume_claim, "stays", ns,
                             {"spec": {"resources": {"requests": {"storage": "2Gi"}}}})
        assert (code, body["reason"]) == (403, "Forbidden")
        assert body["message"] == ('persistentvolumeclaims "stays" is forbidden: only dynamically provisioned pvc can '
                                   "be resized and the storageclass that provisions the pvc must support resize")
        proc = twin.kubectl("-n", ns, "patch", "pvc", "stays", "-p", '{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}',
                            check=False)
        assert 'Error from server (Forbidden): persistentvolumeclaims "stays" is forbidden: only dynamically' in proc.stderr

        _, body = refused(core.patch_namespaced_persistent_volume_claim, "grows", ns,
                          {"spec": {"resources": {"requests": {"storage": "512Mi"}}}})
        assert causes(body) == {"spec.resources.requests.storage": (
            "FieldValueForbidden", "Forbidden: field can not be less than status.capacity")}
        _, body = refused(core.patch_namespaced_persistent_volume_claim, "grows", ns,
                          {"spec": {"accessModes": ["ReadWriteMany"]}})
        assert causes(body) == {"spec": ("FieldValueForbidden", "Forbidden: spec is immutable after creation except "
                                                                "resources.requests and volumeAttributesClassName for "
                                                                "bound claims")}
        # an unbound claim's size is part of its immutable spec
        core.create_namespaced_persistent_volume_claim(ns, claim("waits", sc="alicloud-disk-topology"))
        _, body = refused(core.patch_namespaced_persistent_volume_claim, "waits", ns,
                          {"spec": {"resources": {"requests": {"storage": "5Gi"}}}})
        assert list(causes(body)) == ["spec"]
    finally:
        storage.delete_storage_class(fixed)


def test_storageclass_and_pv_updates(api):
    storage, core = client.StorageV1Api(api), client.CoreV1Api(api)
    name = f"imm-{uuid.uuid4().hex[:6]}"
    storage.create_storage_class({"metadata": {"name": name}, "provisioner": "a.example.com"})
    try:
        _, body = refused(storage.patch_storage_class, name, {"provisioner": "b.example.com", "reclaimPolicy": "Retain",
                                                              "volumeBindingMode": "WaitForFirstConsumer"})
        assert causes(body) == {
            "provisioner": ("FieldValueForbidden", "Forbidden: updates to provisioner are forbidden."),
            "reclaimPolicy": ("FieldValueForbidden", "Forbidden: updates to reclaimPolicy are forbidden."),
            "volumeBindingMode": ("FieldValueInvalid", 'Invalid value: "WaitForFirstConsumer": field is immutable')}
    finally:
        storage.delete_storage_class(name)
    pv = {"metadata": {"name": name}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                               "csi": {"driver": "a.example.com", "volumeHandle": "vol-1"}}}
    core.create_persistent_volume(pv)
    try:
        _, body = refused(core.patch_persistent_volume, name, {"spec": {"csi": {"volumeHandle": "vol-2"}}})
        assert causes(body) == {"spec.persistentvolumesource": (
            "FieldValueForbidden", "Forbidden: spec.persistentvolumesource is immutable after creation")}
        core.patch_persistent_volume(name, {"spec": {"capacity": {"storage": "2Gi"}}})  # capacity may change
    finally:
        core.delete_persistent_volume(name)


# kubernetes.core -------------------------------------------------------------------------------
@pytest.mark.skipif(not (COLLECTIONS / "ansible_collections" / "kubernetes" / "core").is_dir(),
                    reason="kubernetes.core is not installed (bash scripts/setup.sh python)")
def test_kubernetes_core_reports_the_message(twin, ns, tmp_path):
    play = [{"name": "Strict server", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Apply a Secret with plain-text data", "kubernetes.core.k8s": {
            "namespace": ns, "definition": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "plain"},
                                            "data": {"password": "YWRt****"}}},
         "ignore_errors": True},
        {"name": "Apply a pod pinned to a placeholder node", "kubernetes.core.k8s": {
            "namespace": ns, "definition": pod("pinned", nodeName="<NODE name of worker node>")},
         "ignore_errors": True}]}]
    path = tmp_path / "strict.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    run = twin.playbook(path)
    task = run.task("plain-text data")
    secret = task["result"]
    assert task["status"] == "failed" and secret["reason"] == "Bad Request", task
    assert secret["msg"].startswith("Failed to create object: ")
    status = json.loads(secret["msg"].split(": ", 1)[1])  # the module passes the server's Status on
    assert status["message"] == 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4'
    task = run.task("placeholder node")
    pinned = task["result"]
    assert task["status"] == "failed" and pinned["reason"] == "Unprocessable Entity", task
    status = json.loads(pinned["msg"].split(": ", 1)[1])
    assert status["details"]["causes"][0]["field"] == "spec.nodeName"
    assert status["message"].startswith('Pod "pinned" is invalid: spec.nodeName: Invalid value: '
                                        f'"<NODE name of worker node>": {SUBDOMAIN}')
