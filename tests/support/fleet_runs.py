"""Run the collection's playbooks on a fleet twin (inventories/twin-fleet, -f 3) and read what each cluster left.

Through ansible-playbook (run_on_fleet: every task result recorded) or through ansible-runner, the engine AWX runs
jobs with (run_as_awx: the job's artifacts, what set_stats published). The readers take the reports directory apart
per cluster (<reports>/<cluster>/<run id>/result.json, <reports>/fleet-*/) and list what is left on a cluster.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.support.fleet import Fleet
from tests.support.twin import REPO, VENV_BIN, PlaybookRun, run_playbook

INVENTORY = REPO / "inventories" / "twin-fleet"
HOSTS = ["twin-1", "twin-2", "twin-3"]
# the environment of an AWX job template for a fleet whose dead clusters should cost their hosts seconds: every
# Kubernetes-facing module gives a silent API server up after 5 s instead of 20 (api_unreachable_after)
GIVE_UP_SOON = {"STORAGEPERF_API_UNREACHABLE_AFTER": "5"}


def fleet_env(fleet: Fleet, reports: Path | None = None) -> dict[str, str]:
    """The controller's environment for a fleet run (`reports`, when given, is made first)."""
    # no KUBECONFIG / K8S_AUTH_*: each host brings its own cluster through the inventory
    env = {k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBECONFIG"))}
    env.update(fleet.front.credentials)  # the fleet's one account and ONTAP credential, as an AWX credential gives them
    env.update(STORAGEPERF_TWIN_DIR=str(fleet.dir), HOME=str(fleet.dir / "home"), ANSIBLE_FORKS="3",
               PATH=f"{VENV_BIN}:{env.get('PATH', '')}")
    if reports is not None:
        reports.mkdir(parents=True, exist_ok=True)
    return env


def run_on_fleet(fleet: Fleet, playbook: str, reports: Path, extra_vars: dict | None = None, *, limit: str | None = None,
                 inventory: Path | list[Path] = INVENTORY, check: bool = False) -> PlaybookRun:
    return run_playbook(REPO / "playbooks" / playbook, inventory=inventory, env=fleet_env(fleet, reports),
                        extra_vars={"reports_dir": str(reports), **(extra_vars or {})}, record_dir=fleet.dir,
                        limit=limit, check=check)


def run_as_awx(fleet: Fleet, playbook: str, reports: Path, job_dir: Path, extravars: dict[str, Any],
               event_handler: Callable[[dict], bool] | None = None,
               envvars: dict[str, str] | None = None) -> tuple[Any, dict[str, Any]]:
    """The playbook as an AWX job at forks 3, through ansible-runner: the runner and the job's artifacts (the
    playbook_on_stats event's artifact_data, what AWX keeps). `extravars` go as they are: no reports_dir is added,
    since the fio and sysbench playbooks take their role's bench_<tool>_reports_dir instead. `envvars` are the job
    template's environment on top of the fleet's."""
    import ansible_runner

    env = fleet_env(fleet, reports)
    env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(REPO / "collections"))
    env.update(envvars or {})
    job_dir.mkdir(parents=True, exist_ok=True)
    job = ansible_runner.run(private_data_dir=str(job_dir), project_dir=str(REPO),
                             playbook=str(REPO / "playbooks" / playbook), inventory=str(INVENTORY), envvars=env,
                             forks=3, quiet=True, extravars=extravars, event_handler=event_handler)
    [final] = [e for e in job.events if e["event"] == "playbook_on_stats"]
    return job, final["event_data"].get("artifact_data") or {}


def recap(run: PlaybookRun) -> dict[str, dict[str, int]]:
    """PLAY RECAP counts per host: {'twin-1': {'ok': 5, 'failed': 0, ...}}."""
    out = {}
    for line in run.stdout.split("PLAY RECAP", 1)[1].splitlines()[1:]:
        if ":" not in line:
            continue
        host, counts = line.split(":", 1)
        out[host.strip()] = {k: int(v) for k, v in (pair.split("=") for pair in counts.split())}
    return out


def silence(message: str) -> float:
    """The seconds of silence an unreachable server's message names ("... nothing but <error> for 6 s ...")."""
    found = re.search(r" for (\d+) s ", message)
    assert found, message
    return float(found.group(1))


def server_of(fleet: Fleet, host: str) -> str:
    return yaml.safe_load((fleet.dir / host / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]


def cluster_dirs(reports: Path) -> list[Path]:
    return [d for d in sorted(reports.iterdir()) if d.is_dir() and not d.name.startswith("fleet-")]


def results_per_cluster(reports: Path) -> dict[str, list[dict]]:
    return {d.name: [json.loads(p.read_text()) for p in sorted(d.glob("*/result.json"))] for d in cluster_dirs(reports)}


def fleet_report(reports: Path) -> dict:
    """The one fleet report the run wrote beside the clusters' directories."""
    [fleet_dir] = reports.glob("fleet-*")
    assert (fleet_dir / "fleet.md").is_file() and (fleet_dir / "fleet.html").is_file()
    return json.loads((fleet_dir / "fleet.json").read_text())


def labelled(fleet: Fleet, host: str, selector: str) -> list[str]:
    """Every object of the cluster, of every listable resource type its discovery serves (namespaces, PVCs, PVs,
    Jobs, pods, Secrets ... custom resources too), that matches the label selector: 'Kind namespace/name'."""
    from kubernetes import config, dynamic
    from kubernetes.dynamic.resource import Resource, ResourceList

    api = config.new_client_from_config(config_file=str(fleet.dir / host / "kubeconfig"))
    # the discovery cache in the fleet's directory, not the client's default file under /tmp
    found = dynamic.DynamicClient(api, cache_file=str(fleet.dir / host / "discovery-cache.json"))
    listable = [r for r in found.resources.search()
                if isinstance(r, Resource) and not isinstance(r, ResourceList) and "list" in (r.verbs or [])]
    return [f"{r.kind} {obj.metadata.namespace or ''}/{obj.metadata.name}" for r in listable
            for obj in found.get(r, label_selector=selector).items]
