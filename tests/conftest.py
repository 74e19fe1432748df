from __future__ import annotations

import pytest

from tests.support.twin import Twin


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
