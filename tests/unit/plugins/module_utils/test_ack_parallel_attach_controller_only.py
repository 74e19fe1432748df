"""ack_parallel_attach with parallel=false: DiskADController alone (the attach-stress attribution's middle variant).

The plan functions are pure: gates and tags after the change, from what the cluster has before.
"""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import parallel_attach as PA

CLUSTER_ID = "c" + "0" * 32
PARAMS = {"cluster_id": CLUSTER_ID, "concurrency": 8, "api_retries": 5, "wait_timeout": 600, "api_timeout": 30}


@pytest.mark.parametrize("before", ["", "DiskADController=true,DiskParallelAttach=true",
                                    "DiskADController=true,DiskParallelAttach=true,DiskParallelDetach=true"])
def test_controller_keeps_only_disk_ad_controller_and_other_gates(before):
    gate = "Foo=true," + before if before else "Foo=true"
    assert PA.gate_after(gate, "controller", "present", False, parallel=False) == "Foo=true,DiskADController=true"
    assert PA.gate_after("Foo=true", "node", "present", False, parallel=False) == "Foo=true,DiskADController=true"


def test_controller_only_is_stable_and_absent_removes_it():
    gate = PA.gate_after("", "controller", "present", False, parallel=False)
    assert PA.gate_after(gate, "controller", "present", False, parallel=False) == gate  # a second run changes nothing
    assert PA.gate_after(gate, "controller", "absent", False) == ""


def test_controller_only_wants_no_whitelist_tags():
    assert PA.tag_state("present", False) == "absent"
    assert PA.tag_state("present", True) == "present" and PA.tag_state("absent", True) == "absent"
    nodes = [{"instance_id": "i-1", "is_aliyun_node": True}, {"instance_id": "i-2", "is_aliyun_node": True}]
    tags = {"i-1": {"supportConcurrencyAttach": "true", "team": "db"}, "i-2": {"team": "db"}}
    # only the instance that carries the tag is untagged, and only that key
    assert PA.instance_groups(nodes, tags, PA.tag_state("present", False), False) == {("supportConcurrencyAttach",): ["i-1"]}


def test_parallel_false_with_detach_is_refused_before_any_call():
    with pytest.raises(PA.AttachError) as caught:
        PA.refuse_params(dict(PARAMS, state="present", parallel=False, detach=True))
    assert "detach=true needs parallel=true" in caught.value.msg and "detach=false" in caught.value.msg
    PA.refuse_params(dict(PARAMS, state="absent", parallel=False, detach=True))  # absent reads neither
