"""The duration and speedup filters, called through FilterModule like Jinja does."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.duration import FilterModule as DurationFilters
from ansible_collections.storageperf.k8s.plugins.filter.speedup import FilterModule as SpeedupFilters

duration = DurationFilters().filters()["duration"]
speedup = SpeedupFilters().filters()["speedup"]


@pytest.mark.parametrize("value,text", [(417, "6m 57s"), ("18052", "5h 00m 52s"), (6060, "1h 41m"), (None, "—")])
def test_duration(value, text):
    assert duration(value) == text


def test_duration_rejects_text_naming_the_value():
    with pytest.raises(AnsibleFilterError, match="'soon'"):
        duration("soon")


def test_speedup():
    assert speedup(417, 41) == pytest.approx(10.171, abs=0.001)
    assert speedup(417, 41, text=True) == "10.2×"
    assert speedup(1715, 220, text=True, approx=True) == "~7.8×"
    assert speedup(1, 0) is None
    with pytest.raises(AnsibleFilterError, match="candidate"):
        speedup(1, "x")
