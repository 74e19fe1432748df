"""trident_concurrency's refusals against the twin: unsupported backend drivers, old and tech-preview versions,
Helm and tridentctl installs. Every refusal must leave the cluster as it was.

The versions are changed the way an older install reports them: the TridentOrchestrator's status.version and the
TridentVersion CR. One generated playbook walks through the cases in order (each ansible-playbook start costs
seconds), with kubectl steps between the module calls; the assertions read its recorded task results.
"""
from __future__ import annotations

import json

import yaml

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.helm import encode_release
from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "tune_trident.yml"

GCNV_SAN_BACKEND = {
    "apiVersion": "trident.netapp.io/v1", "kind": "TridentBackendConfig",
    "metadata": {"name": "backend-gcnv-san", "namespace": "trident"},
    "spec": {"version": 1, "storageDriverName": "google-cloud-netapp-volumes-san", "projectNumber": "123456789",
             "location": "europe-west6", "serviceLevel": "Premium", "credentials": {"name": "gcnv-credentials"}},
}


def container(dep, name):
    return next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def task_result(run, name):
    """The result of the task named exactly `name`, with `failed` from the recorded status (not in the result)."""
    rec = next(r for r in reversed(run.results) if r["task"] == name)
    return dict(rec["result"], failed=rec["status"] == "failed")


def test_unsupported_backend_stops_the_playbook_before_anything_changes(twin):
    twin.kubectl("apply", "-f", "-", input=json.dumps(GCNV_SAN_BACKEND))
    # the operator's own Installing -> Installed write must not count as a change the playbook made
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    twin.kubectl("-n", "kube-system", "rollout", "status", "deployment/snapshot-controller", "--timeout=60s")
    torc0 = twin.kubectl_json("get", "tridentorchestrator", "trident")
    snap0 = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")

    run = twin.playbook(PLAYBOOK)

    assert run.rc != 0
    failed = [r for r in run.results if r["status"] == "failed"]
    assert len(failed) == 1
    assert failed[0]["task"].endswith("Preflight Trident's version, install method and backend drivers (changes nothing)")
    res = failed[0]["result"]
    assert "TridentBackendConfig trident/backend-gcnv-san uses driver google-cloud-netapp-volumes-san" in res["msg"]
    assert "not supported in any version" in res["msg"] and "nothing was changed" in res["msg"]
    assert [b["name"] for b in res["unsupported_backends"]] == ["trident/backend-gcnv-san"]
    assert not run.changed_tasks
    # nothing changed: neither Trident nor the snapshot-controller (its tuning comes after the preflight)
    torc = twin.kubectl_json("get", "tridentorchestrator", "trident")
    snap = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")
    assert torc["metadata"]["resourceVersion"] == torc0["metadata"]["resourceVersion"]
    assert snap["metadata"]["resourceVersion"] == snap0["metadata"]["resourceVersion"]


def _set_version(version):
    """Tasks that make the twin's Trident report another version, as an install of that version would."""
    return [
        {"name": f"Report Trident {version} in the orchestrator status",
         "ansible.builtin.command": "kubectl patch tridentorchestrator trident --subresource=status --type=merge "
                                    f"-p '{json.dumps({'status': {'version': version}})}'"},
        {"name": f"Report Trident {version} in the TridentVersion",
         "ansible.builtin.command": "kubectl -n trident patch tridentversion trident --type=merge "
         f"-p '{json.dumps({'trident_version': version})}'"},
    ]


def _module(name, register, **params):
    return {"name": name, "storageperf.k8s.trident_concurrency": dict(wait_timeout=120, **params),
            "register": register, "ignore_errors": True}


def _helm_release_secret():
    release = {"name": "trident", "namespace": "trident", "version": 1, "info": {"status": "deployed"},
               "chart": {"metadata": {"name": "trident-operator", "version": "100.2606.0", "appVersion": "26.06.0"},
                         "values": {"enableConcurrency": False, "tridentDebug": False, "k8sAPIQPS": 100}},
               "config": {"tridentDebug": False}}
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.trident.v1", "namespace": "trident",
                         "labels": {"owner": "helm", "name": "trident", "status": "deployed", "version": "1"}},
            "data": {"release": encode_release(release)}}


def test_versions_and_install_methods(twin, tmp_path):
    tasks = [
        *_set_version("25.02.1"),
        _module("Too old", "too_old", allow_tech_preview=True),
        *_set_version("25.10.0"),
        _module("Tech preview without opt-in", "preview"),
        _module("Tech preview with opt-in but economy backends", "preview_drivers", allow_tech_preview=True),
        *_set_version("26.02.0"),
        _module("GA 26.02 with economy backends", "ga_drivers"),
        {"name": "Read the orchestrator after the refusals",
         "ansible.builtin.command": "kubectl get tridentorchestrator trident -o json", "register": "torc_after"},
        {"name": "Read the controller after the refusals",
         "ansible.builtin.command": "kubectl -n trident get deployment trident-controller -o json", "register": "dep_after"},
        *_set_version("26.06.0"),
        {"name": "Make it a Helm install: the release Secret",
         "ansible.builtin.command": {"cmd": "kubectl apply -f -", "stdin": json.dumps(_helm_release_secret())}},
        {"name": "Make it a Helm install: the chart's annotations on the orchestrator",
         "ansible.builtin.command": "kubectl annotate tridentorchestrator trident meta.helm.sh/release-name=trident "
                                    "meta.helm.sh/release-namespace=trident"},
        _module("Enable on the Helm install", "helm", k8s_api_qps=200),
        {"name": "Drop the orchestrator, keep the Helm release",
         "ansible.builtin.command": "kubectl delete tridentorchestrator trident"},
        _module("Helm release without its orchestrator", "helm_no_cr"),
        {"name": "Turn it into a tridentctl install (no orchestrator, no Helm release)",
         "ansible.builtin.command": "kubectl -n trident delete secret sh.helm.release.v1.trident.v1"},
        _module("tridentctl install that already runs concurrently", "ctl_same"),
        _module("tridentctl install asked to disable", "ctl_off", state="absent"),
    ]
    play = [{"name": "trident_concurrency refusals and install methods", "hosts": "localhost", "gather_facts": False,
             "module_defaults": {"group/storageperf.k8s.k8s": {"kubeconfig": "{{ k8s_kubeconfig }}"}}, "tasks": tasks}]
    path = tmp_path / "preflight.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    torc0 = twin.kubectl_json("get", "tridentorchestrator", "trident")
    dep0 = twin.kubectl_json("-n", "trident", "get", "deployment", "trident-controller")

    run = twin.playbook(path)
    assert run.rc == 0, run.stdout + run.stderr

    def result(name):
        return task_result(run, name)

    too_old = result("Too old")
    assert too_old["failed"] and "Trident 25.02.1 has no concurrent core" in too_old["msg"]
    assert "upgrade Trident to 26.02.0 or later" in too_old["msg"]

    preview = result("Tech preview without opt-in")
    assert preview["failed"] and "Trident 25.10.0 offers the concurrent core only as a tech preview" in preview["msg"]
    assert "allow_tech_preview: true" in preview["msg"]

    for name, version in (("Tech preview with opt-in but economy backends", "25.10.0"),
                          ("GA 26.02 with economy backends", "26.02.0")):
        res = result(name)
        assert res["failed"], res
        assert {b["name"] for b in res["unsupported_backends"]} == {"trident/backend-ontap-nas-economy",
                                                                    "trident/backend-ontap-san-economy"}
        assert f"Trident {version} supports the concurrent core only for" in res["msg"]
        assert "backend-ontap-nas-economy (backend ontap-nas-economy) uses driver ontap-nas-economy " \
               "(supported from Trident 26.06.0)" in res["msg"]
        assert "trident/backend-ontap-nas " not in res["msg"]  # supported backends are not blamed

    # the refusals changed nothing
    torc = json.loads(result("Read the orchestrator after the refusals")["stdout"])
    dep = json.loads(result("Read the controller after the refusals")["stdout"])
    assert torc["spec"] == torc0["spec"] and torc["metadata"]["generation"] == torc0["metadata"]["generation"]
    assert dep["metadata"]["generation"] == dep0["metadata"]["generation"]
    assert "--enable_concurrency=false" in container(dep, "trident-main")["args"]

    helm = result("Enable on the Helm install")
    assert not helm.get("failed"), helm
    assert helm["changed"] and helm["install"]["method"] == "helm"
    assert helm["install"]["helm_release"]["chart_version"] == "100.2606.0"
    assert helm["enable_concurrency"] == "true"
    assert helm["helm_command"] == ("helm upgrade trident netapp-trident/trident-operator -n trident --reuse-values "
                                    "--version 100.2606.0 --set enableConcurrency=true")
    assert any("helm upgrade" in w for w in helm.get("warnings", []))
    assert helm["after"]["controller_k8s_api_qps"] == "200"  # spec.k8sAPIQPS reached trident-main

    no_cr = result("Helm release without its orchestrator")
    assert no_cr["failed"] and "Helm release trident (namespace trident) has no TridentOrchestrator" in no_cr["msg"]
    assert "--set enableConcurrency=true" in no_cr["msg"]

    same = result("tridentctl install that already runs concurrently")
    assert not same.get("failed") and same["changed"] is False
    assert same["install"]["method"] == "tridentctl" and same["enable_concurrency"] == "true"

    off = result("tridentctl install asked to disable")
    assert off["failed"]
    assert "installed with tridentctl" in off["msg"]
    assert "tridentctl uninstall -n trident && tridentctl install -n trident`" in off["msg"]
    assert "--enable-concurrency" not in off["msg"]
    final = twin.kubectl_json("-n", "trident", "get", "deployment", "trident-controller")
    assert "--enable_concurrency=true" in container(final, "trident-main")["args"]


def test_missing_ontap_credentials_stop_tune_trident_before_anything_changes(twin):
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    torc = twin.kubectl_json("get", "tridentorchestrator", "trident")
    snap = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")
    # the inventory gives ontap_hostname; the credentials are neither in the inventory nor the controller's environment
    run = twin.playbook(PLAYBOOK, extra_vars={"ontap_username": "", "ontap_password": ""},
                        env={"ONTAP_USERNAME": "", "ONTAP_PASSWORD": ""})
    assert run.rc != 0
    failed = [r for r in run.results if r["status"] == "failed"]
    assert [r["task"] for r in failed] == ["1. Preflight the ONTAP credentials (read-only; nothing changes if this fails)"]
    assert "ONTAP_USERNAME" in failed[0]["result"]["msg"] and "ontap_username" in failed[0]["result"]["msg"]
    assert run.changed_tasks == []
    after = twin.kubectl_json("get", "tridentorchestrator", "trident")
    assert after["metadata"]["resourceVersion"] == torc["metadata"]["resourceVersion"]
    assert after["spec"] == torc["spec"]
    snap_after = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")
    assert snap_after["metadata"]["generation"] == snap["metadata"]["generation"]
    assert container(snap_after, "snapshot-controller")["args"] == container(snap, "snapshot-controller")["args"]
