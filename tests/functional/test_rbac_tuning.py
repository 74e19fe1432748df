"""The tuning playbooks' documented rights are enough, and each is needed: advise.yml (tuning_advice) with a token
bound only to the read-only roles gives the admin's advice; tune_trident.yml with the tuner role as well tunes, and
without it stops at its first write with the API server's 403 naming the verb and resource. The roles are the
files the collection ships (docs/rbac/), applied as they are; the twin enforces RBAC as kube-apiserver does."""
from __future__ import annotations

from tests.functional.test_rbac_read_only import SHIPPED
from tests.support.alibaba import run_role_playbook
from tests.support.twin import REPO, Twin

USER = "system:serviceaccount:ops:storageperf"
ADVISE_TASK = "Read the cluster and advise (changes nothing)"


def _token(twin: Twin, tmp_path, *, tuner: bool):
    """A ServiceAccount bound to the read-only roles (and the tuner role), and a kubeconfig with its token."""
    twin.kubectl("wait", "--for=jsonpath={.status.status}=Installed", "tridentorchestrator/trident", "--timeout=60s")
    twin.kubectl("create", "namespace", "ops")
    twin.kubectl("-n", "ops", "create", "serviceaccount", "storageperf")
    twin.kubectl("apply", "-f", str(SHIPPED))
    sa = "--serviceaccount=ops:storageperf"
    twin.kubectl("create", "clusterrolebinding", "storageperf-read-only", "--clusterrole=storageperf-read-only", sa)
    twin.kubectl("-n", "trident", "create", "rolebinding", "storageperf-read-helm-releases",
                 "--clusterrole=storageperf-read-helm-releases", sa)
    if tuner:
        twin.kubectl("create", "clusterrolebinding", "storageperf-tuner", "--clusterrole=storageperf-tuner", sa)
    token = twin.kubectl("-n", "ops", "create", "token", "storageperf").stdout.strip()
    return twin.kubeconfig_for(token, tmp_path / "storageperf.kubeconfig")


def _advice(twin: Twin, tmp_path, **extra_vars) -> dict:
    run = twin.playbook(REPO / "playbooks" / "advise.yml", extra_vars={"reports_dir": str(tmp_path / "reports"), **extra_vars})
    assert run.rc == 0, run.stdout + run.stderr
    return run.task(ADVISE_TASK)["result"]["advice"]


def _snapshot_args(twin: Twin) -> list[str]:
    dep = twin.kubectl_json("-n", "kube-system", "get", "deployment", "snapshot-controller")
    return next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "snapshot-controller")["args"]


def test_advise_with_the_read_only_roles_gives_the_admins_advice(twin, tmp_path):
    kubeconfig = _token(twin, tmp_path, tuner=False)
    mine = _advice(twin, tmp_path, k8s_kubeconfig=str(kubeconfig))
    admin = _advice(twin, tmp_path)
    assert [t["name"] for t in mine["tunings"]] == [t["name"] for t in admin["tunings"]]
    for got, want in zip(mine["tunings"], admin["tunings"]):
        assert (got["state"], got["reasons"], got["current"]) == (want["state"], want["reasons"], want["current"]), got["name"]
    assert mine["summary"] == admin["summary"] == {"on": 0, "available": 4, "blocked": 0, "not_applicable": 1}


def test_tune_trident_with_the_tuner_role_tunes(twin, tmp_path):
    kubeconfig = _token(twin, tmp_path, tuner=True)
    run = twin.playbook(REPO / "playbooks" / "tune_trident.yml", extra_vars={"k8s_kubeconfig": str(kubeconfig)})
    assert run.rc == 0, run.stdout + run.stderr
    assert "--worker-threads=25" in _snapshot_args(twin)
    assert twin.kubectl("get", "tridentorchestrator", "trident", "-o", "jsonpath={.spec.enableConcurrency}").stdout == "true"


def test_tune_trident_without_the_tuner_role_is_refused_before_anything_changes(twin, tmp_path):
    kubeconfig = _token(twin, tmp_path, tuner=False)
    before = _snapshot_args(twin)
    run = twin.playbook(REPO / "playbooks" / "tune_trident.yml", extra_vars={"k8s_kubeconfig": str(kubeconfig)})
    assert run.rc != 0
    [failed] = [r for r in run.results if r["status"] == "failed"]
    # the preflight's dry-run patch of the orchestrator (dryRun=All is authorized as the patch itself) is the first write
    assert "Preflight" in failed["task"], failed["task"]
    msg = failed["result"]["msg"]
    assert msg.startswith("forbidden (403) for patch TridentOrchestrator trident: "), msg
    assert (f'tridentorchestrators.trident.netapp.io "trident" is forbidden: User "{USER}" cannot patch resource '
            '"tridentorchestrators" in API group "trident.netapp.io" at the cluster scope') in msg, msg
    assert _snapshot_args(twin) == before  # nothing changed
    assert twin.kubectl("get", "tridentorchestrator", "trident", "-o", "jsonpath={.spec.enableConcurrency}").stdout != "true"


def test_enable_parallel_attach_reads_kubernetes_with_the_read_only_role_only(twin, tmp_path):
    """Its changes go through the ACK API; its Kubernetes checks (PVs, the CSI plugin and provisioner, their pods)
    are reads the read-only role grants, and a token bound to nothing is refused at the first of them."""
    twin.kubectl("create", "namespace", "bare")
    twin.kubectl("-n", "bare", "create", "serviceaccount", "nobody")
    bare = twin.kubeconfig_for(twin.kubectl("-n", "bare", "create", "token", "nobody").stdout.strip(),
                               tmp_path / "nobody.kubeconfig")
    refused = run_role_playbook(twin, extra_vars={"k8s_kubeconfig": str(bare)})
    assert refused.rc != 0
    [failed] = [r for r in refused.results if r["status"] == "failed"]
    assert 'User "system:serviceaccount:bare:nobody" cannot' in failed["result"]["msg"], failed["result"]["msg"]
    kubeconfig = _token(twin, tmp_path, tuner=False)
    run = run_role_playbook(twin, extra_vars={"k8s_kubeconfig": str(kubeconfig)})
    assert run.rc == 0, run.stdout + run.stderr
