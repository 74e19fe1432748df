"""How ontap_volume_info maps Trident's ONTAP names to PVs and decides what leaked (module_utils/trident/ontap.py)."""
from __future__ import annotations

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.trident import ontap as O

PV = "pvc-5c3e8a5d-0b1e-4c55-9d0f-6f2c1b4a7e21"
INTERNAL = "trident_pvc_5c3e8a5d_0b1e_4c55_9d0f_6f2c1b4a7e21"


@pytest.mark.parametrize("name, kind", [
    (INTERNAL, "volume"), ("trident_qtree_pool_trident_ABCDEFGHIJ", "qtree_pool"),
    ("trident_lun_pool_trident_ABCDEFGHIJ", "lun_pool"), ("vol0", None), ("svm0_root", None),
])
def test_kind_of(name, kind):
    assert O.kind_of(name, "trident_") == kind


def test_internal_name_from_pv_name_or_itself():
    assert O.internal_name(PV, "trident_") == INTERNAL
    assert O.internal_name(INTERNAL, "trident_") == INTERNAL
    assert O.internal_name(PV, "k8s_") == "k8s_pvc_5c3e8a5d_0b1e_4c55_9d0f_6f2c1b4a7e21"


def inventory():
    volumes = [{"name": INTERNAL}, {"name": "trident_pvc_other"}, {"name": "trident_qtree_pool_trident_AAAAAAAAAA"},
               {"name": "trident_lun_pool_trident_BBBBBBBBBB"}, {"name": "trident_qtree_pool_trident_CCCCCCCCCC"}]
    for v in volumes:
        v["kind"] = O.kind_of(v["name"], "trident_")
    qtrees = [{"name": "trident_pvc_q1", "volume": "trident_qtree_pool_trident_AAAAAAAAAA", "svm": "svm0"}]
    luns = [{"name": "trident_pvc_l1", "volume": "trident_lun_pool_trident_BBBBBBBBBB", "svm": "svm0"}]
    return volumes, qtrees, luns


def test_leak_report_counts_volumes_qtrees_and_luns_not_pools():
    leaked, missing, empty = O.leak_report(*inventory(), [PV, "trident_pvc_q1", "pvc-gone"], "trident_")
    assert sorted((x["name"], x["kind"]) for x in leaked) == [("trident_pvc_l1", "lun"), ("trident_pvc_other", "volume")]
    assert missing == ["trident_pvc_gone"]
    assert empty == ["trident_qtree_pool_trident_CCCCCCCCCC"]  # an emptied pool is reported, not leaked


def test_without_expected_nothing_is_judged():
    leaked, missing, _ = O.leak_report(*inventory(), None, "trident_")
    assert leaked == [] and missing == []


def test_after_cleanup_everything_is_a_leak():
    leaked, _, _ = O.leak_report(*inventory(), [], "trident_")
    assert len(leaked) == 4


@pytest.mark.parametrize("text, want", [
    ("cluster1-mgmt.example.com", ("cluster1-mgmt.example.com", None)), ("10.0.0.5:8443", ("10.0.0.5", 8443)),
    ("[fd00::5]:443", ("fd00::5", 443)), ("[fd00::5]", ("fd00::5", None)), ("fd00::5", ("fd00::5", None)),
])
def test_split_host_port(text, want):
    assert O.split_host_port(text) == want
