"""A fleet run survives what real fleets do to it (issue: fleet-safe), through ansible-runner as AWX runs jobs:
at -f 3, twin-1 is healthy, twin-3 answers 30 % of its requests 429, and twin-2's API server is stopped once its
claims are in flight. The healthy and the throttled cluster finish ok, twin-2 is reported unreachable with the step
it was in, nothing waits on it past the unreachable threshold, and the fleet report has all three."""
from __future__ import annotations

import json
import threading

import pytest
from kubernetes import client, config, watch

from tests.support.alibaba import admin
from tests.support.fleet import Fleet
from tests.support.twin import REPO
from tests.support.fleet_runs import INVENTORY, fleet_env, fleet_report, results_per_cluster, server_of

RUN_LIMIT = 300  # the bound for the whole run: a fleet never waits on a dead cluster's step timeout


def stop_once_claims_are_in_flight(fleet: Fleet, host: str, stopped: threading.Event) -> None:
    """Watch the host's PVCs of any benchmark run; at the first one, stop its API server."""
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(fleet.dir / host / "kubeconfig")))
    w = watch.Watch()
    for _ in w.stream(api.list_persistent_volume_claim_for_all_namespaces, label_selector="storageperf.k8s/run-id",
                      timeout_seconds=RUN_LIMIT):
        w.stop()
        fleet.down(host)
        stopped.set()
        return


@pytest.mark.long
def test_a_dead_and_a_throttled_cluster_leave_the_healthy_one_alone(tmp_path):
    ansible_runner = pytest.importorskip("ansible_runner")
    reports = tmp_path / "reports"
    with Fleet(tmp_path / "fleet", clusters=3, nodes=2) as fleet:
        fleet.twin_cmd("fault", "--cluster", "twin-3", "--name", "api",
                       "--rule", json.dumps({"fraction": 0.3, "code": 429, "retry_after": 1}))
        env = fleet_env(fleet, reports)
        env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(REPO / "collections"))
        stopped = threading.Event()
        killer = threading.Thread(target=stop_once_claims_are_in_flight, args=(fleet, "twin-2", stopped), daemon=True)
        killer.start()
        (tmp_path / "job").mkdir()
        job = ansible_runner.run(private_data_dir=str(tmp_path / "job"), project_dir=str(REPO),
                                 playbook=str(REPO / "playbooks" / "bench_csi_lifecycle.yml"),
                                 inventory=str(INVENTORY), envvars=env, forks=3, quiet=True, timeout=RUN_LIMIT,
                                 extravars={"reports_dir": str(reports), "volumes": 12, "pvcs_per_pod": 4,
                                            "max_fail_percentage": 34})
        assert stopped.is_set(), "twin-2 never had a claim in flight"
        # one of three failed (33 %), within the failure budget: the job is successful and says so
        assert job.status == "successful", (job.status, job.stats)
        assert set(job.stats["rescued"]) == {"twin-2"} and not job.stats["failures"]

        docs = results_per_cluster(reports)
        for host in ("twin-1", "twin-3"):
            [doc] = docs[host]
            assert doc["status"] == "ok", (host, doc.get("reason"))
            assert {s["status"] for s in doc["variants"][0]["runs"][0]["steps"]} == {"ok"}
        [dead] = docs["twin-2"]
        assert dead["status"] == "unreachable"
        assert dead["unreachable"]["server"] == server_of(fleet, "twin-2") and dead["unreachable"]["since"]
        steps = dead["variants"][0]["runs"][0]["steps"]
        # the step it was in is kept, as far as it got, and nothing after it was started
        assert steps[-1]["status"] == "unreachable" and "stopped answering" in steps[-1]["reason"]
        assert all(s["status"] == "ok" for s in steps[:-1])

        report = fleet_report(reports)
        rows = {c["cluster"]: c for c in report["clusters"]}
        assert set(rows) == {"twin-1", "twin-2", "twin-3"}
        assert rows["twin-1"]["status"] == rows["twin-3"]["status"] == "ok"
        assert rows["twin-2"]["status"] == "unreachable" and "stopped answering" in rows["twin-2"]["error"]
        # twin-3 was really throttled, and rode it out
        assert admin(fleet.member("twin-3"), "storage", {"only": ["faults"]})["faults"]["hits"]["api"] > 0
