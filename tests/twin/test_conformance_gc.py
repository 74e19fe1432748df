"""Conformance: owner-reference garbage collection, namespaces and CRDs that take their objects along.

Background (dependents go after the owner; a dependent with another live owner stays; dangling
references to owners that never existed), foreground (the owner waits, marked with the
foregroundDeletion finalizer, until its dependents are gone), orphan (references removed,
dependents kept), chains of owners, a StatefulSet's pods (its PVCs stay: retention Retain), and
CRD deletion removing its custom resources. Waits are watches with a bound, never sleeps.
"""
from __future__ import annotations

import json
import uuid

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("gc") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


@pytest.fixture
def ns(api):
    name = f"gc-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    return name


def owner_ref(obj, block: bool = False) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": obj.metadata.name, "uid": obj.metadata.uid,
            "blockOwnerDeletion": block}


def make(core, ns: str, name: str, owners: list[dict] | None = None, finalizers: list[str] | None = None):
    md: dict = {"name": name}
    if owners:
        md["ownerReferences"] = owners
    if finalizers:
        md["finalizers"] = finalizers
    return core.create_namespaced_config_map(ns, {"metadata": md})


def wait_gone(core, ns: str, *names: str, timeout: int = 60) -> set[str]:
    """Watch until every named config map is deleted (or the bound passes); returns those still there."""
    lst = core.list_namespaced_config_map(ns)
    left = set(names) & {i.metadata.name for i in lst.items}
    if not left:
        return left
    for ev in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=lst.metadata.resource_version,
                                   timeout_seconds=timeout):
        if ev["type"] == "DELETED":
            left.discard(ev["object"].metadata.name)
        if not left:
            break
    return left


def exists(core, ns: str, name: str) -> bool:
    try:
        core.read_namespaced_config_map(name, ns)
        return True
    except ApiException as e:
        assert e.status == 404
        return False


def test_background_deletes_dependents_but_not_those_with_another_live_owner(api, ns):
    core = client.CoreV1Api(api)
    a, b = make(core, ns, "owner-a"), make(core, ns, "owner-b")
    make(core, ns, "only-a", [owner_ref(a)])
    make(core, ns, "both", [owner_ref(a), owner_ref(b)])
    grandchild_parent = make(core, ns, "child", [owner_ref(a)])
    make(core, ns, "grandchild", [owner_ref(grandchild_parent)])
    core.delete_namespaced_config_map("owner-a", ns, propagation_policy="Background")
    assert wait_gone(core, ns, "only-a", "child", "grandchild") == set()
    assert exists(core, ns, "both")
    core.delete_namespaced_config_map("owner-b", ns)
    assert wait_gone(core, ns, "both") == set()


def test_dependents_of_owners_that_do_not_exist_are_collected(api, ns):
    core = client.CoreV1Api(api)
    live = make(core, ns, "live")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": str(uuid.uuid4())}
    make(core, ns, "orphaned-at-birth", [ghost])
    make(core, ns, "half", [ghost, owner_ref(live)])
    assert wait_gone(core, ns, "orphaned-at-birth") == set()
    # a dependent with one live owner keeps living; the dangling reference goes
    for ev in watch.Watch().stream(core.list_namespaced_config_map, ns, field_selector="metadata.name=half",
                                   timeout_seconds=30):
        if len(ev["object"].metadata.owner_references or []) == 1:
            break
    refs = core.read_namespaced_config_map("half", ns).metadata.owner_references
    assert [r.name for r in refs] == ["live"]


def test_foreground_deletion_waits_for_dependents(api, ns):
    core = client.CoreV1Api(api)
    owner = make(core, ns, "fg")
    make(core, ns, "fg-dep", [owner_ref(owner, block=True)], finalizers=["example.com/hold"])
    make(core, ns, "fg-dep2", [owner_ref(owner, block=True)])
    core.delete_namespaced_config_map("fg", ns, propagation_policy="Foreground")
    marked = core.read_namespaced_config_map("fg", ns)
    assert marked.metadata.deletion_timestamp is not None
    assert "foregroundDeletion" in marked.metadata.finalizers
    assert wait_gone(core, ns, "fg-dep2") == set()
    for ev in watch.Watch().stream(core.list_namespaced_config_map, ns, field_selector="metadata.name=fg-dep",
                                   timeout_seconds=30):
        if ev["object"].metadata.deletion_timestamp:
            break
    assert exists(core, ns, "fg")  # held while its blocking dependent is held by its own finalizer
    core.patch_namespaced_config_map("fg-dep", ns, {"metadata": {"finalizers": None}})
    assert wait_gone(core, ns, "fg-dep", "fg") == set()


def test_orphan_keeps_dependents_and_drops_their_references(api, ns):
    core = client.CoreV1Api(api)
    owner = make(core, ns, "or")
    make(core, ns, "or-dep", [owner_ref(owner)])
    core.delete_namespaced_config_map("or", ns, propagation_policy="Orphan")
    assert wait_gone(core, ns, "or") == set()
    assert exists(core, ns, "or-dep")
    assert not core.read_namespaced_config_map("or-dep", ns).metadata.owner_references


def test_deleting_a_statefulset_takes_its_pods_and_keeps_its_claims(twin, api, ns):
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": {
        "replicas": 2, "serviceName": "web", "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    twin.kubectl("-n", ns, "apply", "-f", "-", input=json.dumps(sts))
    core = client.CoreV1Api(api)
    pods = [p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="app=web").items]
    assert sorted(pods) == ["web-0", "web-1"]  # they exist as soon as the apply returns
    twin.kubectl("-n", ns, "delete", "statefulset", "web")
    proc = twin.kubectl("-n", ns, "wait", "--for=delete", "pod/web-0", "pod/web-1", "--timeout=60s", check=False)
    assert proc.returncode == 0, proc.stderr
    assert core.list_namespaced_pod(ns, label_selector="app=web").items == []


def test_deleting_a_crd_deletes_its_custom_resources(api, ns):
    ext = client.ApiextensionsV1Api(api)
    group = "gc.example.com"
    ext.create_custom_resource_definition({
        "metadata": {"name": f"blobs.{group}"},
        "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "blobs", "singular": "blob", "kind": "Blob"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    co = client.CustomObjectsApi(api)
    for n in ("b1", "b2"):
        co.create_namespaced_custom_object(group, "v1", ns, "blobs", {"apiVersion": f"{group}/v1", "kind": "Blob",
                                                                      "metadata": {"name": n}})
    co.create_namespaced_custom_object(group, "v1", ns, "blobs", {"apiVersion": f"{group}/v1", "kind": "Blob",
                                                                  "metadata": {"name": "held",
                                                                               "finalizers": ["example.com/hold"]}})
    ext.delete_custom_resource_definition(f"blobs.{group}")
    crd = ext.read_custom_resource_definition(f"blobs.{group}")
    assert crd.metadata.deletion_timestamp and "customresourcecleanup.apiextensions.k8s.io" in crd.metadata.finalizers
    left = co.list_namespaced_custom_object(group, "v1", ns, "blobs")["items"]
    assert [(o["metadata"]["name"], bool(o["metadata"].get("deletionTimestamp"))) for o in left] == [("held", True)]
    with pytest.raises(ApiException) as e:
        co.create_namespaced_custom_object(group, "v1", ns, "blobs", {"apiVersion": f"{group}/v1", "kind": "Blob",
                                                                      "metadata": {"name": "late"}})
    assert e.value.status == 405
    # the last instance going takes the CRD with it
    co.patch_namespaced_custom_object(group, "v1", ns, "blobs", "held", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as e:
        ext.read_custom_resource_definition(f"blobs.{group}")
    assert e.value.status == 404
    with pytest.raises(ApiException) as e:
        co.list_namespaced_custom_object(group, "v1", ns, "blobs")
    assert e.value.status == 404
