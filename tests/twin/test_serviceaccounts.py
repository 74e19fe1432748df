"""Namespaces and service accounts (issue 29): the ServiceAccount "default" and ConfigMap kube-root-ca.crt of every
namespace (kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers), kept there when deleted
or changed; the ServiceAccount admission plugin on pods; the legacy token controller on service-account-token
Secrets. Through the kubernetes Python client and kubectl."""
from __future__ import annotations

import base64
import json

from kubernetes import client, watch

DESCRIPTION = "kubernetes.io/description"


def _wait_for(list_fn, ns: str, name: str, until=lambda obj: True):
    """The object ns/name once `until` holds for it, read from a watch (its first events are the current state)."""
    w = watch.Watch()
    for ev in w.stream(list_fn, ns, field_selector=f"metadata.name={name}", timeout_seconds=30):
        if ev["type"] != "DELETED" and until(ev["object"]):
            w.stop()
            return ev["object"]
    raise AssertionError(f"{ns}/{name} never showed up as expected")


def test_new_namespace_gets_default_service_account_and_root_ca(api, ns, twin):
    core = client.CoreV1Api(api)
    sa = _wait_for(core.list_namespaced_service_account, ns, "default")
    assert sa.metadata.namespace == ns
    cm = _wait_for(core.list_namespaced_config_map, ns, "kube-root-ca.crt")
    assert cm.data == {"ca.crt": (twin.dir / "pki" / "ca.crt").read_text()}
    assert "kube-apiserver" in cm.metadata.annotations[DESCRIPTION]
    names = twin.kubectl("get", "serviceaccounts,configmaps", "-n", ns, "-o", "name").stdout.split()
    assert names == ["serviceaccount/default", "configmap/kube-root-ca.crt"]


def test_system_namespaces_have_them_too(api):
    core = client.CoreV1Api(api)
    for ns in ("default", "kube-system", "kube-public"):
        assert core.read_namespaced_service_account("default", ns).metadata.name == "default"
        assert "ca.crt" in core.read_namespaced_config_map("kube-root-ca.crt", ns).data


def test_deleted_default_service_account_comes_back_with_a_new_uid(api, ns):
    core = client.CoreV1Api(api)
    old = _wait_for(core.list_namespaced_service_account, ns, "default")
    core.delete_namespaced_service_account("default", ns)
    new = _wait_for(core.list_namespaced_service_account, ns, "default", lambda o: o.metadata.uid != old.metadata.uid)
    assert new.metadata.uid != old.metadata.uid


def test_root_ca_config_map_is_restored_when_changed_or_deleted(api, ns, twin):
    core = client.CoreV1Api(api)
    want = {"ca.crt": (twin.dir / "pki" / "ca.crt").read_text()}
    core.patch_namespaced_config_map("kube-root-ca.crt", ns, {"data": {"ca.crt": "tampered", "extra": "x"}})
    assert core.read_namespaced_config_map("kube-root-ca.crt", ns).data == want
    old = core.read_namespaced_config_map("kube-root-ca.crt", ns)
    core.delete_namespaced_config_map("kube-root-ca.crt", ns)
    back = _wait_for(core.list_namespaced_config_map, ns, "kube-root-ca.crt",
                     lambda o: o.metadata.uid != old.metadata.uid)
    assert back.data == want


MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "c", "image": "busybox"},
                               {"name": "own", "image": "busybox",
                                "volumeMounts": [{"name": "mine", "mountPath": MOUNT}]}],
                "volumes": [{"name": "mine", "emptyDir": {}}]}}


def test_pod_gets_default_service_account_and_the_token_volume(api, ns):
    core = client.CoreV1Api(api)
    pod = core.create_namespaced_pod(ns, POD)
    assert pod.spec.service_account_name == "default"
    token = [v for v in pod.spec.volumes if v.name.startswith("kube-api-access-")]
    assert len(token) == 1 and len(pod.spec.volumes) == 2
    name = token[0].name
    assert len(name) == len("kube-api-access-") + 5 and name[-5:].isalnum() and name[-5:].islower()
    projected = token[0].projected
    assert projected.default_mode == 420
    sa_token, ca, downward = projected.sources
    assert (sa_token.service_account_token.path, sa_token.service_account_token.expiration_seconds) == ("token", 3607)
    assert ca.config_map.name == "kube-root-ca.crt" and [(i.key, i.path) for i in ca.config_map.items] == [
        ("ca.crt", "ca.crt")]
    fields = [(i.path, i.field_ref.field_path) for i in downward.downward_api.items]
    assert fields == [("namespace", "metadata.namespace")]
    mounts = {c.name: [(m.name, m.mount_path, m.read_only) for m in c.volume_mounts or []]
              for c in pod.spec.init_containers + pod.spec.containers}
    assert mounts == {"init": [(name, MOUNT, True)], "c": [(name, MOUNT, True)],
                      "own": [("mine", MOUNT, None)]}  # a container with its own mount there keeps it


def test_automount_false_on_the_pod_or_the_account_adds_nothing(api, ns, twin):
    core = client.CoreV1Api(api)
    spec = {"automountServiceAccountToken": False, "containers": [{"name": "c", "image": "busybox"}]}
    body = {"metadata": {"name": "off"}, "spec": spec}
    pod = core.create_namespaced_pod(ns, body)
    assert pod.spec.service_account_name == "default" and not pod.spec.volumes
    assert not pod.spec.containers[0].volume_mounts
    core.create_namespaced_service_account(ns, {"metadata": {"name": "quiet"}, "automountServiceAccountToken": False,
                                                "imagePullSecrets": [{"name": "regcred"}]})
    twin.kubectl("run", "q", "-n", ns, "--image=busybox", "--overrides",
                 '{"spec": {"serviceAccountName": "quiet"}}')
    pod = core.read_namespaced_pod("q", ns)
    assert pod.spec.service_account_name == "quiet" and not pod.spec.volumes
    assert [s.name for s in pod.spec.image_pull_secrets] == ["regcred"]


def test_pod_naming_a_missing_service_account_is_forbidden(api, ns, twin):
    core = client.CoreV1Api(api)
    spec = {"serviceAccountName": "ghost", "containers": [{"name": "c", "image": "busybox"}]}
    body = {"metadata": {"name": "lost"}, "spec": spec}
    try:
        core.create_namespaced_pod(ns, body)
    except client.ApiException as e:
        assert e.status == 403
        assert json.loads(e.body)["message"] == (f'pods "lost" is forbidden: error looking up service account '
                                                 f'{ns}/ghost: serviceaccount "ghost" not found')
    else:
        raise AssertionError("a pod naming a missing ServiceAccount was created")
    r = twin.kubectl("run", "lost", "-n", ns, "--image=busybox", "--overrides",
                     '{"spec": {"serviceAccountName": "ghost"}}', check=False)
    assert r.returncode != 0 and "error looking up service account" in r.stderr and "Forbidden" in r.stderr


def test_service_account_token_secret_gets_a_token_that_authenticates(api, ns, twin, tmp_path):
    core = client.CoreV1Api(api)
    sa = core.create_namespaced_service_account(ns, {"metadata": {"name": "robot"}})
    core.create_namespaced_secret(ns, {"metadata": {"name": "robot-token",
                                                    "annotations": {"kubernetes.io/service-account.name": "robot"}},
                                       "type": "kubernetes.io/service-account-token"})
    secret = core.read_namespaced_secret("robot-token", ns)
    assert secret.metadata.annotations["kubernetes.io/service-account.uid"] == sa.metadata.uid
    data = {k: base64.b64decode(v).decode() for k, v in secret.data.items()}
    assert sorted(data) == ["ca.crt", "namespace", "token"]
    assert data["namespace"] == ns and data["ca.crt"] == (twin.dir / "pki" / "ca.crt").read_text()
    kubeconfig = twin.kubeconfig_for(data["token"], tmp_path / "robot.kubeconfig")
    who = json.loads(twin.kubectl("auth", "whoami", "-o", "json", kubeconfig=kubeconfig).stdout)
    assert who["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:robot"
    assert who["status"]["userInfo"]["uid"] == sa.metadata.uid
    core.delete_namespaced_secret("robot-token", ns)  # the token goes with its Secret
    r = twin.kubectl("auth", "whoami", kubeconfig=kubeconfig, check=False)
    assert r.returncode != 0 and "Unauthorized" in r.stderr


def test_token_secrets_go_with_their_service_account(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_service_account(ns, {"metadata": {"name": "brief"}})
    body = {"metadata": {"name": "brief-token", "annotations": {"kubernetes.io/service-account.name": "brief"}},
            "type": "kubernetes.io/service-account-token"}
    core.create_namespaced_secret(ns, body)
    core.delete_namespaced_service_account("brief", ns)  # the controller acts inside the write: gone on return
    assert "brief-token" not in [s.metadata.name for s in core.list_namespaced_secret(ns).items]
    created = core.create_namespaced_secret(ns, body)  # naming a missing account: the controller deletes it
    assert created.metadata.name == "brief-token"
    assert "brief-token" not in [s.metadata.name for s in core.list_namespaced_secret(ns).items]
