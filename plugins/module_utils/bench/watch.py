# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One list + watch per resource kind per step, like an informer, feeding the step's tracker.

prime() lists the kind once (the state before the step, and a resourceVersion); start() opens
the watch from that resourceVersion on a thread, and wait_open() returns once the server has
answered, so the engine submits nothing before every watch is established. When the server
ends the watch (timeoutSeconds) it is reopened from the last resourceVersion seen (events or
bookmarks); when that version is too old (410 Gone / ERROR event) the kind is listed again and
the differences are fed to the tracker as events. Nothing is ever polled per object. When the API server
stops answering (K8sUnreachable from the request policy) the watch ends and keeps the error in `lost`,
so the step stops waiting for events that cannot come.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import backoff
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.kinds import Kind
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Tracker
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

LIST_LIMIT = 5000
WATCH_TIMEOUT = 300


class KindWatch:
    def __init__(self, client: Client, kind: Kind, cond: threading.Condition, tracker: Tracker, namespace: str | None = None,
                 label_selector: str | None = None, timeout_seconds: int = WATCH_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.kind = kind
        self.cond = cond
        self.tracker = tracker
        self.namespace = namespace if kind.namespaced else None
        self.label_selector = label_selector
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self.rv: str | None = None
        self.opens = 0
        self.relists = 0
        self.failures: list[str] = []
        self.lost: K8sUnreachable | None = None
        self._stop = threading.Event()
        self._open = threading.Event()
        self._resp: Any = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return "KindWatch(%s ns=%s)" % (self.kind.name, self.namespace)

    # lifecycle -----------------------------------------------------------------------------
    def prime(self) -> int:
        """List the kind: the world's state before the step, and where the watch starts."""
        items, self.rv = self.client.list(self.kind.api_version, self.kind.name, namespace=self.namespace,
                                          label_selector=self.label_selector, limit=LIST_LIMIT)
        t = self.clock()
        with self.cond:
            self.tracker.relisted(self.kind.name, items, t)
        return len(items)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="watch-%s" % self.kind.name)
        self._thread.daemon = True
        self._thread.start()

    def wait_open(self, timeout: float | None) -> bool:
        return self._open.wait(timeout)

    def stop(self, join_timeout: float = 5.0) -> None:
        self._stop.set()
        self._shutdown()
        if self._thread is not None:
            self._thread.join(join_timeout)

    # internals -----------------------------------------------------------------------------
    def _opened(self, resp: Any) -> None:
        self._resp = resp
        self.opens += 1
        self._open.set()
        if self._stop.is_set():
            self._shutdown()

    def _shutdown(self) -> None:
        resp = self._resp
        if resp is None:
            return
        # shutdown() unblocks a read in progress on another thread (urllib3 >= 2.3); close() otherwise
        for method in ("shutdown", "close"):
            fn = getattr(resp, method, None)
            if fn is None:
                continue
            try:
                fn()
                return
            except Exception:  # noqa: BLE001 - already released or closed: nothing left to stop
                continue

    def _relist(self) -> None:
        self.relists += 1
        items, self.rv = self.client.list(self.kind.api_version, self.kind.name, namespace=self.namespace,
                                          label_selector=self.label_selector, limit=LIST_LIMIT)
        t = self.clock()
        with self.cond:
            self.tracker.relisted(self.kind.name, items, t)
            self.cond.notify_all()

    def _pause(self, delays: Iterator[float]) -> None:
        # between reconnects; stop() ends the pause at once
        self._stop.wait(next(delays))

    def _run(self) -> None:
        delays = backoff(0.2, 5.0, jitter=False)
        while not self._stop.is_set():
            try:
                for etype, obj, t in self.client.watch(
                        self.kind.api_version, self.kind.name, namespace=self.namespace,
                        label_selector=self.label_selector, resource_version=self.rv,
                        timeout_seconds=self.timeout_seconds, on_open=self._opened):
                    if self._stop.is_set():
                        return
                    if etype == "ERROR":
                        if obj.get("code") == 410:
                            self._relist()
                            break
                        raise K8sError("watch %s: %s" % (self.kind.name, obj.get("message") or obj),
                                       obj.get("code"), obj.get("reason"))
                    rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if rv:
                        self.rv = rv
                    if etype == "BOOKMARK":
                        continue
                    with self.cond:
                        self.tracker.observe(self.kind.name, etype, obj, t)  # type: ignore[arg-type]  # every watch event has a type
                        self.cond.notify_all()
                delays = backoff(0.2, 5.0, jitter=False)  # the watch ran: the next failure waits the least again
            except K8sUnreachable as e:
                with self.cond:
                    self.lost = e
                    self.cond.notify_all()
                return
            except K8sError as e:
                if self._stop.is_set():
                    return
                if e.status == 410:
                    try:
                        self._relist()
                    except Exception as e2:  # noqa: BLE001 - keep trying until the step ends
                        self.failures.append(str(e2))
                        self._pause(delays)
                    continue
                self.failures.append(e.msg)
                self._pause(delays)
            except Exception as e:  # noqa: BLE001 - a dropped connection: resume from the last version
                if self._stop.is_set():
                    return
                self.failures.append("%s: %s" % (type(e).__name__, e))
                self._pause(delays)
