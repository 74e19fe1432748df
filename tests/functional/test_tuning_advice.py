"""playbooks/advise.yml and tuning_advice against the twin: what a fresh cluster could turn on, the same tunings
reading "on" after the playbooks that apply them, what blocks them, a fleet in which one cluster fails alone, and
that advising changes nothing.
"""
from __future__ import annotations

import html as html_text
import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from tests.support.alibaba import admin, cloud_calls, run_role_playbook
from tests.support.twin import COLLECTIONS, REPO, VENV_BIN, Twin

ADVISE = REPO / "playbooks" / "advise.yml"
TUNE_TRIDENT = REPO / "playbooks" / "tune_trident.yml"
MODULE_TASK = "Read the cluster and advise (changes nothing)"
NAMES = ["parallel_attach", "trident_concurrency", "snapshot_controller_tuning", "csi_sidecar_tuning",
         "pmem_storageclasses"]
# everything the advisor reads; none of it may move while it reads
READ_KINDS = ("deployments", "daemonsets", "nodes", "storageclasses", "csinodes", "persistentvolumes",
              "tridentorchestrators", "tridentbackendconfigs", "tridentversions", "configmaps")


def resource_versions(twin: Twin) -> dict[str, str]:
    out = {}
    for kind in READ_KINDS:
        for item in twin.kubectl_json("get", kind, "-A")["items"]:
            md = item["metadata"]
            out[f"{kind}/{md.get('namespace', '')}/{md['name']}"] = md["resourceVersion"]
    return out


def advise(twin: Twin, reports: Path, **extra_vars) -> dict:
    run = twin.playbook(ADVISE, extra_vars={"reports_dir": str(reports), **extra_vars})
    assert run.rc == 0, run.stdout + run.stderr
    return run.task(MODULE_TASK)["result"]["advice"]


def by_name(advice: dict) -> dict[str, dict]:
    assert [t["name"] for t in advice["tunings"]] == NAMES
    return {t["name"]: t for t in advice["tunings"]}


def test_fresh_cluster_then_the_same_tunings_on_after_their_playbooks(twin, tmp_path):
    before = resource_versions(twin)
    writes_before = cloud_calls(twin)["writes"]
    reports = tmp_path / "reports"
    run = twin.playbook(ADVISE, extra_vars={"reports_dir": str(reports)})
    assert run.rc == 0, run.stdout + run.stderr

    # advising changed nothing, neither in Kubernetes nor in the cloud
    assert resource_versions(twin) == before
    assert cloud_calls(twin)["writes"] == writes_before
    result = run.task(MODULE_TASK)["result"]
    assert result["changed"] is False
    advice = result["advice"]
    t = by_name(advice)
    # the twin starts as ACK 1.32 with csi-plugin and managed-csiprovisioner at exactly v1.30.4 (the minimum),
    # Trident 26.06 with four ONTAP backends it supports, an untuned snapshot-controller and no PMEM nodes
    assert {n: x["state"] for n, x in t.items()} == {
        "parallel_attach": "available", "trident_concurrency": "available", "snapshot_controller_tuning": "available",
        "csi_sidecar_tuning": "available", "pmem_storageclasses": "not_applicable"}
    assert advice["summary"] == {"on": 0, "available": 4, "blocked": 0, "not_applicable": 1}
    assert advice["cluster"]["server"] == twin.server and advice["cluster"]["version"].startswith("v1.")
    pa = t["parallel_attach"]
    assert pa["reasons"] == [] and pa["seed"] == "000" and pa["apply_with"] == "storageperf.k8s.enable_parallel_attach"
    assert "3m19s -> 37s" in pa["expected"]
    assert pa["current"]["addons"]["csi-plugin"]["version"].startswith("v1.30.4")
    assert pa["current"]["instances_tagged"] == 0 and pa["current"]["instances_total"] == 3
    assert set(pa["current"]["csi_node_limits"].values()) == {56}
    tc = t["trident_concurrency"]
    assert tc["current"]["install"]["version"] == "26.06.0" and tc["current"]["controller_flag"] == "false"
    assert "ONTAP NAS +707%" in tc["expected"] and tc["apply_with"] == "storageperf.k8s.tune_trident"
    # the rollout gate's figure: the least of the four drivers' (ontap-san-economy's 3.9x), seed 000's 199 s / 37 s
    assert tc["expected_speedup"] == 3.9 and pa["expected_speedup"] == 5.38
    snap = t["snapshot_controller_tuning"]["current"]
    assert snap["effective"] == {"worker_threads": 10, "kube_api_qps": 5, "kube_api_burst": 10}  # the binary's defaults
    assert "pmem.csi.alibabacloud.com/type" in t["pmem_storageclasses"]["reasons"][0]

    # the report file holds exactly what the module returned; set_stats carries it under the host's name
    [report] = list((reports / "localhost").glob("advice-*Z.json"))
    assert json.loads(report.read_text()) == advice
    stats = run.task("Publish the advice for the fleet report")["result"]["ansible_stats"]
    assert stats["aggregate"] is True and stats["data"]["storageperf_stats_advice"] == {"localhost": advice}

    enable = run_role_playbook(twin)
    assert enable.rc == 0, enable.stdout + enable.stderr
    tune = twin.playbook(TUNE_TRIDENT)
    assert tune.rc == 0, tune.stdout + tune.stderr

    t = by_name(advise(twin, reports))
    assert t["parallel_attach"]["state"] == "on"
    assert t["parallel_attach"]["current"]["instances_tagged"] == 3
    assert t["trident_concurrency"]["state"] == "on" and t["trident_concurrency"]["current"]["controller_flag"] == "true"
    assert t["snapshot_controller_tuning"]["state"] == "on"
    tuned = {"worker_threads": 25, "kube_api_qps": 75, "kube_api_burst": 150}
    assert t["snapshot_controller_tuning"]["current"]["effective"] == tuned
    # under concurrency Trident's operator renders --worker-threads=25 on the sidecars
    assert t["csi_sidecar_tuning"]["state"] == "on"
    assert len(list((reports / "localhost").glob("advice-*Z.json"))) >= 1


def test_advise_says_per_tuning_the_command_on_the_console_and_in_advice_md_and_html(twin, tmp_path):
    reports = tmp_path / "reports"
    run = twin.playbook(ADVISE, extra_vars={"reports_dir": str(reports)})
    assert run.rc == 0, run.stdout + run.stderr
    t = by_name(run.task(MODULE_TASK)["result"]["advice"])
    summary = run.task("Summary")["result"]["msg"]
    assert summary[0].startswith("localhost (v1.") and "4 available" in summary[0], summary
    md = (reports / "localhost" / "advice.md").read_text()
    html = (reports / "localhost" / "advice.html").read_text()
    for name in ("parallel_attach", "trident_concurrency", "snapshot_controller_tuning", "csi_sidecar_tuning"):
        apply = t[name]["apply"]
        # the inventory the run used and this host, with the variables the playbook needs
        assert " -l localhost" in apply["rollout_command"] and "/inventories/twin" in apply["rollout_command"]
        for command in (apply["command"], apply["rollout_command"]):
            if command:
                assert "    apply: %s" % command in summary or "    guarded rollout: %s" % command in summary
                assert command in md and command in html_text.unescape(html)  # the page escapes its quotes
    assert t["parallel_attach"]["apply"]["command"].endswith(
        "storageperf.k8s.enable_parallel_attach -l localhost -e state=present")
    assert t["snapshot_controller_tuning"]["apply"]["command"].endswith(
        "-e worker_threads=25 -e kube_api_qps=75 -e kube_api_burst=150")
    assert t["trident_concurrency"]["apply"]["rollout_command"].endswith(
        "storageperf.k8s.rollout -l localhost -e change=trident_concurrency")
    assert "3m19s -> 37s" in md and "3m19s -&gt; 37s" in html  # the expected gain next to the command
    assert "  on: " not in summary[-2] and "n/a: pmem_storageclasses" in summary[-2]


def test_old_versions_disks_without_serial_and_old_trident_are_blocked_with_the_reason(twin, tmp_path):
    admin(twin, "cloud", {"addon": "csi-plugin", "version": "v1.28.2-1f6a8b2-aliyun"})
    seeded = admin(twin, "alibaba", {"legacy_disk": {"name": "mysql-0", "namespace": "default"}})["legacy_disk"]
    # the operator's own Installing -> Installed write on a fresh twin would replace the old version set below
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    twin.kubectl("patch", "tridentorchestrator", "trident", "--subresource=status", "--type=merge",
                 "-p", json.dumps({"status": {"version": "25.02.1"}}))
    twin.kubectl("-n", "trident", "patch", "tridentversion", "trident", "--type=merge",
                 "-p", json.dumps({"trident_version": "25.02.1"}))
    before = resource_versions(twin)

    t = by_name(advise(twin, tmp_path / "reports"))

    pa = t["parallel_attach"]
    assert pa["state"] == "blocked"
    assert "addon csi-plugin version v1.28.2-1f6a8b2-aliyun is older than the required v1.30.4: upgrade it first" \
        in pa["reasons"]
    [disks] = [r for r in pa["reasons"] if "without a serial number" in r]
    assert disks.startswith("1 disk(s) without a serial number") and seeded["disk_id"] in disks and "mysql-0-pv" in disks
    assert pa["current"]["disks_without_serial"] == 1
    tc = t["trident_concurrency"]
    assert tc["state"] == "blocked" and tc["current"]["install"]["version"] == "25.02.1"
    assert tc["reasons"] == ["Trident 25.02.1 has no concurrent core (it arrived in 25.06.0 as a tech preview, GA in "
                             "26.02.0): upgrade Trident to 26.02.0 or later"]
    assert resource_versions(twin) == before


def test_a_fleet_each_cluster_its_own_report_and_a_broken_one_fails_alone(twin, tmp_path):
    alibaba = twin.cloud["alibaba"]
    inventory = {"k8s_clusters": {
        "hosts": {
            "ack-prod": {"ack_cluster_id": alibaba["cluster_id"], "ack_cs_endpoint": alibaba["cs_endpoint"],
                         "ack_ecs_endpoint": alibaba["ecs_endpoint"], "alibaba_access_key_id": alibaba["access_key_id"],
                         "alibaba_access_key_secret": alibaba["access_key_secret"]},
            "no-ack": {},
            "broken": {"k8s_kubeconfig": str(tmp_path / "missing-kubeconfig")},
        },
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                 "k8s_kubeconfig": str(twin.kubeconfig)},
    }}
    (tmp_path / "fleet.yml").write_text(yaml.safe_dump(inventory))
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {**twin.env(), "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
           "ANSIBLE_SHOW_CUSTOM_STATS": "1", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_CALLBACK_RESULT_FORMAT": "json"}
    env.pop("K8S_AUTH_KUBECONFIG")  # each host names its own cluster
    # run from another directory, without reports_dir: the reports land under that directory
    proc = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(tmp_path / "fleet.yml"), str(ADVISE)],
                          cwd=workdir, env=env, text=True, capture_output=True, timeout=600)
    assert proc.returncode != 0  # the broken cluster fails the run ...
    recap = dict(re.findall(r"^(\S+)\s+: ok=\d+ .*?failed=(\d+)", proc.stdout, re.M))
    assert recap == {"localhost": "0", "ack-prod": "0", "no-ack": "0", "broken": "1"}, proc.stdout  # ... alone
    # the default callback prints the aggregated set_stats as one JSON line
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("\tRUN: ")]
    per_host = json.loads(line[len("\tRUN: "):])["storageperf_stats_advice"]
    assert sorted(per_host) == ["ack-prod", "no-ack"]  # aggregated: each host added its own key
    assert by_name(per_host["ack-prod"])["parallel_attach"]["state"] == "available"
    no_ack = by_name(per_host["no-ack"])["parallel_attach"]
    assert no_ack["state"] == "not_applicable" and "ack_cluster_id" in no_ack["reasons"][0]
    for host in ("ack-prod", "no-ack"):
        [report] = list((workdir / "reports" / host).glob("advice-*Z.json"))
        assert json.loads(report.read_text()) == per_host[host]
    assert not (workdir / "reports" / "broken").exists()
    assert not (REPO / "playbooks" / "reports").exists()
    assert alibaba["access_key_secret"] not in proc.stdout
    assert os.listdir(workdir) == ["reports"]


def test_pmem_blocked_by_an_invalid_node_type_then_on_after_deploy_pmem(twin, tmp_path):
    node1, node2 = sorted(n["metadata"]["name"] for n in twin.kubectl_json("get", "nodes")["items"])[:2]
    twin.kubectl("label", "node", node1, "pmem.csi.alibabacloud.com/type=pmem")  # the plugin exits on this value
    pm = by_name(advise(twin, tmp_path / "reports"))["pmem_storageclasses"]
    assert pm["state"] == "blocked" and pm["current"]["pmem_nodes"] == {node1: "pmem"}
    assert pm["reasons"][0].startswith(f"node {node1} is labelled pmem.csi.alibabacloud.com/type=pmem")

    twin.kubectl("label", "node", node1, "pmem.csi.alibabacloud.com/type-")
    deploy = twin.playbook(REPO / "playbooks" / "deploy_pmem.yml", extra_vars={"nodes": [node1, node2]})
    assert deploy.rc == 0, deploy.stdout + deploy.stderr
    pm = by_name(advise(twin, tmp_path / "reports"))["pmem_storageclasses"]
    assert pm["state"] == "on" and pm["reasons"] == []
    assert pm["current"] == {"pmem_nodes": {node1: "lvm", node2: "lvm"},
                             "storageclasses": ["csi-pmem-direct", "csi-pmem-lvm"]}
    assert pm["seed"] == "001" and "92.0k IOPS" in pm["expected"] and pm["apply_with"] == "storageperf.k8s.deploy_pmem"
