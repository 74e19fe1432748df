"""Conformance: aggregated discovery (apidiscovery.k8s.io v2 and v2beta1), as kube-apiserver 1.32 serves it.

client-go (kubectl 1.32) asks GET /api and /apis for an APIGroupDiscoveryList and, when it gets one, makes no
per-group-version request; legacy clients (the kubernetes Python client, kubernetes.core) send plain
application/json and keep getting APIVersions / APIGroupList (test_conformance_discovery.py).
"""
from __future__ import annotations

import json
import re
import subprocess

import yaml

from tests.twin.test_conformance_discovery import raw

# client-go's acceptDiscoveryFormats (discovery_client.go): AcceptV2, AcceptV2Beta1, AcceptV1
V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
CLIENT_GO = f"{V2},{V2BETA1},application/json"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.agg.example.com"},
       "spec": {"group": "agg.example.com", "scope": "Cluster",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wdg"],
                          "categories": ["all"]},
                "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def aggregated(twin, path: str, accept: str = CLIENT_GO) -> tuple[dict, dict]:
    code, headers, body = raw(twin, path, accept=accept)
    assert code == 200, body
    return json.loads(body), headers


def _facts(entries: list[dict], group: str, version: str) -> set[tuple]:
    """One legacy APIResourceList's resources and subresources as comparable facts; a kind's group or version
    left out (or empty, as the aggregated document writes it for a built-in) is the group version's own."""
    out = set()
    for e in entries:
        kind = (e.get("group") or group, e.get("version") or version, e["kind"])
        out.add((e["name"], tuple(sorted(e["verbs"])), e["namespaced"], kind, e["singularName"] if "/" not in e["name"] else "",
                 tuple(e.get("shortNames") or ()), tuple(e.get("categories") or ())))
    return out


def _aggregated_facts(resources: list[dict], group: str, version: str) -> set[tuple]:
    """The same facts from an APIVersionDiscovery's resources, flattened back into the legacy shape."""
    entries = []
    for r in resources:
        rk, namespaced = r["responseKind"], r["scope"] == "Namespaced"
        assert r["scope"] in ("Namespaced", "Cluster")
        entries.append({"name": r["resource"], "verbs": r["verbs"], "namespaced": namespaced, "kind": rk["kind"],
                        "group": rk["group"], "version": rk["version"], "singularName": r["singularResource"],
                        "shortNames": r.get("shortNames"), "categories": r.get("categories")})
        for s in r.get("subresources", []):
            sk = s["responseKind"]
            entries.append({"name": f"{r['resource']}/{s['subresource']}", "verbs": s["verbs"], "namespaced": namespaced,
                            "kind": sk["kind"], "group": sk["group"], "version": sk["version"], "singularName": ""})
    return _facts(entries, group, version)


def _legacy_group_versions(twin) -> list[tuple[str, list[str]]]:
    apis = json.loads(raw(twin, "/apis")[2])
    return [("", ["v1"])] + [(g["name"], [v["version"] for v in g["versions"]]) for g in apis["groups"]]


def _legacy_list(twin, group: str, version: str) -> list[dict]:
    code, _, body = raw(twin, f"/apis/{group}/{version}" if group else f"/api/{version}")
    assert code == 200, (group, version)
    return json.loads(body)["resources"]


def _by_group(twin) -> dict[str, dict]:
    core, _ = aggregated(twin, "/api")
    rest, _ = aggregated(twin, "/apis")
    assert [i["metadata"].get("name", "") for i in core["items"]] == [""]
    return {i["metadata"].get("name", ""): i for i in core["items"] + rest["items"]}


def test_client_go_accept_gets_v2_with_the_media_type_echoed(twin):
    for path in ("/api", "/apis"):
        doc, headers = aggregated(twin, path)
        assert headers["Content-Type"] == V2
        assert headers["Vary"] == "Accept" and re.fullmatch(r'"[0-9A-F]{128}"', headers["ETag"])
        assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    apps = next(i for i in doc["items"] if i["metadata"]["name"] == "apps")
    v1 = apps["versions"][0]
    assert v1["version"] == "v1" and v1["freshness"] == "Current"
    sts = next(r for r in v1["resources"] if r["resource"] == "statefulsets")
    assert sts["scope"] == "Namespaced" and sts["singularResource"] == "statefulset" and sts["shortNames"] == ["sts"]
    scale = next(s for s in sts["subresources"] if s["subresource"] == "scale")
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    core = aggregated(twin, "/api")[0]["items"][0]["versions"][0]["resources"]
    subs = {(r["resource"], s["subresource"]): s["responseKind"] for r in core for s in r.get("subresources", [])}
    assert subs[("pods", "eviction")] == {"group": "policy", "version": "v1", "kind": "Eviction"}
    assert subs[("serviceaccounts", "token")] == {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}


def test_v2beta1_and_yaml_are_negotiated_in_accept_order(twin):
    doc, headers = aggregated(twin, "/apis", accept=f"{V2BETA1},application/json")
    assert headers["Content-Type"] == V2BETA1 and doc["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert doc["items"] == aggregated(twin, "/apis")[0]["items"]
    # by q first, and an aggregated range wins over a plain one written before it
    _, headers = aggregated(twin, "/apis", accept=f"application/json,{V2BETA1};q=0.5,{V2}")
    assert headers["Content-Type"] == V2
    code, headers, body = raw(twin, "/api", accept=V2.replace("json", "yaml", 1))
    assert code == 200 and headers["Content-Type"] == "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert yaml.safe_load(body)["items"][0]["versions"][0]["version"] == "v1"


def test_protobuf_only_aggregated_accept_is_refused_and_falls_back_to_plain_json(twin):
    pb = V2.replace("application/json", "application/vnd.kubernetes.protobuf")
    code, _, body = raw(twin, "/apis", accept=pb)
    assert code == 406 and json.loads(body)["reason"] == "NotAcceptable"
    code, headers, body = raw(twin, "/apis", accept=f"{pb},application/json")
    assert code == 200 and json.loads(body)["kind"] == "APIGroupList"


def test_plain_json_still_gets_the_legacy_documents(twin):
    for path, kind in (("/api", "APIVersions"), ("/apis", "APIGroupList")):
        for accept in ("application/json", "*/*", "application/json;as=Table;g=meta.k8s.io;v=v1,application/json"):
            code, headers, body = raw(twin, path, accept=accept)
            assert code == 200 and headers["Content-Type"].startswith("application/json") and "g=" not in headers["Content-Type"]
            assert json.loads(body)["kind"] == kind


def test_etag_answers_if_none_match_with_304(twin):
    _, headers = aggregated(twin, "/apis")
    code, again, body = raw(twin, "/apis", accept=CLIENT_GO, extra={"If-None-Match": headers["ETag"]})
    assert code == 304 and body == b"" and again["ETag"] == headers["ETag"]
    code, _, _ = raw(twin, "/apis", accept=CLIENT_GO, extra={"If-None-Match": '"0"'})
    assert code == 200
    assert aggregated(twin, "/api")[1]["ETag"] != headers["ETag"]


def test_aggregated_and_legacy_describe_the_same_resources(twin):
    """Every group version, resource and subresource in one is in the other, with the same verbs, scope, kinds,
    singular and short names and categories, and the versions in the same (preferred) order."""
    by_group = _by_group(twin)
    legacy = _legacy_group_versions(twin)
    assert sorted(by_group) == sorted(g for g, _ in legacy)
    for group, versions in legacy:
        agg_versions = by_group[group]["versions"]
        assert [v["version"] for v in agg_versions] == versions, group
        for v in agg_versions:
            want = _facts(_legacy_list(twin, group, v["version"]), group, v["version"])
            assert _aggregated_facts(v.get("resources", []), group, v["version"]) == want, (group, v["version"])


def test_crd_created_at_runtime_appears_and_changes_the_etag(twin):
    _, before = aggregated(twin, "/apis")
    twin.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    try:
        doc, after = aggregated(twin, "/apis")
        assert after["ETag"] != before["ETag"]
        group = next(i for i in doc["items"] if i["metadata"]["name"] == "agg.example.com")
        (version,) = group["versions"]
        (widgets,) = version["resources"]
        assert widgets["resource"] == "widgets" and widgets["scope"] == "Cluster" and widgets["shortNames"] == ["wdg"]
        assert widgets["categories"] == ["all"] and widgets["singularResource"] == "widget"
        # apiextensions' discovery controller names the CRD's own group version
        assert widgets["responseKind"] == {"group": "agg.example.com", "version": "v1", "kind": "Widget"}
        assert widgets["subresources"] == [{"subresource": "status", "verbs": ["get", "patch", "update"],
                                            "responseKind": {"group": "agg.example.com", "version": "v1", "kind": "Widget"}}]
    finally:
        twin.kubectl("delete", "crd", CRD["metadata"]["name"])
    assert "agg.example.com" not in _by_group(twin)


def _requests(log: str) -> list[str]:
    """The paths of the GETs in a kubectl -v=6 log (`GET https://host/path?query 200 OK in 3 milliseconds`)."""
    return [m.group(1) for m in re.finditer(r"GET https://[^/\s]+(/[^?\s]*)", log)]


def _kubectl_fresh_home(twin, home, *args: str) -> subprocess.CompletedProcess[str]:
    """kubectl with a HOME of its own: an empty discovery cache (~/.kube/cache), so it discovers anew."""
    proc = subprocess.run(["kubectl", *args, "-v=6"], env={**twin.env(), "HOME": str(home)}, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_kubectl_discovers_in_two_requests(twin, tmp_path):
    """kubectl asks /api and /apis once each, takes the aggregated answers, and asks no group version;
    api-resources lists what the legacy lists hold (client-go's preferred resources)."""
    proc = _kubectl_fresh_home(twin, tmp_path, "api-resources", "-o", "name")
    paths = _requests(proc.stderr)
    assert paths.count("/api") == 1 and paths.count("/apis") == 1, paths
    assert not [p for p in paths if re.fullmatch(r"/apis?/[^/]+(/[^/]+)?", p)], paths
    assert "unable to retrieve" not in proc.stderr
    want = set()
    for group, versions in _legacy_group_versions(twin):
        seen: set[str] = set()
        for v in versions:
            for e in _legacy_list(twin, group, v):
                if "/" not in e["name"] and e["name"] not in seen:
                    seen.add(e["name"])
                    want.add(f"{e['name']}.{group}" if group else e["name"])
    assert set(proc.stdout.split()) == want
    assert "volumesnapshots.snapshot.storage.k8s.io" in want
    got = _kubectl_fresh_home(twin, tmp_path / "other", "get", "volumesnapshots", "-A", "-o", "json")
    assert json.loads(got.stdout)["kind"] == "List"
    assert "/apis/snapshot.storage.k8s.io/v1/volumesnapshots" in _requests(got.stderr)
