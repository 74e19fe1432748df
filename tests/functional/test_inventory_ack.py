"""storageperf.k8s.ack through `ansible-inventory --list` against the twin's ACK account.

A fleet of three twin clusters (`up --clusters 3`, one account) for what needs real clusters; one twin with
1000 synthetic cloud-only clusters (`--ack-extra-clusters`) for listing at scale. The twin's request counter
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

from tests.support.fleet import Fleet
from tests.support.inventory import list_inventory, write_yaml
from tests.support.twin import REPO, Twin

CLUSTERS = 3
MANY = 1000
Account = Fleet | Twin


def clean_env(home: Path) -> dict[str, str]:
    """The test's environment without any Alibaba Cloud credentials, and a HOME without an aliyun CLI profile."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALIBABA_CLOUD_", "ALIYUN_", "ALICLOUD_"))}
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    return env


def alibaba(account: Account) -> dict:
    """The account's endpoints and keys (a fleet's members all carry the shared ones)."""
    twin = account.members[0] if isinstance(account, Fleet) else account
    return twin.cloud["alibaba"]


def credentials(account: Account) -> dict[str, str]:
    a = alibaba(account)
    return {"ALIBABA_CLOUD_ACCESS_KEY_ID": a["access_key_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": a["access_key_secret"]}


def requests(account: Account) -> dict[str, int]:
    return json.loads(account.twin_cmd("status").stdout)["cloud_requests"]


def new_calls(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def source(path: Path, account: Account, **options) -> Path:
    return write_yaml(path, {"plugin": "storageperf.k8s.ack", "endpoint": alibaba(account)["cs_endpoint"], **options})


def ack_list(twin: Account, inv: Path, tmp_path: Path, *, with_credentials: bool = True, env: dict[str, str] | None = None,
             **kwargs):
    return list_inventory(inv, base_env=clean_env(tmp_path / "home"),
                          env={**(credentials(twin) if with_credentials else {}), **(env or {})}, **kwargs)


@pytest.fixture(scope="module", autouse=True)
def installed_collection():
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)


@pytest.fixture(scope="module")
def ack(tmp_path_factory):
    with Fleet(tmp_path_factory.mktemp("ack-inventory") / "fleet", clusters=CLUSTERS, nodes=2) as fleet:
        yield fleet


def test_every_cluster_is_a_host_with_its_vars_and_groups(ack, tmp_path):
    inv = source(tmp_path / "fleet.ack.yml", ack,
                 keyed_groups=[{"key": "ack_region", "prefix": "region"}, {"key": "k8s_version", "prefix": "k8s"},
                               {"key": "ack_cluster_type", "prefix": "type"}],
                 groups={"first": "ack_tags['twin-fleet'] | default('') == 'twin-1'"},
                 compose={"short_id": "ack_cluster_id[:8]", "ansible_connection": "'ssh'"})
    listing = ack_list(ack, inv, tmp_path)
    hv = listing.hostvars
    assert sorted(hv) == ack.names == ["twin-1", "twin-2", "twin-3"]
    assert listing.group("k8s_clusters") == ack.names

    a = alibaba(ack)
    for member in ack.index["clusters"]:
        v = hv[member["name"]]
        assert v["ack_cluster_id"] == member["cluster_id"] and v["ack_cluster_name"] == member["name"]
        assert v["ack_region"] == member["region"] and v["ack_node_count"] == 2 and v["ack_state"] == "running"
        assert v["ack_tags"] == {"env": "twin", "twin-fleet": member["name"]}
        assert v["ack_cs_endpoint"] == a["cs_endpoint"] and "ack_ecs_endpoint" not in v
        assert v["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"
        assert "k8s_kubeconfig" not in v and "ack_addon_versions" not in v  # not asked for
        assert v["short_id"] == v["ack_cluster_id"][:8]
        assert v["ansible_connection"] == "ssh"  # compose overrides the default local connection
        for group in ("region_" + v["ack_region"], "k8s_" + v["k8s_version"], "type_" + v["ack_cluster_type"]):
            assert member["name"] in listing.group(group.replace("-", "_").replace(".", "_")), group
    assert listing.group("first") == ["twin-1"]


def test_filters_and_hostnames(ack, tmp_path):
    by_tag = ack_list(ack, source(tmp_path / "tag.ack.yml", ack, filters={"tags": {"twin-fleet": "twin-2", "env": None}}),
                      tmp_path)
    assert sorted(by_tag.hostvars) == ["twin-2"]
    no_tag = ack_list(ack, source(tmp_path / "tag2.ack.yml", ack, filters={"tags": {"twin-fleet": "twin-2", "env": "prod"}}),
                      tmp_path)
    assert no_tag.hostvars == {}  # every pair must match
    by_name = ack_list(ack, source(tmp_path / "name.ack.yml", ack, filters={"name": "twin-[13]"}), tmp_path)
    assert sorted(by_name.hostvars) == ["twin-1", "twin-3"]
    by_id = ack_list(ack, source(tmp_path / "id.ack.yml", ack, hostnames="cluster_id", cluster_group="ack"), tmp_path)
    assert sorted(by_id.hostvars) == sorted(c["cluster_id"] for c in ack.index["clusters"])
    assert by_id.group("ack") == sorted(by_id.hostvars) and "k8s_clusters" not in by_id.groups
    none_failed = ack_list(ack, source(tmp_path / "failed.ack.yml", ack, filters={"state": ["failed"]}), tmp_path)
    assert none_failed.hostvars == {}
    ecs = ack_list(ack, source(tmp_path / "ecs.ack.yml", ack, ecs_endpoint="ecs-vpc.cn-hangzhou.aliyuncs.com"), tmp_path)
    assert {v["ack_ecs_endpoint"] for v in ecs.hostvars.values()} == {"ecs-vpc.cn-hangzhou.aliyuncs.com"}

    wrong = ack_list(ack, source(tmp_path / "wrong.ack.yml", ack, filters={"tag": {"env": "prod"}}), tmp_path)
    assert wrong.rc != 0 and "unknown filters tag: use name, tags, cluster_type, cluster_spec, state" in wrong.stderr


def test_a_cached_listing_makes_no_api_call(ack, tmp_path):
    cache = {"cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": str(tmp_path / "cache")}
    inv = source(tmp_path / "cached.ack.yml", ack, addon_versions=True, **cache)
    before = requests(ack)
    first = ack_list(ack, inv, tmp_path)
    calls = new_calls(before, requests(ack))
    assert calls == {"cs:DescribeClustersV1": 1, "cs:ListClusterAddonInstances": CLUSTERS}  # was DescribeClusterAddonsVersion (issue 29)
    assert all(v["ack_addon_versions"].get("csi-plugin") for v in first.hostvars.values())

    before = requests(ack)
    # not even credentials are needed to read the cache
    second = ack_list(ack, inv, tmp_path, with_credentials=False)
    assert new_calls(before, requests(ack)) == {}
    assert second.hostvars == first.hostvars

    before = requests(ack)
    ack_list(ack, inv, tmp_path, args=("--flush-cache",))
    assert new_calls(before, requests(ack)).get("cs:DescribeClustersV1") == 1


def node_names(kubeconfig: str, home: Path) -> list[str]:
    proc = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "nodes", "-o", "name"],
                          env={**os.environ, "HOME": str(home), "KUBECONFIG": ""}, text=True, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return sorted(proc.stdout.split())


def test_fetched_kubeconfigs_are_private_files_kubectl_can_use(ack, tmp_path):
    directory = tmp_path / "kube" / "fleet"
    inv = source(tmp_path / "kc.ack.yml", ack, fetch_kubeconfig=True, kubeconfig_dir=str(directory),
                 cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    # even with umask 0 nothing is group- or world-readable
    listing = ack_list(ack, inv, tmp_path, preexec_fn=lambda: os.umask(0))
    hv = listing.hostvars
    assert stat.S_IMODE(directory.stat().st_mode) == stat.S_IMODE(directory.parent.stat().st_mode) == 0o700
    files = sorted(directory.iterdir())
    assert [f.name for f in files] == sorted(f"{v['ack_cluster_id']}.kubeconfig" for v in hv.values())
    assert {oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {"0o600"}
    for name, v in hv.items():
        assert v["k8s_kubeconfig"] == str(directory / f"{v['ack_cluster_id']}.kubeconfig") and v["ack_kubeconfig_expiration"]
        member = ack.member(name)
        assert member.token not in listing.stdout  # the kubeconfig's content never becomes a variable
        # each file reaches its own cluster: the nodes its own kubeconfig from the twin shows
        assert node_names(v["k8s_kubeconfig"], tmp_path / "home") == node_names(str(member.kubeconfig), tmp_path / "home")
    assert len({tuple(node_names(v["k8s_kubeconfig"], tmp_path / "home")) for v in hv.values()}) == CLUSTERS

    before = requests(ack)
    assert ack_list(ack, inv, tmp_path).hostvars == hv
    assert new_calls(before, requests(ack)) == {}
    # a kubeconfig gone from disk makes the cached listing stale
    gone = Path(hv["twin-2"]["k8s_kubeconfig"])
    gone.unlink()
    before = requests(ack)
    ack_list(ack, inv, tmp_path)
    assert new_calls(before, requests(ack)) == {"cs:DescribeClustersV1": 1, "cs:DescribeClusterUserKubeconfig": CLUSTERS}
    assert gone.is_file() and stat.S_IMODE(gone.stat().st_mode) == 0o600


def test_credentials_from_an_aliyun_cli_profile_and_sts_variables(ack, tmp_path):
    a = alibaba(ack)
    home = tmp_path / "home"
    (home / ".aliyun").mkdir(parents=True)
    (home / ".aliyun" / "config.json").write_text(json.dumps({  # the shape `aliyun configure` writes
        "current": "default",
        "profiles": [{"name": "default", "mode": "AK", "access_key_id": "LTAInotthekey", "access_key_secret": "s3cret-of-nobody"},
                     {"name": "twin", "mode": "AK", "access_key_id": a["access_key_id"],
                      "access_key_secret": a["access_key_secret"], "region_id": a["region"]}]}))
    inv = source(tmp_path / "profile.ack.yml", ack)
    by_profile = ack_list(ack, inv, tmp_path, with_credentials=False, env={"ALIBABA_CLOUD_PROFILE": "twin"})
    assert len(by_profile.hostvars) == CLUSTERS
    current = ack_list(ack, inv, tmp_path, with_credentials=False)  # the current profile's key is wrong
    assert current.rc != 0 and "access key LTAI****ekey" in current.stderr
    assert "s3cret-of-nobody" not in current.stderr and "LTAInotthekey" not in current.stderr

    sts = a["sts"]
    by_sts = ack_list(ack, inv, tmp_path, with_credentials=False, env={
        "ALIBABA_CLOUD_ACCESS_KEY_ID": sts["access_key_id"], "ALIBABA_CLOUD_ACCESS_KEY_SECRET": sts["access_key_secret"],
        "ALIBABA_CLOUD_SECURITY_TOKEN": sts["security_token"]})
    assert len(by_sts.hostvars) == CLUSTERS


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


def test_a_kubeconfig_dir_others_can_write_is_refused_before_any_call(ack, tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o777)
    inv = source(tmp_path / "shared.ack.yml", ack, fetch_kubeconfig=True, kubeconfig_dir=str(directory))
    before = requests(ack)
    listing = ack_list(ack, inv, tmp_path)
    assert listing.rc != 0
    assert f"kubeconfig_dir {directory} is writable by others (mode 0777)" in listing.stderr
    assert f"chmod 700 {directory}" in " ".join(listing.stderr.split())
    assert new_calls(before, requests(ack)) == {} and list(directory.iterdir()) == []
    directory.chmod(0o700)
    assert len(ack_list(ack, inv, tmp_path).hostvars) == CLUSTERS
