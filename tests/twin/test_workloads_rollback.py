"""Deployment revision history and rollback as kube-controller-manager keeps them (pkg/controller/deployment):
`kubectl rollout undo` and kubernetes.core's k8s_rollback patch the old ReplicaSet's template back into the
Deployment, and the controller scales that same ReplicaSet up again under the next revision, remembering the
revision it had in `deployment.kubernetes.io/revision-history`. Also revisionHistoryLimit, pausing and the
Progressing condition's deadline."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from tests.support.twin import Twin

REVISION = "deployment.kubernetes.io/revision"
HISTORY = "deployment.kubernetes.io/revision-history"
CAUSE = "kubernetes.io/change-cause"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("rollback") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


def replica_sets(twin: Twin, app: str, ns: str = "default") -> dict[str, dict]:
    """The app's ReplicaSets by name, read with the kubernetes Python client."""
    from kubernetes import client

    items = client.AppsV1Api(twin.api_client()).list_namespaced_replica_set(ns, label_selector=f"app={app}").items
    return {r.metadata.name: {"image": r.spec.template.spec.containers[0].image, "replicas": r.spec.replicas,
                              "annotations": r.metadata.annotations or {}} for r in items}


def by_image(rss: dict[str, dict], image: str) -> str:
    (name,) = [n for n, r in rss.items() if r["image"] == image]
    return name


def rolled_out(twin: Twin, name: str, ns: str = "default") -> None:
    out = twin.kubectl("rollout", "status", "deploy", name, "-n", ns, "--timeout=120s").stdout
    assert f'deployment "{name}" successfully rolled out' in out


def history(twin: Twin, name: str) -> list[list[str]]:
    out = twin.kubectl("rollout", "history", "deploy", name).stdout
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("REVISION"))
    return [ln.split(None, 1) for ln in lines[start + 1:] if ln.strip()]


def test_undo_scales_the_previous_replica_set_up_under_the_next_revision(twin):
    twin.kubectl("create", "deploy", "web", "--image=nginx:1.27", "--replicas=3")
    twin.kubectl("annotate", "deploy", "web", f"{CAUSE}=first")
    rolled_out(twin, "web")
    twin.kubectl("set", "image", "deploy/web", "nginx=nginx:1.28")
    twin.kubectl("annotate", "deploy", "web", f"{CAUSE}=second", "--overwrite")
    rolled_out(twin, "web")
    rss = replica_sets(twin, "web")
    first, second = by_image(rss, "nginx:1.27"), by_image(rss, "nginx:1.28")
    assert (rss[first]["annotations"][REVISION], rss[second]["annotations"][REVISION]) == ("1", "2")
    assert (rss[first]["annotations"][CAUSE], rss[second]["annotations"][CAUSE]) == ("first", "second")
    assert history(twin, "web") == [["1", "first"], ["2", "second"]]
    shown = twin.kubectl("rollout", "history", "deploy/web", "--revision=1").stdout
    assert "nginx:1.27" in shown and "nginx:1.28" not in shown

    out = twin.kubectl("rollout", "undo", "deploy/web").stdout
    assert "deployment.apps/web rolled back" in out
    rolled_out(twin, "web")
    rss = replica_sets(twin, "web")
    assert set(rss) == {first, second}  # no third ReplicaSet
    assert (rss[first]["replicas"], rss[second]["replicas"]) == (3, 0)
    assert rss[first]["annotations"][REVISION] == "3" and rss[first]["annotations"][HISTORY] == "1"
    assert HISTORY not in rss[second]["annotations"]
    # kubectl copied the old set's annotations (change-cause "first") back; the controller copies them on
    assert history(twin, "web") == [["2", "second"], ["3", "first"]]
    d = twin.kubectl_json("get", "deploy", "web")
    assert d["metadata"]["annotations"][REVISION] == "3"
    pods = twin.kubectl_json("get", "pods", "-l", "app=web")["items"]
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == {first.rpartition("-")[2]}
    conds = {c["type"]: c for c in d["status"]["conditions"]}
    assert (conds["Progressing"]["reason"], conds["Available"]["reason"]) == \
        ("NewReplicaSetAvailable", "MinimumReplicasAvailable")
    assert conds["Progressing"]["message"] == f'ReplicaSet "{first}" has successfully progressed.'

    twin.kubectl("rollout", "undo", "deploy/web", "--to-revision=2")
    rolled_out(twin, "web")
    rss = replica_sets(twin, "web")
    assert set(rss) == {first, second} and (rss[first]["replicas"], rss[second]["replicas"]) == (0, 3)
    assert (rss[second]["annotations"][REVISION], rss[second]["annotations"][HISTORY]) == ("4", "2")
    assert history(twin, "web") == [["3", "first"], ["4", "second"]]
    # the revision that no ReplicaSet carries any more is refused, as on a real cluster
    gone = twin.kubectl("rollout", "undo", "deploy/web", "--to-revision=1", check=False)
    assert gone.returncode != 0 and "unable to find specified revision 1 in history" in gone.stderr


def test_revision_history_limit_keeps_that_many_old_replica_sets(twin):
    spec = {"replicas": 1, "revisionHistoryLimit": 1, "selector": {"matchLabels": {"app": "lim"}},
            "template": {"metadata": {"labels": {"app": "lim"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "lim"}, "spec": spec}
    for tag in ("1.25", "1.26", "1.27"):
        spec["template"]["spec"]["containers"][0]["image"] = f"nginx:{tag}"
        twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))
        rolled_out(twin, "lim")
    rss = replica_sets(twin, "lim")
    # the newest and one old revision; revision 1 (nginx:1.25) was deleted
    assert sorted((r["annotations"][REVISION], r["image"]) for r in rss.values()) == [("2", "nginx:1.26"),
                                                                                      ("3", "nginx:1.27")]


def test_a_paused_deployment_scales_but_does_not_roll(twin):
    twin.kubectl("create", "deploy", "pz", "--image=nginx:1.27", "--replicas=2")
    rolled_out(twin, "pz")
    (only,) = replica_sets(twin, "pz")
    twin.kubectl("rollout", "pause", "deploy/pz")
    twin.kubectl("set", "image", "deploy/pz", "nginx=nginx:1.28")
    twin.kubectl("scale", "deploy/pz", "--replicas=4")
    twin.kubectl("wait", "deploy/pz", "--for=jsonpath={.status.availableReplicas}=4", "--timeout=120s")
    rss = replica_sets(twin, "pz")
    assert set(rss) == {only} and rss[only]["replicas"] == 4 and rss[only]["image"] == "nginx:1.27"
    d = twin.kubectl_json("get", "deploy", "pz")
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    prog = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
    assert (prog["status"], prog["reason"], prog["message"]) == ("Unknown", "DeploymentPaused", "Deployment is paused")

    twin.kubectl("rollout", "resume", "deploy/pz")
    rolled_out(twin, "pz")
    rss = replica_sets(twin, "pz")
    new = by_image(rss, "nginx:1.28")
    assert (rss[new]["replicas"], rss[only]["replicas"], rss[new]["annotations"][REVISION]) == (4, 0, "2")


def test_progress_deadline_exceeded_when_new_pods_never_become_ready(twin):
    # an image no registry has: the pod stays in ImagePullBackOff, never Ready
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "stuck"},
            "spec": {"replicas": 1, "progressDeadlineSeconds": 60, "selector": {"matchLabels": {"app": "stuck"}},
                     "template": {"metadata": {"labels": {"app": "stuck"}},
                                  "spec": {"containers": [{"name": "c",
                                                           "image": "registry.example.invalid/nope/app:9.9"}]}}}}
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))
    twin.kubectl("wait", "deploy/stuck", "--for=condition=Progressing=False", "--timeout=120s")
    d = twin.kubectl_json("get", "deploy", "stuck")
    conds = {c["type"]: c for c in d["status"]["conditions"]}
    (rs,) = replica_sets(twin, "stuck")
    assert (conds["Progressing"]["reason"], conds["Progressing"]["message"]) == \
        ("ProgressDeadlineExceeded", f'ReplicaSet "{rs}" has timed out progressing.')
    assert (conds["Available"]["status"], conds["Available"]["reason"]) == ("False", "MinimumReplicasUnavailable")
    out = twin.kubectl("rollout", "status", "deploy/stuck", "--timeout=60s", check=False)
    assert out.returncode != 0 and 'deployment "stuck" exceeded its progress deadline' in out.stderr


ROLLBACK_PLAYBOOK = textwrap.dedent("""\
    - hosts: localhost
      gather_facts: false
      module_defaults:
        group/kubernetes.core.k8s:
          kubeconfig: "{{ lookup('env', 'K8S_AUTH_KUBECONFIG') }}"
          namespace: default
      tasks:
        - name: "deployment at {{ item }}"
          kubernetes.core.k8s:
            wait: true
            wait_timeout: 120
            wait_sleep: 1
            definition:
              apiVersion: apps/v1
              kind: Deployment
              metadata: {name: kc}
              spec:
                replicas: 2
                selector: {matchLabels: {app: kc}}
                template:
                  metadata: {labels: {app: kc}}
                  spec: {containers: [{name: web, image: "{{ item }}"}]}
          loop: ["nginx:1.25", "nginx:1.26"]
        - name: rolled back
          kubernetes.core.k8s_rollback:  # not in the k8s action group: no module_defaults
            kubeconfig: "{{ lookup('env', 'K8S_AUTH_KUBECONFIG') }}"
            namespace: default
            api_version: apps/v1
            kind: Deployment
            name: kc
        - name: rolled out again
          kubernetes.core.k8s_info:
            kind: Deployment
            name: kc
            wait: true
            wait_condition: {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
            wait_timeout: 120
            wait_sleep: 1
    """)


def test_kubernetes_core_k8s_rollback_returns_to_the_previous_replica_set(twin, tmp_path):
    book = tmp_path / "rollback.yml"
    book.write_text(ROLLBACK_PLAYBOOK)
    run = twin.playbook(book)
    assert run.rc == 0, run.stdout + run.stderr
    rolled_out(twin, "kc")
    rss = replica_sets(twin, "kc")
    assert len(rss) == 2
    before, after = by_image(rss, "nginx:1.25"), by_image(rss, "nginx:1.26")
    # the same ReplicaSet that ran revision 1, now revision 3 and holding every replica
    assert (rss[before]["replicas"], rss[after]["replicas"]) == (2, 0)
    assert (rss[before]["annotations"][REVISION], rss[before]["annotations"][HISTORY]) == ("3", "1")
    d = twin.kubectl_json("get", "deploy", "kc")
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert d["metadata"]["annotations"][REVISION] == "3"
    (info,) = run.task("rolled back")["result"]["rollback_info"]
    assert info["changed"] is True and info["method"] == "patch"
