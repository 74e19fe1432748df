"""Each default is written in one place, the module's argument spec; the module docs and the roles' defaults that
feed the module are checked against it (tests/support/option_rules.py; the architecture test refuses a second
default in code)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support import option_rules as O

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (REPO / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
ROLES = sorted(p.name for p in (REPO / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())


@pytest.mark.parametrize("name", MODULES)
def test_the_docs_state_the_argument_specs_defaults(name, monkeypatch):
    spec, module = O.declared_spec(name, monkeypatch)
    assert O.doc_problems(name, spec, yaml.safe_load(module.DOCUMENTATION).get("options") or {}) == []


@pytest.fixture(scope="module")
def module_specs():
    mp = pytest.MonkeyPatch()
    try:
        return {name: O.declared_spec(name, mp)[0] for name in MODULES}
    finally:
        mp.undo()


# Role variables whose default differed from the module option they feed before this check (issue 31): each role's
# cleanup_timeout is its own run-wide figure, where bench_cleanup's generic default is 900 s, and the tuning role waits
# 300 s where its module's default is 600. Mending one means deleting its entry (the test fails on a stale one).
# A module call in the common role's task file a role imports (bench_finish) is checked as the importing role's, with
# the variables the role hands it (tests/support/option_rules.py).
KNOWN_ROLE_DEFAULTS = {
    "bench_attach_stress": {"bench_attach_stress_cleanup_timeout"},  # bench_cleanup timeout 900
    "bench_csi_lifecycle": {"bench_csi_lifecycle_cleanup_timeout"},  # bench_cleanup timeout 900
    "bench_fio": {"bench_fio_cleanup_timeout"},
    "bench_sysbench": {"bench_sysbench_cleanup_timeout"},
    "snapshot_controller_tuning": {"snapshot_controller_tuning_wait_timeout"},
}


@pytest.mark.parametrize("role", ROLES)
def test_a_role_hands_its_modules_their_own_defaults(role, module_specs):
    options = {}
    for entry in yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"].values():
        options.update(entry.get("options") or {})
    problems = []
    for path in sorted((REPO / "roles" / role / "tasks").glob("*.yml")):
        problems += O.role_problems(role, yaml.safe_load(path.read_text()), options, module_specs)
    known = KNOWN_ROLE_DEFAULTS.get(role, set())
    assert [p for p in problems if p.split()[1] not in known] == []
    assert known - {p.split()[1] for p in problems} == set(), "mended: delete it from KNOWN_ROLE_DEFAULTS"


def test_checker_finds_a_role_default_that_is_not_the_modules():
    spec = {"csi_lifecycle": {"type": "dict", "options": {"volumes": {"type": "int", "default": 100},
                                                          "storage_class": {"type": "str"},
                                                          "pod_image": {"type": "str", "default": "pause"}}},
            "step_timeout": {"type": "float", "default": 1800.0}}
    tasks = [{"name": "x", "block": [{"name": "plan", "storageperf.k8s.bench_plan": {
        "csi_lifecycle": {"volumes": "{{ r_volumes }}", "storage_class": "{{ r_class }}",
                          "pod_image": "{{ r_image | default(omit, true) }}"},
        "step_timeout": "{{ r_timeout }}"}}]}]
    options = {"r_volumes": {"default": 50}, "r_class": {"default": "ontap-nas"}, "r_image": {"default": ""},
               "r_timeout": {"default": 1800}}
    assert O.role_problems("r", tasks, options, {"bench_plan": spec}) == [
        "r: r_volumes defaults to 50, but bench_plan's option csi_lifecycle.volumes to 100: one default, in the "
        "module's argument spec (or leave the role's empty and pass it with default(omit, true))"]


def test_checker_finds_a_documented_default_that_is_not_the_specs():
    spec = {"csi_lifecycle": {"type": "dict", "options": {"volumes": {"type": "int", "default": 100}}},
            "step_timeout": {"type": "float", "default": 1800.0}}
    doc = {"csi_lifecycle": {"suboptions": {"volumes": {"default": 10}}}, "step_timeout": {"default": 1800}}
    assert O.doc_problems("m", spec, doc) == ["m: csi_lifecycle.volumes documents default 10, the argument spec has 100"]
