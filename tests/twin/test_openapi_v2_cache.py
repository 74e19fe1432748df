"""/openapi/v2 is built off the event loop, once per registry generation: requests that come during a build share
it, a CRD change (a new generation) builds it again, and a failed build is tried again by the next request."""
from __future__ import annotations

import asyncio
import threading

import pytest

from twin.apiserver.openapi import v2 as openapi_v2
from twin.registry.resources import Registry

GADGETS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.cache.example.com"},
           "spec": {"group": "cache.example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


class Builds:
    """Each call of document() waits until the test lets it go, which the test does from the event loop: if the
    build ran on the loop, the loop could not get there and the build would time out."""

    def __init__(self, monkeypatch):
        self.calls = 0
        self.started = threading.Semaphore(0)
        self.go = threading.Semaphore(0)
        real = openapi_v2.document

        def document(*args):
            self.calls += 1
            self.started.release()
            if not self.go.acquire(timeout=60):
                raise TimeoutError("the build blocked the event loop")
            return real(*args)
        monkeypatch.setattr(openapi_v2, "document", document)

    async def release(self) -> None:
        """Let the next build go once it has started."""
        assert await asyncio.to_thread(self.started.acquire, True, 60)
        self.go.release()


@pytest.fixture
def builds(monkeypatch) -> Builds:
    return Builds(monkeypatch)


def test_concurrent_requests_share_one_build_made_off_the_loop(builds):
    async def scenario():
        reg = Registry()
        first = await asyncio.gather(*(openapi_v2.served(reg) for _ in range(5)), builds.release())
        again = await openapi_v2.served(reg)
        return first[:5], again
    docs, again = asyncio.run(scenario())
    assert builds.calls == 1
    assert all(d is docs[0] for d in docs) and again is docs[0]
    assert docs[0].json.startswith(b'{"swagger":"2.0"') and docs[0].etag


def test_a_crd_change_builds_it_again_and_gzip_is_made_once(builds):
    async def scenario():
        reg = Registry()
        before = (await asyncio.gather(openapi_v2.served(reg), builds.release()))[0]
        gz = await asyncio.gather(before.body(openapi_v2.PROTOBUF, True), before.body(openapi_v2.PROTOBUF, True))
        reg.register_crd(GADGETS)
        after = (await asyncio.gather(openapi_v2.served(reg), builds.release()))[0]
        return before, gz, after
    before, gz, after = asyncio.run(scenario())
    assert builds.calls == 2
    assert after.generation > before.generation and after.etag != before.etag
    assert b"com.example.cache.v1.Gadget" in after.json and b"Gadget" not in before.json
    assert gz[0] is gz[1] and gz[0][:2] == b"\x1f\x8b"


def test_a_failed_build_is_tried_again(monkeypatch):
    calls = []

    def document(*args):
        calls.append(args)
        raise RuntimeError("broken")
    monkeypatch.setattr(openapi_v2, "document", document)

    async def scenario():
        reg = Registry()
        for _ in range(2):
            with pytest.raises(RuntimeError):
                await openapi_v2.served(reg)
    asyncio.run(scenario())
    assert len(calls) == 2
