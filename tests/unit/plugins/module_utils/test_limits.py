"""Every size and count a user can give has a maximum (module_utils/common/limits.py), checked and documented.

Modules: main() is run with StoragePerfModule.__init__ replaced, which captures the argument spec and the limits
the module declares; every int and float option (and every `*size` option) must have one, and its documentation
(the module's or its doc fragment's) must say "At most <maximum>". Roles: every int, float, list-of-int and
`*size` variable of meta/argument_specs.yml is in ROLE_VARIABLES, documented likewise, and checked by the one
assert of roles/common/tasks/limits.yml, which each entry point imports first.
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

import ansible_collections.storageperf.k8s.plugins.modules as modules
from ansible_collections.storageperf.k8s.plugins.filter.limit_problems import limit_problems, limited_variables
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common import module as M

REPO = Path(__file__).resolve().parents[4]
ROLES = REPO / "roles"
MODULE_NAMES = sorted(m.name for m in pkgutil.iter_modules(modules.__path__))


class Captured(Exception):
    pass


def declared(name, monkeypatch):
    """(argument spec, limits, auth) of module `name`, as its main() builds them."""
    got = {}

    def fake(self, argument_spec, auth=(), limits=None, **kwargs):
        got.update(spec=argument_spec, limits=dict(limits or {}), auth=(auth,) if isinstance(auth, str) else tuple(auth))
        raise Captured

    monkeypatch.setattr(M.StoragePerfModule, "__init__", fake)
    module = importlib.import_module("%s.%s" % (modules.__name__, name))
    with pytest.raises(Captured):
        module.main()
    return got, module


def with_fragments(doc):
    """The module's documentation with the options of its storageperf.k8s doc fragments."""
    for name in doc.get("extends_documentation_fragment") or ():
        if name.count(".") != 2:  # storageperf.k8s.attributes.check_only: attributes, not options
            continue
        fragment = importlib.import_module("ansible_collections.storageperf.k8s.plugins.doc_fragments.%s"
                                           % name.rpartition(".")[2]).ModuleDocFragment
        for option, spec in (yaml.safe_load(fragment.DOCUMENTATION).get("options") or {}).items():
            doc.setdefault("options", {}).setdefault(option, spec)
    return doc


def bounded(name, option):
    return option.get("type") in ("int", "float") or option.get("elements") in ("int", "float") or name.endswith("size")


def documented(description, limit):
    text = " ".join(description if isinstance(description, list) else [description or ""])
    return ("At most %s" % limit.shown()) in text


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_every_number_option_of_a_module_has_a_documented_maximum(name, monkeypatch):
    got, module = declared(name, monkeypatch)
    doc = with_fragments(yaml.safe_load(module.DOCUMENTATION))
    missing, undocumented = [], []
    for opt, spec in got["spec"].items():
        wanted = [(opt, spec)] + [("%s.%s" % (opt, s), sub) for s, sub in (spec.get("options") or {}).items()]
        for key, option in wanted:
            if not bounded(key, option):
                continue
            if key not in got["limits"]:
                missing.append(key)
                continue
            head, _, sub = key.partition(".")
            d = doc["options"][head]
            if sub:
                d = d["suboptions"][sub]
            if not documented(d.get("description"), got["limits"][key]):
                undocumented.append(key)
    assert missing == [], "no maximum in limits={...} of %s" % name
    assert undocumented == [], "the documentation does not say 'At most <maximum>'"


def role_specs():
    for path in sorted(ROLES.glob("*/meta/argument_specs.yml")):
        for entry, spec in yaml.safe_load(path.read_text())["argument_specs"].items():
            for var, option in (spec.get("options") or {}).items():
                yield path.parts[-3], entry, var, option


@pytest.mark.parametrize("role,entry,var,option", [s for s in role_specs() if bounded(s[2], s[3])],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_every_number_variable_of_a_role_has_a_documented_maximum(role, entry, var, option):
    assert var in L.ROLE_VARIABLES
    assert documented(option.get("description"), L.ROLE_VARIABLES[var])


IMPORT_LIMITS = {"name": "storageperf.k8s.common", "tasks_from": "limits"}


# every role but common, whose task file is the check
CHECKED_ROLES = sorted(p.parts[-3] for p in ROLES.glob("*/meta/argument_specs.yml") if p.parts[-3] != "common")


@pytest.mark.parametrize("role", CHECKED_ROLES)
def test_each_role_checks_all_its_maxima_first(role):
    names = limited_variables(role)
    specs = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    # the names the filter gives the shared assert are this role's variables (a wrong prefix or a stale entry in
    # limits.py would check nothing)
    declared = {option for spec in specs.values() for option in (spec.get("options") or {})}
    assert set(names) <= declared, sorted(set(names) - declared)
    # the one assert (roles/common/tasks/limits.yml) takes the names from limits.py: no role keeps a list of its own
    assert not (ROLES / role / "tasks" / "limits.yml").exists()
    # every entry point imports it before its first other task (trident_concurrency's main runs it in its preflight)
    for entry in specs:
        first = yaml.safe_load((ROLES / role / "tasks" / ("%s.yml" % entry)).read_text())[0]
        if names:
            assert first.get("ansible.builtin.import_role") == IMPORT_LIMITS, entry
            assert first["vars"] == {"common_role": role}, entry
        else:
            assert "ansible.builtin.import_role" not in first, entry


def test_the_shared_limits_task_checks_what_limits_py_lists():
    task = yaml.safe_load((ROLES / "common" / "tasks" / "limits.yml").read_text())[0]
    assert "storageperf.k8s.limited_variables" in task["vars"]["common_limited"]
    assert "storageperf.k8s.limit_problems" in task["vars"]["common_over_limits"]
    assert limited_variables("no_such_role") == []
    with pytest.raises(AnsibleFilterError, match="role name"):
        limited_variables(None)


@pytest.mark.parametrize("value,expected", [
    ("1Gi", 1 << 30), ("100Ti", 100 << 40), ("500M", 500e6), ("1e3", 1000.0), (4096, 4096), ("2.5Ki", 2560.0),
    ("64TiB", 64 << 40), ("50%", None), ("abc", None), (True, None),
])
def test_parse_bytes(value, expected):
    assert L.parse_bytes(value) == expected


def test_fio_sizes_count_in_1024s():
    assert L.parse_bytes("10G", fio=True) == 10 << 30
    assert L.FIO_SIZE.problem("bench_fio_size", "64T") is None  # 64 TiB in fio's units
    assert "above its maximum 64Ti" in L.FIO_SIZE.problem("bench_fio_size", "65T")


def test_a_value_at_the_maximum_passes_and_one_above_names_the_field_maximum_and_fix():
    assert L.VOLUMES.problem("volumes", 5000) is None
    msg = L.VOLUMES.problem("volumes", "100000000")
    assert msg.startswith("volumes=100000000 is above its maximum 5000 (") and msg.endswith("give at most 5000")
    assert L.ONTAP_VOLUME_SIZE.problem("size", "100Ti") is None
    assert "size=999Pi is above its maximum 100Ti" in L.ONTAP_VOLUME_SIZE.problem("size", "999Pi")


def test_values_that_are_not_numbers_are_left_to_the_type_checks():
    assert L.VOLUMES.problem("volumes", "eight") is None and L.VOLUMES.problem("volumes", None) is None


def test_lists_are_checked_by_length_and_each_entry():
    assert L.SWEEP.problem("sweep", [10, 100, 1000]) is None
    assert L.SWEEP.problem("sweep", "10,100") is None
    assert "sweep has 11 entries, more than its maximum 10" in L.SWEEP.problem("sweep", list(range(1, 12)))
    assert "sweep entry=6000 is above its maximum 5000" in L.SWEEP.problem("sweep", "10, 6000")


def test_suboptions_name_the_list_entry():
    found = L.param_problems({"sidecars": [{"name": "a", "worker_threads": 25}, {"name": "b", "worker_threads": 9999}]},
                             {"sidecars.worker_threads": L.WORKER_THREADS})
    assert found == [L.WORKER_THREADS.problem("sidecars[1].worker_threads", 9999)]


def test_the_filter_names_role_variables_and_refuses_an_undeclared_one():
    assert limit_problems({"bench_csi_lifecycle_volumes": 100}) == []
    assert limit_problems({"bench_csi_lifecycle_volumes": 100000000})[0].startswith(
        "bench_csi_lifecycle_volumes=100000000 is above its maximum 5000")
    with pytest.raises(Exception, match="no maximum declared for bench_csi_lifecycle_typo"):
        limit_problems({"bench_csi_lifecycle_typo": 1})


def test_docs_list_every_maximum():
    text = (REPO / "docs" / "limits.md").read_text()
    for name, limit in sorted(vars(L).items()):
        if isinstance(limit, L.Limit):
            assert "| %s |" % limit.shown() in text or "| %s entries" % limit.shown() in text, name
