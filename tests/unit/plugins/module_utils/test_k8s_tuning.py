"""The tuning engine (k8s/tuning.py): conflict retry, the running-values check, and the partial result on failure.

A fake API holds one Deployment; its patch fails with a conflict as often as a test says, and its "rollout"
is the stored object (optionally rewritten by an "operator").
"""
from __future__ import annotations

import copy

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import tuning
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import (
    ContainerArgsError,
    pick_container,
    set_flags,
)

DEPLOYMENT = {
    "metadata": {"name": "snap", "namespace": "kube-system", "resourceVersion": "1", "generation": 1},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "snapshot-controller", "args": ["--v=5", "--worker-threads=10"]}]}}},
    "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
               "availableReplicas": 1},
}


class FakeApi:
    def __init__(self, conflicts=0, status=409, rewrite=None):
        self.dep = copy.deepcopy(DEPLOYMENT)
        self.conflicts = conflicts
        self.status = status
        self.rewrite = rewrite  # what an operator puts back into the args after our patch
        self.reads = self.patches = 0

    def get(self, api_version, kind, name, namespace=None, missing_ok=False):
        self.reads += 1
        return copy.deepcopy(self.dep)

    def patch(self, api_version, kind, name, ops, namespace=None, patch_type=None, dry_run=False):
        self.patches += 1
        if self.conflicts:
            self.conflicts -= 1
            self.dep["metadata"]["resourceVersion"] = str(int(self.dep["metadata"]["resourceVersion"]) + 1)
            raise K8sError("conflict", self.status)
        assert ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": self.dep["metadata"]["resourceVersion"]}
        if not dry_run:
            self.dep["spec"]["template"]["spec"]["containers"][0]["args"] = self.rewrite or ops[-1]["value"]
        return copy.deepcopy(self.dep)

    def watch(self, *args, **kwargs):  # the stored object is already rolled out: wait_for never watches
        raise AssertionError("not expected")


def _run(api, settings, state="present", wait=True):
    target = tuning.Tunable("snap", lambda dep: pick_container(dep, ["snapshot-controller"]), settings)
    return tuning.DeploymentTuning(api, lambda c: c.get("apps/v1", "Deployment", "snap", "kube-system"), [target],
                                   state).run(wait=wait, wait_timeout=5)


@pytest.mark.parametrize("status", [409, 422])
def test_a_conflict_is_re_read_and_re_planned(status):
    api = FakeApi(conflicts=2, status=status)
    out = _run(api, {"worker_threads": 25})
    assert (api.reads, api.patches) == (3 + 1, 3)  # three plans, one read by the rollout wait
    assert out["changed"] and out["containers"]["snap"]["running"]["worker_threads"] == "25"


def test_conflicts_past_the_attempts_fail_with_the_plan_as_partial_result():
    api = FakeApi(conflicts=tuning.PATCH_ATTEMPTS)
    with pytest.raises(K8sError) as caught:
        _run(api, {"worker_threads": 25})
    assert api.patches == tuning.PATCH_ATTEMPTS
    assert caught.value.result["containers"]["snap"]["after"]["worker_threads"] == "25"
    assert caught.value.result["rollout"] == "skipped"


def test_other_errors_are_not_retried():
    api = FakeApi(conflicts=1, status=403)
    with pytest.raises(K8sError):
        _run(api, {"worker_threads": 25})
    assert api.patches == 1


def test_values_rewritten_after_the_rollout_fail_and_name_the_container():
    api = FakeApi(rewrite=set_flags(DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["args"],
                                    {"worker-threads": 10}))
    with pytest.raises(ContainerArgsError) as caught:
        _run(api, {"worker_threads": 25})
    assert "snapshot-controller runs with" in caught.value.msg and "rewrote" in caught.value.msg
    assert caught.value.result["containers"]["snap"]["running"]["worker_threads"] == "10"


def test_values_refused_against_what_is_in_place_change_nothing():
    api = FakeApi()
    api.dep["spec"]["template"]["spec"]["containers"][0]["args"].append("--kube-api-burst=10")
    with pytest.raises(ContainerArgsError) as caught:
        _run(api, {"kube_api_qps": 50})
    assert "kube_api_burst=10 (the value left in place) must be >= kube_api_qps=50" in caught.value.msg
    assert caught.value.details["errors"] and api.patches == 0
