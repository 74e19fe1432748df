"""plugin_utils/change_specs.py: a rollout's change_parameters checked by the spec of what applies each one."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.plugin_utils import change_specs as C


def test_types_are_checked_and_converted_by_the_roles_own_spec():
    params, problems = C.check("trident_concurrency", {"k8s_api_qps": "lots", "allow_tech_preview": "maybe"})
    assert len(problems) == 2
    assert problems[0].startswith("change_parameters.k8s_api_qps is of type str")
    assert problems[1].startswith("change_parameters.allow_tech_preview is of type str")
    assert C.check("trident_concurrency", {"k8s_api_qps": "75", "allow_tech_preview": "yes"}) == (
        {"k8s_api_qps": 75, "allow_tech_preview": True}, [])


def test_maxima_and_combinations_are_the_collections_own():
    _, over = C.check("trident_concurrency", {"k8s_api_qps": 100000})
    assert over == [p for p in over if p.startswith("change_parameters.k8s_api_qps=100000 is above its maximum 5000")]
    assert over
    _, burst = C.check("snapshot_controller", {"kube_api_qps": 200})
    assert len(burst) == 1 and "kube_api_burst=150 must be >= kube_api_qps=200" in burst[0]


@pytest.mark.parametrize("change,given,words", [
    ("csi_sidecars", {"sidecars": [{"name": "csi-provisioner", "worker_threads": "ten"}]}, "worker_threads is of type str"),
    ("parallel_attach", {"detach": "nope"}, "change_parameters.detach is of type str"),
    ("trident_concurrency", {"volumes": 5}, "change_parameters has volumes, which trident_concurrency does not take"),
])
def test_every_change_is_checked_by_what_applies_it(change, given, words):
    _, problems = C.check(change, given)
    assert any(words in p for p in problems), problems


def test_every_parameter_of_every_change_names_an_option_that_exists():
    for change, row in C.CH.CHANGES.items():
        for name, (kind, owner, option) in row["spec"].items():
            assert name in row["parameters"], (change, name)
            assert C.option_spec(kind, owner, option)["type"], (change, name)
