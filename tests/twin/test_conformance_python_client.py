"""Conformance: the kubernetes 37 Python client, typed and dynamic, against the twin.

CRUD, label selectors (=, !=, in, notin, exists, !exists), field selectors (metadata.name,
metadata.namespace, status.phase, spec.nodeName), limit/continue paging, optimistic concurrency,
generation on spec (not status) changes, status and scale subresources, finalizers with
deletionTimestamp, namespaces that delete their contents, CRDs registered at run time, server-side
apply and reading every built-in kind back through the pydantic models (which validate on read).
"""
from __future__ import annotations

import json
import uuid

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

from tests.support.twin import Twin

GROUP = "py.example.com"


def crd_body(plural: str = "gizmos", kind: str = "Gizmo", group: str = GROUP, scale: bool = False) -> dict:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0},
                                                  "replicas": {"type": "integer"},
                                                  "color": {"type": "string", "enum": ["red", "blue"]}},
                 "required": ["size"]},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    sub: dict = {"status": {}}
    if scale:
        sub["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": sub,
                                   "schema": {"openAPIV3Schema": schema},
                                   "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                                                 "jsonPath": ".spec.size"}]}]}}


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("pyclient") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


@pytest.fixture
def ns(api):
    name = f"py-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    yield name
    try:
        client.CoreV1Api(api).delete_namespace(name)
    except ApiException:
        pass


def cm(name: str, labels: dict | None = None, **data: str) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": data}


def names(items) -> set[str]:
    return {i.metadata.name for i in items}


# typed CRUD -----------------------------------------------------------------------------------
def test_typed_crud_round_trip(api, ns):
    core = client.CoreV1Api(api)
    created = core.create_namespaced_config_map(ns, cm("crud", a="1"))
    assert created.metadata.uid and created.metadata.resource_version and created.data == {"a": "1"}
    got = core.read_namespaced_config_map("crud", ns)
    assert got.metadata.uid == created.metadata.uid
    got.data["b"] = "2"
    replaced = core.replace_namespaced_config_map("crud", ns, got)
    assert replaced.data == {"a": "1", "b": "2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    patched = core.patch_namespaced_config_map("crud", ns, {"data": {"c": "3"}})
    assert patched.data == {"a": "1", "b": "2", "c": "3"}
    core.delete_namespaced_config_map("crud", ns)
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("crud", ns)
    assert e.value.status == 404


def test_defaults_are_applied_and_allocated_values_survive_updates(api, ns):
    core = client.CoreV1Api(api)
    svc = core.create_namespaced_service(ns, {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    ip = svc.spec.cluster_ip
    assert ip and svc.spec.cluster_ips == [ip] and svc.spec.type == "ClusterIP"
    assert svc.spec.ports[0].protocol == "TCP" and svc.spec.ports[0].target_port == 80
    body = {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 81}], "selector": {"app": "x"}}}
    assert core.replace_namespaced_service("svc", ns, body).spec.cluster_ip == ip
    pod = core.create_namespaced_pod(ns, {"metadata": {"name": "d"}, "spec": {"nodeName": "ghost-node", "containers": [
        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}})
    c = pod.spec.containers[0]
    assert (c.image_pull_policy, c.termination_message_path) == ("Always", "/dev/termination-log")
    assert pod.spec.restart_policy == "Always" and pod.spec.service_account_name == "default"
    assert pod.status.phase == "Pending" and pod.status.qos_class == "Burstable"


def test_generate_name_and_dry_run(api, ns):
    core = client.CoreV1Api(api)
    a = core.create_namespaced_config_map(ns, {"metadata": {"generateName": "gen-"}})
    assert a.metadata.name.startswith("gen-") and len(a.metadata.name) > 4
    dry = core.create_namespaced_config_map(ns, cm("dry", a="1"), dry_run="All")
    assert dry.metadata.name == "dry"
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("dry", ns)
    assert e.value.status == 404


# selectors ------------------------------------------------------------------------------------
def test_label_selectors(api, ns):
    core = client.CoreV1Api(api)
    for name, labels in (("a", {"tier": "web", "env": "prod"}), ("b", {"tier": "db", "env": "prod"}),
                         ("c", {"tier": "web", "env": "dev"}), ("d", {})):
        core.create_namespaced_config_map(ns, cm(name, labels))

    def sel(s: str) -> set[str]:
        return names(core.list_namespaced_config_map(ns, label_selector=s).items) - {"kube-root-ca.crt"}

    assert sel("tier=web") == {"a", "c"}
    assert sel("tier==web,env=prod") == {"a"}
    assert sel("tier!=web") == {"b", "d"}
    assert sel("env in (prod,dev)") == {"a", "b", "c"}
    assert sel("env notin (prod)") == {"c", "d"}
    assert sel("tier") == {"a", "b", "c"}
    assert sel("!tier") == {"d"}
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(ns, label_selector="tier in (web")
    assert e.value.status == 400


def test_field_selectors(api, ns):
    core = client.CoreV1Api(api)
    for name in ("f1", "f2"):
        core.create_namespaced_config_map(ns, cm(name))
    assert names(core.list_namespaced_config_map(ns, field_selector="metadata.name=f2").items) == {"f2"}
    everywhere = core.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={ns}").items
    assert {i.metadata.namespace for i in everywhere} == {ns} and {"f1", "f2"} <= names(everywhere)
    assert "f1" not in names(core.list_namespaced_config_map(ns, field_selector="metadata.name!=f1").items)
    # pods on a node no kubelet runs stay Pending: their phase is whatever status says
    pod = {"metadata": {"name": "p1"}, "spec": {"nodeName": "ghost-node", "containers": [{"name": "c", "image": "busybox"}]}}
    core.create_namespaced_pod(ns, pod)
    pod["metadata"]["name"], pod["spec"]["nodeName"] = "p2", "other-ghost"
    core.create_namespaced_pod(ns, pod)
    core.patch_namespaced_pod_status("p1", ns, {"status": {"phase": "Succeeded"}})
    assert names(core.list_namespaced_pod(ns, field_selector="status.phase=Succeeded").items) == {"p1"}
    assert names(core.list_namespaced_pod(ns, field_selector="status.phase!=Succeeded").items) == {"p2"}
    assert names(core.list_pod_for_all_namespaces(field_selector="spec.nodeName=other-ghost").items) == {"p2"}
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(ns, field_selector="data.a=1")
    assert e.value.status == 400 and "field label not supported" in e.value.body


def test_limit_and_continue_page_through_a_list(api, ns):
    core = client.CoreV1Api(api)
    for i in range(25):
        core.create_namespaced_config_map(ns, cm(f"page-{i:02d}", {"paged": "yes"}))
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        resp = core.list_namespaced_config_map(ns, limit=10, _continue=token, label_selector="paged=yes")
        seen += [i.metadata.name for i in resp.items]
        pages += 1
        token = resp.metadata._continue
        if not token:
            break
        assert len(resp.items) == 10
    assert pages == 3
    assert seen == [f"page-{i:02d}" for i in range(25)]
    total = len(core.list_namespaced_config_map(ns).items)
    first = core.list_namespaced_config_map(ns, limit=5)
    assert len(first.items) == 5 and first.metadata.remaining_item_count == total - 5


# concurrency, generation, subresources -----------------------------------------------------------
def test_stale_resource_version_is_a_409_conflict(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, cm("occ", a="1"))
    first = core.read_namespaced_config_map("occ", ns)
    second = core.read_namespaced_config_map("occ", ns)
    first.data["a"] = "2"
    core.replace_namespaced_config_map("occ", ns, first)
    second.data["a"] = "3"
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map("occ", ns, second)
    assert e.value.status == 409 and "the object has been modified" in e.value.body
    assert core.read_namespaced_config_map("occ", ns).data["a"] == "2"
    # a patch that names a stale resourceVersion is refused too
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("occ", ns, {"metadata": {"resourceVersion": second.metadata.resource_version},
                                                     "data": {"a": "4"}})
    assert e.value.status == 409


def sts(name: str, replicas: int = 0) -> dict:
    return {"metadata": {"name": name}, "spec": {
        "replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_generation_moves_with_spec_not_with_metadata_or_status(api, ns):
    apps = client.AppsV1Api(api)
    s = apps.create_namespaced_stateful_set(ns, sts("gen"))
    assert s.metadata.generation == 1
    s = apps.patch_namespaced_stateful_set("gen", ns, {"metadata": {"labels": {"x": "y"}}})
    assert s.metadata.generation == 1
    s = apps.patch_namespaced_stateful_set("gen", ns, {"spec": {"template": {"metadata": {"annotations": {"r": "1"}}}}})
    assert s.metadata.generation == 2
    scale = apps.patch_namespaced_stateful_set_scale("gen", ns, {"spec": {"replicas": 0}})
    assert scale.spec.replicas == 0
    assert apps.read_namespaced_stateful_set("gen", ns).metadata.generation == 2  # a no-op scale changes nothing
    hpa_api = client.AutoscalingV1Api(api)
    hpa = hpa_api.create_namespaced_horizontal_pod_autoscaler(ns, {
        "metadata": {"name": "h"}, "spec": {"maxReplicas": 3, "scaleTargetRef": {"kind": "StatefulSet", "name": "gen",
                                                                                 "apiVersion": "apps/v1"}}})
    assert hpa.metadata.generation == 1
    hpa = hpa_api.patch_namespaced_horizontal_pod_autoscaler_status("h", ns, {"status": {"currentReplicas": 2,
                                                                                         "desiredReplicas": 2}})
    assert hpa.status.current_replicas == 2 and hpa.metadata.generation == 1


def test_status_and_main_resource_are_written_separately(api, ns):
    hpa_api = client.AutoscalingV1Api(api)
    hpa_api.create_namespaced_horizontal_pod_autoscaler(ns, {
        "metadata": {"name": "sep"}, "spec": {"maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "x"}}})
    cur = hpa_api.read_namespaced_horizontal_pod_autoscaler("sep", ns)
    # a status write does not change spec
    body = api.sanitize_for_serialization(cur)
    body["spec"]["maxReplicas"] = 9
    body["status"] = {"currentReplicas": 1, "desiredReplicas": 1}
    after = hpa_api.replace_namespaced_horizontal_pod_autoscaler_status("sep", ns, body)
    assert after.spec.max_replicas == 3 and after.status.current_replicas == 1
    # a main write does not change status
    body = api.sanitize_for_serialization(after)
    body["spec"]["maxReplicas"] = 5
    body["status"] = {"currentReplicas": 7, "desiredReplicas": 7}
    after = hpa_api.replace_namespaced_horizontal_pod_autoscaler("sep", ns, body)
    assert after.spec.max_replicas == 5 and after.status.current_replicas == 1
    assert after.metadata.generation == 2


def test_scale_subresource_read_and_patch(api, ns):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_stateful_set(ns, sts("scl"))
    scale = apps.read_namespaced_stateful_set_scale("scl", ns)
    assert scale.kind == "Scale" and scale.spec.replicas == 0 and scale.status.selector == "app=scl"
    scale = apps.patch_namespaced_stateful_set_scale("scl", ns, {"spec": {"replicas": 2}})
    assert scale.spec.replicas == 2
    s = apps.read_namespaced_stateful_set("scl", ns)
    assert s.spec.replicas == 2 and s.metadata.generation == 2
    body = api.sanitize_for_serialization(apps.read_namespaced_stateful_set_scale("scl", ns))
    body["spec"]["replicas"] = 0
    stale = dict(body, metadata=dict(body["metadata"], resourceVersion="1"))
    with pytest.raises(ApiException) as e:
        apps.replace_namespaced_stateful_set_scale("scl", ns, stale)
    assert e.value.status == 409
    del body["metadata"]["resourceVersion"]  # unconditional: the controller writes status meanwhile
    assert apps.replace_namespaced_stateful_set_scale("scl", ns, body).spec.replicas == 0
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_stateful_set_scale("scl", ns, {"spec": {"replicas": -3}})
    assert e.value.status == 422


def test_finalizers_hold_a_deleted_object_until_removed(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, {"metadata": {"name": "fin", "finalizers": ["example.com/keep"]}})
    core.delete_namespaced_config_map("fin", ns)
    held = core.read_namespaced_config_map("fin", ns)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["example.com/keep"]
    # deleting again changes nothing; adding a finalizer now is refused
    core.delete_namespaced_config_map("fin", ns)
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("fin", ns, {"metadata": {"finalizers": ["example.com/keep", "other/x"]}})
    assert e.value.status == 422
    core.patch_namespaced_config_map("fin", ns, {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("fin", ns)
    assert e.value.status == 404


def test_deleting_a_namespace_deletes_its_contents(api):
    core = client.CoreV1Api(api)
    name = f"doomed-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, cm("c1"))
    # A finalizer only this test removes holds the namespace in Terminating for the "late" create below:
    # without it a quick namespace controller could finish first, and the create would get 404, not 403.
    held = cm("held")
    held["metadata"]["finalizers"] = ["storageperf.test/hold"]
    core.create_namespaced_config_map(name, held)
    core.create_namespaced_secret(name, {"metadata": {"name": "s1"}, "stringData": {"k": "v"}})
    assert core.read_namespaced_secret("s1", name).data == {"k": "dg=="}
    client.AppsV1Api(api).create_namespaced_stateful_set(name, sts("sts1"))
    ns_obj = core.delete_namespace(name)  # the Namespace, marked for deletion
    assert ns_obj["status"]["phase"] == "Terminating" and ns_obj["metadata"]["deletionTimestamp"]
    assert core.read_namespace(name).status.phase == "Terminating"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(name, cm("late"))
    assert e.value.status == 403
    # the namespace waits for the held object, which is marked for deletion but stays until its finalizer goes
    for ev in watch.Watch().stream(core.list_namespaced_config_map, name, field_selector="metadata.name=held",
                                   timeout_seconds=60):
        if ev["object"].metadata.deletion_timestamp:
            break
    assert core.read_namespace(name).status.phase == "Terminating"
    core.patch_namespaced_config_map("held", name, {"metadata": {"finalizers": None}})
    gone = False
    for ev in watch.Watch().stream(core.list_namespace, field_selector=f"metadata.name={name}", timeout_seconds=60,
                                   resource_version=ns_obj["metadata"]["resourceVersion"]):
        if ev["type"] == "DELETED":
            gone = True
            break
    assert gone
    assert not core.list_namespaced_config_map(name).items
    assert not client.AppsV1Api(api).list_namespaced_stateful_set(name).items


# CRDs -----------------------------------------------------------------------------------------------
def test_crd_registered_at_run_time_serves_validates_and_goes_away(api, ns):
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(crd_body(scale=True))
    try:
        co = client.CustomObjectsApi(api)
        obj = co.create_namespaced_custom_object(GROUP, "v1", ns, "gizmos", {
            "apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": {"name": "g1"},
            "spec": {"size": 2, "color": "red", "undeclared": True}})
        assert obj["spec"] == {"size": 2, "color": "red"}  # pruned: not in the structural schema
        assert obj["metadata"]["generation"] == 1
        for bad, field in (({"size": -1}, "spec.size"), ({"color": "red"}, "spec.size"),
                           ({"size": 1, "color": "green"}, "spec.color"), ({"size": "big"}, "spec.size")):
            with pytest.raises(ApiException) as e:
                co.create_namespaced_custom_object(GROUP, "v1", ns, "gizmos", {
                    "apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": {"name": "bad"}, "spec": bad})
            assert e.value.status == 422 and field in e.value.body, (bad, e.value.body)
        dyn = dynamic.DynamicClient(api)
        gizmos = dyn.resources.get(api_version=f"{GROUP}/v1", kind="Gizmo")
        got = gizmos.get(name="g1", namespace=ns)
        assert got.spec.size == 2
        gizmos.status.patch(name="g1", namespace=ns, body={"status": {"replicas": 4}, "spec": {"size": 99}},
                            content_type="application/merge-patch+json")
        got = gizmos.get(name="g1", namespace=ns)
        assert got.status.replicas == 4 and got.spec.size == 2 and got.metadata.generation == 1
        scale = co.get_namespaced_custom_object_scale(GROUP, "v1", ns, "gizmos", "g1")
        assert scale["status"]["replicas"] == 4
        co.patch_namespaced_custom_object_scale(GROUP, "v1", ns, "gizmos", "g1", {"spec": {"replicas": 3}})
        assert co.get_namespaced_custom_object(GROUP, "v1", ns, "gizmos", "g1")["spec"]["replicas"] == 3
        with pytest.raises(ApiException) as e:
            co.patch_namespaced_custom_object(GROUP, "v1", ns, "gizmos", "g1", {"spec": {"size": 5}},
                                              _content_type="application/strategic-merge-patch+json")
        assert e.value.status == 415
    finally:
        ext.delete_custom_resource_definition(f"gizmos.{GROUP}")
    with pytest.raises(ApiException) as e:
        client.CustomObjectsApi(api).list_namespaced_custom_object(GROUP, "v1", ns, "gizmos")
    assert e.value.status == 404
    # recreating the CRD does not bring back the old objects
    ext.create_custom_resource_definition(crd_body())
    try:
        assert client.CustomObjectsApi(api).list_namespaced_custom_object(GROUP, "v1", ns, "gizmos")["items"] == []
    finally:
        ext.delete_custom_resource_definition(f"gizmos.{GROUP}")


# dynamic client and server-side apply ------------------------------------------------------------
def test_dynamic_client_create_patch_apply_delete(api, ns):
    dyn = dynamic.DynamicClient(api)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn", "labels": {"k": "v"}},
                     "data": {"a": "1"}}, namespace=ns)
    assert [i.metadata.name for i in cms.get(namespace=ns, label_selector="k=v").items] == ["dyn"]
    cms.patch(name="dyn", namespace=ns, body={"data": {"b": "2"}}, content_type="application/merge-patch+json")
    applied = cms.server_side_apply(namespace=ns, field_manager="tester", body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}, "data": {"c": "3"}})
    assert dict(applied.data) == {"a": "1", "b": "2", "c": "3"}
    # the applier, then the create and the merge patch, recorded (as the real server does) under the
    # client's User-Agent: "OpenAPI-Generator/<version>/python"
    assert [(m.manager, m.operation) for m in applied.metadata.managedFields] == [
        ("tester", "Apply"), ("OpenAPI-Generator", "Update")]
    created = cms.server_side_apply(namespace=ns, field_manager="tester", body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn-new"}, "data": {"x": "1"}})
    assert created.metadata.name == "dyn-new" and dict(created.data) == {"x": "1"}
    cms.delete(name="dyn", namespace=ns)
    assert [i.metadata.name for i in cms.get(namespace=ns, label_selector="k=v").items] == []


def test_apply_without_field_manager_is_refused(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, cm("nofm"))
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("nofm", ns, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nofm"}},
                                         _content_type="application/apply-patch+yaml")
    # the real server validates PatchOptions: 422, not 400
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')


# schema completeness -------------------------------------------------------------------------------
def test_every_built_in_kind_reads_back_through_the_typed_models(api, ns):
    """kubernetes 37's pydantic models reject objects that miss required fields: everything the twin
    serves, including what its controllers wrote, must read back."""
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    apps.create_namespaced_stateful_set(ns, sts("complete", replicas=1))
    batch.create_namespaced_job(ns, {"metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
    core.create_namespaced_service(ns, {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}})
    core.create_namespaced_pod(ns, {"metadata": {"name": "bare"}, "spec": {"nodeName": "ghost-node", "containers": [
        {"name": "c", "image": "busybox"}]}})
    core.patch_namespaced_pod_status("bare", ns, {"status": {"containerStatuses": [{"name": "c"}],
                                                             "conditions": [{"type": "Ready", "status": "False"}]}})
    pod = core.read_namespaced_pod("bare", ns)
    assert pod.status.container_statuses[0].image_id == "" and pod.status.container_statuses[0].restart_count == 0
    listers = [core.list_pod_for_all_namespaces, core.list_node, core.list_namespace, core.list_event_for_all_namespaces,
               core.list_service_for_all_namespaces, core.list_config_map_for_all_namespaces,
               core.list_persistent_volume_claim_for_all_namespaces, core.list_persistent_volume,
               apps.list_stateful_set_for_all_namespaces, apps.list_deployment_for_all_namespaces,
               apps.list_replica_set_for_all_namespaces, apps.list_controller_revision_for_all_namespaces,
               batch.list_job_for_all_namespaces, client.StorageV1Api(api).list_storage_class,
               client.StorageV1Api(api).list_csi_node, client.StorageV1Api(api).list_csi_driver,
               client.StorageV1Api(api).list_volume_attachment, client.ApiextensionsV1Api(api).list_custom_resource_definition]
    for lister in listers:
        result = lister()
        assert result.items is not None, lister.__name__
    nodes = core.list_node().items
    assert len(nodes) == 2 and all(n.status.node_info.kubelet_version for n in nodes)
