"""Conformance: kubectl 1.32 against the twin, command by command.

apply (create, re-apply unchanged, change through strategic merge, --server-side with field
ownership), get (-o json, Table columns, -o wide), scale, patch --type=json|merge|strategic
(merge keys, directives, no-op "no change"), delete with cascade background / foreground / orphan,
and wait --for=condition / --for=delete. Every step asserts what the cluster holds afterwards.
"""
from __future__ import annotations

import json
import subprocess
import threading
import uuid

import pytest

from tests.support.twin import Twin

WIDGETS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.kubectl.example.com"},
    "spec": {"group": "kubectl.example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("kubectl") / "twin", nodes=2, time_scale=0.01) as t:
        t.kubectl("apply", "-f", "-", input=json.dumps(WIDGETS_CRD))
        yield t


@pytest.fixture
def ns(twin):
    name = f"k-{uuid.uuid4().hex[:8]}"
    twin.kubectl("create", "namespace", name)
    yield name
    twin.kubectl("delete", "namespace", name, "--wait=false", check=False)


def k(twin: Twin, ns: str, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    return twin.kubectl("-n", ns, *args, **kw)


def kj(twin: Twin, ns: str, *args: str) -> dict:
    return json.loads(k(twin, ns, *args, "-o", "json").stdout)


def sts_manifest(name: str, replicas: int = 1, env_b: str = "2", args: list[str] | None = None) -> str:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                     {"name": "main", "image": "nginx:1.25", "args": args or ["a", "b"],
                      "env": [{"name": "A", "value": "1"}, {"name": "B", "value": env_b}],
                      "ports": [{"containerPort": 80, "name": "http"}]},
                     {"name": "side", "image": "busybox:1.36"}]}}}})


# apply ----------------------------------------------------------------------------------------
def test_apply_creates_then_reapply_is_unchanged_then_change_is_configured(twin, ns):
    assert "created" in k(twin, ns, "apply", "-f", "-", input=sts_manifest("web")).stdout
    # the StatefulSet controller writes status (a new resourceVersion) until its pod is ready: wait for that, so the
    # resourceVersion compared below can change only by a write of the re-apply
    k(twin, ns, "rollout", "status", "sts/web", "--timeout=120s")
    first = kj(twin, ns, "get", "sts", "web")
    assert "kubectl.kubernetes.io/last-applied-configuration" in first["metadata"]["annotations"]
    assert first["metadata"]["generation"] == 1
    assert "unchanged" in k(twin, ns, "apply", "-f", "-", input=sts_manifest("web")).stdout
    assert kj(twin, ns, "get", "sts", "web")["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    # the re-apply of a change is a strategic merge patch: env merged by name, args replaced
    assert "configured" in k(twin, ns, "apply", "-f", "-", input=sts_manifest("web", env_b="3", args=["z"])).stdout
    cur = kj(twin, ns, "get", "sts", "web")
    main = cur["spec"]["template"]["spec"]["containers"][0]
    assert main["args"] == ["z"]
    assert main["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]
    assert main["imagePullPolicy"] == "IfNotPresent"  # server defaults survive the patch
    assert cur["metadata"]["generation"] == 2


def test_apply_server_side_creates_and_owns_its_fields(twin, ns):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"a": "1", "b": "2"}},
          "data": {"x": "1", "y": "2"}}
    out = k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(cm)).stdout
    assert "serverside-applied" in out
    got = kj(twin, ns, "get", "cm", "ssa", "--show-managed-fields")
    mf = got["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in mf] == [("kubectl", "Apply")]
    assert "f:x" in mf[0]["fieldsV1"]["f:data"]
    # another writer's field survives; the fields this manager stopped applying go
    k(twin, ns, "label", "cm", "ssa", "other=keep")
    cm["metadata"]["labels"] = {"a": "1"}
    cm["data"] = {"x": "10"}
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(cm))
    got = kj(twin, ns, "get", "cm", "ssa")
    assert got["data"] == {"x": "10"}
    assert got["metadata"]["labels"] == {"a": "1", "other": "keep"}
    # a second server-side apply of the same configuration changes nothing
    rv = got["metadata"]["resourceVersion"]
    k(twin, ns, "apply", "--server-side", "-f", "-", input=json.dumps(cm))
    assert kj(twin, ns, "get", "cm", "ssa")["metadata"]["resourceVersion"] == rv


def test_apply_server_side_merges_list_items_by_key(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=sts_manifest("ssa-sts"))
    out = k(twin, ns, "apply", "--server-side", "--force-conflicts", "-f", "-", input=sts_manifest("ssa-sts", replicas=2))
    assert "serverside-applied" in out.stdout
    spec = kj(twin, ns, "get", "sts", "ssa-sts")["spec"]
    assert spec["replicas"] == 2
    ports = spec["template"]["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]  # one port, keyed by containerPort+protocol
    # a container this manager stops applying goes; the one it keeps keeps its server defaults
    one = json.loads(sts_manifest("ssa-sts", replicas=2))
    one["spec"]["template"]["spec"]["containers"] = one["spec"]["template"]["spec"]["containers"][:1]
    k(twin, ns, "apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(one))
    cs = kj(twin, ns, "get", "sts", "ssa-sts")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in cs] == ["main"] and cs[0]["imagePullPolicy"] == "IfNotPresent"


# get -------------------------------------------------------------------------------------------
def test_get_json_returns_full_objects(twin, ns):
    k(twin, ns, "create", "configmap", "one", "--from-literal=a=1")
    lst = kj(twin, ns, "get", "configmaps")
    names = [i["metadata"]["name"] for i in lst["items"]]
    assert "one" in names
    one = kj(twin, ns, "get", "configmap", "one")
    assert one["kind"] == "ConfigMap" and one["apiVersion"] == "v1" and one["data"] == {"a": "1"}
    md = one["metadata"]
    assert md["namespace"] == ns and md["uid"] and md["resourceVersion"].isdigit() and md["creationTimestamp"].endswith("Z")


def test_get_prints_server_side_table_columns_and_wide(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=sts_manifest("tbl"))
    k(twin, ns, "create", "configmap", "cfg", "--from-literal=a=1", "--from-literal=b=2")
    head, row = k(twin, ns, "get", "sts", "tbl").stdout.splitlines()[:2]
    assert head.split() == ["NAME", "READY", "AGE"]
    assert row.split()[0] == "tbl" and row.split()[1].endswith("/1")
    wide = k(twin, ns, "get", "sts", "tbl", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert "main,side" in wide[1] and "nginx:1.25,busybox:1.36" in wide[1]
    cm = k(twin, ns, "get", "configmap", "cfg").stdout.splitlines()
    assert cm[0].split() == ["NAME", "DATA", "AGE"] and cm[1].split()[:2] == ["cfg", "2"]
    nsrow = twin.kubectl("get", "namespace", ns).stdout.splitlines()
    assert nsrow[0].split() == ["NAME", "STATUS", "AGE"] and nsrow[1].split()[1] == "Active"
    nodes = twin.kubectl("get", "nodes", "-o", "wide").stdout.splitlines()
    assert nodes[0].split()[:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    # a watch prints rows of the same table. Read until the object's row, then stop kubectl: a 1 s request
    # timeout ended the watch before, and on a loaded machine it also cut the list that comes first
    watcher = subprocess.Popen(["kubectl", "-n", ns, "get", "configmap", "cfg", "--watch-only=false", "-w"],
                               env=twin.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bound = threading.Timer(120, watcher.kill)  # for a watch that never prints the row, not a measurement
    bound.start()
    rows = []
    try:
        for line in watcher.stdout:
            rows.append(line.split())
            if rows[-1][:1] == ["cfg"]:
                break
    finally:
        bound.cancel()
        watcher.kill()
        watcher.communicate()
    assert rows[0][:2] == ["NAME", "DATA"] and rows[-1][:2] == ["cfg", "2"], rows


def test_get_custom_resource_columns(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=json.dumps({"apiVersion": "kubectl.example.com/v1", "kind": "Widget",
                                                      "metadata": {"name": "w"}, "spec": {"size": 3}}))
    lines = k(twin, ns, "get", "widgets").stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE"] and lines[1].split()[0] == "w"


# scale ------------------------------------------------------------------------------------------
def test_scale_changes_replicas_through_the_scale_subresource(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=sts_manifest("sc"))
    gen = kj(twin, ns, "get", "sts", "sc")["metadata"]["generation"]
    assert "scaled" in k(twin, ns, "scale", "sts", "sc", "--replicas=3").stdout
    sts = kj(twin, ns, "get", "sts", "sc")
    assert sts["spec"]["replicas"] == 3
    assert sts["metadata"]["generation"] == gen + 1
    scale = json.loads(twin.kubectl("get", "--raw", f"/apis/apps/v1/namespaces/{ns}/statefulsets/sc/scale").stdout)
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=sc"
    assert k(twin, ns, "scale", "sts", "sc", "--replicas=-1", check=False).returncode != 0


# patch ------------------------------------------------------------------------------------------
def test_patch_json_replace_add_and_append(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=sts_manifest("jp"))
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 2},
           {"op": "add", "path": "/metadata/labels/extra", "value": "yes"},
           {"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "c"}]
    k(twin, ns, "patch", "sts", "jp", "--type=json", "-p", json.dumps(ops))
    sts = kj(twin, ns, "get", "sts", "jp")
    assert sts["spec"]["replicas"] == 2 and sts["metadata"]["labels"]["extra"] == "yes"
    assert sts["spec"]["template"]["spec"]["containers"][0]["args"] == ["a", "b", "c"]
    bad = k(twin, ns, "patch", "sts", "jp", "--type=json", "-p", json.dumps([{"op": "remove", "path": "/spec/nope"}]),
            check=False)
    assert bad.returncode != 0


def test_patch_merge_sets_and_removes_keys(twin, ns):
    k(twin, ns, "create", "configmap", "mp", "--from-literal=a=1", "--from-literal=b=2")
    k(twin, ns, "patch", "configmap", "mp", "--type=merge", "-p", json.dumps({"data": {"a": None, "c": "3"}}))
    assert kj(twin, ns, "get", "configmap", "mp")["data"] == {"b": "2", "c": "3"}


def test_patch_strategic_merges_containers_by_name_and_honours_directives(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=sts_manifest("smp"))
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "main", "args": ["only"], "env": [{"name": "C", "value": "3"}]}]}}}}
    k(twin, ns, "patch", "sts", "smp", "-p", json.dumps(patch))
    cs = kj(twin, ns, "get", "sts", "smp")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in cs] == ["main", "side"]
    assert cs[0]["args"] == ["only"]                       # args: no merge strategy, replaced
    assert [e["name"] for e in cs[0]["env"]] == ["A", "B", "C"]  # env merged by name
    assert cs[0]["image"] == "nginx:1.25"                  # untouched fields stay
    order = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "main"}],
                                            "containers": [{"name": "side", "image": "busybox:1.37"}]}}}}
    k(twin, ns, "patch", "sts", "smp", "-p", json.dumps(order))
    cs = kj(twin, ns, "get", "sts", "smp")["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in cs] == [("side", "busybox:1.37"), ("main", "nginx:1.25")]
    delete = {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}
    k(twin, ns, "patch", "sts", "smp", "-p", json.dumps(delete))
    cs = kj(twin, ns, "get", "sts", "smp")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in cs] == ["main"]
    replace = {"metadata": {"labels": {"$patch": "replace", "only": "this"}}}
    k(twin, ns, "patch", "sts", "smp", "-p", json.dumps(replace))
    assert kj(twin, ns, "get", "sts", "smp")["metadata"]["labels"] == {"only": "this"}


def test_patch_that_changes_nothing_keeps_resource_version(twin, ns):
    k(twin, ns, "create", "configmap", "noop", "--from-literal=a=1")
    rv = kj(twin, ns, "get", "configmap", "noop")["metadata"]["resourceVersion"]
    for ptype, body in (("merge", {"data": {"a": "1"}}), ("json", [{"op": "replace", "path": "/data/a", "value": "1"}]),
                        ("strategic", {"data": {"a": "1"}})):
        out = k(twin, ns, "patch", "configmap", "noop", f"--type={ptype}", "-p", json.dumps(body)).stdout
        assert "(no change)" in out, (ptype, out)
    assert kj(twin, ns, "get", "configmap", "noop")["metadata"]["resourceVersion"] == rv


# delete ------------------------------------------------------------------------------------------
def _owner_and_dependents(twin: Twin, ns: str, owner: str, deps: list[str], dep_finalizer: bool = False) -> str:
    k(twin, ns, "create", "configmap", owner)
    uid = kj(twin, ns, "get", "configmap", owner)["metadata"]["uid"]
    for d in deps:
        md = {"name": d, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid,
                                              "blockOwnerDeletion": True}]}
        if dep_finalizer:
            md["finalizers"] = ["example.com/hold"]
        k(twin, ns, "create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}))
    return uid


def test_delete_background_cascades_to_dependents(twin, ns):
    _owner_and_dependents(twin, ns, "owner", ["dep-1", "dep-2"])
    assert 'configmap "owner" deleted' in k(twin, ns, "delete", "configmap", "owner").stdout
    assert k(twin, ns, "wait", "--for=delete", "configmap/dep-1", "configmap/dep-2", "--timeout=60s").returncode == 0
    names = [i["metadata"]["name"] for i in kj(twin, ns, "get", "configmaps")["items"]]
    assert not {"owner", "dep-1", "dep-2"} & set(names)


def test_delete_foreground_waits_for_dependents(twin, ns):
    _owner_and_dependents(twin, ns, "fg-owner", ["fg-dep"], dep_finalizer=True)
    k(twin, ns, "delete", "configmap", "fg-owner", "--cascade=foreground", "--wait=false")
    owner = kj(twin, ns, "get", "configmap", "fg-owner")
    assert owner["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in owner["metadata"]["finalizers"]
    k(twin, ns, "wait", "--for=jsonpath={.metadata.deletionTimestamp}", "configmap/fg-dep", "--timeout=60s")
    # the dependent is held by its own finalizer, so the owner stays
    assert kj(twin, ns, "get", "configmap", "fg-owner")["metadata"]["name"] == "fg-owner"
    k(twin, ns, "patch", "configmap", "fg-dep", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert k(twin, ns, "wait", "--for=delete", "configmap/fg-owner", "configmap/fg-dep", "--timeout=60s").returncode == 0


def test_delete_orphan_keeps_dependents_without_owner_references(twin, ns):
    _owner_and_dependents(twin, ns, "or-owner", ["or-dep"])
    k(twin, ns, "delete", "configmap", "or-owner", "--cascade=orphan")
    assert k(twin, ns, "get", "configmap", "or-owner", check=False).returncode != 0
    dep = kj(twin, ns, "get", "configmap", "or-dep")
    assert not dep["metadata"].get("ownerReferences")


# wait --------------------------------------------------------------------------------------------
def test_wait_for_condition_sees_a_status_change(twin, ns):
    k(twin, ns, "apply", "-f", "-", input=json.dumps({"apiVersion": "kubectl.example.com/v1", "kind": "Widget",
                                                      "metadata": {"name": "w1"}, "spec": {"size": 1}}))
    waiter = subprocess.Popen(["kubectl", "-n", ns, "wait", "--for=condition=Ready", "widget/w1", "--timeout=60s"],
                              env=twin.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    status = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Done", "message": "",
                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    k(twin, ns, "patch", "widget", "w1", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    out, err = waiter.communicate(timeout=90)
    assert waiter.returncode == 0, err
    assert "condition met" in out
    assert kj(twin, ns, "get", "widget", "w1")["spec"] == {"size": 1}


def test_wait_for_delete_returns_once_the_finalizer_goes(twin, ns):
    k(twin, ns, "create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "held", "finalizers": ["example.com/hold"]}}))
    k(twin, ns, "delete", "configmap", "held", "--wait=false")
    assert kj(twin, ns, "get", "configmap", "held")["metadata"]["deletionTimestamp"]
    waiter = subprocess.Popen(["kubectl", "-n", ns, "wait", "--for=delete", "configmap/held", "--timeout=60s"],
                              env=twin.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    k(twin, ns, "patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    out, err = waiter.communicate(timeout=90)
    assert waiter.returncode == 0, err
    assert k(twin, ns, "get", "configmap", "held", check=False).returncode != 0


# kubectl create <generator>: protobuf request bodies ----------------------------------------------
def test_kubectl_create_generators_send_protobuf_and_the_objects_arrive_whole(twin, ns):
    k(twin, ns, "create", "configmap", "gen-cm", "--from-literal=a=1", "--from-literal=b=two")
    k(twin, ns, "create", "secret", "generic", "gen-secret", "--from-literal=password=s3cret")
    k(twin, ns, "create", "deployment", "gen-deploy", "--image=nginx:1.25", "--replicas=0", "--port=8080")
    k(twin, ns, "create", "service", "clusterip", "gen-svc", "--tcp=80:8080")
    k(twin, ns, "create", "job", "gen-job", "--image=busybox", "--", "echo", "hi")
    k(twin, ns, "create", "role", "gen-role", "--verb=get,list", "--resource=pods")
    k(twin, ns, "create", "rolebinding", "gen-rb", "--role=gen-role", "--user=alice")
    assert kj(twin, ns, "get", "configmap", "gen-cm")["data"] == {"a": "1", "b": "two"}
    assert kj(twin, ns, "get", "secret", "gen-secret")["data"] == {"password": "czNjcmV0"}
    d = kj(twin, ns, "get", "deployment", "gen-deploy")["spec"]
    assert d["replicas"] == 0 and d["selector"] == {"matchLabels": {"app": "gen-deploy"}}
    assert d["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    c = d["template"]["spec"]["containers"][0]
    assert (c["name"], c["image"], c["ports"]) == ("nginx", "nginx:1.25", [{"containerPort": 8080, "protocol": "TCP"}])
    assert "workingDir" not in c and "stdin" not in c  # Go's zero values stay omitted
    svc = kj(twin, ns, "get", "service", "gen-svc")["spec"]
    assert svc["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    job = kj(twin, ns, "get", "job", "gen-job")["spec"]["template"]["spec"]
    assert job["containers"][0]["command"] == ["echo", "hi"] and job["restartPolicy"] == "Never"
    role = kj(twin, ns, "get", "role", "gen-role")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    rb = kj(twin, ns, "get", "rolebinding", "gen-rb")
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gen-role"}
    assert rb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
