"""Every play survives a --limit that names clusters: Ansible narrows every play by the limit, so a play whose hosts
are `localhost` alone is skipped by `-l twin-1` and its guards or steps vanish (docs/fleet.md, "Which clusters a run
touches"). A play that runs once on the controller targets localhost with the cluster group, or with every host under
a limit, and runs its tasks run_once, delegated to localhost; playbooks/clusters.yml is the pattern."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = sorted(p.name for p in (ROOT / "playbooks").glob("*.yml"))
# the guarded rollout is being rewritten on the lead's branch, which adopts the clusters.yml pattern
PENDING = {"rollout.yml": "rollout.yml limit: lead's branch"}


def plays(name: str) -> list[dict]:
    return [p for p in yaml.safe_load((ROOT / "playbooks" / name).read_text()) if "hosts" in p]


def _tasks(tasks) -> list[dict]:
    out = []
    for task in tasks or []:
        out.append(task)
        for part in ("block", "rescue", "always"):
            out += _tasks(task.get(part))
    return out


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=PENDING[n])) if n in PENDING else n for n in PLAYBOOKS])
def test_no_play_targets_localhost_alone(name):
    for play in plays(name):
        assert play["hosts"].strip() != "localhost", "%s: play %r targets localhost alone" % (name, play.get("name"))


@pytest.mark.parametrize("name", [n for n in PLAYBOOKS if n not in PENDING])
def test_a_play_that_names_localhost_runs_its_tasks_once_on_the_controller(name):
    for play in plays(name):
        if "localhost" not in play["hosts"]:
            continue
        for task in play.get("tasks") or []:
            assert task.get("run_once") is True and task.get("delegate_to") == "localhost", (
                "%s: play %r: task %r runs per host of the play" % (name, play.get("name"), task.get("name")))


def test_the_guard_play_targets_every_host_under_a_limit_and_stops_the_run_on_a_failed_guard():
    [guard] = plays("clusters.yml")
    assert guard["hosts"] == ("localhost{{ ':all' if ansible_limit is defined else (':' ~ cluster_group | "
                              "default('k8s_clusters')) if cluster_group | default('k8s_clusters') in groups else '' }}")
    assert guard["any_errors_fatal"] is True
    names = [t["name"] for t in _tasks(guard["tasks"])]
    assert "Refuse clusters nobody named" in names and "Warn about extra vars that no playbook of this run reads" in names
