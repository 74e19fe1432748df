"""Conformance: /version, discovery and OpenAPI v3, as kubectl 1.32 and the Python clients read them.

docs/reference/kubernetes.md, "What real clients need from an API server": /version answers minor 32
anonymously; legacy discovery (/api, /apis, group versions) with shortNames and subresources such
as statefulsets/scale (autoscaling/v1 Scale); OpenAPI v3 root and group-version documents with
x-kubernetes-group-version-kind and a fieldValidation parameter (/openapi/v2: test_conformance_openapi_v2.py).
"""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

import pytest

from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("discovery") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def raw(t: Twin, path: str, *, token: str | None = "", accept: str = "application/json",
        extra: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    ctx = ssl.create_default_context(cafile=str(t.dir / "pki" / "ca.crt"))
    headers = {"Accept": accept, **(extra or {})}
    if token is not None:
        headers["Authorization"] = f"Bearer {token or t.token}"
    req = urllib.request.Request(t.server + path, headers=headers)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_version_is_anonymous_and_names_minor_32(twin):
    code, _, body = raw(twin, "/version", token=None)
    assert code == 200
    v = json.loads(body)
    assert v["major"] == "1" and v["minor"] == "32" and v["gitVersion"].startswith("v1.32.")
    server = json.loads(twin.kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert server["minor"] == "32"


def test_legacy_discovery_documents(twin):
    api = json.loads(raw(twin, "/api")[2])
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    apis = json.loads(raw(twin, "/apis")[2])
    assert apis["kind"] == "APIGroupList"
    groups = {g["name"]: g for g in apis["groups"]}
    for g in ("apps", "storage.k8s.io", "batch", "apiextensions.k8s.io", "autoscaling", "coordination.k8s.io",
              "rbac.authorization.k8s.io", "snapshot.storage.k8s.io"):
        assert g in groups, g
    assert groups["apps"]["preferredVersion"]["groupVersion"] == "apps/v1"
    group = json.loads(raw(twin, "/apis/apps")[2])
    assert group["kind"] == "APIGroup" and group["versions"][0]["version"] == "v1"
    # every advertised group version answers with a non-empty resource list (kubectl api-resources needs that)
    for g in apis["groups"]:
        for v in g["versions"]:
            code, _, body = raw(twin, f"/apis/{v['groupVersion']}")
            assert code == 200, v
            assert json.loads(body)["resources"], v


def test_resource_lists_carry_short_names_verbs_and_subresources(twin):
    core = {r["name"]: r for r in json.loads(raw(twin, "/api/v1")[2])["resources"]}
    assert core["persistentvolumeclaims"]["shortNames"] == ["pvc"]
    assert core["persistentvolumes"]["shortNames"] == ["pv"] and core["persistentvolumes"]["namespaced"] is False
    assert core["pods"]["singularName"] == "pod" and core["pods"]["kind"] == "Pod"
    assert {"create", "delete", "get", "list", "patch", "update", "watch"} <= set(core["pods"]["verbs"])
    assert "pods/log" in core and "pods/status" in core and "pods/binding" in core
    apps = {r["name"]: r for r in json.loads(raw(twin, "/apis/apps/v1")[2])["resources"]}
    assert apps["statefulsets"]["shortNames"] == ["sts"]
    scale = apps["statefulsets/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    assert "patch" in scale["verbs"] and "update" in scale["verbs"]


def test_kubectl_api_resources_lists_everything_without_errors(twin):
    proc = twin.kubectl("api-resources", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "unable to retrieve" not in proc.stderr
    lines = proc.stdout.splitlines()
    sts = next(line for line in lines if line.startswith("statefulsets "))
    assert " sts " in sts and "apps/v1" in sts
    assert any(line.startswith("volumesnapshots ") for line in lines)
    # shortNames resolve through discovery
    assert twin.kubectl("get", "pvc", "-A").returncode == 0
    assert json.loads(twin.kubectl("get", "sts", "-A", "-o", "json").stdout)["kind"] == "List"


def test_python_dynamic_client_discovers_kinds_and_scale(twin):
    from kubernetes import dynamic

    dyn = dynamic.DynamicClient(twin.api_client())
    sts = dyn.resources.get(api_version="apps/v1", kind="StatefulSet")
    assert sts.namespaced and sts.name == "statefulsets"
    scale = dyn.resources.get(api_version="apps/v1", kind="StatefulSet").subresources["scale"]
    assert scale.kind == "Scale"
    pvc = dyn.resources.get(short_names=["pvc"])
    assert pvc.kind == "PersistentVolumeClaim"


def test_openapi_v3_root_and_group_version_documents(twin):
    code, _, body = raw(twin, "/openapi/v3")
    assert code == 200
    paths = json.loads(body)["paths"]
    assert "api/v1" in paths and "apis/apps/v1" in paths
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    doc = json.loads(raw(twin, url)[2])
    post = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/statefulsets"]["post"]
    assert post["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "StatefulSet"}
    assert "fieldValidation" in {p["name"] for p in post["parameters"]}


def test_kubectl_apply_sends_strict_field_validation(twin):
    """kubectl leaves validation to the server once it sees fieldValidation in OpenAPI v3: the server's
    strict decoding error comes back, naming the unknown field."""
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict-probe\ndata:\n  a: '1'\nbogus: true\n"
    proc = twin.kubectl("apply", "-f", "-", input=manifest, check=False)
    assert proc.returncode != 0
    assert 'strict decoding error: unknown field "bogus"' in proc.stderr
    assert twin.kubectl("get", "configmap", "strict-probe", check=False).returncode != 0


def test_crd_group_appears_in_discovery_and_openapi(twin):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.disco.example.com"},
           "spec": {"group": "disco.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gdg"]},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    twin.kubectl("apply", "-f", "-", input=json.dumps(crd))
    try:
        groups = [g["name"] for g in json.loads(raw(twin, "/apis")[2])["groups"]]
        assert "disco.example.com" in groups
        res = json.loads(raw(twin, "/apis/disco.example.com/v1")[2])["resources"]
        assert res[0]["name"] == "gadgets" and res[0]["shortNames"] == ["gdg"]
        assert "apis/disco.example.com/v1" in json.loads(raw(twin, "/openapi/v3")[2])["paths"]
    finally:
        twin.kubectl("delete", "crd", "gadgets.disco.example.com")
    assert "disco.example.com" not in [g["name"] for g in json.loads(raw(twin, "/apis")[2])["groups"]]
    assert raw(twin, "/apis/disco.example.com/v1")[0] == 404
