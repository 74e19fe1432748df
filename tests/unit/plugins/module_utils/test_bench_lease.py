"""bench/lease.py: which runs are live, renewals, and a Lease that vanishes under a run."""
from __future__ import annotations

import datetime

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import lease as LZ
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.cleanup import Cleanup
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError

NOW = datetime.datetime(2026, 6, 20, 9, 0, 0, tzinfo=datetime.UTC)


def lease(run_id, renewed, duration=60, holder="ctl/1", ns=None):
    return {"metadata": {"name": LZ.NAME, "namespace": ns or "ns-" + run_id,
                         "labels": {"storageperf.k8s/run-id": run_id}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration,
                     "renewTime": LZ.micro_time(renewed)}}


class FakeClient:
    def __init__(self, objects=None):
        self.objects = objects or {}
        self.patches = []
        self.deleted = []

    def has_resource(self, api_version, kind):
        return True

    def list(self, api_version, kind, namespace=None, label_selector=None, **kw):
        items = list(self.objects.get(kind, []))
        if namespace:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        if label_selector:
            key, _, value = label_selector.partition("=")
            items = [o for o in items if key in (o["metadata"].get("labels") or {})
                     and (not value or o["metadata"]["labels"][key] == value)]
        return items, "1"

    def get(self, api_version, kind, name, namespace=None, missing_ok=False):
        for o in self.objects.get(kind, []):
            if o["metadata"]["name"] == name and o["metadata"].get("namespace") == namespace:
                return o
        return None

    def patch(self, api_version, kind, name, patch, namespace=None, **kw):
        if self.get(api_version, kind, name, namespace) is None:
            raise K8sError("not found", 404, "NotFound")
        self.patches.append((kind, namespace, name, patch))

    def delete(self, api_version, kind, name, namespace=None, **kw):
        self.deleted.append((kind, namespace, name))


def test_only_unexpired_held_leases_are_live():
    client = FakeClient({"Lease": [
        lease("running", NOW - datetime.timedelta(seconds=10)),
        lease("expired", NOW - datetime.timedelta(seconds=61)),
        lease("released", NOW, holder=""),
    ]})
    live = LZ.live_runs(client, now=NOW)
    assert list(live) == ["running"]
    assert live["running"]["namespace"] == "ns-running" and 49 <= live["running"]["expires_in_s"] <= 50


def test_micro_time_round_trips():
    assert LZ.parse_time(LZ.micro_time(NOW)) == NOW
    assert LZ.parse_time("2026-06-20T09:00:00Z") == NOW


def test_a_deleted_lease_makes_the_run_disturbed():
    client = FakeClient({"Lease": [lease("r", NOW, ns="ns-r")]})
    held = LZ.RunLease(client, "ns-r", {"storageperf.k8s/run-id": "r"})
    held.renew()
    assert held.renewals == 1 and held.disturbance() is None
    client.objects["Lease"] = []
    assert held.disturbance(check=False) is None  # nothing seen yet without asking
    held.renew()
    assert "was deleted while the run measured" in held.disturbance(check=False)


def test_cleanup_of_every_run_leaves_live_runs_out():
    ns = [{"metadata": {"name": "ns-" + r, "labels": {"storageperf.k8s/run-id": r}}} for r in ("live", "dead")]
    sc = [{"metadata": {"name": "sc-" + r, "labels": {"storageperf.k8s/run-id": r}}} for r in ("live", "dead")]
    client = FakeClient({"Namespace": ns, "StorageClass": sc})
    client.has_resource = lambda *a: False
    inv = Cleanup(client, skip_runs={"live"}).inventory()
    assert inv["Namespace"] == ["ns-dead"] and inv["StorageClass"] == ["sc-dead"]
    assert Cleanup(client).inventory()["Namespace"] == ["ns-dead", "ns-live"]
