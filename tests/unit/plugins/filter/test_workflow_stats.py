"""workflow_stats: a per-cluster set_stats key carries the earlier workflow jobs' clusters forward, and the hosts
of one job, merged as set_stats aggregates them, never bring back a stale entry of each other."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible.utils.vars import merge_hash

from ansible_collections.storageperf.k8s.plugins.filter.workflow_stats import FilterModule

workflow_stats = FilterModule().filters()["workflow_stats"]


def aggregate(received, news, first=False):
    """What set_stats(aggregate=true) keeps after every host of the play published (ansible's AggregateStats)."""
    out: dict = {}
    for host, value in news.items():
        out = merge_hash(out, workflow_stats(received, host, value, list(news), first=first))
    return out


def test_a_second_job_replaces_its_clusters_and_keeps_the_others():
    received = {"a": "run1-a", "b": "run1-b", "c": "run1-c"}  # job 1 ran a, b, c; job 2 runs a and b
    assert aggregate(received, {"a": "run2-a", "b": "run2-b"}) == {"a": "run2-a", "b": "run2-b", "c": "run1-c"}


def test_first_keeps_each_clusters_baseline_and_adds_new_clusters():
    received = {"a": "run1-a"}
    assert aggregate(received, {"a": "run2-a", "b": "run2-b"}, first=True) == {"a": "run1-a", "b": "run2-b"}


@pytest.mark.parametrize("received", [None, "", {}])
def test_nothing_received(received):
    assert workflow_stats(received, "a", 1, ["a"]) == {"a": 1}


def test_a_handed_over_value_that_is_no_mapping_is_named():
    with pytest.raises(AnsibleFilterError, match="must be a mapping by cluster, got list"):
        workflow_stats(["a"], "a", 1, ["a"])
