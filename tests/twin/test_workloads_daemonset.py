"""The twin's DaemonSet controller, as kubectl, the kubernetes Python client and kubernetes.core meet a real one
(apps/v1 DaemonSet and ControllerRevision in the API reference; pkg/controller/daemon for what it writes)."""
from __future__ import annotations

import json
import textwrap
import uuid

import pytest
import yaml
from kubernetes import client

from tests.support.twin import Twin
from tests.support.waits import watch_until

DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("ds") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


@pytest.fixture(scope="module")
def nodes(twin) -> list[str]:
    return sorted(twin.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").stdout.split())


@pytest.fixture
def name() -> str:
    return f"ds-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def clean_nodes(twin, nodes):
    """Labels, taints and cordons a test puts on the shared nodes are taken off again."""
    yield
    for n in nodes:
        twin.kubectl("label", "node", n, "disk-", "zone-", check=False)
        twin.kubectl("taint", "node", n, "dedicated-", check=False)
        twin.kubectl("uncordon", n, check=False)


def manifest(name: str, image: str = "busybox:1.36", **spec) -> str:
    pod = {"containers": [{"name": "main", "image": image, "command": ["sleep", "inf"]}]}
    pod.update(spec.pop("pod", {}))
    body = {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}
    body.update(spec)
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": body})


def pods_of(twin, name: str) -> list[dict]:
    return twin.kubectl_json("get", "pods", "-l", f"app={name}")["items"]


def status_is(twin, name: str, **want) -> dict:
    """Wait (kubectl wait on the DaemonSet's status) until each field has its value; return the status."""
    for k, v in want.items():
        twin.kubectl("wait", f"ds/{name}", f"--for=jsonpath={{.status.{k}}}={v}", "--timeout=60s")
    return twin.kubectl_json("get", "ds", name)["status"]


def test_one_pod_per_node_with_the_daemon_shape(twin, nodes, name):
    twin.kubectl("apply", "-f", "-", input=manifest(name))
    out = twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s").stdout
    assert f'daemon set "{name}" successfully rolled out' in out

    header, row = twin.kubectl("get", "ds", name).stdout.splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR",
                              "AGE"]
    assert row.split()[:7] == [name, "2", "2", "2", "2", "2", "<none>"]

    ds = twin.kubectl_json("get", "ds", name)
    assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    st = ds["status"]
    assert {k: st.get(k) for k in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady",
                                   "numberAvailable", "updatedNumberScheduled", "numberMisscheduled",
                                   "observedGeneration")} == \
        {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2, "numberAvailable": 2,
         "updatedNumberScheduled": 2, "numberMisscheduled": 0, "observedGeneration": 1}
    assert "numberUnavailable" not in st  # omitempty at 0

    revs = twin.kubectl_json("get", "controllerrevisions", "-l", f"app={name}")["items"]
    assert len(revs) == 1 and revs[0]["revision"] == 1
    rev = revs[0]
    h = rev["metadata"]["labels"]["controller-revision-hash"]
    assert rev["metadata"]["name"] == f"{name}-{h}"
    assert rev["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert rev["data"]["spec"]["template"]["$patch"] == "replace"
    assert rev["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"

    pods = pods_of(twin, name)
    assert sorted(p["spec"]["nodeName"] for p in pods) == nodes
    for p in pods:
        md = p["metadata"]
        assert md["generateName"] == f"{name}-"
        assert md["labels"] == {"app": name, "controller-revision-hash": h, "pod-template-generation": "1"}
        ref = md["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"], ref["blockOwnerDeletion"]) == \
            ("DaemonSet", name, ds["metadata"]["uid"], True, True)
        assert p["spec"]["tolerations"] == DAEMON_TOLERATIONS
        assert p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == \
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                     "values": [p["spec"]["nodeName"]]}]}]}
        assert p["spec"]["schedulerName"] == "default-scheduler"
    events = twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name}")["items"]
    assert sorted(e["reason"] for e in events) == ["SuccessfulCreate", "SuccessfulCreate"]
    assert {e["source"]["component"] for e in events} == {"daemonset-controller"}
    assert all(e["message"].startswith(f"Created pod: {name}-") for e in events)


def test_host_network_pods_also_tolerate_network_unavailable_and_user_tolerations_are_replaced(twin, name):
    mine = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 30}, {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    twin.kubectl("apply", "-f", "-", input=manifest(name, pod={"hostNetwork": True, "tolerations": mine}))
    status_is(twin, name, numberReady=2)
    tolerations = pods_of(twin, name)[0]["spec"]["tolerations"]
    # the daemon's not-ready toleration (no tolerationSeconds) takes the user's place; the others follow
    assert tolerations == [DAEMON_TOLERATIONS[0], mine[1]] + DAEMON_TOLERATIONS[1:] + [
        {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}]


def test_node_selector_follows_node_labels(twin, nodes, name, clean_nodes):
    twin.kubectl("apply", "-f", "-", input=manifest(name, pod={"nodeSelector": {"disk": "ssd"}}))
    st = status_is(twin, name, observedGeneration=1)
    assert (st["desiredNumberScheduled"], st["currentNumberScheduled"]) == (0, 0)
    assert twin.kubectl("get", "ds", name).stdout.splitlines()[1].split()[6] == "disk=ssd"

    twin.kubectl("label", "node", nodes[0], "disk=ssd")
    status_is(twin, name, desiredNumberScheduled=1, numberReady=1)
    assert [p["spec"]["nodeName"] for p in pods_of(twin, name)] == [nodes[0]]

    # the node stops matching: its pod is deleted, nothing is created elsewhere
    pod = pods_of(twin, name)[0]["metadata"]["name"]
    twin.kubectl("label", "node", nodes[0], "disk-")
    twin.kubectl("wait", "--for=delete", f"pod/{pod}", "--timeout=60s")
    st = status_is(twin, name, desiredNumberScheduled=0)
    assert st["currentNumberScheduled"] == 0 and pods_of(twin, name) == []
    reasons = [e["reason"] for e in twin.kubectl_json("get", "events", "--field-selector",
                                                      f"involvedObject.name={name}")["items"]]
    assert sorted(reasons) == ["SuccessfulCreate", "SuccessfulDelete"]


def test_required_node_affinity_selects_nodes(twin, nodes, name, clean_nodes):
    twin.kubectl("label", "node", nodes[1], "zone=b")
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}
    twin.kubectl("apply", "-f", "-", input=manifest(name, pod={"affinity": affinity}))
    status_is(twin, name, numberReady=1)
    st = twin.kubectl_json("get", "ds", name)["status"]
    assert st["desiredNumberScheduled"] == 1
    pods = pods_of(twin, name)
    assert [p["spec"]["nodeName"] for p in pods] == [nodes[1]]
    # the pod's required terms are the node name only
    assert pods[0]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"] == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nodes[1]]}]}]


def test_taints_and_cordons(twin, nodes, name, clean_nodes):
    twin.kubectl("apply", "-f", "-", input=manifest(name))
    status_is(twin, name, numberReady=2)
    before = {p["metadata"]["name"] for p in pods_of(twin, name)}

    # NoSchedule: the running pod stays (and counts as misscheduled), nothing new would go there
    twin.kubectl("taint", "node", nodes[0], "dedicated=db:NoSchedule")
    st = status_is(twin, name, desiredNumberScheduled=1)
    assert (st["currentNumberScheduled"], st["numberMisscheduled"], st["numberReady"]) == (1, 1, 1)
    assert {p["metadata"]["name"] for p in pods_of(twin, name)} == before

    # a cordoned node keeps its daemon pod: the pods tolerate node.kubernetes.io/unschedulable
    twin.kubectl("taint", "node", nodes[0], "dedicated-")
    twin.kubectl("cordon", nodes[1])
    st = status_is(twin, name, desiredNumberScheduled=2, numberMisscheduled=0)
    assert st["numberReady"] == 2 and {p["metadata"]["name"] for p in pods_of(twin, name)} == before

    # a pod deleted on a cordoned node comes back there (the scheduler binds it through the unschedulable toleration)
    on_1 = next(p["metadata"]["name"] for p in pods_of(twin, name) if p["spec"]["nodeName"] == nodes[1])
    twin.kubectl("delete", "pod", on_1, "--wait=true")
    status_is(twin, name, numberReady=2)
    assert sorted(p["spec"]["nodeName"] for p in pods_of(twin, name)) == nodes

    # NoExecute that the pods do not tolerate: the pod goes at once and nothing replaces it
    twin.kubectl("taint", "node", nodes[0], "dedicated=db:NoExecute")
    st = status_is(twin, name, desiredNumberScheduled=1, currentNumberScheduled=1)
    assert st["numberMisscheduled"] == 0
    assert [p["spec"]["nodeName"] for p in pods_of(twin, name)] == [nodes[1]]
    twin.kubectl("taint", "node", nodes[0], "dedicated-")
    status_is(twin, name, desiredNumberScheduled=2, numberReady=2)


def _ready(pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def test_rolling_update_keeps_max_unavailable_and_undo_goes_back(twin, api, nodes, name):
    core = client.CoreV1Api(api)
    twin.kubectl("apply", "-f", "-", input=manifest(name))
    twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s")
    old_hash = pods_of(twin, name)[0]["metadata"]["labels"]["controller-revision-hash"]

    served: list[int] = []  # after each pod event, how many nodes had a Ready pod that was not being deleted

    def done(pods) -> bool:
        live = {p.spec.node_name for p in pods if _ready(p) and p.metadata.deletion_timestamp is None}
        served.append(len(live))
        new = [p for p in pods if p.metadata.labels.get("controller-revision-hash") != old_hash]
        return len(new) == 2 and all(_ready(p) for p in new) and len(pods) == 2

    twin.kubectl("set", "image", f"ds/{name}", "main=busybox:1.37")
    watch_until(core.list_namespaced_pod, done, "the rollout", "default", label_selector=f"app={name}", bound=60)
    assert min(served) == 1  # maxUnavailable 1 of 2: one node always served, and one at a time was replaced
    out = twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s").stdout
    assert "successfully rolled out" in out
    st = twin.kubectl_json("get", "ds", name)
    assert st["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in pods_of(twin, name)} == {"2"}
    assert st["status"]["updatedNumberScheduled"] == 2 and st["status"]["observedGeneration"] == 2

    history = twin.kubectl("rollout", "history", f"ds/{name}").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    twin.kubectl("rollout", "undo", f"ds/{name}")
    twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s")
    assert {p["spec"]["containers"][0]["image"] for p in pods_of(twin, name)} == {"busybox:1.36"}
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods_of(twin, name)} == {old_hash}
    revs = {r["metadata"]["labels"]["controller-revision-hash"]: r["revision"]
            for r in twin.kubectl_json("get", "controllerrevisions", "-l", f"app={name}")["items"]}
    assert revs[old_hash] == 3 and sorted(revs.values()) == [2, 3]  # the old template is the newest revision again


def test_max_surge_starts_the_new_pod_beside_the_old(twin, api, name):
    core = client.CoreV1Api(api)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    twin.kubectl("apply", "-f", "-", input=manifest(name, updateStrategy=strategy))
    twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s")
    old_hash = pods_of(twin, name)[0]["metadata"]["labels"]["controller-revision-hash"]
    served, crowded = [], []

    def done(pods) -> bool:
        live = {p.spec.node_name for p in pods if _ready(p) and p.metadata.deletion_timestamp is None}
        served.append(len(live))
        per_node = [p.spec.node_name or "" for p in pods if p.metadata.deletion_timestamp is None]
        crowded.append(len(per_node) - len(set(per_node)))
        new = [p for p in pods if p.metadata.labels.get("controller-revision-hash") != old_hash]
        return len(new) == 2 and all(_ready(p) for p in new) and len(pods) == 2

    twin.kubectl("set", "image", f"ds/{name}", "main=busybox:1.37")
    watch_until(core.list_namespaced_pod, done, "the surge rollout", "default", label_selector=f"app={name}", bound=60)
    assert min(served) == 2  # maxUnavailable 0: both nodes served all along
    assert max(crowded) == 1  # one node at a time had its new pod beside the old one


def test_on_delete_replaces_only_deleted_pods(twin, name):
    twin.kubectl("apply", "-f", "-", input=manifest(name, updateStrategy={"type": "OnDelete"}))
    status_is(twin, name, numberReady=2)
    ds = yaml.safe_load(manifest(name, image="busybox:1.37", updateStrategy={"type": "OnDelete"}))
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(ds))
    st = status_is(twin, name, observedGeneration=2)
    assert "updatedNumberScheduled" not in st and st["numberReady"] == 2  # nothing replaced by itself
    out = twin.kubectl("rollout", "status", f"ds/{name}", check=False)
    assert out.returncode != 0 and "rollout status is only available for RollingUpdate strategy type" in out.stderr

    victim = pods_of(twin, name)[0]["metadata"]["name"]
    twin.kubectl("delete", "pod", victim, "--wait=true")
    st = status_is(twin, name, updatedNumberScheduled=1, numberReady=2)
    images = sorted(p["spec"]["containers"][0]["image"] for p in pods_of(twin, name))
    assert images == ["busybox:1.36", "busybox:1.37"]


def test_failed_daemon_pod_is_replaced(twin, nodes, name):
    """A daemon pod whose container exits under restartPolicy Always keeps restarting; one that fails
    (restartPolicy cannot be Never in a DaemonSet) is only reached through its status: write Failed and watch."""
    twin.kubectl("apply", "-f", "-", input=manifest(name))
    status_is(twin, name, numberReady=2)
    pod = pods_of(twin, name)[0]
    status = {"status": {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False"}]}}
    twin.kubectl("patch", "pod", pod["metadata"]["name"], "--subresource=status", "--type=merge", "-p",
                 json.dumps(status))
    twin.kubectl("wait", "--for=delete", f"pod/{pod['metadata']['name']}", "--timeout=60s")
    status_is(twin, name, numberReady=2)
    assert sorted(p["spec"]["nodeName"] for p in pods_of(twin, name)) == nodes
    events = twin.kubectl_json("get", "events", "--field-selector", f"involvedObject.name={name},reason=FailedDaemonPod")
    assert [e["message"] for e in events["items"]] == [
        f"Found failed daemon pod default/{pod['metadata']['name']} on node {pod['spec']['nodeName']}, will try to kill it"]


def test_python_client_reads_the_status_and_delete_collects_pods_and_revisions(twin, api, name):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set("default", yaml.safe_load(manifest(name)))
    twin.kubectl("rollout", "status", f"ds/{name}", "--timeout=60s")
    ds = apps.read_namespaced_daemon_set(name, "default")
    assert (ds.status.desired_number_scheduled, ds.status.number_available, ds.status.number_unavailable) == (2, 2, None)
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1
    assert ds.spec.update_strategy.rolling_update.max_surge == 0
    revs = apps.list_namespaced_controller_revision("default", label_selector=f"app={name}").items
    assert [r.revision for r in revs] == [1]

    apps.delete_namespaced_daemon_set(name, "default")
    twin.kubectl("wait", "--for=delete", "pod", "-l", f"app={name}", "--timeout=60s")
    watch_until(apps.list_namespaced_controller_revision, lambda items: not items, "revisions collected", "default",
                label_selector=f"app={name}", bound=60)


DRAIN = textwrap.dedent("""\
    - hosts: localhost
      gather_facts: false
      module_defaults:
        group/kubernetes.core.k8s:
          kubeconfig: "{{ lookup('env', 'K8S_AUTH_KUBECONFIG') }}"
      tasks:
        - name: daemonset applied
          kubernetes.core.k8s:
            apply: true
            wait: true
            wait_timeout: 120
            definition: "{{ lookup('file', 'ds.yaml') | from_yaml }}"
        - name: deployment applied
          kubernetes.core.k8s:
            apply: true
            wait: true
            wait_timeout: 120
            definition: "{{ lookup('file', 'deploy.yaml') | from_yaml }}"
        - name: drain without ignore_daemonsets
          kubernetes.core.k8s_drain:
            name: "{{ node }}"
            delete_options: {wait_timeout: 60}
          register: refused
          ignore_errors: true
        - name: drain ignoring daemonsets
          kubernetes.core.k8s_drain:
            name: "{{ node }}"
            delete_options: {ignore_daemonsets: true, wait_timeout: 60}
        - name: uncordon
          kubernetes.core.k8s_drain:
            name: "{{ node }}"
            state: uncordon
    """)


def test_kubernetes_core_apply_and_drain(twin, nodes, name, tmp_path):
    (tmp_path / "ds.yaml").write_text(manifest(name).replace("metadata:\n  name:", "metadata:\n  namespace: default\n  name:"))
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"{name}-web", "namespace": "default"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": f"{name}-web"}},
                    "template": {"metadata": {"labels": {"app": f"{name}-web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}
    (tmp_path / "deploy.yaml").write_text(yaml.safe_dump(web))
    book = tmp_path / "drain.yml"
    book.write_text(DRAIN)
    run = twin.playbook(book, extra_vars={"node": nodes[0]})
    assert run.rc == 0, run.stdout + run.stderr

    applied = run.task("daemonset applied")["result"]["result"]
    assert applied["status"]["numberReady"] == 2 and applied["status"]["desiredNumberScheduled"] == 2
    refused = run.task("drain without ignore_daemonsets")
    assert refused["status"] == "failed"
    assert refused["result"]["msg"].startswith("Pod deletion errors: cannot delete DaemonSet-managed Pods")
    assert f"default/{name}-" in refused["result"]["msg"] and "kube-system/csi-plugin-" in refused["result"]["msg"]
    drained = run.task("drain ignoring daemonsets")["result"]
    assert not drained.get("failed"), drained
    # the deployment's pods left the node; the daemon pod stayed on it
    on_node = [p for p in twin.kubectl_json("get", "pods", "--field-selector", f"spec.nodeName={nodes[0]}")["items"]
               if p["metadata"]["labels"].get("app") in (name, f"{name}-web")]
    assert [p["metadata"]["labels"]["app"] for p in on_node if not p["metadata"].get("deletionTimestamp")] == [name]
    twin.kubectl("rollout", "status", f"deploy/{name}-web", "--timeout=60s")
    assert {p["spec"]["nodeName"] for p in pods_of(twin, f"{name}-web")} == {nodes[1]}
