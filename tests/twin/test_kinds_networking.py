"""Ingress, IngressClass, NetworkPolicy (networking.k8s.io/v1), EndpointSlice (discovery.k8s.io/v1) and APIService
(apiregistration.k8s.io/v1) as kube-apiserver serves them: discovery, defaults, validation (422 causes),
list/watch, kubectl's columns, and the local APIServices of the twin's own group versions."""
from __future__ import annotations

import pytest
import yaml

from tests.support.twin import Twin
from tests.twin.kinds_support import header, rejected, row, watched_names


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("kinds-net") / "twin", nodes=1) as t:
        yield t


def _backend(port: dict) -> dict:
    return {"service": {"name": "web", "port": port}}


INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "site"},
           "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
                    "rules": [
                        {"host": "a.example.com", "http": {"paths": [
                            {"path": "/", "pathType": "Prefix", "backend": _backend({"number": 80})}]}},
                        {"host": "b.example.com", "http": {"paths": [
                            {"path": "/api", "pathType": "Exact", "backend": _backend({"name": "http"})}]}}]}}


def test_discovery_serves_the_groups(twin):
    out = twin.kubectl("api-resources", "--no-headers").stdout
    kinds = {ln.split()[-1]: ln.split() for ln in out.splitlines()}
    assert kinds["Ingress"][:2] == ["ingresses", "ing"] and kinds["Ingress"][-2] == "true"
    assert kinds["IngressClass"][-3:] == ["networking.k8s.io/v1", "false", "IngressClass"]
    assert kinds["NetworkPolicy"][:2] == ["networkpolicies", "netpol"]
    assert kinds["EndpointSlice"][-3:] == ["discovery.k8s.io/v1", "true", "EndpointSlice"]
    assert kinds["APIService"][-3:] == ["apiregistration.k8s.io/v1", "false", "APIService"]


def test_ingress_and_class_columns_and_watch(twin):
    from kubernetes import client

    net = client.NetworkingV1Api(twin.api_client())
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([INGRESS, {
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
        "spec": {"controller": "k8s.io/ingress-nginx",
                 "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p", "scope": "Cluster"}}}]))
    assert header(twin, "ingress") == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    cells = row(twin, "ingress", "site")
    assert cells[:3] == ["site", "nginx", "a.example.com,b.example.com"] and cells[3] == "80, 443"
    assert header(twin, "ingressclass") == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert row(twin, "ingressclass", "nginx")[:3] == ["nginx", "k8s.io/ingress-nginx", "Params.k8s.example.com/p"]
    got = net.read_namespaced_ingress("site", "default")
    assert got.spec.rules[1].http.paths[0].backend.service.port.name == "http" and got.metadata.generation == 1
    assert watched_names(net.list_namespaced_ingress, "default", names={"site"}) == {"site": "ADDED"}
    # the controller of a class is immutable
    changed = twin.kubectl("patch", "ingressclass", "nginx", "--type=merge", "-p",
                           '{"spec":{"controller":"example.com/other"}}', check=False)
    assert changed.returncode != 0 and 'spec.controller: Invalid value: "example.com/other": field is immutable' in \
        changed.stderr


def test_ingress_rules_and_backends_are_validated(twin):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    net = client.NetworkingV1Api(twin.api_client())
    out = twin.kubectl("create", "-f", "-", check=False, input=yaml.safe_dump(
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "empty"}, "spec": {}}))
    assert out.returncode != 0
    assert "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified" in out.stderr
    body = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "bad"},
            "spec": {"rules": [{"host": "1.2.3.4", "http": {"paths": [
                {"path": "rel", "pathType": "Prefix", "backend": {}},
                {"path": "/x", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {}}}},
                {"path": "/y", "pathType": "Sometimes", "backend": _backend({"number": 80})}]}}]}}
    with pytest.raises(ApiException) as e:
        net.create_namespaced_ingress("default", body)
    code, reason, causes = rejected(e.value)
    assert (code, reason) == (422, "Invalid")
    p = "spec.rules[0].http.paths"
    assert set(causes) >= {
        ("FieldValueInvalid", "spec.rules[0].host", 'Invalid value: "1.2.3.4": must be a DNS name, not an IP address'),
        ("FieldValueInvalid", f"{p}[0].path", 'Invalid value: "rel": must be an absolute path'),
        ("FieldValueInvalid", f"{p}[0].backend", 'Invalid value: "": resource or service backend is required'),
        ("FieldValueRequired", f"{p}[1].backend", "Required value: port name or number is required"),
        ("FieldValueNotSupported", f"{p}[2].pathType",
         'Unsupported value: "Sometimes": supported values: "Exact", "ImplementationSpecific", "Prefix"'),
    }
    assert net.list_namespaced_ingress("default", field_selector="metadata.name=bad").items == []


def test_networkpolicy_defaults_policy_types(twin):
    from kubernetes import client

    net = client.NetworkingV1Api(twin.api_client())
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "egress"},
         "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "egress": [{"ports": [{"port": 53}]}]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "deny-all"},
         "spec": {"podSelector": {}}}]))
    egress = net.read_namespaced_network_policy("egress", "default")
    assert egress.spec.policy_types == ["Ingress", "Egress"] and egress.spec.egress[0].ports[0].protocol == "TCP"
    assert net.read_namespaced_network_policy("deny-all", "default").spec.policy_types == ["Ingress"]
    assert header(twin, "netpol") == ["NAME", "POD-SELECTOR", "AGE"]
    assert row(twin, "netpol", "egress")[:2] == ["egress", "app=web"]
    assert row(twin, "netpol", "deny-all")[:2] == ["deny-all", "<none>"]
    assert watched_names(net.list_namespaced_network_policy, "default", names={"egress", "deny-all"}) == \
        {"egress": "ADDED", "deny-all": "ADDED"}

    bad = twin.kubectl("create", "-f", "-", check=False, input=yaml.safe_dump(
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "bad"},
         "spec": {"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
                  "ingress": [{"from": [{}], "ports": [{"port": 70000}]}], "policyTypes": ["Sideways"]}}))
    assert bad.returncode != 0
    for msg in ("spec.podSelector.matchExpressions[0].values: Required value",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"'):
        assert msg in bad.stderr


def test_endpointslice_address_type_and_endpoints(twin):
    from kubernetes import client

    disc = client.DiscoveryV1Api(twin.api_client())
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "web-1", "labels": {"kubernetes.io/service-name": "web"}}, "addressType": "IPv4",
         "ports": [{"name": "http", "port": 80}, {"port": 443}],
         "endpoints": [{"addresses": [f"10.0.0.{i}"], "conditions": {"ready": True}} for i in range(1, 6)]}))
    es = disc.read_namespaced_endpoint_slice("web-1", "default")
    assert [(p.name, p.port, p.protocol) for p in es.ports] == [("http", 80, "TCP"), ("", 443, "TCP")]
    assert header(twin, "endpointslices") == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert row(twin, "endpointslices", "web-1")[:4] == ["web-1", "IPv4", "80,443",
                                                        "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."]
    assert [s.metadata.name for s in disc.list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=web").items] == ["web-1"]
    assert watched_names(disc.list_namespaced_endpoint_slice, "default", names={"web-1"}) == {"web-1": "ADDED"}

    changed = twin.kubectl("patch", "endpointslice", "web-1", "--type=merge", "-p", '{"addressType":"FQDN"}',
                           check=False)
    assert changed.returncode != 0 and 'addressType: Invalid value: "FQDN": field is immutable' in changed.stderr
    bad = twin.kubectl("create", "-f", "-", check=False, input=yaml.safe_dump(
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "bad"},
         "addressType": "IPv4", "endpoints": [{"addresses": []}, {"addresses": ["fe80::1"]}]}))
    assert bad.returncode != 0
    assert "endpoints[0].addresses: Required value: must contain at least 1 address" in bad.stderr
    assert 'endpoints[1].addresses[0]: Invalid value: "fe80::1": must be a valid IPv4 address' in bad.stderr


def test_apiservices_list_the_local_group_versions(twin):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    reg = client.ApiregistrationV1Api(twin.api_client())
    names = {a.metadata.name: a for a in reg.list_api_service().items}
    for gv in ("v1.", "v1.apps", "v1.batch", "v1.networking.k8s.io", "v1.discovery.k8s.io", "v1.apiregistration.k8s.io",
               "v1.snapshot.storage.k8s.io"):
        a = names[gv]
        assert a.spec.service is None
        cond = next(c for c in a.status.conditions if c.type == "Available")
        assert (cond.status, cond.reason, cond.message) == ("True", "Local", "Local APIServices are always available")
    assert (names["v1.apps"].spec.group_priority_minimum, names["v1.apps"].spec.version_priority) == (17800, 15)
    assert header(twin, "apiservice") == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert row(twin, "apiservice", "v1.apps")[:3] == ["v1.apps", "Local", "True"]

    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"},
         "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
                  "insecureSkipTLSVerify": True, "service": {"name": "metrics-server", "namespace": "kube-system"}}}))
    assert row(twin, "apiservice", "v1beta1.metrics.k8s.io")[:3] == \
        ["v1beta1.metrics.k8s.io", "kube-system/metrics-server", "False (ServiceNotFound)"]
    wrong = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.wrong"},
             "spec": {"group": "right.example.com", "version": "v1", "groupPriorityMinimum": 0, "versionPriority": 5000}}
    with pytest.raises(ApiException) as e:
        reg.create_api_service(wrong)
    code, reason, causes = rejected(e.value)
    assert (code, reason) == (422, "Invalid")
    assert set(causes) >= {
        ("FieldValueInvalid", "metadata.name", 'Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: '
                                               '"v1.right.example.com"'),
        ("FieldValueInvalid", "spec.groupPriorityMinimum", "Invalid value: 0: must be positive and less than 20000"),
        ("FieldValueInvalid", "spec.versionPriority", "Invalid value: 5000: must be positive and less than 1000"),
    }


def test_a_new_crd_group_gets_its_apiservice(twin):
    from kubernetes import client, watch

    reg = client.ApiregistrationV1Api(twin.api_client())
    rv = reg.list_api_service().metadata.resource_version
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "widgets.toys.example.com"},
         "spec": {"group": "toys.example.com", "scope": "Namespaced",
                  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                  "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
    seen = None
    for ev in watch.Watch().stream(reg.list_api_service, resource_version=rv, timeout_seconds=30):
        if ev["type"] == "ADDED" and ev["object"].metadata.name == "v1alpha1.toys.example.com":
            seen = ev["object"]
            break
    assert seen is not None and seen.spec.group == "toys.example.com" and seen.spec.service is None
    twin.kubectl("delete", "crd", "widgets.toys.example.com")
    for ev in watch.Watch().stream(reg.list_api_service, resource_version=seen.metadata.resource_version,
                                   timeout_seconds=30):
        if ev["type"] == "DELETED" and ev["object"].metadata.name == "v1alpha1.toys.example.com":
            break
    else:
        raise AssertionError("the CRD's APIService stayed")
