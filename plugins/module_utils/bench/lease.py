# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Lease a running benchmark holds, so that a cleanup of every run leaves a live one alone.

While bench_measure measures, a coordination.k8s.io/v1 Lease named storageperf-run in the owner namespace
(labelled with the run id like everything else) is renewed by a background thread: renewTime every
RENEW_EVERY seconds, leaseDurationSeconds LEASE_SECONDS, as Kubernetes leader election does. bench_cleanup
treats a run whose Lease has not expired as live. A run killed without a chance to release its Lease
(SIGKILL, a lost controller) stops renewing, so the Lease expires and the run becomes cleanable.

If the Lease vanishes while the run measures (someone deleted it or its namespace, e.g. a forced cleanup),
the run knows its objects may be gone too: the steps measured from then on are reported as disturbed.
"""
from __future__ import annotations

import datetime
import os
import socket
import threading
from typing import TYPE_CHECKING, Any, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import labels as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

API = "coordination.k8s.io/v1"
NAME = "storageperf-run"
LEASE_SECONDS = 60
RENEW_EVERY = 15.0


def micro_time(when: datetime.datetime | None = None) -> str:
    """A Kubernetes MicroTime: RFC 3339 with microseconds, UTC."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    text = text.rstrip("Z")
    for fmt in ("%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.datetime.strptime(text[:26], fmt).replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
    return None


def holder_identity() -> str:
    return "%s/%d" % (socket.gethostname(), os.getpid())


def expires_at(lease: Mapping[str, Any]) -> datetime.datetime | None:
    spec = lease.get("spec") or {}
    renewed = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    if renewed is None or not spec.get("holderIdentity"):
        return None  # released, or never held
    return renewed + datetime.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))


def live_runs(client: Client, now: datetime.datetime | None = None) -> dict[str, dict[str, Any]]:
    """{run_id: {namespace, holder, renewed, expires_in_s}} of the runs whose Lease has not expired.

    Compares the Lease's renewTime (written by the run's host) with this host's clock, as leader election does."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if not client.has_resource(API, "Lease"):
        return {}
    leases, _ = client.list(API, "Lease", label_selector=L.run_selector())
    out: dict[str, dict[str, Any]] = {}
    for lease in leases:
        md = lease.get("metadata") or {}
        run_id = (md.get("labels") or {}).get(L.RUN_ID_LABEL)
        end = expires_at(lease)
        if not run_id or end is None or end <= now:
            continue
        out[run_id] = {"namespace": md.get("namespace"), "holder": lease["spec"].get("holderIdentity"),
                       "renewed": lease["spec"].get("renewTime"),
                       "expires_in_s": round((end - now).total_seconds(), 1)}
    return out


class RunLease:
    """Acquire, renew in the background, release. lost is the reason the Lease vanished, or None."""

    def __init__(self, client: Client, namespace: str, labels: Mapping[str, str], duration: int = LEASE_SECONDS,
                 renew_every: float = RENEW_EVERY) -> None:
        self.client = client
        self.namespace = namespace
        self.labels = dict(labels)
        self.duration = int(duration)
        self.renew_every = float(renew_every)
        self.holder = holder_identity()
        self.lost: str | None = None
        self.renewals = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def body(self) -> dict[str, Any]:
        now = micro_time()
        return {"apiVersion": API, "kind": "Lease",
                "metadata": {"name": NAME, "namespace": self.namespace, "labels": self.labels},
                "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration,
                         "acquireTime": now, "renewTime": now}}

    def acquire(self) -> None:
        try:
            self.client.create(self.body())
        except K8sError as e:
            if e.status != 409:
                raise
            # the run's own Lease from an earlier repetition (shared namespace): take it over
            self.client.patch(API, "Lease", NAME, {"spec": self.body()["spec"]}, namespace=self.namespace)
        self._thread = threading.Thread(target=self._renew_loop, name="storageperf-lease", daemon=True)
        self._thread.start()

    def renew(self) -> None:
        try:
            self.client.patch(API, "Lease", NAME, {"spec": {"renewTime": micro_time(), "holderIdentity": self.holder}},
                              namespace=self.namespace)
            self.renewals += 1
        except K8sError as e:
            if e.status == 404:
                self.lost = ("the run's Lease %s/%s was deleted while the run measured (a cleanup or a person removed "
                             "the run's objects)" % (self.namespace, NAME))
            else:
                self.failures.append(e.msg)
                del self.failures[:-5]

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew_every):
            self.renew()

    def disturbance(self, check: bool = True) -> str | None:
        """Why measurements are no longer valid, or None; check: ask the API server whether the Lease is there."""
        if self.lost is None and check:
            try:
                if self.client.get(API, "Lease", NAME, namespace=self.namespace, missing_ok=True) is None:
                    self.lost = ("the run's Lease %s/%s is gone: someone deleted the run's objects while it "
                                 "measured" % (self.namespace, NAME))
            except K8sError:
                pass  # cannot tell: the step's own checks still apply
        return self.lost

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.renew_every + 30)

    def release(self) -> None:
        """Stop renewing and delete the Lease (the run is over; its objects may now be cleaned)."""
        self.stop()
        try:
            self.client.delete(API, "Lease", NAME, namespace=self.namespace)
        except K8sError:
            pass  # it expires on its own
