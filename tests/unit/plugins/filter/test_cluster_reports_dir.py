"""cluster_reports_dir: one absolute directory per cluster, relative to where ansible-playbook runs."""
from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.cluster_reports_dir import FilterModule

cluster_reports_dir = FilterModule().filters()["cluster_reports_dir"]


def test_relative_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cluster_reports_dir("reports", "ack-prod-hz") == str(tmp_path / "reports" / "ack-prod-hz")


def test_absolute_home_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("REPORTS_ROOT", str(tmp_path / "r"))
    assert cluster_reports_dir("~/out", "c1") == str(tmp_path / "out" / "c1")
    assert cluster_reports_dir("$REPORTS_ROOT", "c1") == str(tmp_path / "r" / "c1")
    assert cluster_reports_dir("/srv/reports/", "c1") == "/srv/reports/c1"


@pytest.mark.parametrize("host,expected", [("prod/eu:1", "prod_eu_1"), ("a b", "a_b"), ("..", "cluster"),
                                           ("twin-2", "twin-2")])
def test_host_names_become_one_safe_directory(host, expected):
    out = cluster_reports_dir("/r", host)
    assert out == os.path.join("/r", expected) and os.path.dirname(out) == "/r"


@pytest.mark.parametrize("base,host,field", [("", "c1", "reports directory"), (None, "c1", "reports directory"),
                                             ("/r", "", "cluster name"), ("/r", 3, "cluster name")])
def test_bad_input_names_the_field(base, host, field):
    with pytest.raises(AnsibleFilterError, match=field):
        cluster_reports_dir(base, host)
