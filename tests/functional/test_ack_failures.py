"""ack_parallel_attach when things go wrong: too-old addons, a wrong secret, throttling, an addon that ends
failed, a run interrupted half-way, and bad input. Each failure must be clear, change nothing it should not,
and leave a state the next run completes."""
from __future__ import annotations

import pytest

from tests.support.alibaba import admin, cloud_calls, cloud_state, run_module, run_role_playbook
from tests.support.twin import Twin

TASK = "module under test"


@pytest.fixture(scope="module")
def untouched(tmp_path_factory):
    """One twin for the failures that must change nothing: each test checks that no write call reached it."""
    with Twin(tmp_path_factory.mktemp("ack-untouched") / "twin", nodes=3, time_scale=0.01) as t:
        yield t


@pytest.fixture
def twin_ro(untouched):
    admin(untouched, "alibaba", {"reset_calls": True})
    yield untouched
    assert cloud_calls(untouched)["writes"] == 0
    assert all(not i["tags"] for i in cloud_state(untouched)["instances"].values())


def test_too_old_addon_fails_and_changes_nothing(twin_ro):
    twin = twin_ro
    admin(twin, "cloud", {"addon": "csi-plugin", "version": "v1.28.3-3a1f9e2-aliyun"})
    try:
        run = run_module(twin, "ack_parallel_attach", {})
    finally:
        admin(twin, "cloud", {"addon": "csi-plugin", "version": "v1.30.4-8c2e0b1-aliyun"})
    assert run.rc != 0
    result = run.task(TASK)["result"]
    assert "csi-plugin" in result["msg"] and "v1.28.3-3a1f9e2-aliyun" in result["msg"] and "v1.30.4" in result["msg"]
    assert "Nothing was changed" in result["msg"]
    assert result["changed"] is False
    calls = cloud_calls(twin)
    assert calls["writes"] == 0
    assert all(not i["tags"] for i in cloud_state(twin)["instances"].values())


def test_too_old_cluster_fails_and_changes_nothing(twin_ro):
    twin = twin_ro
    admin(twin, "alibaba", {"cluster_version": "1.24.6-aliyun.1"})
    try:
        run = run_module(twin, "ack_parallel_attach", {})
    finally:
        admin(twin, "alibaba", {"cluster_version": "1.32.4-aliyun.1"})
    assert run.rc != 0
    msg = run.task(TASK)["result"]["msg"]
    assert "1.24.6-aliyun.1" in msg and "1.26" in msg
    assert cloud_calls(twin)["writes"] == 0


def test_wrong_secret_is_a_clear_error_without_the_secret(twin_ro):
    twin = twin_ro
    real = twin.cloud["alibaba"]["access_key_secret"]
    wrong = "Wr0ngSecretValue-do-not-print"
    run = run_module(twin, "ack_parallel_attach", {}, extra_vars={"alibaba_access_key_secret": wrong})
    assert run.rc != 0
    msg = run.task(TASK)["result"]["msg"]
    assert "access_key_secret" in msg and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in msg
    for secret in (wrong, real):
        assert secret not in run.stdout and secret not in run.stderr
        assert secret not in str(run.task(TASK)["result"])
    calls = cloud_calls(twin)
    assert calls["writes"] == 0 and calls["rejected"] == {"SignatureDoesNotMatch": 1}


def test_unknown_access_key_id(twin_ro):
    twin = twin_ro
    run = run_module(twin, "ack_cluster_info", {}, extra_vars={"alibaba_access_key_id": "LTAIunknownkey0000"})
    assert run.rc != 0
    msg = run.task(TASK)["result"]["msg"]
    assert "InvalidAccessKeyId.NotFound" in msg and "access_key_id" in msg and "LTAI****0000" in msg


def test_throttled_calls_are_retried_and_the_run_completes(twin_factory):
    twin = twin_factory(nodes=120, time_scale=0.01, extra=["--node-pools", "3"])
    admin(twin, "alibaba", {"throttle": {"rate": 8, "burst": 2}})
    run = run_module(twin, "ack_parallel_attach", {"concurrency": 8})
    assert run.rc == 0, run.stdout + run.stderr
    result = run.task(TASK)["result"]
    assert result["instances_changed"] == 120
    assert sum(result["api_calls"]["throttled"].values()) > 0  # it was throttled, and retried
    calls = cloud_calls(twin)
    assert sum(calls["throttled"].values()) == sum(result["api_calls"]["throttled"].values())
    assert calls["ok"]["ecs:TagResources"] == 3
    assert all(i["tags"].get("supportConcurrencyAttach") == "true" for i in cloud_state(twin)["instances"].values())


def test_addon_that_ends_failed_is_reported_and_rolled_back(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    admin(twin, "alibaba", {"fail_addon": "csi-plugin"})
    run = run_module(twin, "ack_parallel_attach", {})
    assert run.rc != 0
    result = run.task(TASK)["result"]
    assert "csi-plugin ended in state failed" in result["msg"] and "state=absent" in result["msg"]
    assert [(a["name"], a["state"]) for a in result["addons"]] == [("managed-csiprovisioner", "active"),
                                                                   ("csi-plugin", "failed")]
    # a rerun does not pretend: the addon is still failed
    again = run_module(twin, "ack_parallel_attach", {})
    assert again.rc != 0 and "failed" in again.task(TASK)["result"]["msg"]
    # rolling back rewrites csi-plugin's config, which repairs it
    back = run_module(twin, "ack_parallel_attach", {"state": "absent"})
    assert back.rc == 0, back.stdout
    state = cloud_state(twin)
    assert {a["state"] for a in state["addons"].values()} == {"active"}
    assert all(a["config"]["FeatureGate"] == "" for a in state["addons"].values())


def test_interrupted_run_is_completed_by_the_next_run(twin_factory):
    twin = twin_factory(nodes=160, time_scale=0.01, extra=["--node-pools", "2"])
    # the RAM permission disappears after the first TagResources call (4 calls are needed for 160 instances)
    admin(twin, "alibaba", {"fault": {"action": "ecs:TagResources", "after": 1, "status": 403, "code": "Forbidden.RAM",
                                      "message": "User not authorized to operate on the specified resource."}})
    run = run_module(twin, "ack_parallel_attach", {"concurrency": 1})
    assert run.rc != 0
    result = run.task(TASK)["result"]
    assert result["changed"] is True and result["instances_changed"] == 50
    assert len(result["failures"]) == 3  # every failed call is reported, not just the first
    assert all(f["code"] == "Forbidden.RAM" for f in result["failures"])
    assert "3 of 6 tagging calls failed" in result["msg"] and "No addon was changed" in result["msg"]
    calls = cloud_calls(twin)
    assert "cs:ModifyClusterAddon" not in calls["calls"]
    tagged = [i for i in cloud_state(twin)["instances"].values() if i["tags"]]
    assert len(tagged) == 50

    admin(twin, "alibaba", {"clear_faults": True, "reset_calls": True})
    resumed = run_module(twin, "ack_parallel_attach", {})
    assert resumed.rc == 0, resumed.stdout
    result = resumed.task(TASK)["result"]
    assert result["instances_changed"] == 110 and result["node_pools_changed"] == []
    calls = cloud_calls(twin)
    assert calls["calls"]["ecs:TagResources"] == 3 and calls["calls"]["cs:ModifyClusterAddon"] == 2
    assert "cs:ModifyClusterNodePool" not in calls["calls"]  # the pools were done by the first run


def test_run_stopped_while_waiting_for_an_addon_is_completed(twin_factory):
    """A run stopped after the provisioner change (here: a wait_timeout too short) leaves csi-plugin for the next."""
    # Time scale 0.3: a node pool update (10 s) takes 3 s here and an addon update (30 s) 9 s, and wait_timeout 5
    # lies between them by seconds. At 0.05 (0.5 s and 1.5 s against 1 s) the module's last poll before giving up
    # came ~0.06 s before the addon settled, so a slow poll on a loaded machine saw it done and the run completed.
    twin = twin_factory(nodes=2, time_scale=0.3)
    run = run_module(twin, "ack_parallel_attach", {"wait_timeout": 5})
    assert run.rc != 0
    assert "still updating" in run.task(TASK)["result"]["msg"] and "wait_timeout" in run.task(TASK)["result"]["msg"]
    assert cloud_calls(twin)["journal"][-1] == "cs:ModifyClusterAddon managed-csiprovisioner"
    resumed = run_module(twin, "ack_parallel_attach", {"wait_timeout": 60})
    assert resumed.rc == 0, resumed.stdout
    addon_writes = [j for j in cloud_calls(twin)["journal"] if "ModifyClusterAddon" in j]
    assert addon_writes == ["cs:ModifyClusterAddon managed-csiprovisioner", "cs:ModifyClusterAddon csi-plugin"]


def test_bad_input_names_the_field_and_calls_nothing(twin_ro):
    twin = twin_ro
    run = run_module(twin, "ack_parallel_attach", {"concurrency": 0})
    assert run.rc != 0
    assert "concurrency must be between 1 and 64" in run.task(TASK)["result"]["msg"]
    run = run_module(twin, "ack_parallel_attach", {"state": "enabled"})
    assert run.rc != 0 and "state" in run.task(TASK)["result"]["msg"]
    assert cloud_calls(twin)["calls"] == {}


def test_missing_credentials_say_which(twin_ro):
    twin = twin_ro
    run = run_role_playbook(twin, extra_vars={"alibaba_access_key_id": "", "alibaba_access_key_secret": ""},
                            env={"ALIBABA_CLOUD_ACCESS_KEY_ID": "", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": ""})
    assert run.rc != 0
    msg = run.task("Read the cluster")["result"]["msg"]
    assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in msg and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in msg
