"""The collection as users get it (issue 44, "Installed use"): the built tarball installed with ansible-galaxy into a
read-only collections path, and its playbooks run by FQCN from an empty working directory, with an inventory of the
user's own (two twin clusters), no ansible.cfg and ANSIBLE_COLLECTIONS_PATH naming only that tree and kubernetes.core.

cluster_info, advise, a 10-volume CSI lifecycle benchmark and a rollout's check run all pass; nothing is written inside
the installed collection; every result lands under the working directory's reports/; no output, printed or written,
names a playbook by its path, and the commands the advisor prints name playbooks the installed collection has, with
an inventory that holds from any directory.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from tests.support.collection import build, install, listing, make_read_only
from tests.support.fleet import Fleet
from tests.support.fleet_runs import fleet_env
from tests.support.inventory import write_yaml
from tests.support.twin import COLLECTIONS, PlaybookRun, run_playbook

PLAYBOOK_PATH = re.compile(r"playbooks/[\w.-]+\.ya?ml")
COLLECTION_FILE = re.compile(r"/\S*ansible_collections/storageperf/k8s/\S*")
REPORT_PATH = re.compile(r"/\S*/reports/[^\s'\"]*")


def user_inventory(fleet: Fleet) -> dict:
    """What a user writes for their clusters (inventories/examples/): per host its kubeconfig, its ACK cluster and its
    ONTAP; no credential (the controller's environment holds them, as an AWX credential does)."""
    hosts = {}
    for name in fleet.names:
        member = fleet.member(name)
        alibaba, ontap = member.cloud["alibaba"], member.cloud["ontap"]
        hosts[name] = {"k8s_kubeconfig": str(member.kubeconfig), "ack_cluster_id": alibaba["cluster_id"],
                       "ack_region": alibaba["region"], "ack_cs_endpoint": alibaba["cs_endpoint"],
                       "ack_ecs_endpoint": alibaba["ecs_endpoint"], "ontap_hostname": ontap["management_lif"],
                       "ontap_svm": ontap["svm"], "ontap_ca_cert": ontap["ca_cert"]}
    return {"k8s_clusters": {"hosts": hosts, "vars": {"ansible_connection": "local",
                                                      "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}}


def output(run: PlaybookRun) -> str:
    return run.stdout + run.stderr


def test_installed_read_only_and_run_by_fqcn_from_an_empty_directory(tmp_path):
    collections = tmp_path / "collections"
    installed = install(build(tmp_path / "dist"), collections)
    # kubernetes.core, the collection's one dependency (galaxy.yml), beside it as an EE has it
    deps = tmp_path / "deps" / "ansible_collections"
    deps.mkdir(parents=True)
    (deps / "kubernetes").symlink_to(COLLECTIONS / "ansible_collections" / "kubernetes")
    read_only = make_read_only(collections)
    probe = subprocess.run([*read_only, "touch", str(installed / "probe")], capture_output=True, text=True)
    assert probe.returncode != 0 and not (installed / "probe").exists(), "a write inside the installed tree succeeded"
    before = listing(collections)

    work = tmp_path / "work"
    work.mkdir()
    with Fleet(tmp_path / "fleet", clusters=2, nodes=2, time_scale=0.01) as fleet:
        write_yaml(work / "clusters.yml", user_inventory(fleet))
        env = fleet_env(fleet)
        env.pop("STORAGEPERF_TWIN_DIR")  # the twin's own: the user's inventory names every file itself

        def run(name: str, extra_vars: dict | None = None, check: bool = False) -> PlaybookRun:
            done = run_playbook(f"storageperf.k8s.{name}", inventory="clusters.yml", extra_vars=extra_vars, check=check,
                                env=env, record_dir=fleet.dir, collections_path=f"{collections}:{deps.parent}",
                                user_dir=work, prefix=read_only)
            assert done.rc == 0, f"{name}:\n{done.stdout[-5000:]}\n{done.stderr[-3000:]}"
            return done

        runs = {"cluster_info": run("cluster_info"), "advise": run("advise"),
                "bench_csi_lifecycle": run("bench_csi_lifecycle", {"volumes": 10}),
                "rollout": run("rollout", {"change": "trident_concurrency"}, check=True)}

    # nothing written inside the installed collection
    assert listing(collections) == before

    # what ran is the installed tree, and each playbook reached both clusters
    loaded = {m for r in runs.values() for m in COLLECTION_FILE.findall(output(r))}
    assert loaded and all(m.startswith(f"{installed}/") for m in loaded), loaded
    assert [r["result"]["node_count"] for r in runs["cluster_info"].results
            if r["task"] == "Read the cluster's storage facts"] == [2, 2]
    shown = {r["host"] for r in runs["rollout"].results if "Show what this run does" in r["task"]}
    assert shown == {"twin-1", "twin-2"}

    # every result under the working directory's reports/: per cluster its advice and its benchmark run, a fleet report
    # of each of the two fleet playbooks; the rollout's check run wrote nothing
    assert sorted(p.name for p in work.iterdir()) == ["clusters.yml", "reports"]
    reports = work / "reports"
    assert sorted(p.name for p in reports.iterdir() if not p.name.startswith("fleet-")) == ["twin-1", "twin-2"]
    assert len(list(reports.glob("fleet-*/fleet.html"))) == 2
    for host in ("twin-1", "twin-2"):
        assert {p.name for p in (reports / host).glob("advice*")} >= {"advice.md", "advice.html"}
        [result] = (reports / host).glob("csi_lifecycle-*/result.json")
        doc = json.loads(result.read_text())
        assert doc["status"] == "ok" and doc["parameters"]["volumes"] == 10
    printed = {p for r in runs.values() for p in REPORT_PATH.findall(output(r))}
    assert printed and all(p.startswith(f"{reports}/") for p in printed), printed

    # no playbook named by its path: not in what the runs printed, not in any report
    for name, done in runs.items():
        assert not PLAYBOOK_PATH.findall(output(done)), (name, PLAYBOOK_PATH.findall(output(done)))
    for path in reports.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md", ".html", ".prom"):
            assert not PLAYBOOK_PATH.findall(path.read_text()), (path, PLAYBOOK_PATH.findall(path.read_text()))

    # the advisor's commands: by FQCN, each a playbook of the installed collection, the inventory absolute
    commands = [line.split(": ", 1)[1] for r in runs["advise"].results if r["task"] == "Summary"
                for line in (s.strip() for s in r["result"]["msg"]) if line.startswith(("apply: ", "guarded rollout: "))]
    assert commands
    for command in commands:
        argv = shlex.split(command)
        assert argv[:3] == ["ansible-playbook", "-i", str(work / "clusters.yml")], command
        assert argv[3].startswith("storageperf.k8s."), command
        assert Path(installed / "playbooks" / f"{argv[3].rsplit('.', 1)[1]}.yml").is_file(), command
