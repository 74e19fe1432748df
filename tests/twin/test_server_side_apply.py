"""Server-side apply and metadata.managedFields, through kubectl, the kubernetes Python client and kubernetes.core.

What kube-apiserver (structured-merge-diff) does and the twin must too: apply creates and updates, a re-apply of
the same configuration is a no-op; each manager owns the fields it set (FieldsV1, list-maps keyed by their
x-kubernetes-list-map-keys, lists of kinds without a schema atomic); another manager's change of an owned field is
a 409 with FieldManagerConflict causes unless forced, the same value is shared; create, PUT and the other patches
record Update entries under fieldManager or the User-Agent's first segment; fields an applier drops go unless
another manager owns them; managedFields: [{}] clears them; dryRun=All changes nothing.
docs/reference/kubernetes-apiserver.md says what is modelled.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException

from tests.support.twin import COLLECTIONS

PLAYBOOKS = Path(__file__).parent / "playbooks"


def deployment(name: str, replicas: int = 1, **extra) -> dict:
    container = {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                 "env": [{"name": "A", "value": "1"}], **extra}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}}


def pod_template(name: str, image: str = "nginx:1.25") -> dict:
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 80}]}]}}}


def k(twin, ns, *args, input=None, check=True):
    return twin.kubectl("-n", ns, *args, input=input, check=check)


def get(twin, ns, kind, name) -> dict:
    return twin.kubectl_json("-n", ns, "get", kind, name, "--show-managed-fields")


def entries(obj) -> list[tuple[str, str]]:
    return [(m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields") or []]


def fields_of(obj, manager, operation="Apply") -> dict:
    return next(m["fieldsV1"] for m in obj["metadata"]["managedFields"]
                if m["manager"] == manager and m["operation"] == operation)


# kubectl ----------------------------------------------------------------------------------------
def test_kubectl_apply_creates_owns_list_map_items_and_reapply_is_a_no_op(twin, ns):
    out = k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web")))
    assert "serverside-applied" in out.stdout
    first = get(twin, ns, "deploy", "web")
    assert entries(first) == [("kubectl", "Apply")]
    entry = first["metadata"]["managedFields"][0]
    assert entry["apiVersion"] == "apps/v1" and entry["fieldsType"] == "FieldsV1" and entry["time"].endswith("Z")
    spec = entry["fieldsV1"]["f:spec"]
    assert spec["f:replicas"] == {} and spec["f:selector"] == {}  # LabelSelector is an atomic map
    container = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container["."] == {} and container["f:image"] == {}
    # ports keyed by containerPort and protocol (its default TCP), env by name
    assert container["f:ports"]['k:{"containerPort":80,"protocol":"TCP"}'] == {".": {}, "f:containerPort": {}}
    assert container["f:env"]['k:{"name":"A"}'] == {".": {}, "f:name": {}, "f:value": {}}
    # defaulted fields are nobody's
    assert "f:imagePullPolicy" not in container and "f:strategy" not in spec
    assert k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web"))).returncode == 0
    assert entries(get(twin, ns, "deploy", "web")) == [("kubectl", "Apply")]


def test_kubectl_reapply_of_the_same_object_keeps_its_resource_version(twin, ns):
    # a PodTemplate: list-maps like a Deployment's, and no controller that writes it in between
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(pod_template("tpl")))
    first = get(twin, ns, "podtemplate", "tpl")
    again = k(twin, ns, "apply", "--server-side", "-o", "json", "-f", "-", input=json.dumps(pod_template("tpl")))
    assert json.loads(again.stdout)["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert get(twin, ns, "podtemplate", "tpl")["metadata"] == first["metadata"]


def test_kubectl_conflict_then_shared_value_then_force(twin, ns):
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web", replicas=2)))
    b = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 5}}
    refused = k(twin, ns, "apply", "--server-side", "--field-manager=b", "-f", "-", input=json.dumps(b), check=False)
    assert refused.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in refused.stderr
    assert get(twin, ns, "deploy", "web")["spec"]["replicas"] == 2
    # the value already there: both own it
    b["spec"]["replicas"] = 2
    k(twin, ns, "apply", "--server-side", "--field-manager=b", "-f", "-", input=json.dumps(b))
    shared = get(twin, ns, "deploy", "web")
    assert fields_of(shared, "kubectl")["f:spec"]["f:replicas"] == {}
    assert fields_of(shared, "b") == {"f:spec": {"f:replicas": {}}}
    # forced: b takes the field, kubectl keeps the rest
    b["spec"]["replicas"] = 4
    k(twin, ns, "apply", "--server-side", "--field-manager=b", "--force-conflicts", "-f", "-", input=json.dumps(b))
    forced = get(twin, ns, "deploy", "web")
    assert forced["spec"]["replicas"] == 4
    assert "f:replicas" not in fields_of(forced, "kubectl")["f:spec"]
    assert fields_of(forced, "b") == {"f:spec": {"f:replicas": {}}}
    # now kubectl's old value conflicts with b
    again = k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web", replicas=2)),
              check=False)
    assert 'conflict with "b": .spec.replicas' in again.stderr


def test_update_managers_are_recorded_and_conflict_with_their_version(twin, ns):
    k(twin, ns, "create", "-f", "-", input=json.dumps(deployment("web")))
    created = get(twin, ns, "deploy", "web")
    assert entries(created) == [("kubectl-create", "Update")]
    made = fields_of(created, "kubectl-create", "Update")
    # an Update owns what it set, defaults included; a created map is a member of the set (".")
    assert made["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert "f:imagePullPolicy" in made["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    k(twin, ns, "patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    patched = get(twin, ns, "deploy", "web")
    assert fields_of(patched, "kubectl-patch", "Update") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields_of(patched, "kubectl-create", "Update")["f:spec"]  # moved, not shared
    out = k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web", replicas=1)), check=False)
    assert 'Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas' in out.stderr
    # the other fields, which kubectl-create owns with the same values, are shared: the forced apply takes replicas
    k(twin, ns, "apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(deployment("web", replicas=1)))
    after = get(twin, ns, "deploy", "web")
    assert ("kubectl-patch", "Update") not in entries(after)
    assert entries(after)[0] == ("kubectl", "Apply")


def test_client_side_apply_and_label_are_update_managers(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=json.dumps(deployment("web")))
    k(twin, ns, "label", "deploy", "web", "tier=front")
    got = get(twin, ns, "deploy", "web")
    assert sorted(entries(got)) == [("kubectl-client-side-apply", "Update"), ("kubectl-label", "Update")]
    assert fields_of(got, "kubectl-label", "Update") == {"f:metadata": {"f:labels": {"f:tier": {}}}}


def test_fields_an_applier_drops_go_unless_another_manager_owns_them(twin, ns):
    d = deployment("web")
    d["metadata"]["labels"].update(a="1", b="2")
    d["metadata"]["annotations"] = {"note": "x"}
    d["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "B", "value": "2"})
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(d))
    k(twin, ns, "label", "deploy", "web", "c=3")
    k(twin, ns, "annotate", "deploy", "web", "--overwrite", "note=x")  # same value: no change, so not owned
    d["metadata"]["labels"].pop("b")
    d["metadata"].pop("annotations")
    d["spec"]["template"]["spec"]["containers"][0]["env"].pop()
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(d))
    got = get(twin, ns, "deploy", "web")
    assert got["metadata"]["labels"] == {"app": "web", "a": "1", "c": "3"}
    assert "note" not in (got["metadata"].get("annotations") or {})
    assert got["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    assert "f:b" not in fields_of(got, "kubectl")["f:metadata"]["f:labels"]


def test_managed_fields_cleared_with_one_empty_entry(twin, ns):
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web")))
    k(twin, ns, "patch", "deploy", "web", "--type=merge", "-p", '{"metadata":{"managedFields":[{}]}}')
    assert "managedFields" not in get(twin, ns, "deploy", "web")["metadata"]
    # an empty list is not a reset: clients that do not know the field do not wipe it
    k(twin, ns, "label", "deploy", "web", "x=1")
    k(twin, ns, "patch", "deploy", "web", "--type=merge", "-p", '{"metadata":{"managedFields":[]}}')
    assert entries(get(twin, ns, "deploy", "web")) == [("kubectl-label", "Update")]


def test_dry_run_apply_changes_nothing(twin, ns):
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web")))
    before = get(twin, ns, "deploy", "web")
    out = k(twin, ns, "apply", "--server-side", "--dry-run=server", "-o", "json", "-f", "-",
            input=json.dumps(deployment("web", replicas=7)))
    assert json.loads(out.stdout)["spec"]["replicas"] == 7
    after = get(twin, ns, "deploy", "web")
    assert after["spec"]["replicas"] == 1 and after["metadata"] == before["metadata"]
    created = k(twin, ns, "apply", "--server-side", "--dry-run=server", "-f", "-", input=json.dumps(deployment("ghost")))
    assert created.returncode == 0
    assert k(twin, ns, "get", "deploy", "ghost", check=False).returncode != 0


def test_lists_of_a_kind_without_schema_are_atomic(twin, ns):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.ssa.example.com"},
           "spec": {"group": "ssa.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    twin.kubectl("apply", "-f", "-", input=json.dumps(crd))
    twin.kubectl("wait", "--for=condition=Established", "crd/gadgets.ssa.example.com")
    g = {"apiVersion": "ssa.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
         "spec": {"items": [{"name": "a", "size": 1}], "mode": {"fast": True}}}
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(g))
    got = get(twin, ns, "gadgets", "g")
    # a free-form map's keys are members of the set; the list is one leaf
    assert fields_of(got, "kubectl") == {"f:spec": {".": {}, "f:items": {}, "f:mode": {".": {}, "f:fast": {}}}}
    g["spec"] = {"items": [{"name": "a", "size": 2}]}
    out = k(twin, ns, "apply", "--server-side", "--field-manager=other", "-f", "-", input=json.dumps(g), check=False)
    assert 'conflict with "kubectl": .spec.items' in out.stderr


# the kubernetes Python client -------------------------------------------------------------------
def test_python_client_conflict_status_and_force(api, ns):
    dyn = dynamic.DynamicClient(api)
    deps = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    body = deployment("py", replicas=2)
    body["metadata"]["namespace"] = ns
    created = deps.server_side_apply(body=body, namespace=ns, field_manager="alpha")
    assert [m.manager for m in created.metadata.managedFields] == ["alpha"]
    change = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "py", "namespace": ns},
              "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
    with pytest.raises(ApiException) as e:
        deps.server_side_apply(body=change, namespace=ns, field_manager="beta")
    assert e.value.status == 409
    status = json.loads(e.value.body)
    assert status["reason"] == "Conflict" and status["code"] == 409
    assert status["message"].startswith('Apply failed with 2 conflicts: conflicts with "alpha":\n- ')
    assert sorted((c["type"], c["message"], c["field"]) for c in status["details"]["causes"]) == [
        ("FieldManagerConflict", 'conflict with "alpha"', ".spec.replicas"),
        ("FieldManagerConflict", 'conflict with "alpha"', '.spec.template.spec.containers[name="web"].image')]
    forced = deps.server_side_apply(body=change, namespace=ns, field_manager="beta", force_conflicts=True)
    assert forced.spec.replicas == 4 and forced.spec.template.spec.containers[0].image == "nginx:1.27"
    beta = next(m for m in forced.to_dict()["metadata"]["managedFields"] if m["manager"] == "beta")
    assert beta["operation"] == "Apply"
    assert beta["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}'] == {
        ".": {}, "f:image": {}, "f:name": {}}


def test_python_client_reapply_is_a_no_op(api, ns):
    tpls = dynamic.DynamicClient(api).resources.get(api_version="v1", kind="PodTemplate")
    created = tpls.server_side_apply(body=pod_template("tpl"), namespace=ns, field_manager="alpha")
    again = tpls.server_side_apply(body=pod_template("tpl"), namespace=ns, field_manager="alpha")
    assert again.metadata.resourceVersion == created.metadata.resourceVersion
    changed = tpls.server_side_apply(body=pod_template("tpl", "nginx:1.27"), namespace=ns, field_manager="alpha")
    assert changed.metadata.resourceVersion != created.metadata.resourceVersion


def test_python_client_field_manager_defaults_to_the_user_agent(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    core.patch_namespaced_config_map("cm", ns, {"data": {"b": "2"}}, field_manager="mine")
    cm = core.read_namespaced_config_map("cm", ns)
    got = {(m.manager, m.operation): m.fields_v1 for m in cm.metadata.managed_fields}
    # the client's User-Agent is "OpenAPI-Generator/<version>/python": the server keeps its first segment
    assert got == {("OpenAPI-Generator", "Update"): {"f:data": {".": {}, "f:a": {}}},
                   ("mine", "Update"): {"f:data": {"f:b": {}}}}
    # a PUT that sends managedFields back as read: the changed field moves to its manager
    cm.data["a"] = "10"
    core.replace_namespaced_config_map("cm", ns, cm, field_manager="mine")
    got = {m.manager: m.fields_v1 for m in core.read_namespaced_config_map("cm", ns).metadata.managed_fields}
    assert got == {"OpenAPI-Generator": {"f:data": {}}, "mine": {"f:data": {"f:a": {}, "f:b": {}}}}


def test_apply_requests_the_server_refuses(api, ns):
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(
            "x", ns, {"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "x", "managedFields": [{"manager": "me", "operation": "Apply"}]}},
            field_manager="me", _content_type="application/apply-patch+yaml")
    assert e.value.status == 400 and "metadata.managedFields must be nil" in e.value.body
    core.create_namespaced_config_map(ns, {"metadata": {"name": "y"}})
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("y", ns, {"data": {"a": "1"}}, force=True)
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch')


# kubernetes.core ----------------------------------------------------------------------------------
@pytest.mark.skipif(not (COLLECTIONS / "ansible_collections" / "kubernetes" / "core").is_dir(),
                    reason="kubernetes.core is not installed (bash scripts/setup.sh python)")
def test_kubernetes_core_server_side_apply(twin):
    ns = f"ssa-{uuid.uuid4().hex[:6]}"
    twin.kubectl("create", "namespace", ns)
    run = twin.playbook(PLAYBOOKS / "k8s_server_side_apply.yml", extra_vars={"ns": ns},
                        env={"ANSIBLE_PIPELINING": "1"})
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]
    first = run.task("Apply as ansible-a")
    assert first["status"] == "ok" and first["result"]["changed"] is True
    assert [m["manager"] for m in first["result"]["result"]["metadata"]["managedFields"]] == ["ansible-a"]
    second = run.task("Apply the same as ansible-a again")
    assert second["status"] == "ok" and second["result"]["changed"] is False
    refused = run.task("Apply other replicas as ansible-b")
    assert refused["status"] == "failed"
    status = json.loads(refused["result"]["msg"].partition(": ")[2])  # "Failed to apply object: <the Status>"
    assert refused["result"]["reason"] == "Conflict" and status["code"] == 409
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "ansible-a": .spec.replicas'
    forced = run.task("Force other replicas as ansible-b")
    assert forced["status"] == "ok" and forced["result"]["changed"] is True
    live = twin.kubectl_json("-n", ns, "get", "deploy", "ssa", "--show-managed-fields")
    assert live["spec"]["replicas"] == 3
    owners = {m["manager"]: m["fieldsV1"] for m in live["metadata"]["managedFields"]}
    assert owners["ansible-b"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owners["ansible-a"]["f:spec"]


def test_scale_subresource_is_an_update_manager_of_replicas(twin, ns):
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web")))
    k(twin, ns, "scale", "deploy", "web", "--replicas=3")
    scaled = get(twin, ns, "deploy", "web")
    scaler = [m for m in scaled["metadata"]["managedFields"] if m.get("subresource") == "scale"]
    assert [(m["manager"], m["operation"], m["fieldsV1"]) for m in scaler] == [
        ("kubectl", "Update", {"f:spec": {"f:replicas": {}}})]
    out = k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(deployment("web")), check=False)
    assert ('Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: '
            '.spec.replicas') in out.stderr


def test_field_manager_longer_than_128_bytes_is_invalid(api, ns):
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "long"}}, field_manager="m" * 129)
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes')
