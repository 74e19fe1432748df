"""Conformance: watch streams, raw and through the Python client.

Framing (chunked application/json, one {"type","object"} per line, no blank keepalives), synthetic
ADDED for current objects without a resourceVersion, replay from a resourceVersion, selectors
(objects leaving a label selector arrive as DELETED), BOOKMARK events, timeoutSeconds,
sendInitialEvents, fan-out to many watchers in one order, and 410 Expired once the event log no
longer reaches back (this module's twin keeps 200 events per resource: TWIN_EVENT_LOG_SIZE).
"""
from __future__ import annotations

import http.client
import json
import ssl
import threading
import uuid
from urllib.parse import urlparse

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

from tests.support.twin import Twin

LOG_SIZE = 200


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TWIN_EVENT_LOG_SIZE", str(LOG_SIZE))
        mp.setenv("TWIN_BOOKMARK_SECONDS", "1")
        t = Twin(tmp_path_factory.mktemp("watch") / "twin", nodes=1, time_scale=0.01).up()
    try:
        yield t
    finally:
        t.down()


@pytest.fixture
def ns(api):
    name = f"w-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    return name


class Stream:
    """A raw watch request; lines() yields each received line as bytes."""

    def __init__(self, t: Twin, path: str):
        u = urlparse(t.server)
        ctx = ssl.create_default_context(cafile=str(t.dir / "pki" / "ca.crt"))
        self.conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)
        self.conn.request("GET", path, headers={"Authorization": f"Bearer {t.token}", "Accept": "application/json"})
        self.resp = self.conn.getresponse()

    def lines(self):
        while True:
            line = self.resp.readline()
            if not line:
                return
            yield line

    def events(self, n: int | None = None) -> list[dict]:
        out = []
        for line in self.lines():
            assert line.endswith(b"\n") and line.strip(), f"bad frame {line!r}"
            out.append(json.loads(line))
            if n is not None and len(out) >= n:
                break
        return out

    def close(self) -> None:
        self.conn.close()


def cm(name: str, labels: dict | None = None, **data) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": data}


def test_raw_framing_and_synthetic_added_then_timeout(twin, api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, cm("a"))
    core.create_namespaced_config_map(ns, cm("b"))
    s = Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch=true&timeoutSeconds=1")
    assert s.resp.status == 200
    assert s.resp.getheader("Content-Type") == "application/json"
    assert s.resp.getheader("Transfer-Encoding") == "chunked"
    events = s.events()  # until the server ends the stream at timeoutSeconds
    s.close()
    # kube-root-ca.crt: every namespace has it from the start (controllers/root_ca_publisher.py)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("ADDED", "kube-root-ca.crt")]
    assert all(e["object"]["metadata"]["resourceVersion"] and e["object"]["kind"] == "ConfigMap" for e in events)


@pytest.mark.parametrize(("value", "watches"), [("True", True), ("1", True), ("", True), ("False", False), ("0", False)])
def test_watch_parameter_is_decoded_as_the_apiserver_does(twin, api, ns, value, watches):
    """Only "0" and "false" in any case mean no watch: the Python client before 37 sends watch=True."""
    client.CoreV1Api(api).create_namespaced_config_map(ns, cm("a"))
    s = Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch={value}&timeoutSeconds=1")
    body = s.events() if watches else [json.loads(s.resp.read())]
    s.close()
    if watches:
        seen = [(e["type"], e["object"]["metadata"]["name"]) for e in body]
        assert seen == [("ADDED", "a"), ("ADDED", "kube-root-ca.crt")]
    else:
        assert body[0]["kind"] == "ConfigMapList" and [i["metadata"]["name"] for i in body[0]["items"]] == [
            "a", "kube-root-ca.crt"]  # kube-root-ca.crt: in every namespace (controllers/root_ca_publisher.py)


def test_python_watch_from_list_resource_version_sees_changes_in_order(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, cm("before"))
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, cm("x", a="1"))
    core.patch_namespaced_config_map("x", ns, {"data": {"a": "2"}})
    core.delete_namespaced_config_map("x", ns)
    got = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=30):
        got.append((ev["type"], ev["object"].metadata.name, (ev["object"].data or {}).get("a")))
        assert isinstance(ev["object"], client.V1ConfigMap)
        if len(got) == 3:
            w.stop()
    assert got == [("ADDED", "x", "1"), ("MODIFIED", "x", "2"), ("DELETED", "x", "2")]


def test_replay_from_an_older_resource_version_and_single_object_watch(twin, api, ns):
    core = client.CoreV1Api(api)
    first = core.create_namespaced_config_map(ns, cm("r", a="0"))
    for i in range(1, 4):
        core.patch_namespaced_config_map("r", ns, {"data": {"a": str(i)}})
    core.create_namespaced_config_map(ns, cm("other"))
    rv = first.metadata.resource_version
    s = Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
                     f"&fieldSelector=metadata.name%3Dr&timeoutSeconds=1")
    events = s.events()
    s.close()
    assert [(e["type"], e["object"]["data"]["a"]) for e in events] == [("MODIFIED", "1"), ("MODIFIED", "2"), ("MODIFIED", "3")]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)
    # the deprecated /watch/ path for one object
    s = Stream(twin, f"/api/v1/watch/namespaces/{ns}/configmaps/r?timeoutSeconds=1")
    events = s.events()
    s.close()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "r")]


def test_objects_leaving_a_label_selector_arrive_as_deleted(api, ns):
    core = client.CoreV1Api(api)
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, cm("l", {"team": "a"}))
    core.patch_namespaced_config_map("l", ns, {"metadata": {"labels": {"team": "b"}}})
    core.patch_namespaced_config_map("l", ns, {"metadata": {"labels": {"team": "a"}}})
    got = [(ev["type"], ev["object"].metadata.labels["team"]) for ev in watch.Watch().stream(
        core.list_namespaced_config_map, ns, label_selector="team=a", resource_version=rv, timeout_seconds=1)]
    assert got == [("ADDED", "a"), ("DELETED", "b"), ("ADDED", "a")]


def test_bookmarks_carry_the_current_resource_version(api, ns):
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, cm("bm"))
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    types, bookmark_rvs = [], []
    w = watch.Watch()
    # until the first bookmark (every second here), however late a loaded machine's timers fire: the stream's
    # timeout is a bound for a server that never sends one, not the window the bookmark must fall into
    for ev in w.stream(core.list_namespaced_config_map, ns, resource_version=rv, allow_watch_bookmarks=True,
                       timeout_seconds=60):
        types.append(ev["type"])
        if ev["type"] == "BOOKMARK":
            bookmark_rvs.append(int(ev["raw_object"]["metadata"]["resourceVersion"]))
            w.stop()
    assert "BOOKMARK" in types
    assert min(bookmark_rvs) >= int(rv)
    assert w.resource_version == str(bookmark_rvs[-1])


def test_send_initial_events_ends_with_the_initial_events_bookmark(twin, api, ns):
    core = client.CoreV1Api(api)
    for n in ("i1", "i2"):
        core.create_namespaced_config_map(ns, cm(n))
    bad = Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch=true&sendInitialEvents=true")
    assert bad.resp.status == 422
    bad.close()
    s = Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch=true&sendInitialEvents=true"
                     f"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5")
    events = s.events(4)
    s.close()
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ADDED", "BOOKMARK"]  # i1, i2, kube-root-ca.crt
    assert events[3]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_timeout_seconds_ends_an_idle_watch(api, ns):
    core = client.CoreV1Api(api)
    events = list(watch.Watch().stream(core.list_namespaced_secret, ns, timeout_seconds=1))
    assert events == []  # the stream ended by itself, without events and without an error


def test_too_old_resource_version_is_410_expired(twin, api, ns):
    coord = client.CoordinationV1Api(api)
    lease = coord.create_namespaced_lease(ns, {"metadata": {"name": "churn"}, "spec": {"holderIdentity": "a"}})
    old_rv = lease.metadata.resource_version
    for i in range(LOG_SIZE + 20):
        coord.patch_namespaced_lease("churn", ns, {"spec": {"leaseDurationSeconds": i + 1}})
    s = Stream(twin, f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases?watch=true&resourceVersion={old_rv}")
    events = s.events()
    s.close()
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status" and status["code"] == 410 and status["reason"] == "Expired"
    assert "too old resource version" in status["message"]
    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(coord.list_namespaced_lease, ns, resource_version=old_rv, timeout_seconds=2):
            pass
    assert e.value.status == 410
    # a recent resourceVersion still replays
    recent = coord.read_namespaced_lease("churn", ns).metadata.resource_version
    coord.patch_namespaced_lease("churn", ns, {"spec": {"holderIdentity": "b"}})
    got = [ev["object"].spec.holder_identity for ev in watch.Watch().stream(
        coord.list_namespaced_lease, ns, resource_version=recent, timeout_seconds=1)]
    assert got == ["b"]


def test_many_watchers_see_the_same_events_in_the_same_order(twin, api, ns):
    core = client.CoreV1Api(api)
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    n_watchers, n_objects = 50, 100
    streams = [Stream(twin, f"/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}")
               for _ in range(n_watchers)]
    results: list[list[str]] = [[] for _ in streams]

    def read(i: int) -> None:
        results[i] = [e["object"]["metadata"]["name"] for e in streams[i].events(n_objects)]

    threads = [threading.Thread(target=read, args=(i,)) for i in range(n_watchers)]
    for t in threads:
        t.start()
    for i in range(n_objects):
        core.create_namespaced_config_map(ns, cm(f"fan-{i:02d}"))
    for t in threads:
        t.join(timeout=60)
    for s in streams:
        s.close()
    want = [f"fan-{i:02d}" for i in range(n_objects)]
    assert all(r == want for r in results), results


def test_dynamic_client_watch(api, ns):
    dyn = dynamic.DynamicClient(api)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dw"}}, namespace=ns)
    got = [(e["type"], e["object"].metadata.name) for e in cms.watch(namespace=ns, timeout=1)]
    assert got == [("ADDED", "dw"), ("ADDED", "kube-root-ca.crt")]
