"""Conformance: the kubernetes.core 6.2 modules against the twin, through ansible-playbook.

k8s_info (label selectors, missing objects), k8s create / present (strategic merge) / apply
twice (changed=False the second time), check mode (dryRun=All, nothing changed), diff, k8s_scale,
state: absent with wait, the server's 422 message on bad input,
and on custom resources the 415 answer to a strategic merge patch that makes the module fall
back to a merge patch. The playbooks live in tests/twin/playbooks/.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.support.twin import COLLECTIONS, Twin

PLAYBOOKS = Path(__file__).parent / "playbooks"

pytestmark = pytest.mark.skipif(not (COLLECTIONS / "ansible_collections" / "kubernetes" / "core").is_dir(),
                                reason="kubernetes.core is not installed (bash scripts/setup.sh python)")


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("kcore") / "twin", nodes=2, time_scale=0.01) as t:
        yield t


@pytest.fixture(scope="module")
def run(twin):
    """The three playbooks in one ansible-playbook run; each test reads its part."""
    ns, crns = f"kc-{uuid.uuid4().hex[:6]}", f"kcr-{uuid.uuid4().hex[:6]}"
    for n in (ns, crns):
        twin.kubectl("create", "namespace", n)
    result = twin.playbook(PLAYBOOKS / "all.yml", extra_vars={"ns": ns, "crns": crns},
                           env={"ANSIBLE_PIPELINING": "1"})
    result.ns, result.crns = ns, crns  # type: ignore[attr-defined]
    return result


def ok(run, name: str) -> dict:
    r = run.task(name)
    assert r["status"] == "ok", (name, json.dumps(r["result"], default=str)[:2000], run.stdout[-3000:])
    return r["result"]


def test_playbooks_ran_clean(run):
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_k8s_info(run):
    assert run.rc == 0, run.stdout[-3000:] + run.stderr[-2000:]
    nodes = ok(run, "List nodes with a label selector")["resources"]
    assert len(nodes) == 2 and all(n["kind"] == "Node" and n["status"]["nodeInfo"] for n in nodes)
    assert ok(run, "Read something that is not there")["resources"] == []


def test_k8s_create_present_apply_check_diff_scale_absent(twin, run):
    ns = run.ns
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]
    created = ok(run, "Create a ConfigMap")
    assert created["changed"] is True and created["result"]["data"] == {"a": "1"}
    changed = ok(run, "Change it through present")
    assert changed["changed"] is True and changed["result"]["data"] == {"a": "1", "b": "2"}
    a1, a2 = ok(run, "First apply of the StatefulSet"), ok(run, "Apply the StatefulSet again")
    assert a1["changed"] is True and a2["changed"] is False
    assert a2["result"]["metadata"]["generation"] == a1["result"]["metadata"]["generation"] == 1
    check = ok(run, "Apply a change in check mode")
    assert check["changed"] is True and check["result"]["spec"]["replicas"] == 3
    diff = ok(run, "Apply a change with diff")
    assert diff["changed"] is True
    assert diff["diff"]["before"]["data"]["b"] == "2" and diff["diff"]["after"]["data"]["b"] == "3"
    assert ok(run, "Scale the StatefulSet without waiting")["changed"] is True
    sts = twin.kubectl_json("-n", ns, "get", "statefulset", "web")
    assert sts["spec"]["replicas"] == 2  # not 3: the check-mode apply changed nothing
    assert sts["metadata"]["generation"] == 2
    assert ok(run, "Delete the ConfigMap and wait")["changed"] is True
    assert twin.kubectl("-n", ns, "get", "configmap", "settings", check=False).returncode != 0
    invalid = run.task("An invalid object fails")
    assert invalid["status"] == "failed"
    assert "spec.replicas: Invalid value: -1" in json.dumps(invalid["result"])
    assert twin.kubectl("-n", ns, "get", "statefulset", "broken", check=False).returncode != 0


def test_k8s_on_custom_resources_falls_back_to_merge_patch(twin, run):
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert ok(run, "Create a Dial")["changed"] is True
    change = ok(run, "Change it with present")
    assert change["changed"] is True
    assert change["result"]["spec"] == {"level": 2, "label": "one"}  # merged, not replaced
    dial = twin.kubectl_json("-n", run.crns, "get", "dials.core.example.com", "d1")
    assert dial["spec"] == {"level": 2, "label": "one"}
