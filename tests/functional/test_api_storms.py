"""API storms are ridden out: with the twin answering 30 % of requests 429 (Retry-After 1, as kube-apiserver's
priority-and-fairness filter does) or 20 % 500, every benchmark and tuning playbook completes, because the request
policy retries each HTTP exchange (discovery included) rather than failing the whole discovery or step.

A 429 costs its Retry-After of real time, so the 429 storms stop after `THROTTLED` hits to keep the suite short;
the 500 storms last the whole run."""
from __future__ import annotations

import json

import pytest

from tests.support.alibaba import admin, cloud_state, run_role_playbook
from tests.support.twin import REPO, Twin

THROTTLED = 10
STORMS = {
    "429": {"fraction": 0.3, "code": 429, "retry_after": 1, "count": THROTTLED},
    "500": {"fraction": 0.2, "code": 500},
}


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("storms"), nodes=2) as t:
        yield t


def api_hits(twin: Twin) -> int:
    return admin(twin, "storage", {"only": ["faults"]})["faults"]["hits"].get("api", 0)


class Storm:
    def __init__(self, twin: Twin, name: str):
        self.twin, self.rule = twin, STORMS[name]

    def __enter__(self):
        self.before = api_hits(self.twin)
        self.twin.twin_cmd("fault", "--name", "api", "--rule", json.dumps(self.rule))
        return self

    def __exit__(self, *exc):
        self.hits = api_hits(self.twin) - self.before
        self.twin.twin_cmd("fault", "--clear", "--name", "api")


def result_doc(run) -> dict:
    path = run.task("Keep the outcome as a fact")["result"]["ansible_facts"]
    fact = next(v for k, v in path.items() if k.endswith("_result"))
    return json.loads(open(fact["result_path"]).read())


@pytest.mark.parametrize("storm", ["429", "500"])
@pytest.mark.parametrize("playbook,size", [("bench_csi_lifecycle.yml", {"volumes": 4}),
                                           ("bench_attach_stress.yml", {"replicas": 2})])
def test_the_benchmarks_survive_a_storm(twin, tmp_path, storm, playbook, size):
    with Storm(twin, storm) as s:
        run = twin.playbook(REPO / "playbooks" / playbook, extra_vars={**size, "reports_dir": str(tmp_path)})
    assert run.rc == 0, run.stdout[-3000:]
    assert s.hits > 0
    doc = result_doc(run)
    assert doc["status"] == "ok" and {st["status"] for v in doc["variants"] for r in v["runs"] for st in r["steps"]} == {"ok"}


@pytest.mark.parametrize("storm,state,expected", [("429", "present", True), ("500", "absent", False)])
def test_tune_trident_survives_a_storm(twin, storm, state, expected):
    with Storm(twin, storm) as s:
        run = twin.playbook(REPO / "playbooks" / "tune_trident.yml", extra_vars={"state": state})
    assert run.rc == 0, run.stdout[-3000:]
    assert s.hits > 0
    torc = twin.kubectl_json("get", "tridentorchestrator", "trident")
    assert torc["spec"]["enableConcurrency"] is expected


@pytest.mark.parametrize("storm,state,gates", [("429", "present", "DiskADController=true"), ("500", "absent", "")])
def test_enable_parallel_attach_survives_a_storm(twin, storm, state, gates):
    with Storm(twin, storm) as s:
        run = run_role_playbook(twin, extra_vars={"state": state})
    assert run.rc == 0, run.stdout[-3000:]
    assert s.hits > 0
    assert cloud_state(twin)["addons"]["csi-plugin"]["config"].get("FeatureGate", "") == gates
