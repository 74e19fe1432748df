"""The rollout's waves (Ansible's serial semantics, a canary first) and what a run does with each cluster."""
from __future__ import annotations

import datetime
import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import changes as CH
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import plan as P
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import waves as W

FLEET = ["c%02d" % i for i in range(1, 11)]
NOW = datetime.datetime(2026, 12, 6, 12, 0, 0, tzinfo=datetime.UTC)


@pytest.mark.parametrize("waves,expected", [
    ([1, "25%", "100%"], [1, 2, 7]),
    ([1, "20%"], [1, 2, 2, 2, 2, 1]),
    (["100%"], [10]),
    ([3], [3, 3, 3, 1]),
    (["1%"], [1] * 10),      # a share below one cluster is one cluster, as Ansible's serial
    (["2", "50%"], [2, 5, 3]),
])
def test_waves_follow_ansible_serial(waves, expected):
    got = W.plan(FLEET, waves)
    assert [len(w) for w in got] == expected
    assert [c for w in got for c in w] == FLEET


def test_a_canary_group_is_the_first_wave_and_replaces_the_first_entry():
    got = W.plan(FLEET, [1, "50%"], canary=["c07", "c03"])
    assert got[0] == ["c07", "c03"]
    assert [len(w) for w in got[1:]] == [5, 3]
    assert sorted(c for w in got for c in w) == sorted(FLEET)


@pytest.mark.parametrize("waves,words", [
    ([0], "waves[0] is 0"),
    ([1, "0%"], "waves[1] is 0%"),
    ([1, "150%"], "waves[1] is 150%"),
    (["quarter"], "waves[0] is 'quarter'"),
    ([True], "waves[0] is True"),
])
def test_bad_waves_are_named(waves, words):
    with pytest.raises(W.WavesError) as e:
        W.plan(FLEET, waves)
    assert words in e.value.message()


def test_a_canary_outside_the_group_is_refused():
    with pytest.raises(W.WavesError, match="canary names c99"):
        W.plan(FLEET, [1], canary=["c99"])


def test_an_empty_fleet_is_refused():
    with pytest.raises(W.WavesError, match="cluster group is empty"):
        W.plan([], [1])


def test_the_rollout_id_follows_change_and_parameters():
    a = CH.rollout_id("trident_concurrency", CH.parameters("trident_concurrency", {}))
    b = CH.rollout_id("trident_concurrency", CH.parameters("trident_concurrency", {"storage_class": "ontap-nas"}))
    c = CH.rollout_id("trident_concurrency", CH.parameters("trident_concurrency", {"storage_class": "ontap-san"}))
    assert a == b != c
    assert a.startswith("trident_concurrency-")


def test_change_parameters_are_checked():
    with pytest.raises(CH.ChangeError, match="change_parameters has volumes"):
        CH.parameters("trident_concurrency", {"volumes": 5})
    with pytest.raises(CH.ChangeError, match="needs change_parameters csi_deployment"):
        CH.parameters("csi_sidecars", {})
    with pytest.raises(CH.ChangeError, match="change='nope'"):
        CH.get("nope")


def _params(**kw):
    p = {"change": "trident_concurrency", "change_parameters": {}, "clusters": ["a", "b", "c"], "canary": [],
         "waves": [1, "100%"], "first_wave": 1, "rollout_id": None, "reports_dir": "/r", "retry_rolled_back": False,
         "max_fail_percentage": 0, "baseline_max_age": 3600, "bucket": None, "prefix": "storageperf"}
    p.update(kw)
    return p


def _record(decision, updated="2026-12-06T11:00:00Z", baseline=None):
    return {"decision": decision, "reason": "because", "updated": updated, "wave": 1, "baseline": baseline}


def test_resume_leaves_promoted_and_rolled_back_clusters_alone(tmp_path):
    result = tmp_path / "result.json"
    result.write_text(json.dumps({}))
    fresh = {"result": str(result), "run_id": "r1", "finished": "2026-12-06T11:30:00Z"}
    records = {"a": _record("promoted"), "b": _record("rolled_back", baseline=fresh), "c": _record("failed", baseline=fresh)}
    got = P.plan(_params(), records, now=NOW)
    assert got["waves"] == [{"wave": 1, "clusters": ["a"]}, {"wave": 2, "clusters": ["b", "c"]}]
    assert got["serial"] == [1, 2] and got["order"] == ["a", "b", "c"]
    cl = got["clusters"]
    assert (cl["a"]["action"], cl["b"]["action"], cl["c"]["action"]) == ("skip", "skip", "run")
    assert "retry_rolled_back=true" in cl["b"]["reason"]
    assert cl["c"]["baseline"] == dict(fresh, reused=True)
    assert [r["cluster"] for r in got["pending"]] == ["c"]
    # asked to, the rolled-back cluster runs again and reuses its baseline
    again = P.plan(_params(retry_rolled_back=True), records, now=NOW)["clusters"]["b"]
    assert again["action"] == "run" and again["baseline"]["reused"] is True


def test_an_old_or_missing_baseline_is_measured_again(tmp_path):
    result = tmp_path / "result.json"
    result.write_text("{}")
    old = {"result": str(result), "run_id": "r0", "finished": "2026-12-05T09:00:00Z"}
    gone = {"result": str(tmp_path / "gone.json"), "run_id": "r1", "finished": "2026-12-06T11:59:00Z"}
    records = {"a": _record("failed", baseline=old), "b": _record("pending", baseline=gone)}
    cl = P.plan(_params(), records, now=NOW)["clusters"]
    assert cl["a"]["baseline"] is None and cl["b"]["baseline"] is None
    assert cl["a"]["action"] == cl["b"]["action"] == cl["c"]["action"] == "run"


def test_first_wave_numbers_a_later_job_of_a_workflow():
    got = P.plan(_params(first_wave=2, waves=["100%"]), {}, now=NOW)
    assert got["waves"] == [{"wave": 2, "clusters": ["a", "b", "c"]}]
    assert got["rollout_dir"].startswith("/r/rollout-trident_concurrency-")
