"""Conformance: x509 client-certificate authentication, as kube-apiserver 1.34 with --client-ca-file does it.

kubeadm's admin.conf (kubernetes-admin, O=kubeadm:cluster-admins) and super-admin.conf (kubernetes-super-admin,
O=system:masters) hold client certificates signed by the cluster CA (pki/ca.crt, pki/ca.key). A valid certificate
is user = CN, groups = O values + system:authenticated; an expired, not-yet-valid or foreign one is 401
Unauthorized; authenticators are asked x509 first, then the bearer token, and the first that succeeds decides.
Through kubectl, the kubernetes Python client (certificate from the kubeconfig), kubernetes.core's k8s_info
(client_cert / client_key / ca_cert) and plain HTTPS where the Status body is asserted.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from tests.support.twin import COLLECTIONS, REPO, run_playbook
from twin.apiserver.http import tls

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}
NOW = datetime.datetime.now(datetime.UTC)


def _kubeconfig_user(path: Path) -> dict:
    return yaml.safe_load(path.read_text())["users"][0]["user"]


def cert_files(twin, tmp_path: Path, name: str, cn: str, orgs: tuple[str, ...] = (), *, ca=None,
               not_before: datetime.datetime | None = None, days: float = 365) -> tuple[Path, Path]:
    """A client certificate and key signed by the cluster's CA (or `ca`: (cert, key) of another one)."""
    ca_cert, ca_key = ca or tls.load_ca(twin.dir / "pki")
    crt, key = tls.client_cert(ca_cert, ca_key, cn, orgs, not_before=not_before, days=days)
    (tmp_path / f"{name}.crt").write_bytes(crt)
    (tmp_path / f"{name}.key").write_bytes(key)
    return tmp_path / f"{name}.crt", tmp_path / f"{name}.key"


def cert_kubeconfig(twin, tmp_path: Path, name: str, cn: str, orgs: tuple[str, ...] = (), **kw) -> Path:
    """admin.conf with another client certificate in it, as `kubeadm kubeconfig user --client-name` writes."""
    crt, key = cert_files(twin, tmp_path, name, cn, orgs, **kw)
    cfg = yaml.safe_load((twin.dir / "admin.conf").read_text())
    cfg["users"][0]["user"] = {"client-certificate-data": base64.b64encode(crt.read_bytes()).decode(),
                               "client-key-data": base64.b64encode(key.read_bytes()).decode()}
    path = tmp_path / f"{name}.conf"
    path.write_text(yaml.safe_dump(cfg))
    return path


def https(twin, path: str, cert: tuple[Path, Path] | None = None, token: str = "") -> tuple[int, dict]:
    """(status, JSON body) of a GET with an optional client certificate and bearer token."""
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    if cert:
        ctx.load_cert_chain(*cert)
    req = urllib.request.Request(twin.server + path, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def whoami(twin, kubeconfig: Path) -> dict:
    return json.loads(twin.kubectl("auth", "whoami", "-o", "json", kubeconfig=kubeconfig).stdout)["status"]["userInfo"]


def test_kubeadm_conf_files_hold_client_certificates_of_the_cluster_ca(twin):
    ca = x509.load_pem_x509_certificate((twin.dir / "pki" / "ca.crt").read_bytes())
    for file, cn, org in (("admin.conf", "kubernetes-admin", "kubeadm:cluster-admins"),
                          ("super-admin.conf", "kubernetes-super-admin", "system:masters")):
        cfg = yaml.safe_load((twin.dir / file).read_text())
        assert cfg["current-context"] == f"{cn}@kubernetes"
        user = cfg["users"][0]
        assert user["name"] == cn and sorted(user["user"]) == ["client-certificate-data", "client-key-data"]
        cert = x509.load_pem_x509_certificate(base64.b64decode(user["user"]["client-certificate-data"]))
        cert.verify_directly_issued_by(ca)
        assert cert.subject.rfc4514_string() == f"CN={cn},O={org}"
        assert (twin.dir / file).stat().st_mode & 0o077 == 0


def test_kubectl_whoami_is_the_certificate_user_with_its_groups(twin):
    info = whoami(twin, twin.dir / "admin.conf")
    der = x509.load_pem_x509_certificate(base64.b64decode(
        _kubeconfig_user(twin.dir / "admin.conf")["client-certificate-data"])).public_bytes(Encoding.DER)
    assert info == {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"],
                    "extra": {"authentication.kubernetes.io/credential-id": [f"X509SHA256={hashlib.sha256(der).hexdigest()}"]}}
    assert whoami(twin, twin.dir / "super-admin.conf")["groups"] == ["system:masters", "system:authenticated"]
    # kubeadm:cluster-admins is bound to cluster-admin by the ClusterRoleBinding of that name
    binding = twin.kubectl_json("get", "clusterrolebinding", "kubeadm:cluster-admins")
    assert binding["roleRef"]["name"] == "cluster-admin"
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                    "name": "kubeadm:cluster-admins"}]
    nodes = twin.kubectl("get", "nodes", "-o", "name", kubeconfig=twin.dir / "admin.conf").stdout.split()
    assert len(nodes) == 1


def test_rbac_allows_the_certificate_group_by_kubeadms_binding(twin):
    assert twin.kubectl("auth", "can-i", "delete", "nodes", kubeconfig=twin.dir / "admin.conf").stdout == "yes\n"
    api = config.new_client_from_config(config_file=str(twin.dir / "admin.conf"))
    try:
        review = client.AuthorizationV1Api(api).create_self_subject_access_review(
            {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    finally:
        api.close()
    assert review.status.allowed is True
    assert review.status.reason == ('RBAC: allowed by ClusterRoleBinding "kubeadm:cluster-admins" of ClusterRole '
                                    '"cluster-admin" to Group "kubeadm:cluster-admins"')


def test_kubernetes_python_client_takes_the_certificate_from_the_kubeconfig(twin):
    api = config.new_client_from_config(config_file=str(twin.dir / "super-admin.conf"))
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review({})
        assert review.status.user_info.username == "kubernetes-super-admin"
        assert review.status.user_info.groups == ["system:masters", "system:authenticated"]
        assert [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items].count("kube-system") == 1
    finally:
        api.close()


@pytest.mark.parametrize("case", ["expired", "not yet valid", "foreign CA"])
def test_an_invalid_certificate_is_401_unauthorized(twin, tmp_path, case):
    kw: dict = {"expired": {"not_before": NOW - datetime.timedelta(days=3), "days": 1},
                "not yet valid": {"not_before": NOW + datetime.timedelta(days=1)},
                "foreign CA": {"ca": tls.make_ca("kind-other")}}[case]
    files = cert_files(twin, tmp_path, "bad", "kubernetes-admin", ("system:masters",), **kw)
    assert https(twin, "/api/v1/namespaces", cert=files) == (401, UNAUTHORIZED)
    conf = cert_kubeconfig(twin, tmp_path, "bad", "kubernetes-admin", ("system:masters",), **kw)
    out = twin.kubectl("get", "pods", kubeconfig=conf, check=False)
    assert out.returncode == 1
    assert "error: You must be logged in to the server (Unauthorized)" in out.stderr
    api = config.new_client_from_config(config_file=str(conf))
    try:
        with pytest.raises(ApiException) as e:
            client.CoreV1Api(api).list_namespace()
        assert e.value.status == 401 and json.loads(e.value.body)["reason"] == "Unauthorized"
    finally:
        api.close()


def test_a_certificate_without_common_name_authenticates_nobody(twin, tmp_path):
    files = cert_files(twin, tmp_path, "nocn", "", ("system:masters",))
    assert https(twin, "/api/v1/namespaces", cert=files) == (401, UNAUTHORIZED)


def test_no_certificate_falls_through_to_the_token_and_a_valid_certificate_wins(twin, tmp_path, bot):
    # no certificate: the token authenticates
    assert whoami(twin, bot.kubeconfig)["username"] == bot.user
    # a valid certificate and a token: the x509 authenticator is asked first and wins
    crt, key = cert_files(twin, tmp_path, "jane", "jane", ("devs",))
    both = tmp_path / "both.conf"
    cfg = yaml.safe_load(bot.kubeconfig.read_text())
    cfg["users"][0]["user"].update({"client-certificate": str(crt), "client-key": str(key)})
    both.write_text(yaml.safe_dump(cfg))
    assert whoami(twin, both)["username"] == "jane"
    # an expired certificate and a valid token: the union goes on to the token, which authenticates
    old = cert_files(twin, tmp_path, "old", "jane", ("devs",), not_before=NOW - datetime.timedelta(days=3), days=1)
    cfg["users"][0]["user"].update({"client-certificate": str(old[0]), "client-key": str(old[1])})
    both.write_text(yaml.safe_dump(cfg))
    assert whoami(twin, both)["username"] == bot.user
    # and with an invalid token beside it, nothing authenticates
    assert https(twin, "/api/v1/namespaces", cert=old, token="not-a-token") == (401, UNAUTHORIZED)


def test_a_certificate_user_without_rbac_is_forbidden_by_name(twin, tmp_path):
    conf = cert_kubeconfig(twin, tmp_path, "jane", "jane", ("devs", "qa"))
    out = twin.kubectl("get", "pods", "-n", "default", kubeconfig=conf, check=False)
    assert out.returncode == 1
    assert ('Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" '
            'in the namespace "default"') in out.stderr
    # RBAC sees the certificate's groups: a binding to one of them opens the door
    twin.kubectl("create", "role", "qa-pods", "--verb=list", "--resource=pods", "-n", "default")
    twin.kubectl("create", "rolebinding", "qa-pods", "--role=qa-pods", "--group=qa", "-n", "default")
    try:
        assert twin.kubectl("get", "pods", "-n", "default", kubeconfig=conf).returncode == 0
    finally:
        twin.kubectl("delete", "rolebinding,role", "qa-pods", "-n", "default")


def test_system_masters_certificate_bypasses_rbac(twin, tmp_path):
    conf = cert_kubeconfig(twin, tmp_path, "breakglass", "ops", ("system:masters",))
    assert twin.kubectl("auth", "can-i", "delete", "nodes", kubeconfig=conf).stdout == "yes\n"
    assert twin.kubectl("get", "secrets", "-A", "-o", "name", kubeconfig=conf).returncode == 0


@pytest.mark.skipif(not (COLLECTIONS / "ansible_collections" / "kubernetes" / "core").is_dir(),
                    reason="kubernetes.core is not installed (bash scripts/setup.sh python)")
def test_k8s_info_with_client_cert_client_key_and_ca_cert(twin, tmp_path):
    crt, key = cert_files(twin, tmp_path, "viewer", "kubernetes-admin", ("kubeadm:cluster-admins",))
    expired = cert_files(twin, tmp_path, "expired", "kubernetes-admin", ("kubeadm:cluster-admins",),
                         not_before=NOW - datetime.timedelta(days=3), days=1)
    auth = {"host": twin.server, "ca_cert": str(twin.dir / "pki" / "ca.crt")}
    play = tmp_path / "x509.yml"
    tasks = [
        {"name": "Valid certificate", "register": "nodes", "kubernetes.core.k8s_info": {
            "kind": "Node", **auth, "client_cert": str(crt), "client_key": str(key)}},
        {"name": "Expired certificate", "ignore_errors": True, "kubernetes.core.k8s_info": {
            "kind": "Node", **auth, "client_cert": str(expired[0]), "client_key": str(expired[1])}},
    ]
    play.write_text(yaml.safe_dump([{"name": "k8s_info with a client certificate", "hosts": "localhost",
                                     "gather_facts": False, "tasks": tasks}]))
    # no kubeconfig anywhere: the certificate is the only credential
    env = {k: v for k, v in twin.env().items() if k not in ("KUBECONFIG", "K8S_AUTH_KUBECONFIG")}
    run = run_playbook(play, inventory=REPO / "inventories" / "twin", env=env, record_dir=tmp_path)
    nodes = run.task("Valid certificate")
    assert nodes["status"] == "ok", nodes
    assert len(nodes["result"]["resources"]) == 1
    failed = run.task("Expired certificate")
    assert failed["status"] == "failed"
    assert "401" in json.dumps(failed["result"]) and "Unauthorized" in json.dumps(failed["result"])
