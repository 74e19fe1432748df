# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""run_step(): submit a batch of objects and time each one to its terminal state from watch events.

Order of a step:
  1. list every watched kind (state before the step, resourceVersion)       1 request per kind
  2. plan the step's items and requests from that state
  3. open one watch per kind from the listed version and wait until every   1 request per kind
     one is established
  4. send the requests, `concurrency` at a time, through the one shared     N requests
     Client (its connection pool is sized for it); each object's start is
     the client's monotonic time just before its request is sent
  5. wait until every object is settled (terminal or failed) or the step's
     timeout; each object's end is the receive time of the watch event that
     completed it (tracker.py)
  6. close the watches and build the step result (figures, errors with the
     reason from the object's Warning events, unfinished objects)
So a step costs N + 2 x kinds API requests (plus reopened watches), whatever N is.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Tracker
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.watch import KindWatch
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import World
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable
from ansible_collections.storageperf.k8s.plugins.module_utils.report import stats
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.kinds import Kind
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

WATCH_OPEN_TIMEOUT = 30.0


class StepError(StoragePerfError):
    """A step could not run at all (its watches did not open, its plan failed)."""


class StepUnreachable(K8sUnreachable):
    """The API server stopped answering while a step ran; `result` is the step as far as it got."""

    def __init__(self, lost: K8sUnreachable, result: dict[str, Any]) -> None:
        K8sUnreachable.__init__(self, lost.msg, lost.status, lost.reason, since=lost.details.get("since"), hint=lost.hint)
        self.result = result


class Submission:
    """One request that starts the named items: a create, a delete, a scale."""

    __slots__ = ("names", "call")

    def __init__(self, names: Iterable[str], call: Callable[[Client], object]) -> None:
        self.names = list(names)
        self.call = call


class Watched:
    """A kind a step watches, and where: namespace (namespaced kinds) and label selector."""

    __slots__ = ("kind", "namespace", "label_selector")

    def __init__(self, kind: Kind, namespace: str | None = None, label_selector: str | None = None) -> None:
        self.kind = kind
        self.namespace = namespace
        self.label_selector = label_selector


class Step:
    """What a benchmark step is: its watches, and a plan(view) -> (items, submissions).

    attachments: "attach" or "detach" times every VolumeAttachment of the items' volumes
    (items' `volumes`), which needs the VolumeAttachment kind among the watches.
    """

    def __init__(self, name: str, label: str, unit: str, watches: list[Watched],
                 plan: Callable[[View], tuple[list[Item], list[Submission]]], terminal: str,
                 attachments: str | None = None, metrics: dict[str, Any] | None = None) -> None:
        self.name = name
        self.label = label
        self.unit = unit
        self.watches = watches
        self.plan = plan
        self.terminal = terminal
        self.attachments = attachments
        self.metrics = metrics or {}


class Options:
    def __init__(self, concurrency: int = 16, timeout: float = 600.0, give_up_after_warnings: int | None = 0,
                 progress: Callable[[dict[str, Any]], None] | None = None, progress_interval: float = 2.0,
                 keep_objects: bool = True, disturbance: Callable[[bool], str | None] | None = None) -> None:
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.give_up_after_warnings = int(give_up_after_warnings or 0)
        self.progress = progress
        self.progress_interval = float(progress_interval)
        self.keep_objects = keep_objects
        # disturbance(check) -> why the run's objects can no longer be trusted (its Lease vanished), or None;
        # check=False answers from what the Lease's renewals saw (no request), for the step's wait loop
        self.disturbance = disturbance


def _vanished(exc: BaseException) -> bool:
    """The request failed because the object or its namespace is gone or going: someone else deleted it."""
    if not isinstance(exc, K8sError):
        return False
    return exc.status == 404 or (exc.status == 403 and "being terminated" in (exc.msg or ""))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, K8sError):
        return "%s: %s" % (exc.reason or exc.status or "Error", exc.msg)
    return "%s: %s" % (type(exc).__name__, exc)


def run_step(client: Client, step: Step, options: Options | None = None,
             clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """Run one step; returns the step result (the keyword arguments of report.document.add_step
    plus `attachments` and `internals`). Raises StepError when the step cannot start."""
    options = options or Options()
    # discovery is once per client, not per step: resolve the kinds before counting the step's requests
    for watched in step.watches:
        client.resource(watched.kind.api_version, watched.kind.name)
    requests_before = client.requests
    world = World([w.kind for w in step.watches], C.MARK_RULES)
    tracker = Tracker(world, give_up_after_warnings=options.give_up_after_warnings)
    cond = threading.Condition()
    vanished: set[str] = set()  # items whose object (or namespace) was gone when the step's request reached it
    watches = [KindWatch(client, w.kind, cond, tracker, namespace=w.namespace, label_selector=w.label_selector,
                         clock=clock) for w in step.watches]
    try:
        for w in watches:
            w.prime()
        with cond:
            items, submissions = step.plan(world.view())
            tracker.add(items)
        for w in watches:
            w.start()
        for w in watches:
            if not w.wait_open(WATCH_OPEN_TIMEOUT):
                raise StepError("step %s: the watch of %s did not open within %ds%s" % (
                    step.name, w.kind.name, WATCH_OPEN_TIMEOUT, (": " + w.failures[-1]) if w.failures else ""))
        timed_out, t_stop = _submit_and_wait(client, tracker, cond, submissions, options, step, clock, vanished,
                                             watches)
    except K8sUnreachable:
        raise
    except K8sError as e:
        for w in watches:
            w.stop()
        raise StepError("step %s could not run: %s" % (step.name, e.msg)) from e
    finally:
        for w in watches:
            w.stop()
    lost = _lost(watches)
    result = build_result(step, tracker, world, timed_out, t_stop, options, vanished=vanished, lost=lost)
    result["api_requests"] = client.requests - requests_before
    result["internals"] = {"watch_opens": sum(w.opens for w in watches),
                           "relists": sum(w.relists for w in watches),
                           "watch_failures": [f for w in watches for f in w.failures][:10],
                           "events": tracker.events}
    if lost is not None:
        raise StepUnreachable(lost, result)
    return result


def _lost(watches: Iterable[KindWatch]) -> K8sUnreachable | None:
    """The K8sUnreachable that ended one of the step's watches, or None."""
    return next((w.lost for w in watches if w.lost is not None), None)


def _submit_and_wait(client: Client, tracker: Tracker, cond: threading.Condition, submissions: Iterable[Submission],
                     options: Options, step: Step, clock: Callable[[], float], vanished: set[str],
                     watches: Iterable[KindWatch] = ()) -> tuple[bool, float]:
    abort = threading.Event()

    def send(sub: Submission) -> None:
        if abort.is_set():
            return
        with cond:
            tracker.started(sub.names, clock())
            cond.notify_all()
        try:
            sub.call(client)
        except Exception as e:  # noqa: BLE001 - every failure is the object's error, reported per object
            with cond:
                if _vanished(e):
                    vanished.update(sub.names)
                tracker.failed(sub.names, _reason(e), clock())
                cond.notify_all()

    pool = ThreadPoolExecutor(max_workers=options.concurrency)
    t_begin = clock()
    deadline = t_begin + options.timeout
    try:
        for sub in submissions:
            pool.submit(send, sub)
        last_progress = t_begin
        timed_out = False
        while True:
            if options.disturbance and options.disturbance(False):
                break  # the run's objects are being deleted by someone else: waiting longer measures nothing
            with cond:
                if tracker.all_settled() or _lost(watches) is not None:
                    break  # an API server that stopped answering sends no more events: waiting measures nothing
                now = clock()
                if now >= deadline:
                    timed_out = True
                    break
                cond.wait(min(0.5, deadline - now, options.progress_interval))
                counts = tracker.counts()
                first = tracker.first_start
            now = clock()
            if options.progress and now - last_progress >= options.progress_interval:
                last_progress = now
                _report_progress(options, step, counts, first, now)
    finally:
        abort.set()
        pool.shutdown(wait=True)
    t_stop = clock()
    with cond:
        unsent = [i.name for i in tracker.items.values() if i.start is None and not i.settled]
        tracker.failed(unsent, "not submitted: the API server stopped answering" if _lost(watches) is not None else
                       "not submitted: the step timed out after %ss before its request was sent" % options.timeout)
        counts = tracker.counts()
    if options.progress:
        _report_progress(options, step, counts, tracker.first_start, t_stop, final=True)
    return timed_out, t_stop


def _report_progress(options: Options, step: Step, counts: Mapping[str, int], first: float | None, now: float,
                     final: bool = False) -> None:
    elapsed = (now - first) if first is not None else 0.0
    try:
        options.progress({"step": step.name, "label": step.label, "unit": step.unit, "total": counts["total"],  # type: ignore[misc]  # only when set
                          "done": counts["done"], "errors": counts["errors"], "started": counts["started"],
                          "elapsed_s": round(elapsed, 3),
                          "rate": round(counts["done"] / elapsed, 3) if elapsed > 0 else None,
                          "final": final})
    except Exception:  # noqa: BLE001 - progress is best effort, never a reason to fail a measurement
        pass


def _rel(t: float | None, t0: float | None) -> float | None:
    return None if t is None or t0 is None else round(t - t0, 6)


def build_result(step: Step, tracker: Tracker, world: World, timed_out: bool, t_stop: float, options: Options,
                 vanished: Collection[str] = (), lost: K8sUnreachable | None = None) -> dict[str, Any]:
    items = list(tracker.items.values())
    t0 = tracker.first_start
    done = [i for i in items if i.end is not None]
    view = world.view()
    objects: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    unfinished: list[str] = []
    reason: str | None
    for item in items:
        entry: dict[str, Any] = {"name": item.name, "start": _rel(item.start, t0), "end": _rel(item.end, t0)}
        if item.end is not None:
            entry["latency"] = round(item.end - item.start, 6)  # type: ignore[operator]  # an item ends after it starts
        server = _server_times(view, item)
        if server:
            entry["server_times"] = server
        if item.end is None:
            warning = Tracker.reason(item)
            if item.error is not None:
                reason = item.error
            elif warning:
                reason = warning
            elif lost is not None:
                reason = "no event: the API server stopped answering"
            else:
                reason = "not %s after %ss: %s" % (step.terminal, options.timeout, item.missing or "no event")
            entry["error"] = reason
            errors.append({"object": item.name, "reason": reason})
            if item.error is None:
                unfinished.append(item.name)
        elif item.warnings:
            entry["warnings"] = item.warning_count
        objects.append(entry)
    end = tracker.last_end if done else t_stop
    wall = (end - t0) if t0 is not None and end is not None else None
    if lost is not None:
        status = "unreachable"
        reason = "%d of %d objects done when the API server stopped answering: %s" % (len(done), len(items), lost.msg)
    elif unfinished and timed_out:
        status = "timeout"
        reason = "%d of %d objects did not reach %s within %ss" % (
            len(unfinished), len(items), step.terminal, options.timeout)
    elif errors:
        status = "failed"
        reason = "%d of %d objects failed" % (len(errors), len(items))
    else:
        status, reason = "ok", None
    disturbed = options.disturbance(True) if options.disturbance else None
    if (vanished or disturbed) and lost is None:
        # objects deleted under the step make its figures meaningless (a delete of a vanished object is instant)
        status = "disturbed"
        bits = []
        if vanished:
            names = sorted(vanished)
            bits.append("%d of %d objects were gone before the step's request reached them (%s%s)" % (
                len(names), len(items), ", ".join(names[:5]), ", ..." if len(names) > 5 else ""))
        if disturbed:
            bits.append(disturbed)
        reason = "not a measurement: " + "; ".join(bits)
    metrics = dict(step.metrics)
    attachments = _attachments(step, view, items, t0) if step.attachments else None
    if attachments is not None:
        metrics.update(_attachment_metrics(step.attachments, attachments))  # type: ignore[arg-type]  # set: attachments is
    retried = sum(1 for i in done if i.warnings)
    if retried:
        metrics["objects_with_warnings"] = retried
    result = {
        "name": step.name, "label": step.label, "unit": step.unit, "status": status, "reason": reason,
        "count": len(items), "wall_s": round(wall, 6) if wall is not None else None,
        "rate": round(len(done) / wall, 6) if wall and done else None,
        "objects": objects if options.keep_objects else None,
        "latency": stats.summary(i.end - i.start for i in done),  # type: ignore[operator]  # done items started and ended
        "errors": errors, "unfinished": unfinished, "metrics": metrics,
    }
    if attachments is not None:
        result["attachments"] = attachments
    warnings = warning_summary(items)
    if warnings:
        result["warnings"] = warnings
        result["warned_objects"] = sum(1 for i in items if i.warnings)
    return result


def warning_summary(items: Iterable[Item], examples: int = 5) -> list[dict[str, Any]]:
    """[{reason, objects, events, message, examples}] of the items' Warning events, most objects first."""
    by_reason: dict[str, dict[str, Any]] = {}
    for item in items:
        for reason, message, count, t in item.warnings.values():
            w = by_reason.setdefault(reason, {"reason": reason, "objects": 0, "events": 0, "message": message,
                                              "examples": [], "_last": t, "_names": set()})
            w["events"] += int(count)
            if item.name not in w["_names"]:
                w["_names"].add(item.name)
                w["objects"] += 1
                if len(w["examples"]) < examples:
                    w["examples"].append(item.name)
            if t >= w["_last"]:
                w["_last"], w["message"] = t, message
    out = []
    for w in sorted(by_reason.values(), key=lambda w: (-w["objects"], w["reason"])):
        out.append({k: v for k, v in w.items() if not k.startswith("_")})
    return out


def _server_times(view: View, item: Item) -> dict[str, Any]:
    for kind_name, key in item.subjects[:1]:
        obj = view.last(kind_name, key)
        md = (obj or {}).get("metadata") or {}
        out = {}
        if md.get("creationTimestamp"):
            out["created"] = md["creationTimestamp"]
        if md.get("deletionTimestamp"):
            out["deleted"] = md["deletionTimestamp"]
        return out
    return {}


def _since(t: float | None, start: float | None, t0: float | None) -> float | None:
    """A mark relative to the step clock, or None when it predates the item's request (the state the step
    found, such as a VolumeAttachment attached before a scale-down: not a timing of this step)."""
    if t is None or start is None or t < start:
        return None
    return _rel(t, t0)


def _attachments(step: Step, view: View, items: Iterable[Item], t0: float | None) -> list[dict[str, Any]]:
    """Every VolumeAttachment of the items' volumes: when it appeared, attached, went away."""
    out = []
    for item in items:
        for pvc_key in item.volumes:
            pv = C.volume_name(view, pvc_key)
            if not pv:
                continue
            for va_key in view.ever(C.VA, "pv", pv):
                va = view.last(C.VA, va_key) or {}
                seen = view.mark(C.VA, va_key, "seen")
                attached = view.mark(C.VA, va_key, "attached")
                gone = view.mark(C.VA, va_key, "gone")
                rec = {"volume": pvc_key.split("/", 1)[-1], "pv": pv, "attachment": va_key,
                       "node": (va.get("spec") or {}).get("nodeName"), "item": item.name,
                       "start": _rel(item.start, t0), "seen": _since(seen, item.start, t0),
                       "attached": _since(attached, item.start, t0), "detached": _since(gone, item.start, t0)}
                err = ((va.get("status") or {}).get("attachError") or {}).get("message")
                if err:
                    rec["attach_error"] = err
                out.append(rec)
    return out


def _attachment_metrics(mode: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"attachments": len(records)}
    if mode == "attach":
        lat = [r["attached"] - r["start"] for r in records if r["attached"] is not None and r["start"] is not None]
        own = [r["attached"] - r["seen"] for r in records if r["attached"] is not None and r["seen"] is not None]
        prefix, other = "attach", "attacher"
    else:
        lat = [r["detached"] - r["start"] for r in records if r["detached"] is not None and r["start"] is not None]
        own = []
        prefix, other = "detach", None
    summ = stats.summary(lat)
    if summ:
        for k in ("p50", "p90", "p99", "max"):
            out["%s_%s_s" % (prefix, k)] = round(summ[k], 6)
        out["%s_wall_s" % prefix] = round(max(lat), 6)
    osumm = stats.summary(own)
    if osumm and other:
        for k in ("p50", "p99", "max"):
            out["%s_%s_s" % (other, k)] = round(osumm[k], 6)
    return out
