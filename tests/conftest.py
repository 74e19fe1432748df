from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.support.twin import Twin

# Property tests assert properties, not speed: Hypothesis's default 200 ms deadline per example and its too_slow
# health check measure the machine, and on CI's loaded 2 CPUs they failed tests whose property held.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked long (minutes each: the rollouts, the 100-volume benchmarks) go first. pytest-xdist's
    worksteal hands each worker a contiguous part of this list and balances by stealing from the queues' ends, so a
    long test in the middle started late and ran alone at the end (a CI run's last 5 minutes on one worker)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: the rest keep their order


@pytest.fixture
def twin(tmp_path):
    """A fresh twin with 3 nodes at time scale 0.01, stopped after the test."""
    with Twin(tmp_path / "twin", nodes=3, time_scale=0.01) as t:
        yield t


@pytest.fixture
def twin_factory(tmp_path):
    """Start twins with other settings: twin_factory(nodes=28, time_scale=0.001, extra=[...])."""
    started: list[Twin] = []

    def make(name: str = "twin", **kwargs) -> Twin:
        t = Twin(tmp_path / name, **kwargs).up()
        started.append(t)
        return t

    yield make
    for t in started:
        t.down()
