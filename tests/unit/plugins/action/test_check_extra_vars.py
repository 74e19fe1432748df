"""check_extra_vars: which extra vars are unknown to the run's playbooks, and the nearest known name."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.storageperf.k8s.plugins.action.check_extra_vars import (
    playbook_names,
    role_variables,
    unknown_extra_vars,
    warning,
)
from ansible_collections.storageperf.k8s.plugins.plugin_utils import known_vars as K

REPO = Path(__file__).resolve().parents[4]
PLAYBOOKS = sorted((REPO / "playbooks").glob("*.yml"))
ROLES = role_variables(str(REPO / "roles"))


def test_a_typo_names_the_playbooks_own_variable():
    assert unknown_extra_vars({"volumse": 10}, ["bench_csi_lifecycle"], ROLES) == {"volumse": "volumes"}
    text = warning("volumse", "volumes", ["bench_csi_lifecycle"])
    assert text == "extra var volumse is not a variable of bench_csi_lifecycle.yml: it is ignored; did you mean volumes?"


def test_known_names_pass():
    extra = {"volumes": 10, "k8s_kubeconfig": "x", "bench_fio_runtime": 5, "ansible_python_interpreter": "p",
             "awx_job_id": 3, "tower_user_name": "a", "storageperf_stats_bench_csi_lifecycle": {}, "playbook_dir": "."}
    assert unknown_extra_vars(extra, ["bench_csi_lifecycle"], ROLES) == {}


def test_another_playbooks_variable_is_unknown_and_far_names_get_no_suggestion():
    assert unknown_extra_vars({"volumes": 10}, ["tune_trident"], ROLES) == {"volumes": None}
    assert unknown_extra_vars({"zzzz": 1}, ["cleanup"], ROLES) == {"zzzz": None}


@pytest.mark.parametrize("args,names", [
    (["playbooks/bench_csi_lifecycle.yml"], ["bench_csi_lifecycle"]),
    (["storageperf.k8s.tune_trident"], ["tune_trident"]),
    (["/srv/site.yml"], []),
    (["my.other.bench_csi_lifecycle"], []),
])
def test_which_playbooks_are_the_collections(args, names):
    assert playbook_names(args) == names


def test_every_playbook_is_declared():
    assert sorted(K.PLAYBOOKS) == sorted(p.stem for p in PLAYBOOKS)


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda p: p.stem)
def test_every_variable_a_playbook_reads_is_declared(path):
    """The names a playbook reads with `x | default(...)`, `x is defined` or hands to its role by name."""
    text = path.read_text()
    read = set(re.findall(r"(?<![.\w'])([a-z][a-z0-9_]*)\s*\|\s*default\(", text))
    read |= set(re.findall(r"(?<![.\w])([a-z][a-z0-9_]*) is defined", text))
    # what the playbook itself registers or sets in its plays' vars is not given by users
    registered = set(re.findall(r"register: ([a-z_]+)", text))
    for play in yaml.safe_load(text):
        registered |= set(play.get("vars") or {})
        for task in play.get("pre_tasks") or ():
            for names in (task.get("vars") or {}).values():
                if isinstance(names, list):
                    read |= set(names)
    # an AWX workflow hands the previous job's set_stats (OUTPUTS) as extra vars, which a playbook may read
    known = set(K.PLAYBOOKS[path.stem]) | set(K.INVENTORY) | set(K.MAGIC) | set(K.OUTPUTS)
    assert sorted(read - known - registered) == []
