"""playbooks/tune_trident.yml against the twin: preflight, snapshot-controller first, Trident, verify, rollback.

Everything is read back through kubectl and the twin's admin door (what the twin's Trident actually runs with),
never from the module's own report alone.
"""
from __future__ import annotations

import json
import ssl
import urllib.request

from tests.support.twin import REPO

PLAYBOOK = REPO / "playbooks" / "tune_trident.yml"
SEED_FLAGS = ["--worker-threads=25", "--kube-api-qps=75", "--kube-api-burst=150"]


def admin(twin, verb, body=None):
    """POST /_twin/<verb> with the twin's token (its own control door, not the Kubernetes API)."""
    ctx = ssl.create_default_context(cafile=str(twin.dir / "pki" / "ca.crt"))
    req = urllib.request.Request(f"{twin.server}/_twin/{verb}", data=json.dumps(body or {}).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {twin.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.loads(r.read())


def container(dep, name):
    return next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def snapshot_args(twin):
    dep = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")
    return container(dep, "snapshot-controller")["args"]


def trident_state(twin):
    torc = twin.kubectl_json("get", "tridentorchestrator", "trident")
    dep = twin.kubectl_json("-n", "trident", "get", "deployment", "trident-controller")
    main = container(dep, "trident-main")
    flags = [a for a in main.get("args", []) if a.startswith("--enable_concurrency")]
    return torc, dep, flags


def task_index(run, name):
    return next(i for i, r in enumerate(run.results) if name in r["task"])


def test_tune_trident_check_enable_idempotent_rollback(twin):
    # a fresh twin's operator is still taking the orchestrator from Installing to Installed (as right after a
    # real install): start from the settled object, or that status write looks like a change check mode made
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    torc0, dep0, flags0 = trident_state(twin)
    args0 = snapshot_args(twin)
    assert flags0 == ["--enable_concurrency=false"]
    assert not any(a.startswith(("--worker-threads", "--kube-api")) for a in args0)

    # check mode: plans both changes, shows the diff, changes nothing
    check = twin.playbook(PLAYBOOK, check=True, diff=True)
    assert check.rc == 0, check.stdout + check.stderr
    planned = check.task("Switch Trident's concurrent core")["result"]
    assert planned["changed"] is True
    assert "enableConcurrency: true" in planned["diff"]["after"]
    assert check.task("Set the snapshot-controller's worker threads")["result"]["changed"] is True
    torc_c, _, flags_c = trident_state(twin)
    assert torc_c["metadata"]["resourceVersion"] == torc0["metadata"]["resourceVersion"]
    assert flags_c == flags0 and snapshot_args(twin) == args0

    # enable: snapshot-controller first, then Trident
    run = twin.playbook(PLAYBOOK)
    assert run.rc == 0, run.stdout + run.stderr
    assert task_index(run, "Set the snapshot-controller's worker threads") < \
        task_index(run, "Switch Trident's concurrent core on")
    torc, dep, flags = trident_state(twin)
    assert torc["spec"]["enableConcurrency"] is True
    assert torc["status"]["status"] == "Installed"
    assert torc["status"]["currentInstallationParams"]["enableConcurrency"] == "true"  # the operator's string echo
    assert flags == ["--enable_concurrency=true"]
    assert dep["status"]["observedGeneration"] == dep["metadata"]["generation"]
    assert dep["status"]["updatedReplicas"] == dep["status"]["readyReplicas"] == dep["spec"]["replicas"]
    assert snapshot_args(twin) == args0 + SEED_FLAGS  # others kept, in order; the three appended
    result = run.task("Switch Trident's concurrent core on")["result"]
    assert result["enable_concurrency"] == "true"
    assert result["install"]["method"] == "operator" and result["install"]["version"] == "26.06.0"
    assert {b["driver"] for b in result["backends"]} == {"ontap-nas", "ontap-nas-economy", "ontap-san", "ontap-san-economy"}
    assert admin(twin, "storage", {"only": ["trident"]})["trident"]["concurrency"] is True  # the twin's Trident obeys
    ontap = run.task("Check ONTAP for volumes no PV accounts for")["result"]
    assert ontap["leaked"] == [] and ontap["api"] == "rest"

    # idempotent: nothing to change the second time
    again = twin.playbook(PLAYBOOK)
    assert again.rc == 0, again.stdout + again.stderr
    assert again.changed_tasks == []
    assert trident_state(twin)[0]["metadata"]["generation"] == torc["metadata"]["generation"]

    # rollback: Trident first, then the snapshot-controller back to its upstream arguments
    back = twin.playbook(PLAYBOOK, extra_vars={"state": "absent"})
    assert back.rc == 0, back.stdout + back.stderr
    assert task_index(back, "Switch Trident's concurrent core off") < \
        task_index(back, "Set the snapshot-controller's worker threads")
    torc_b, _, flags_b = trident_state(twin)
    assert torc_b["status"]["currentInstallationParams"]["enableConcurrency"] == "false"
    assert flags_b == ["--enable_concurrency=false"]
    assert snapshot_args(twin) == args0
    assert admin(twin, "storage", {"only": ["trident"]})["trident"]["concurrency"] is False


def test_bad_state_is_refused_before_anything(twin):
    # The operator's own Installing -> Installed status write would otherwise land between the two reads.
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    torc0 = twin.kubectl_json("get", "tridentorchestrator", "trident")
    run = twin.playbook(PLAYBOOK, extra_vars={"state": "enabled"})
    assert run.rc != 0
    failed = [r for r in run.results if r["status"] == "failed"]
    assert failed and "state=enabled is not valid" in failed[0]["result"]["msg"]
    assert twin.kubectl_json("get", "tridentorchestrator", "trident")["metadata"]["resourceVersion"] == \
        torc0["metadata"]["resourceVersion"]
