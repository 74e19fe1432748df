"""The bench engine on a twin: every object timed from watch events, at N + a few API requests.

The twin's real controllers provision, attach and bind; nothing here flips a status by hand.
"""
from __future__ import annotations

import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import csi_lifecycle
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Options, run_step
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

N = 60


@pytest.fixture
def ctx(twin):
    client = Client({"kubeconfig": str(twin.kubeconfig)}, pool_maxsize=24)
    ns = "engine-test"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return Context(client, "engine-test-run", "csi_lifecycle", ns, Options(concurrency=8, timeout=120), None)


def twin_requests(twin) -> int:
    return json.loads(twin.twin_cmd("status").stdout)["requests"]


def test_create_and_publish_time_every_object_from_watch_events(twin, ctx):
    plan = csi_lifecycle.Plan({"storage_class": "ontap-nas", "volumes": N, "pvcs_per_pod": 4})
    csi_lifecycle.preflight(ctx.client, plan)
    create = csi_lifecycle.step_create_volume(ctx, plan)
    for w in create.watches:
        ctx.client.resource(w.kind.api_version, w.kind.name)
    before = twin_requests(twin)
    r = run_step(ctx.client, create, ctx.options)
    at_twin = twin_requests(twin) - before - 1  # minus the status call itself

    assert r["status"] == "ok", r.get("errors")
    assert r["count"] == N and len(r["objects"]) == N and not r["errors"] and not r["unfinished"]
    # the cluster agrees: every PVC the step created is Bound
    pvcs = twin.kubectl_json("get", "pvc", "-n", ctx.namespace)["items"]
    assert sorted(p["metadata"]["name"] for p in pvcs) == plan.vols
    assert all(p["status"]["phase"] == "Bound" for p in pvcs)
    assert all(p["metadata"]["labels"]["storageperf.k8s/run-id"] == "engine-test-run" for p in pvcs)
    # one clock: start and end of each object from the client, end after start; the step spans them all
    for o in r["objects"]:
        assert 0 <= o["start"] < o["end"] <= r["wall_s"] + 1e-6
        assert o["latency"] == pytest.approx(o["end"] - o["start"], abs=1e-5)  # each rounded to 1 µs
        assert "created" in o["server_times"]
    lat = r["latency"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert r["rate"] == pytest.approx(N / r["wall_s"])
    # one list + one watch per kind (PVC, Event) and one create per PVC: no polling
    assert r["internals"]["watch_opens"] == 2
    assert r["api_requests"] <= N + 10
    assert at_twin <= N + 10, "the twin saw %d requests for %d PVCs" % (at_twin, N)

    publish = run_step(ctx.client, csi_lifecycle.step_publish(ctx, plan), ctx.options)
    assert publish["status"] == "ok", publish.get("errors")
    assert publish["count"] == N and publish["api_requests"] <= N // 4 + 10
    # every volume's VolumeAttachment timed on the same clock, attached before its object ended
    att = publish["attachments"]
    assert len(att) == N and {a["volume"] for a in att} == set(plan.vols)
    ends = {o["name"]: o["end"] for o in publish["objects"]}
    for a in att:
        assert a["start"] < a["attached"] <= ends[a["volume"]] + 1e-6
    assert publish["metrics"]["attach_p50_s"] <= publish["metrics"]["attach_max_s"]
    vas = twin.kubectl_json("get", "volumeattachments")["items"]
    assert {va["metadata"]["name"] for va in vas} == {a["attachment"] for a in att}


def test_a_step_that_cannot_finish_times_out_listing_its_objects(twin, ctx):
    # a StorageClass whose provisioner nobody runs: the PVCs stay Pending
    ctx.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "nobody"},
                       "provisioner": "example.com/none", "volumeBindingMode": "Immediate"})
    plan = csi_lifecycle.Plan({"storage_class": "nobody", "volumes": 5})
    ctx.options.timeout = 2.0
    r = run_step(ctx.client, csi_lifecycle.step_create_volume(ctx, plan), ctx.options)
    assert r["status"] == "timeout"
    assert sorted(r["unfinished"]) == plan.vols
    assert all(e["reason"].startswith("not Bound after 2.0s: PVC Pending") for e in r["errors"])
    assert r["latency"] is None and r["rate"] is None
