"""storageperf.k8s.ack through `ansible-inventory --list` against the twin's ACK account.

The twin lists its own cluster plus synthetic cloud-only ones (`--ack-extra-clusters`); its request counter
(`python -m twin status` -> cloud_requests) shows which API calls a listing made.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.inventory import list_inventory, write_yaml
from tests.support.twin import REPO, Twin

EXTRA = 2  # with the twin's own cluster: three clusters
MANY = 1000


def clean_env(home: Path) -> dict[str, str]:
    """The test's environment without any Alibaba Cloud credentials, and a HOME without an aliyun CLI profile."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALIBABA_CLOUD_", "ALIYUN_", "ALICLOUD_"))}
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    return env


def credentials(twin: Twin) -> dict[str, str]:
    a = twin.cloud["alibaba"]
    return {"ALIBABA_CLOUD_ACCESS_KEY_ID": a["access_key_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": a["access_key_secret"]}


def requests(twin: Twin) -> dict[str, int]:
    return json.loads(twin.twin_cmd("status").stdout)["cloud_requests"]


def new_calls(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def source(path: Path, twin: Twin, **options) -> Path:
    return write_yaml(path, {"plugin": "storageperf.k8s.ack", "endpoint": twin.cloud["alibaba"]["cs_endpoint"],
                             **options})


def ack_list(twin: Twin, inv: Path, tmp_path: Path, *, with_credentials: bool = True, env: dict[str, str] | None = None,
             **kwargs):
    return list_inventory(inv, base_env=clean_env(tmp_path / "home"),
                          env={**(credentials(twin) if with_credentials else {}), **(env or {})}, **kwargs)


@pytest.fixture(scope="module", autouse=True)
def installed_collection():
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)


@pytest.fixture(scope="module")
def ack(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("ack-inventory") / "twin", nodes=2,
              extra=["--ack-extra-clusters", str(EXTRA)]) as t:
        yield t


def test_every_cluster_is_a_host_with_its_vars_and_groups(ack, tmp_path):
    inv = source(tmp_path / "fleet.ack.yml", ack,
                 keyed_groups=[{"key": "ack_region", "prefix": "region"}, {"key": "k8s_version", "prefix": "k8s"},
                               {"key": "ack_cluster_type", "prefix": "type"}],
                 groups={"prod": "ack_tags.env | default('') == 'prod'"},
                 compose={"short_id": "ack_cluster_id[:8]", "ansible_connection": "'ssh'"})
    listing = ack_list(ack, inv, tmp_path)
    hv = listing.hostvars
    assert len(hv) == 1 + EXTRA
    assert listing.group("k8s_clusters") == sorted(hv)

    cloud = ack.cloud["alibaba"]
    own = [h for h, v in hv.items() if v["ack_cluster_id"] == cloud["cluster_id"]]
    assert len(own) == 1
    v = hv[own[0]]
    assert v["ack_region"] == cloud["region"] and v["ack_node_count"] == 2 and v["ack_state"] == "running"
    assert v["ack_cs_endpoint"] == cloud["cs_endpoint"]
    assert v["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"
    assert "k8s_kubeconfig" not in v and "ack_addon_versions" not in v  # not asked for
    for host, v in hv.items():
        assert host == v["ack_cluster_name"]
        assert v["short_id"] == v["ack_cluster_id"][:8]
        assert v["ansible_connection"] == "ssh"  # compose overrides the default local connection
        assert isinstance(v["ack_tags"], dict) and v["k8s_version"]
        for group in ("region_" + v["ack_region"], "k8s_" + v["k8s_version"], "type_" + v["ack_cluster_type"]):
            assert host in listing.group(group.replace("-", "_").replace(".", "_")), group
    assert listing.group("prod") == sorted(h for h, v in hv.items() if v["ack_tags"].get("env") == "prod")


def test_filters_and_hostnames(ack, tmp_path):
    everything = ack_list(ack, source(tmp_path / "all.ack.yml", ack), tmp_path).hostvars
    prod = sorted(h for h, v in everything.items() if v["ack_tags"].get("env") == "prod")
    assert 0 < len(prod) < len(everything)  # the twin's synthetic clusters vary their env tag

    by_tag = ack_list(ack, source(tmp_path / "tag.ack.yml", ack, filters={"tags": {"env": "prod"}}), tmp_path)
    assert sorted(by_tag.hostvars) == prod
    by_name = ack_list(ack, source(tmp_path / "name.ack.yml", ack, filters={"name": "extra-*"}), tmp_path)
    assert sorted(by_name.hostvars) == sorted(h for h in everything if h.startswith("extra-"))
    by_id = ack_list(ack, source(tmp_path / "id.ack.yml", ack, hostnames="cluster_id"), tmp_path)
    assert sorted(by_id.hostvars) == sorted(v["ack_cluster_id"] for v in everything.values())
    none_failed = ack_list(ack, source(tmp_path / "failed.ack.yml", ack, filters={"state": ["failed"]}), tmp_path)
    assert none_failed.hostvars == {}

    wrong = ack_list(ack, source(tmp_path / "wrong.ack.yml", ack, filters={"tag": {"env": "prod"}}), tmp_path)
    assert wrong.rc != 0 and "unknown filters tag: use name, tags, cluster_type, cluster_spec, state" in wrong.stderr


def test_a_cached_listing_makes_no_api_call(ack, tmp_path):
    cache = {"cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": str(tmp_path / "cache")}
    inv = source(tmp_path / "cached.ack.yml", ack, addon_versions=True, **cache)
    before = requests(ack)
    first = ack_list(ack, inv, tmp_path)
    calls = new_calls(before, requests(ack))
    assert calls == {"cs:DescribeClustersV1": 1, "cs:DescribeClusterAddonsVersion": 1 + EXTRA}
    assert all(v["ack_addon_versions"].get("csi-plugin") for v in first.hostvars.values())

    before = requests(ack)
    # not even credentials are needed to read the cache
    second = ack_list(ack, inv, tmp_path, with_credentials=False)
    assert new_calls(before, requests(ack)) == {}
    assert second.hostvars == first.hostvars

    before = requests(ack)
    ack_list(ack, inv, tmp_path, args=("--flush-cache",))
    assert new_calls(before, requests(ack)).get("cs:DescribeClustersV1") == 1


def test_fetched_kubeconfigs_are_private_files_kubectl_can_use(ack, tmp_path):
    directory = tmp_path / "kube" / "fleet"
    inv = source(tmp_path / "kc.ack.yml", ack, fetch_kubeconfig=True, kubeconfig_dir=str(directory),
                 cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    # even with umask 0 nothing is group- or world-readable
    listing = ack_list(ack, inv, tmp_path, preexec_fn=lambda: os.umask(0))
    hv = listing.hostvars
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = sorted(directory.iterdir())
    assert [f.name for f in files] == sorted(f"{v['ack_cluster_id']}.kubeconfig" for v in hv.values())
    assert {oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {"0o600"}
    for v in hv.values():
        assert v["k8s_kubeconfig"] == str(directory / f"{v['ack_cluster_id']}.kubeconfig") and v["ack_kubeconfig_expiration"]
    assert ack.token not in listing.stdout  # the kubeconfig's content never becomes a variable

    own = next(v for v in hv.values() if v["ack_cluster_id"] == ack.cloud["alibaba"]["cluster_id"])
    nodes = subprocess.run(["kubectl", "--kubeconfig", own["k8s_kubeconfig"], "get", "nodes", "-o", "name"],
                           env={**ack.env(), "KUBECONFIG": ""}, text=True, capture_output=True, timeout=120)
    assert nodes.returncode == 0, nodes.stderr
    assert len(nodes.stdout.split()) == 2

    before = requests(ack)
    assert ack_list(ack, inv, tmp_path).hostvars == hv
    assert new_calls(before, requests(ack)) == {}
    # a kubeconfig gone from disk makes the cached listing stale
    Path(own["k8s_kubeconfig"]).unlink()
    before = requests(ack)
    ack_list(ack, inv, tmp_path)
    assert new_calls(before, requests(ack)).get("cs:DescribeClusterUserKubeconfig") == 1 + EXTRA
    assert Path(own["k8s_kubeconfig"]).is_file()


def test_credentials_from_an_aliyun_cli_profile_and_sts_variables(ack, tmp_path):
    a = ack.cloud["alibaba"]
    home = tmp_path / "home"
    (home / ".aliyun").mkdir(parents=True)
    (home / ".aliyun" / "config.json").write_text(json.dumps({  # the shape `aliyun configure` writes
        "current": "default",
        "profiles": [{"name": "default", "mode": "AK", "access_key_id": "LTAInotthekey", "access_key_secret": "s3cret-of-nobody"},
                     {"name": "twin", "mode": "AK", "access_key_id": a["access_key_id"],
                      "access_key_secret": a["access_key_secret"], "region_id": a["region"]}]}))
    inv = source(tmp_path / "profile.ack.yml", ack)
    by_profile = ack_list(ack, inv, tmp_path, with_credentials=False, env={"ALIBABA_CLOUD_PROFILE": "twin"})
    assert len(by_profile.hostvars) == 1 + EXTRA
    current = ack_list(ack, inv, tmp_path, with_credentials=False)  # the current profile's key is wrong
    assert current.rc != 0 and "access key LTAI****ekey" in current.stderr
    assert "s3cret-of-nobody" not in current.stderr and "LTAInotthekey" not in current.stderr

    sts = a["sts"]
    by_sts = ack_list(ack, inv, tmp_path, with_credentials=False, env={
        "ALIBABA_CLOUD_ACCESS_KEY_ID": sts["access_key_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": sts["access_key_secret"],
        "ALIBABA_CLOUD_SECURITY_TOKEN": sts["security_token"]})
    assert len(by_sts.hostvars) == 1 + EXTRA


def test_missing_credentials_name_the_variables(tmp_path):
    inv = write_yaml(tmp_path / "nocreds.ack.yml", {"plugin": "storageperf.k8s.ack", "endpoint": "http://127.0.0.1:9"})
    listing = list_inventory(inv, base_env=clean_env(tmp_path / "home"))
    assert listing.rc != 0
    for name in ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_PROFILE",
                 "~/.aliyun/config.json"):
        assert name in listing.stderr


def test_a_thousand_clusters_are_all_listed_page_by_page(twin_factory, tmp_path):
    big = twin_factory("big", nodes=1, time_scale=0.01, extra=["--ack-extra-clusters", str(MANY)])
    inv = source(tmp_path / "big.ack.yml", big, keyed_groups=[{"key": "ack_region", "prefix": "region"}],
                 cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    before = requests(big)
    t0 = time.monotonic()
    listing = ack_list(big, inv, tmp_path)
    listed_s = time.monotonic() - t0
    hv = listing.hostvars
    assert len(hv) == 1 + MANY
    assert len({v["ack_cluster_id"] for v in hv.values()}) == 1 + MANY
    assert new_calls(before, requests(big)) == {"cs:DescribeClustersV1": -(-(1 + MANY) // 100)}
    assert sum(len(listing.group(g)) for g in listing.groups if g.startswith("region_")) == 1 + MANY

    before = requests(big)
    t0 = time.monotonic()
    cached = ack_list(big, inv, tmp_path)
    cached_s = time.monotonic() - t0
    assert new_calls(before, requests(big)) == {}
    assert cached.hostvars == hv
    print(f"\n{1 + MANY} clusters: listing {listed_s:.2f} s, cached listing {cached_s:.2f} s")
