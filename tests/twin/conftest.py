"""Fixtures shared by the twin's conformance tests; each module starts its own `twin` (module scope)."""
from __future__ import annotations

import uuid

import pytest
from kubernetes import client


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
