"""metadata.generateName: the API server picks the name and retries its own collisions (RetryGenerateName, GA in
1.32: up to 8 draws); only when every draw is taken does the client get 409 AlreadyExists, with the message and
details.retryAfterSeconds of errors.NewGenerateNameConflict. A name the client chose gets the plain 409."""
from __future__ import annotations

import itertools
import random

import pytest

from twin.apimachinery import errors, names
from twin.store import Store

NS = "kube-system"
POD = {"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}


@pytest.fixture
def store():
    return Store()


def _create(store: Store, prefix: str = "csi-plugin-", **md) -> dict:
    return store.create(store.rt("", "v1", "pods"), NS, dict(POD, metadata={"generateName": prefix, **md}))


def test_many_generated_names_never_collide(store):
    # 5000 is the largest ACK twin: one csi-plugin pod per node, with the real 27^5 name space
    pods = [_create(store)["metadata"]["name"] for _ in range(5000)]
    assert len(set(pods)) == 5000
    assert all(p.startswith("csi-plugin-") and len(p) == len("csi-plugin-") + names.RANDOM_LENGTH for p in pods)
    assert all(c in names.ALPHABET for p in pods for c in p[len("csi-plugin-"):])


def test_the_server_retries_a_drawn_name_that_is_taken(store):
    # a 2-character suffix (729 names) over 300 pods: many late draws hit a taken name and must be drawn again
    rng = random.Random(18)
    draws = []

    def small(prefix: str) -> str:
        draws.append(prefix + "".join(rng.choice(names.ALPHABET) for _ in range(2)))
        return draws[-1]

    store.generate_name = small
    pods = [_create(store)["metadata"]["name"] for _ in range(300)]
    assert len(set(pods)) == 300
    assert len(draws) > 300  # there were collisions, and none reached the client


def test_exhausted_generate_name_is_409_already_exists_with_the_real_status(store):
    taken = _create(store, "fixed-")["metadata"]["name"]
    calls = itertools.count()

    def fixed(prefix: str) -> str:
        next(calls)
        return taken

    store.generate_name = fixed
    with pytest.raises(errors.ApiError) as e:
        _create(store, "fixed-")
    assert next(calls) == names.MAX_ATTEMPTS  # maxNameGenerationCreateAttempts draws, then it gives up
    assert e.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'pods "{taken}" already exists, the server was not able to generate a unique name for the object',
        "reason": "AlreadyExists", "details": {"name": taken, "kind": "pods", "retryAfterSeconds": 1}, "code": 409}


def test_a_name_the_client_chose_is_not_retried(store):
    pod = _create(store, "ignored-", name="web-0")
    assert pod["metadata"]["name"] == "web-0" and pod["metadata"]["generateName"] == "ignored-"
    with pytest.raises(errors.ApiError) as e:
        _create(store, "ignored-", name="web-0")
    assert (e.value.code, e.value.reason, e.value.message) == (409, "AlreadyExists", 'pods "web-0" already exists')
    assert "retryAfterSeconds" not in e.value.details


def test_a_long_prefix_is_cut_so_the_name_fits_a_dns_label(store):
    name = _create(store, "x" * 70 + "-")["metadata"]["name"]
    assert len(name) == 63 and name.startswith("x" * names.MAX_GENERATED_NAME_LENGTH)
