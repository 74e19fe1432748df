"""default-scheduler: bind pending pods to nodes, with the filters storage benchmarks depend on.

Filters (kube-scheduler plugins): NodeUnschedulable, NodeName, NodeAffinity (nodeSelector and required
nodeAffinity: In / NotIn / Exists / DoesNotExist / Gt / Lt, matchFields metadata.name), TaintToleration
(NoSchedule and NoExecute taints), NodeResourcesFit (pods, cpu, memory requests), VolumeBinding (claims
exist; unbound Immediate claims block; bound volumes' PV node affinity; a delayed claim's class
allowedTopologies; a PMEM class only on nodes labelled pmem.csi.alibabacloud.com, the one node-local
capacity the twin tracks) and NodeVolumeLimits (CSINode spec.drivers[].allocatable.count per driver).
Score: the node with the fewest pods.

VolumeBinding's PreBind is kept: for an unbound WaitForFirstConsumer claim the scheduler writes
`volume.kubernetes.io/selected-node` (and the storage-provisioner annotations the PV controller would
add), waits until the claim is Bound, and only then binds the pod, holding the pod's place on the node
meanwhile ("assumed"). A pod that fits nowhere stays Pending with condition PodScheduled=False
(Unschedulable) and a FailedScheduling event in the real message format; it is retried when nodes,
claims, volumes or other pods change, and after a backoff.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import time

from .. import calibration
from .base import Controller
from .podstatus import is_terminal, set_condition
from .taints import tolerates

log = logging.getLogger("twin")

SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONER_ANNS = ("volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner")
SCHEDULER_NAME = "default-scheduler"
# Alibaba Cloud's local plugin provisions PMEM (its default volumeType) only where the node has it; the
# nodes that do carry this label (docs/reference/pmem.md). Elsewhere there is no capacity for the claim.
PMEM_DRIVER = "localplugin.csi.alibabacloud.com"
PMEM_NODE_LABEL = "pmem.csi.alibabacloud.com"
# VolumeBinding's filter reasons (pkg/scheduler/framework/plugins/volumebinding)
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"

# Not in twin/calibration.yaml (owned by the storage half), so kept here; a `scheduler:` section in that
# file overrides them. Real-cluster seconds, scaled by --time-scale like every calibrated latency.
LATENCY_DEFAULTS = {
    "schedule": {"median": 0.004, "sigma": 0.3},  # one scheduling cycle (filters + score) of one pod
    "bind": {"median": 0.02, "sigma": 0.3},       # the pods/binding API call, in the binding goroutine
    "backoff_initial": 1.0,                       # podInitialBackoffSeconds
    "backoff_max": 10.0,                          # podMaxBackoffSeconds
    "bind_timeout": 600.0,                        # VolumeBinding bindTimeoutSeconds
    "unschedulable_flush": 300.0,                 # podMaxInUnschedulablePodsDuration: retry without a cluster change
}


def scheduler_setting(name: str) -> float:
    cal = calibration.load()
    spec = cal.section("scheduler").get(name, LATENCY_DEFAULTS[name])
    return calibration.sample(spec, cal.rng)


class Unschedulable(Exception):
    """A pod fits on no node: message in kube-scheduler's FitError format."""


class Scheduler(Controller):
    name = SCHEDULER_NAME

    def setup(self) -> None:
        self.active: dict[str, tuple[str, str]] = {}          # uid -> (ns, name), in arrival order
        # unschedulable pods: uid -> [key, end of backoff, retry at]; retried at the flush interval, or once
        # their backoff ends after a cluster change that may let them fit (the real unschedulable queue)
        self.parked: dict[str, list] = {}
        self.attempts: collections.Counter[str] = collections.Counter()
        self.assumed: dict[str, tuple[str, dict]] = {}         # uid -> (node, pod) while volumes get bound
        self.wake = asyncio.Event()
        self.snapshot_stale = False
        self.claim_waiters: dict[tuple[str, str], list[asyncio.Future]] = collections.defaultdict(list)
        self.stats: collections.Counter[str] = collections.Counter()

    # events ---------------------------------------------------------------------------------
    def _wants(self, pod: dict) -> bool:
        return (not pod["spec"].get("nodeName") and pod["spec"].get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME
                and not pod["metadata"].get("deletionTimestamp") and not is_terminal(pod))

    def on_change(self, rtype, etype: str, obj: dict, old: dict | None) -> None:
        key = rtype.key
        if key == self.pods_rt.key:
            uid = obj["metadata"]["uid"]
            if etype != "DELETED" and self._wants(obj):
                if uid not in self.parked and uid not in self.assumed and uid not in self.active:
                    self.active[uid] = (obj["metadata"]["namespace"], obj["metadata"]["name"])
                    self.wake.set()
                return
            self.active.pop(uid, None)
            self.parked.pop(uid, None)
            leaving = obj["spec"].get("nodeName") and (is_terminal(obj) or obj["metadata"].get("deletionTimestamp"))
            if etype == "DELETED" or leaving:
                self._unpark()  # a pod leaving a node frees its slots and volume count
        elif key in (self.nodes_rt.key, self.csinode_rt.key, self.pv_rt.key, self.sc_rt.key):
            self._unpark()
        elif key == self.pvc_rt.key:
            ck = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            for fut in self.claim_waiters.pop(ck, []):
                if not fut.done():
                    fut.set_result(None)
            self._unpark()

    def _unpark(self) -> None:
        """moveAllToActiveOrBackoffQueue: a cluster change may make parked pods fit."""
        self.snapshot_stale = True
        if not self.parked:
            return
        for entry in self.parked.values():
            entry[2] = entry[1]
        self.wake.set()

    # loop -----------------------------------------------------------------------------------
    async def run(self) -> None:
        for e in self.store.list_entries(self.pods_rt):
            if self._wants(e.obj):
                self.active[e.obj["metadata"]["uid"]] = (e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])
        while True:
            timeout = None
            if self.parked:
                timeout = max(0.0, min(e[2] for e in self.parked.values()) - time.monotonic())
            if not self.active:
                try:
                    await asyncio.wait_for(self.wake.wait(), timeout)
                except TimeoutError:
                    pass
            self.wake.clear()
            now = time.monotonic()
            for uid, (k, _, at) in list(self.parked.items()):
                if at <= now:
                    self.parked.pop(uid)
                    self.active[uid] = k
            if self.active:
                await self._cycle()

    async def _cycle(self) -> None:
        """Schedule every active pod once, one scheduling cycle at a time, on one cluster snapshot."""
        snap = Snapshot(self)
        self.snapshot_stale = False
        while self.active:
            uid, (ns, name) = next(iter(self.active.items()))
            del self.active[uid]
            await self.sleep(scheduler_setting("schedule"))
            if self.snapshot_stale:  # a pod left a node or the cluster changed while we slept
                snap = Snapshot(self)
                self.snapshot_stale = False
            if not self.store.exists(self.pods_rt, ns, name):
                continue
            pod = self.store.get(self.pods_rt, ns, name)
            if pod["metadata"]["uid"] != uid or not self._wants(pod):
                continue
            self.stats["attempts"] += 1
            try:
                node, wffc = snap.place(pod)
            except Unschedulable as e:
                self._fail(pod, str(e))
                continue
            snap.assume(pod, node)
            self.assumed[uid] = (node, pod)
            asyncio.ensure_future(self._bind(pod, node, wffc))

    def _fail(self, pod: dict, message: str, reason: str = "Unschedulable") -> None:
        md = pod["metadata"]
        uid = md["uid"]
        self.attempts[uid] += 1
        backoff = min(scheduler_setting("backoff_initial") * 2 ** min(self.attempts[uid] - 1, 16),
                      scheduler_setting("backoff_max"))
        now, scale = time.monotonic(), self.cluster.time_scale
        self.parked[uid] = [(md["namespace"], md["name"]), now + backoff * scale,
                            now + scheduler_setting("unschedulable_flush") * scale]
        self.stats["unschedulable"] += 1
        if not self.store.exists(self.pods_rt, md["namespace"], md["name"]):
            return
        fresh = self.store.get(self.pods_rt, md["namespace"], md["name"])
        conds = fresh.setdefault("status", {}).setdefault("conditions", [])
        changed = set_condition(conds, "PodScheduled", "False", reason, message, probe_time=True)
        if changed:
            self.store.update(self.pods_rt, md["namespace"], md["name"], fresh, subresource="status")
            self.event(fresh, "Warning", "FailedScheduling", message)

    # binding ----------------------------------------------------------------------------------
    async def _bind(self, pod: dict, node: str, wffc: list[tuple[str, str]]) -> None:
        md = pod["metadata"]
        uid = md["uid"]
        try:
            if wffc:
                if not await self._provision_claims(pod, node, wffc):
                    return
            await self.sleep(scheduler_setting("bind"))
            if not self.store.exists(self.pods_rt, md["namespace"], md["name"]):
                return
            fresh = self.store.get(self.pods_rt, md["namespace"], md["name"])
            if fresh["metadata"]["uid"] != uid or not self._wants(fresh):
                return
            fresh["spec"]["nodeName"] = node
            conds = fresh.setdefault("status", {}).setdefault("conditions", [])
            set_condition(conds, "PodScheduled", "True", probe_time=True)
            self.store.update(self.pods_rt, md["namespace"], md["name"], fresh, _internal=True)
            self.attempts.pop(uid, None)
            self.stats["bound"] += 1
            self.event(fresh, "Normal", "Scheduled", f"Successfully assigned {md['namespace']}/{md['name']} to {node}")
        except Exception:
            log.exception("binding %s/%s failed", md["namespace"], md["name"])
        finally:
            self.assumed.pop(uid, None)

    async def _provision_claims(self, pod: dict, node: str, wffc: list[tuple[str, str]]) -> bool:
        """VolumeBinding PreBind: select the node on each delayed claim, then wait for all to be Bound."""
        for ns, cname in wffc:
            if not self.store.exists(self.pvc_rt, ns, cname):
                continue
            claim = self.store.get(self.pvc_rt, ns, cname)
            anns = claim["metadata"].setdefault("annotations", {})
            sc = self._class_of(claim)
            want = {SELECTED_NODE: node}
            if sc and sc.get("provisioner"):
                for k in PROVISIONER_ANNS:
                    want.setdefault(k, anns.get(k) or sc["provisioner"])
            if any(anns.get(k) != v for k, v in want.items()):
                anns.update(want)
                self.store.update(self.pvc_rt, ns, cname, claim)
        deadline = time.monotonic() + scheduler_setting("bind_timeout") * self.cluster.time_scale
        while True:
            pending = [(ns, c) for ns, c in wffc if not self._claim_bound(ns, c)]
            if not pending:
                return True
            if not self.store.exists(self.pods_rt, pod["metadata"]["namespace"], pod["metadata"]["name"]):
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(pod, "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded",
                           reason="SchedulerError")
                return False
            fut = asyncio.get_running_loop().create_future()
            self.claim_waiters[pending[0]].append(fut)
            try:
                await asyncio.wait_for(fut, min(left, 1.0))
            except TimeoutError:
                pass

    def _claim_bound(self, ns: str, name: str) -> bool:
        e = self.store.objects[self.pvc_rt.key].get((ns, name))
        return bool(e and e.obj.get("status", {}).get("phase") == "Bound" and e.obj["spec"].get("volumeName"))

    def _class_of(self, claim: dict) -> dict | None:
        name = claim["spec"].get("storageClassName")
        e = self.store.objects[self.sc_rt.key].get(("", name)) if name else None
        return e.obj if e else None


class Snapshot:
    """The scheduler's view of the cluster for one cycle: nodes, their pods, volumes and free slots."""

    def __init__(self, sched: Scheduler) -> None:
        self.s = sched
        store = sched.store
        self.nodes = [e.obj for e in store.list_entries(sched.nodes_rt)]
        self.pod_count: collections.Counter[str] = collections.Counter()
        self.requested: dict[str, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
        self.volumes: dict[str, dict[str, set[str]]] = collections.defaultdict(lambda: collections.defaultdict(set))
        self.limits: dict[str, dict[str, int]] = {}
        for e in store.list_entries(sched.csinode_rt):
            lim = {}
            for d in (e.obj.get("spec") or {}).get("drivers") or []:
                count = (d.get("allocatable") or {}).get("count")
                if count is not None:
                    lim[d["name"]] = int(count)
            self.limits[e.obj["metadata"]["name"]] = lim
        for e in store.list_entries(sched.pods_rt):
            node = e.obj["spec"].get("nodeName")
            if node and not is_terminal(e.obj):
                self._add(e.obj, node)
        for node, pod in sched.assumed.values():
            self._add(pod, node)

    def _add(self, pod: dict, node: str) -> None:
        self.pod_count[node] += 1
        for res, q in pod_requests(pod).items():
            self.requested[node][res] += q
        for driver, vid in self.pod_volumes(pod):
            self.volumes[node][driver].add(vid)

    def assume(self, pod: dict, node: str) -> None:
        self._add(pod, node)

    # volumes --------------------------------------------------------------------------------
    def pod_volumes(self, pod: dict) -> list[tuple[str, str]]:
        """(driver, unique volume id) of the pod's CSI claims, bound or to be provisioned."""
        store = self.s.store
        ns = pod["metadata"]["namespace"]
        out = []
        for v in pod["spec"].get("volumes") or []:
            claim_name = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if v.get("csi"):
                out.append((v["csi"]["driver"], f"inline/{ns}/{pod['metadata']['name']}/{v['name']}"))
            if not claim_name:
                continue
            ce = store.objects[self.s.pvc_rt.key].get((ns, claim_name))
            if ce is None:
                continue
            vol = ce.obj["spec"].get("volumeName")
            pve = store.objects[self.s.pv_rt.key].get(("", vol)) if vol else None
            if pve is not None and (pve.obj["spec"].get("csi") or {}).get("driver"):
                csi = pve.obj["spec"]["csi"]
                out.append((csi["driver"], f"{csi['driver']}^{csi.get('volumeHandle', vol)}"))
            elif not vol:
                sc = self.s._class_of(ce.obj)
                if sc and sc.get("provisioner"):
                    out.append((sc["provisioner"], f"claim/{ns}/{claim_name}"))
        return out

    def _claims(self, pod: dict) -> tuple[list[tuple[str, str]], list[dict]]:
        """PreFilter of VolumeBinding: (delayed claims to provision, PVs whose node affinity must match)."""
        store = self.s.store
        ns = pod["metadata"]["namespace"]
        delayed, bound_pvs = [], []
        for v in pod["spec"].get("volumes") or []:
            cname = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if not cname:
                continue
            ce = store.objects[self.s.pvc_rt.key].get((ns, cname))
            if ce is None:
                raise Unschedulable(self._prefilter(f'persistentvolumeclaim "{cname}" not found'))
            claim = ce.obj
            if claim["metadata"].get("deletionTimestamp"):
                raise Unschedulable(self._prefilter(f'persistentvolumeclaim "{cname}" is being deleted'))
            vol = claim["spec"].get("volumeName")
            if vol:
                pve = store.objects[self.s.pv_rt.key].get(("", vol))
                if pve is not None:
                    bound_pvs.append(pve.obj)
                continue
            sc = self.s._class_of(claim)
            if sc and sc.get("volumeBindingMode") == "WaitForFirstConsumer":
                delayed.append((ns, cname))
            else:
                raise Unschedulable(self._prefilter("pod has unbound immediate PersistentVolumeClaims"))
        return delayed, bound_pvs

    def _prefilter(self, reason: str) -> str:
        n = len(self.nodes)
        return (f"0/{n} nodes are available: {reason}. preemption: 0/{n} nodes are available: "
                f"{n} Preemption is not helpful for scheduling.")

    # filters ----------------------------------------------------------------------------------
    def place(self, pod: dict) -> tuple[str, list[tuple[str, str]]]:
        delayed, bound_pvs = self._claims(pod)
        new_vols = self.pod_volumes(pod)
        reasons: collections.Counter[str] = collections.Counter()
        fits = []
        candidates = self.nodes
        names = _affinity_node_names(pod)
        if names is not None:  # NodeAffinity's PreFilter: only the named nodes are filtered (daemon pods: one)
            candidates = [n for n in self.nodes if n["metadata"]["name"] in names]
            if len(candidates) < len(self.nodes):
                reasons["node(s) didn't match Pod's node affinity/selector"] += len(self.nodes) - len(candidates)
        for node in candidates:
            why = self._filter(pod, node, bound_pvs, new_vols) or self._provisionable(delayed, node)
            if why:
                reasons[why] += 1
            else:
                fits.append(node["metadata"]["name"])
        if not fits:
            n = len(self.nodes)
            text = ", ".join(sorted(f"{c} {r}" for r, c in reasons.items()))
            raise Unschedulable(f"0/{n} nodes are available: {text}. preemption: 0/{n} nodes are available: "
                                f"{n} Preemption is not helpful for scheduling." if n else "no nodes available to schedule pods")
        return min(fits, key=lambda name: (self.pod_count[name], name)), delayed

    def _filter(self, pod: dict, node: dict, bound_pvs: list[dict], new_vols: list[tuple[str, str]]) -> str | None:
        spec, nmd = pod["spec"], node["metadata"]
        name = nmd["name"]
        labels = nmd.get("labels") or {}
        nspec = node.get("spec") or {}
        unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        if nspec.get("unschedulable") and not _tolerates(spec, unschedulable_taint):
            return "node(s) were unschedulable"
        if not _node_ready(node):
            return "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"
        for taint in nspec.get("taints") or []:
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(spec, taint):
                return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
        if not _matches_node_selector(spec, name, labels):
            return "node(s) didn't match Pod's node affinity/selector"
        why = self._fit_resources(pod, node)
        if why:
            return why
        for pv in bound_pvs:
            terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms")
            if terms and not _match_terms(terms, name, labels):
                return "node(s) had volume node affinity conflict"
        limits = self.limits.get(name) or {}
        on_node = self.volumes.get(name) or {}
        extra: dict[str, set[str]] = collections.defaultdict(set)
        for driver, vid in new_vols:
            if vid not in on_node.get(driver, ()):
                extra[driver].add(vid)
        for driver, vids in extra.items():
            if driver in limits and len(on_node.get(driver, ())) + len(vids) > limits[driver]:
                return "node(s) exceed max volume count"
        return None

    def _provisionable(self, delayed: list[tuple[str, str]], node: dict) -> str | None:
        """checkVolumeProvisions: each delayed claim's class can provision on this node."""
        labels = node["metadata"].get("labels") or {}
        for ns, cname in delayed:
            ce = self.s.store.objects[self.s.pvc_rt.key].get((ns, cname))
            sc = self.s._class_of(ce.obj) if ce is not None else None
            if sc is None:
                continue
            if not _match_topology(sc.get("allowedTopologies"), labels):
                return BIND_CONFLICT
            if _is_pmem(sc) and PMEM_NODE_LABEL not in labels:
                return NOT_ENOUGH_SPACE
        return None

    def _fit_resources(self, pod: dict, node: dict) -> str | None:
        alloc = (node.get("status") or {}).get("allocatable") or {}
        name = node["metadata"]["name"]
        if "pods" in alloc and self.pod_count[name] + 1 > int(str(alloc["pods"])):
            return "Too many pods"
        want = pod_requests(pod)
        for res in ("cpu", "memory"):
            if want.get(res) and res in alloc and self.requested[name][res] + want[res] > quantity(alloc[res], res):
                return f"Insufficient {res}"
        return None


# predicates ---------------------------------------------------------------------------------------
def _node_ready(node: dict) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


def _tolerates(spec: dict, taint: dict) -> bool:
    return any(tolerates(t, taint) for t in spec.get("tolerations") or [])


def _matches_node_selector(spec: dict, name: str, labels: dict) -> bool:
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if terms is not None and not _match_terms(terms, name, labels):
        return False
    return True


def _affinity_node_names(pod: dict) -> set[str] | None:
    """NodeAffinity PreFilter: the nodes named by `matchFields metadata.name In` in every required term (terms ORed,
    a term's requirements ANDed), or None when some term names none (then every node is a candidate)."""
    terms = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if not terms:
        return None
    out: set[str] = set()
    for term in terms:
        names: set[str] | None = None
        for r in term.get("matchFields") or []:
            if r.get("key") == "metadata.name" and r.get("operator") == "In":
                vals = set(r.get("values") or [])
                names = vals if names is None else names & vals
        if names is None:
            return None
        out |= names
    return out


def _match_topology(terms: list[dict] | None, labels: dict) -> bool:
    """MatchTopologySelectorTerms: no terms match every node, an empty term none; terms ORed, expressions ANDed."""
    if not terms:
        return True
    return any(t.get("matchLabelExpressions") and
               all(labels.get(e.get("key")) in (e.get("values") or []) for e in t["matchLabelExpressions"])
               for t in terms)


def _is_pmem(sc: dict) -> bool:
    return sc.get("provisioner") == PMEM_DRIVER and (sc.get("parameters") or {}).get("volumeType", "PMEM") == "PMEM"


def _match_terms(terms: list[dict], name: str, labels: dict) -> bool:
    """NodeSelectorTerms are ORed; the requirements inside a term are ANDed; an empty term matches nothing."""
    for term in terms or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if all(_match_expr(e, labels) for e in exprs) and all(_match_expr(f, {"metadata.name": name}) for f in fields):
            return True
    return False


def _match_expr(expr: dict, labels: dict) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    has, val = key in labels, labels.get(key)
    if op == "In":
        return has and val in values
    if op == "NotIn":
        return not has or val not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt") and has and len(values) == 1:
        try:
            a, b = int(str(val)), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def quantity(q, resource: str = "") -> float:
    """A resource.Quantity as a number (cpu in cores, memory in bytes)."""
    s = str(q).strip()
    for suf in sorted(_SUFFIX, key=len, reverse=True):
        if s.endswith(suf):
            try:
                return float(s[: -len(suf)]) * _SUFFIX[suf]
            except ValueError:
                return 0.0
    try:
        return float(s)
    except ValueError:
        return 0.0


def pod_requests(pod: dict) -> dict[str, float]:
    """Effective requests: the sum over containers, or the largest init container if larger."""
    total: dict[str, float] = collections.defaultdict(float)
    for c in pod["spec"].get("containers") or []:
        for res, q in ((c.get("resources") or {}).get("requests") or {}).items():
            total[res] += quantity(q, res)
    for c in pod["spec"].get("initContainers") or []:
        for res, q in ((c.get("resources") or {}).get("requests") or {}).items():
            total[res] = max(total[res], quantity(q, res))
    return total
