"""storageperf.k8s.kubeconfig through `ansible-inventory --list`: one k8s_clusters host per kubeconfig context.

The kubeconfig files are written by the tests; one test runs a playbook through the inventory against a twin.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.inventory import cache_entries, list_inventory, write_yaml
from tests.support.twin import REPO, run_playbook


def kubeconfig(path: Path, contexts: dict[str, tuple[str, str | None]], servers: dict[str, str]) -> Path:
    """A kubeconfig with the given clusters {name: server} and contexts {name: (cluster, namespace)}."""
    return write_yaml(path, {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s in servers.items()],
        "users": [{"name": "admin", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": n, "context": dict({"cluster": c, "user": "admin"}, **({"namespace": ns} if ns else {}))}
                     for n, (c, ns) in contexts.items()],
        "current-context": next(iter(contexts)),
    })


@pytest.fixture
def two_files(tmp_path):
    """Two files that share a context name (as every kubeadm cluster's kubernetes-admin@kubernetes does)."""
    a = kubeconfig(tmp_path / "kube" / "hangzhou.yaml",
                   {"kubernetes-admin@kubernetes": ("hz", None), "prod-hz": ("hz", "storage")},
                   {"hz": "https://10.0.0.1:6443"})
    b = kubeconfig(tmp_path / "kube" / "beijing.yaml",
                   {"kubernetes-admin@kubernetes": ("bj", None), "prod-bj": ("bj", "bench"), "lab": ("bj", None)},
                   {"bj": "https://10.0.1.1:6443"})
    return a, b


def source(tmp_path: Path, name: str = "fleet.kubeconfig.yml", **options) -> Path:
    return write_yaml(tmp_path / name, {"plugin": "storageperf.k8s.kubeconfig", **options})


@pytest.fixture(scope="module", autouse=True)
def installed_collection():
    import subprocess

    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)


def test_every_context_of_every_file_is_a_host_with_its_vars(tmp_path, two_files):
    a, b = two_files
    # relative paths are relative to the inventory file
    listing = list_inventory(source(tmp_path, kubeconfigs=["kube/hangzhou.yaml", "kube/beijing.yaml"]))
    hv = listing.hostvars
    assert sorted(hv) == ["kubernetes-admin_kubernetes", "kubernetes-admin_kubernetes_2", "lab", "prod-bj", "prod-hz"]
    assert listing.group("k8s_clusters") == sorted(hv)
    # the clash is numbered in file order: the first file keeps the plain name
    assert hv["kubernetes-admin_kubernetes"]["k8s_kubeconfig"] == str(a)
    assert hv["kubernetes-admin_kubernetes_2"]["k8s_kubeconfig"] == str(b)
    assert hv["kubernetes-admin_kubernetes_2"]["k8s_context"] == "kubernetes-admin@kubernetes"
    assert hv["prod-bj"] == {
        "ansible_connection": "local",
        "ansible_python_interpreter": "{{ ansible_playbook_python }}",
        "k8s_kubeconfig": str(b), "k8s_context": "prod-bj", "k8s_cluster": "bj",
        "k8s_server": "https://10.0.1.1:6443", "k8s_namespace": "bench",
    }
    assert hv["lab"]["k8s_namespace"] == "default"


def test_contexts_filter_and_cluster_group(tmp_path, two_files):
    listing = list_inventory(source(tmp_path, kubeconfigs=[str(p) for p in two_files], contexts=["prod-*", "lab"],
                                    cluster_group="fleet"))
    assert sorted(listing.hostvars) == ["lab", "prod-bj", "prod-hz"]
    assert listing.group("fleet") == ["lab", "prod-bj", "prod-hz"]
    assert "k8s_clusters" not in listing.groups


def test_constructed_compose_groups_keyed_groups(tmp_path, two_files):
    listing = list_inventory(source(
        tmp_path, kubeconfigs=[str(p) for p in two_files],
        compose={"api_host": "k8s_server | urlsplit('hostname')",
                 "ansible_python_interpreter": "'/opt/k8s-venv/bin/python'"},
        groups={"production": "k8s_context is match('prod-')"},
        keyed_groups=[{"key": "k8s_namespace", "prefix": "ns"},
                      {"key": "api_host", "prefix": "server"}],  # keyed groups see composed vars
    ))
    hv = listing.hostvars
    assert hv["prod-hz"]["api_host"] == "10.0.0.1"
    assert {h: v["ansible_python_interpreter"] for h, v in hv.items()} == dict.fromkeys(hv, "/opt/k8s-venv/bin/python")
    assert listing.group("production") == ["prod-bj", "prod-hz"]
    assert listing.group("ns_storage") == ["prod-hz"]
    assert listing.group("ns_default") == ["kubernetes-admin_kubernetes", "kubernetes-admin_kubernetes_2", "lab"]
    assert listing.group("server_10_0_1_1") == ["kubernetes-admin_kubernetes_2", "lab", "prod-bj"]


def test_default_is_the_kubeconfig_env_list_then_home(tmp_path, two_files):
    a, b = two_files
    inv = source(tmp_path, name="default.kubeconfig.yaml")
    from_env = list_inventory(inv, env={"KUBECONFIG": f"{b}{os.pathsep}{a}"})
    assert from_env.hostvars["kubernetes-admin_kubernetes"]["k8s_kubeconfig"] == str(b)  # KUBECONFIG order
    assert len(from_env.hostvars) == 5

    home = tmp_path / "home"
    kubeconfig(home / ".kube" / "config", {"only": ("c", None)}, {"c": "https://10.9.9.9"})
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    from_home = list_inventory(inv, base_env=env, env={"HOME": str(home)})
    assert from_home.hostvars["only"]["k8s_kubeconfig"] == str(home / ".kube" / "config")


def test_any_yaml_name_with_the_plugin_key_is_accepted(tmp_path, two_files):
    listing = list_inventory(source(tmp_path, name="clusters.yml", kubeconfigs=[str(two_files[0])]))
    assert sorted(listing.hostvars) == ["kubernetes-admin_kubernetes", "prod-hz"]


@pytest.mark.parametrize("content,problem", [
    ("clusters: [\n  - name: x\n    cluster: {server: a\n", "is not valid YAML"),
    ("- just\n- a list\n", "is not a kubeconfig: expected a mapping"),
    ("kind: Config\nclusters: []\ncontexts:\n- name: orphan\n  context: {cluster: gone, user: u}\n",
     "context 'orphan' uses cluster 'gone', which is not in clusters"),
    ("kind: Config\nclusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: x\n  context: {cluster: c}\n",
     "cluster 'c' has no server"),
    ("kind: Config\ncontexts: {a: b}\n", "contexts must be a list"),
])
def test_a_bad_file_fails_naming_the_file_and_the_problem(tmp_path, content, problem):
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    listing = list_inventory(source(tmp_path, kubeconfigs=[str(bad)]))
    assert listing.rc != 0
    assert f"kubeconfig {bad}" in listing.stderr and problem in listing.stderr


def test_a_missing_file_fails_naming_it(tmp_path):
    listing = list_inventory(source(tmp_path, kubeconfigs=["nowhere.yaml"]))
    assert listing.rc != 0
    assert f"kubeconfig {tmp_path / 'nowhere.yaml'} cannot be read" in listing.stderr


def test_no_kubeconfig_anywhere_says_where_it_looked(tmp_path):
    inv = source(tmp_path, name="default.kubeconfig.yml")
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    listing = list_inventory(inv, base_env=env, env={"HOME": str(tmp_path / "empty-home")})
    assert listing.rc != 0
    assert f"kubeconfig {tmp_path / 'empty-home' / '.kube' / 'config'} (the default: KUBECONFIG, else ~/.kube/config) " \
        f"does not exist: set kubeconfigs in {inv}" in listing.stderr


def test_cache_keeps_the_listing_and_never_serves_an_edited_file(tmp_path, two_files):
    a, _b = two_files
    cache_dir = tmp_path / "cache"
    inv = source(tmp_path, kubeconfigs=[str(a)], cache=True, cache_plugin="ansible.builtin.jsonfile",
                 cache_connection=str(cache_dir))
    first = list_inventory(inv)
    cached = cache_entries(cache_dir)
    assert len(cached) == 1 and [e["context"] for e in cached[0]["listing"]] == ["kubernetes-admin@kubernetes", "prod-hz"]
    assert list_inventory(inv).hostvars == first.hostvars

    kubeconfig(a, {"prod-hz": ("hz", "storage"), "added": ("hz", None)}, {"hz": "https://10.0.0.1:6443"})
    assert sorted(list_inventory(inv).hostvars) == ["added", "prod-hz"]


def test_a_playbook_on_k8s_clusters_reaches_the_cluster_of_each_host(twin, tmp_path):
    """The host vars are all a kubernetes.core task needs; the hosts run locally with the playbook's Python."""
    inv = source(tmp_path, kubeconfigs=[str(twin.kubeconfig)])
    play = write_yaml(tmp_path / "nodes.yml", [{
        "name": "Nodes of every cluster", "hosts": "k8s_clusters", "gather_facts": False,
        "tasks": [
            {"name": "list nodes", "register": "nodes",
             "kubernetes.core.k8s_info": {"kind": "Node", "kubeconfig": "{{ k8s_kubeconfig }}",
                                          "context": "{{ k8s_context }}"}},
            {"name": "three nodes", "ansible.builtin.assert": {"that": ["nodes.resources | length == 3"]}},
        ]}])
    run = run_playbook(play, inventory=inv, env=twin.env(), record_dir=tmp_path)
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task("three nodes")["status"] == "ok"


def test_cluster_info_through_the_inventory_with_a_client_certificate_kubeconfig(twin, tmp_path):
    """kubeadm's admin.conf (a client certificate, no token) as the inventory's only kubeconfig: the host is its
    context, and cluster_info reaches the cluster with nothing but the certificate (no KUBECONFIG beside it)."""
    admin = twin.dir / "admin.conf"
    listing = list_inventory(source(tmp_path, kubeconfigs=[str(admin)]))
    assert listing.hostvars["kubernetes-admin_kubernetes"]["k8s_context"] == "kubernetes-admin@kubernetes"
    env = {k: v for k, v in twin.env().items() if k not in ("KUBECONFIG", "K8S_AUTH_KUBECONFIG")}
    run = run_playbook(REPO / "playbooks" / "cluster_info.yml", inventory=source(tmp_path, kubeconfigs=[str(admin)]),
                       env=env, record_dir=tmp_path)
    assert run.rc == 0, run.stdout + run.stderr
    facts = run.task("Read the cluster's storage facts")
    assert facts["host"] == "kubernetes-admin_kubernetes"
    assert facts["result"]["node_count"] == len(twin.kubectl_json("get", "nodes")["items"])
