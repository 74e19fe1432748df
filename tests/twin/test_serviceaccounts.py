"""Namespaces and service accounts (issue 29): the ServiceAccount "default" and ConfigMap kube-root-ca.crt of every
namespace (kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers), kept there when deleted
or changed; the ServiceAccount admission plugin on pods; the legacy token controller on service-account-token
Secrets. Through the kubernetes Python client and kubectl."""
from __future__ import annotations

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
