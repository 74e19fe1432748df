"""Operation faults that bite only while a change is in effect (`"while": "trident_concurrency" | "parallel_attach"`):
how the twin makes a rolled-out change fail its gate (issue 30), never the cluster before the change."""
from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.support.waits import watch_until
from tests.twin.storage_helpers import (ATTACH_STRESS, DISK, apply, enable_parallel_attach, events, kube_wait,
                                        pvc_manifest, storage, wait_event, wait_for)
from twin.faults import WHILE, Faults


def fault(twin, name, rule, check=True):
    return twin.twin_cmd("fault", "--name", name, "--rule", json.dumps(rule), check=check)


def test_a_while_rule_neither_hits_nor_draws_nor_spends_its_count_while_the_change_is_off():
    on = {"parallel_attach": False}
    f = Faults(seed="faults/while")
    f.conditions["parallel_attach"] = lambda: on["parallel_attach"]
    f.set("attach", {"fraction": 1.0, "while": "parallel_attach", "count": 2})
    state = f.rng.getstate()
    assert [f.op_fault("attach", f"pv-{i}", DISK) for i in range(5)] == [None] * 5
    assert f.rng.getstate() == state and f.rules["attach"]["count"] == 2 and not f.hits
    on["parallel_attach"] = True
    hits = [f.op_fault("attach", f"pv-{i}", DISK) for i in range(3)]
    assert [h is not None for h in hits] == [True, True, False]  # then its count is spent
    assert hits[0].code == "Internal" and f.hits["attach"] == 2
    # a change no part registered (a cluster without Trident) is never in effect
    f.set("provision", {"while": "trident_concurrency"})
    assert f.op_fault("provision", "default/a", "csi.trident.netapp.io") is None


@pytest.mark.parametrize("name, rule, problem", [
    ("attach", {"while": "concurrency"}, "rule.while: 'concurrency' is not a change the twin knows; use one of "
                                         + ", ".join(WHILE)),
    ("api", {"fraction": 1.0, "while": "parallel_attach"}, "rule.while: only operation rules"),
])
def test_the_fault_verb_refuses_a_while_it_cannot_honour_and_sets_nothing(twin, name, rule, problem):
    p = fault(twin, name, rule, check=False)
    assert p.returncode != 0 and problem in p.stderr, p.stderr
    assert name not in storage(twin, "faults")["rules"]


def test_provision_fault_while_trident_concurrency(twin):
    fault(twin, "provision", {"fraction": 1.0, "while": "trident_concurrency", "count": 2,
                              "driver": "csi.trident.netapp.io"})
    apply(twin, pvc_manifest("before", "ontap-nas"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/before")
    assert not [e for e in events(twin, "ProvisioningFailed") if e["involvedObject"]["name"] == "before"]
    assert storage(twin, "faults")["rules"]["provision"]["count"] == 2  # nothing spent while the change was off

    twin.kubectl("patch", "tridentorchestrator", "trident", "--type", "merge", "-p", '{"spec":{"enableConcurrency":true}}')
    wait_for("the controller runs with --enable_concurrency=true", lambda: storage(twin, "trident")["concurrency"])
    apply(twin, pvc_manifest("after", "ontap-nas"))
    kube_wait(twin, "jsonpath={.status.phase}=Bound", "pvc/after")  # retried with backoff once the count is spent
    failed = wait_event(twin, "after", "ProvisioningFailed", count=2)
    assert all("injected fault: provision failed" in e["message"] for e in failed)
    assert storage(twin, "faults")["hits"]["provision"] == 2


def _attach_stress(twin, replicas: int) -> None:
    twin.kubectl("scale", "sts", "attach-stress", "--replicas", str(replicas))
    if replicas:
        twin.kubectl("rollout", "status", "sts", "attach-stress", "--timeout=300s", timeout=320)
        return
    watch_until(client.CoreV1Api(twin.api_client()).list_namespaced_pod, lambda pods: not pods, "pods gone", "default",
                label_selector="app=attach-stress")
    watch_until(client.StorageV1Api(twin.api_client()).list_volume_attachment, lambda v: not v,
                "volume attachments gone")


def _failed_attaches(twin) -> list[dict]:
    return [e for e in events(twin, "FailedAttachVolume") if e["involvedObject"]["name"].startswith("attach-stress-")]


def test_attach_fault_while_parallel_attach_bites_only_after_the_switch(twin_factory):
    twin = twin_factory(nodes=2, time_scale=0.01)
    node = twin.kubectl_json("get", "nodes")["items"][0]["metadata"]["name"]
    fault(twin, "attach", {"fraction": 1.0, "while": "parallel_attach", "count": 6, "driver": DISK})
    twin.kubectl("apply", "-f", "-", input=ATTACH_STRESS.read_text().replace("<YOUR-HOSTNAME>", node))
    _attach_stress(twin, 3)  # 6 disks attached serially: the rule is set but parallel attach is off
    assert _failed_attaches(twin) == []
    assert storage(twin, "faults")["hits"].get("attach", 0) == 0
    _attach_stress(twin, 0)

    enable_parallel_attach(twin)  # the seed's switch: both addons' gates and the ECS tag
    _attach_stress(twin, 3)  # the same run: every attach fails until the rule's count is spent, then retries succeed
    failed = _failed_attaches(twin)
    assert failed and all("injected fault: attach failed" in e["message"] for e in failed), failed
    assert storage(twin, "faults")["hits"]["attach"] == 6
    vas = twin.kubectl_json("get", "volumeattachments")["items"]
    assert len(vas) == 6 and all(v["status"]["attached"] for v in vas)
