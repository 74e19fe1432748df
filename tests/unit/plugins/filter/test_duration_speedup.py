"""The duration, speedup and required_speedup filters, called through FilterModule like Jinja does."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.duration import FilterModule as DurationFilters
from ansible_collections.storageperf.k8s.plugins.filter.speedup import FilterModule as SpeedupFilters

duration = DurationFilters().filters()["duration"]
speedup = SpeedupFilters().filters()["speedup"]
required_speedup = SpeedupFilters().filters()["required_speedup"]


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


def test_required_speedup_is_the_gates_own():
    # the rollout role shows it before the probes; the gate's verdict reports the figure it judged with
    from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import gate
    for expected, fraction in ((8.1, 0.25), (5.0, 0.25), (3.0, 0.5), (1.0, 1.0)):
        judged = gate.gain([], [], expected, fraction, 0.95, 10.0, 1)["required_speedup"]
        assert required_speedup(expected, fraction) == judged
    assert required_speedup("8.1", "0.25") == 2.775  # role variables arrive as text
    assert required_speedup(None, 0.25) is None
    with pytest.raises(AnsibleFilterError, match="min_gain_fraction"):
        required_speedup(8.1, "some")
