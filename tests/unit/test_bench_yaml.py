"""bench_plan's benchmark suboptions, and the defaults of the bench roles' and playbooks' variables that feed them, are
generated from the benchmark modules (tests/support/bench_yaml.py): each default, maximum and help text is written
once, in the benchmark's OPTIONS, LIMITS and DOCS."""
from __future__ import annotations

import ast

import pytest
import yaml

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from tests.support import bench_yaml as G


def suboptions(source: str, benchmark: str) -> dict:
    [doc] = [node.value.value for node in ast.parse(source).body
             if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DOCUMENTATION"]
    return yaml.safe_load(doc)["options"][benchmark]["suboptions"]


def test_the_checked_in_docs_are_what_the_benchmark_modules_make():
    assert G.stale() == [], "bench_plan.py's options are stale: .venv/bin/python -m tests.support.bench_yaml --write"


def test_a_default_changed_in_options_is_the_documented_one(monkeypatch):
    monkeypatch.setitem(csi_lifecycle.OPTIONS, "volumes", dict(csi_lifecycle.OPTIONS["volumes"], default=7))
    made = G.render_bench_plan(G.BENCH_PLAN.read_text())
    assert made != G.BENCH_PLAN.read_text()
    assert suboptions(made, "csi_lifecycle")["volumes"]["default"] == 7


def test_a_default_changed_in_options_is_the_roles_and_the_playbooks(monkeypatch):
    monkeypatch.setitem(csi_lifecycle.OPTIONS, "volumes", dict(csi_lifecycle.OPTIONS["volumes"], default=7))
    made = G.made()
    role = G.ROLES / "bench_csi_lifecycle"
    assert yaml.safe_load(made[role / "defaults" / "main.yml"])["bench_csi_lifecycle_volumes"] == 7
    specs = yaml.safe_load(made[role / "meta" / "argument_specs.yml"])["argument_specs"]["main"]["options"]
    assert specs["bench_csi_lifecycle_volumes"]["default"] == 7
    playbook = made[G.PLAYBOOKS / "bench_csi_lifecycle.yml"]
    assert 'bench_csi_lifecycle_volumes: "{{ volumes | default(7) }}"' in playbook
    assert "  volumes (int, 7)  " in playbook and "volumes (int, 100)" not in playbook
    doc = G.REPO / "docs" / "bench-csi-lifecycle.md"
    assert "| `volumes` | `bench_csi_lifecycle_volumes` | 7 | the seed uses 100 and 1000 |" in made[doc]
    # nothing else moved
    changed = {path for path, text in made.items() if path.read_text() != text}
    assert changed == {G.BENCH_PLAN, role / "defaults" / "main.yml", role / "meta" / "argument_specs.yml",
                       G.PLAYBOOKS / "bench_csi_lifecycle.yml", doc}


def test_a_docs_table_keeps_its_cells_style_and_remarks():
    table = ("| `size` | `bench_x_size` | `1Gi` | of each |\n| `n` | `bench_x_n` | 4 (the seed's) | |\n"
             "| `l` | `bench_x_l` | all 8 | a list is told in words |\n")
    assert G.render_doc(table, {"bench_x_size": "2Gi", "bench_x_n": 5, "bench_x_l": ["a"]}) == (
        "| `size` | `bench_x_size` | `2Gi` | of each |\n| `n` | `bench_x_n` | 5 (the seed's) | |\n"
        "| `l` | `bench_x_l` | all 8 | a list is told in words |\n")


def test_a_list_default_longer_than_a_line_goes_on_under_its_first_item():
    text = G.render_role_defaults("x: [a]\ny: 1\n", {"x": ["item_%02d" % i for i in range(14)]})
    assert yaml.safe_load(text) == {"x": ["item_%02d" % i for i in range(14)], "y": 1}
    assert all(len(line) <= G.WIDTH for line in text.splitlines()) and text.count("\n") == 3


def test_a_role_variable_passed_with_omit_leaves_the_default_to_the_module():
    defaults = G.role_defaults("bench_csi_lifecycle")
    assert "bench_csi_lifecycle_pod_image" not in defaults  # "{{ ... | default(omit, true) }}"
    assert "bench_csi_lifecycle_storage_class" not in defaults  # the option has no default: the role's own
    assert defaults["bench_csi_lifecycle_volumes"] == 100


def test_a_maximum_is_documented_from_its_limit():
    volumes = suboptions(G.BENCH_PLAN.read_text(), "csi_lifecycle")["volumes"]
    assert volumes["description"][-1] == "At most %s - %s." % (L.VOLUMES.maximum, L.VOLUMES.why)
    assert G.limit_text(L.SWEEP).startswith("At most 10 entries - ") and "; each at most 5000 - " in G.limit_text(L.SWEEP)


def test_an_option_without_docs_is_refused(monkeypatch):
    monkeypatch.setitem(csi_lifecycle.OPTIONS, "undocumented", dict(type="int"))
    with pytest.raises(ValueError, match="csi_lifecycle: OPTIONS and DOCS name different options: undocumented"):
        G.benchmark_options()


def test_a_file_without_its_markers_is_refused():
    with pytest.raises(ValueError, match="must each stand once"):
        G.render_bench_plan("DOCUMENTATION = ''")
