"""Fixtures shared by the twin's conformance tests; each module starts its own `twin` (module scope).

The `twin` here is the plain one (one node, time_scale 0.01); a module that needs another defines its own.
"""
from __future__ import annotations

import uuid

import pytest
from kubernetes import client

from tests.support.service_account import Bot
from tests.support.twin import Twin


@pytest.fixture(scope="module")
def twin(request, tmp_path_factory):
    """A one-node twin for the module, in a directory named after it."""
    name = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    with Twin(tmp_path_factory.mktemp(name) / "twin", nodes=1, time_scale=0.01) as t:
        yield t


@pytest.fixture(scope="module")
def api(twin):
    """A kubernetes Python client on the module's twin."""
    c = twin.api_client()
    yield c
    c.close()


@pytest.fixture
def ns(api) -> str:
    """A new namespace for one test (a module may define its own)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    return name


@pytest.fixture
def bot(twin, tmp_path) -> Bot:
    """A ServiceAccount of its own, in a new namespace, with no rights beyond an authenticated user's."""
    return Bot(twin, tmp_path)
