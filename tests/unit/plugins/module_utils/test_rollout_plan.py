"""The rollout's waves (Ansible's serial semantics, a canary first) and what a run does with each cluster."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import changes as CH
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import plan as P
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import waves as W

FLEET = ["c%02d" % i for i in range(1, 11)]


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
         "max_fail_percentage": 0, "baseline_max_age": 3600, "bucket": None, "prefix": "storageperf",
         "rollout_action": "run", "pause_after_wave": None}
    p.update(kw)
    return p


def _record(decision, updated="2026-12-06T11:00:00Z", baseline=None, state=None):
    return {"decision": decision, "reason": "because", "updated": updated, "wave": 1, "baseline": baseline,
            "state": state or decision}


def test_the_plan_hands_each_cluster_its_record_and_says_what_it_suggests():
    records = {"a": _record("promoted"), "b": _record("rolled_back"), "c": _record("pending", state="applied")}
    got = P.plan(_params(), records)
    assert got["waves"] == [{"wave": 1, "clusters": ["a"]}, {"wave": 2, "clusters": ["b", "c"]}]
    assert got["serial"] == [1, 2] and got["order"] == ["a", "b", "c"]
    cl = got["clusters"]
    assert [cl[c]["record"] for c in "abc"] == [records[c] for c in "abc"]
    assert "leave as is if the change still reads on" in cl["a"]["reason"]
    assert "leave as is if the change still reads off" in cl["b"]["reason"]
    assert "go on from applied" in cl["c"]["reason"] and "never skipped" in cl["c"]["reason"]
    # every cluster gets a planned record where it has none (rollout_record keep_existing leaves the others)
    assert [r["cluster"] for r in got["pending"]] == ["a", "b", "c"]
    assert got["resume"] == {"retry_rolled_back": False, "baseline_max_age": 3600}
    assert "measure, apply" in P.plan(_params(retry_rolled_back=True), records)["clusters"]["b"]["reason"]


@pytest.mark.parametrize("change", sorted(CH.CHANGES))
def test_a_probe_runs_and_judges_steps_of_its_benchmark_in_its_order(change):
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.runner import BENCHMARKS
    probe = CH.probe(change)
    own = [step for step, _title in BENCHMARKS[probe["benchmark"]].STEPS]
    assert probe["steps"] == [s for s in own if s in probe["steps"]] and probe["steps"]
    assert probe["judged"] == [s for s in probe["steps"] if s in probe["judged"]] and probe["judged"]


def test_a_probe_of_every_step_takes_the_benchmarks_own_list():
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench import attach_stress, csi_lifecycle
    assert CH.probe("trident_concurrency")["steps"] == list(csi_lifecycle.STEP_NAMES)
    assert CH.probe("parallel_attach")["steps"] == [s for s, _ in attach_stress.STEPS]
    # the plan hands the probe on with its steps spelled out, for the benchmark role's steps variable
    assert P.plan(_params(), {})["probe"]["steps"] == list(csi_lifecycle.STEP_NAMES)


def test_pause_after_wave_leaves_the_later_waves_for_a_rerun():
    got = P.plan(_params(pause_after_wave=1), {})
    assert got["order"] == ["a"] and got["serial"] == [1]
    assert got["paused"] == {"after_wave": 1, "left": ["b", "c"]}
    assert got["lines"][-1] == "paused after wave 1: b, c left for a later run of the same rollout"
    assert P.plan(_params(pause_after_wave=2), {})["paused"] is None
    with pytest.raises(P.StoragePerfError, match="pause_after_wave is 3: this run's waves are 1 to 2"):
        P.plan(_params(pause_after_wave=3), {})


def test_abort_visits_every_wave_and_plans_no_record():
    got = P.plan(_params(rollout_action="abort", pause_after_wave=1), {"a": _record("promoted")})
    assert got["action"] == "abort" and got["order"] == ["a", "b", "c"] and got["paused"] is None
    assert got["pending"] == []
    assert got["lines"][0].startswith("abort of rollout trident_concurrency-")


def test_empty_waves_are_refused_and_none_is_the_default():
    with pytest.raises(W.WavesError, match="waves is empty"):
        P.plan(_params(waves=[]), {})
    assert [len(w) for w in W.plan(FLEET, None)] == [1, 2, 7]


def test_first_wave_numbers_a_later_job_of_a_workflow():
    got = P.plan(_params(first_wave=2, waves=["100%"]), {})
    assert got["waves"] == [{"wave": 2, "clusters": ["a", "b", "c"]}]
    assert got["rollout_dir"].startswith("/r/rollout-trident_concurrency-")


def test_a_change_applies_what_the_advisor_recommends_by_default():
    # one source, seed 002's settings (report/seed_figures.py): the rollout applies what the advisor asks for
    from ansible_collections.storageperf.k8s.plugins.module_utils.advice.seeds import TUNINGS
    snap = CH.CHANGES["snapshot_controller"]
    assert {k: snap["parameters"][k] for k in snap["rates"]} == TUNINGS[snap["tuning"]]["recommended"]
    sidecars = CH.CHANGES["csi_sidecars"]
    recommended = TUNINGS[sidecars["tuning"]]["recommended"]
    assert [{k: v for k, v in s.items() if k != "name"} for s in sidecars["parameters"]["sidecars"]] == [recommended] * 2
