"""Every change of the rollout table rolls out: snapshot_controller and csi_sidecars (trident_concurrency and
parallel_attach are test_rollout.py's), each limited to one cluster of a fleet of two with --limit, the two rollouts
running at once (two rollout ids: two leases). Each ends decided, and the cluster reads as its decision says."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.functional.test_rollout import decisions, reasons
from tests.support.fleet import Fleet
from tests.support.fleet_runs import INVENTORY, fleet_env
from tests.support.twin import CALLBACKS, COLLECTIONS, REPO, VENV_BIN

SIDECARS = {"csi_deployment": "trident-controller", "csi_namespace": "trident", "storage_class": "ontap-nas"}


def _start(fleet: Fleet, reports: Path, limit: str, change: str, parameters: dict) -> subprocess.Popen:
    env = fleet_env(fleet, reports)
    env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
               ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS), ANSIBLE_NOCOLOR="1")
    cmd = [str(VENV_BIN / "ansible-playbook"), str(REPO / "playbooks" / "rollout.yml"), "-i", str(INVENTORY),
           "-l", limit, "-e", json.dumps({"reports_dir": str(reports), "change": change,
                                          "change_parameters": parameters})]
    return subprocess.Popen(cmd, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _doc(reports: Path, change: str) -> dict:
    [d] = reports.glob("rollout-%s-*" % change)
    return json.loads((d / "rollout.json").read_text())


def _args(fleet: Fleet, host: str, namespace: str, name: str, container: str) -> list[str]:
    dep = fleet.member(host).kubectl_json("get", "deployment", name, "-n", namespace, "-o", "json")
    [c] = [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == container]
    return c.get("args", [])


@pytest.fixture
def fleet(tmp_path_factory):
    # the time scale of test_rollout.py (its fixture says why)
    with Fleet(tmp_path_factory.mktemp("rollout-changes"), clusters=2, nodes=2, time_scale=0.03) as f:
        yield f


def test_snapshot_controller_and_csi_sidecars_roll_out_each_on_the_cluster_its_limit_names(fleet, tmp_path):
    reports = tmp_path / "reports"
    snap = _start(fleet, reports, "twin-1", "snapshot_controller", {"storage_class": "ontap-nas"})
    side = _start(fleet, reports, "twin-2", "csi_sidecars", SIDECARS)
    out = {name: p.communicate(timeout=900)[0] for name, p in (("snapshot", snap), ("sidecars", side))}
    assert snap.returncode == 0, out["snapshot"][-6000:]
    assert side.returncode == 0, out["sidecars"][-6000:]

    # the limit: each rollout planned and touched its one cluster only
    snap_doc, side_doc = _doc(reports, "snapshot_controller"), _doc(reports, "csi_sidecars")
    assert list(snap_doc["clusters"]) == ["twin-1"] and list(side_doc["clusters"]) == ["twin-2"]
    assert sorted(p.parent.parent.name for p in reports.glob("*/*/result.json")) == ["twin-1"] * 2 + ["twin-2"] * 2

    # the snapshot-controller's throttle (QPS 5, burst 10) is seed 002's: its tuning pays off and is promoted
    assert decisions(snap_doc) == {"twin-1": "promoted"}, reasons(snap_doc)
    snap_args = _args(fleet, "twin-1", "kube-system", "snapshot-controller", "snapshot-controller")
    assert {"--worker-threads=25", "--kube-api-qps=75", "--kube-api-burst=150"} <= set(snap_args), snap_args
    assert _args(fleet, "twin-2", "kube-system", "snapshot-controller", "snapshot-controller") != snap_args

    # the sidecars' change has no expected figure: the gate only checks nothing got worse; whichever way it went,
    # the cluster reads as the decision says
    [(host, record)] = side_doc["clusters"].items()
    assert record["decision"] in ("promoted", "rolled_back"), reasons(side_doc)
    provisioner = _args(fleet, "twin-2", "trident", "trident-controller", "csi-provisioner")
    tuned = "--worker-threads=25" in provisioner and "--kube-api-qps=25" in provisioner
    assert tuned == (record["decision"] == "promoted"), (record["decision"], provisioner)
    if record["decision"] == "rolled_back":
        assert record["rollback"]["verified"] is True
