# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seed 002's CSI lifecycle benchmark: N volumes, pods with 4 PVCs each, 8 steps in order.

  create_volume        N PVCs                      -> each Bound
  publish              N/4 pods, 4 PVCs each       -> pod Ready and its volumes attached (per volume)
  unpublish            delete the pods             -> pod gone and no VolumeAttachment left (per volume)
  create_snapshot      N VolumeSnapshots           -> readyToUse
  clone_from_snapshot  N PVCs from the snapshots   -> Bound
  delete_clone         delete the clones           -> PVC and PV gone
  delete_snapshot      delete the snapshots        -> VolumeSnapshot and content gone
  delete_volume        delete the N PVCs           -> PVC and PV gone

Every step counts volumes (the seed's "vol/s"). A step runs only when the steps it needs
succeeded; otherwise, and when a prerequisite is missing (no VolumeSnapshotClass for the
driver), it is recorded as skipped with the reason.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Mapping, Sequence, Tuple, TypeVar, overload

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.options import complete
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import sweep as SW
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import skipped
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Step, StepError, Submission, Watched, run_step
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.quantity import quantity_problem
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.schema import BROKEN_STEP_STATUSES

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

BENCHMARK = "csi_lifecycle"
SHARED_NAMESPACE = False  # every repetition in its own namespace, deleted after it
STEPS = (
    ("create_volume", "Create Volume"),
    ("publish", "Publish (Attach)"),
    ("unpublish", "Unpublish (Detach)"),
    ("create_snapshot", "Create Snapshot"),
    ("clone_from_snapshot", "Clone from Snapshot"),
    ("delete_clone", "Delete Clone"),
    ("delete_snapshot", "Delete Snapshot"),
    ("delete_volume", "Delete Volume"),
)
STEP_NAMES = tuple(s[0] for s in STEPS)
# the steps whose objects a step works on
NEEDS = {
    "publish": ("create_volume",),
    "unpublish": ("publish",),
    "create_snapshot": ("create_volume",),
    "clone_from_snapshot": ("create_snapshot",),
    "delete_clone": ("clone_from_snapshot",),
    "delete_snapshot": ("create_snapshot",),
    "delete_volume": ("create_volume",),
}
SNAPSHOT_STEPS = ("create_snapshot", "clone_from_snapshot", "delete_clone", "delete_snapshot")
DEFAULT_SNAPSHOT_CLASS_ANNOTATION = "snapshot.storage.kubernetes.io/is-default-class"
# bench_plan's csi_lifecycle suboptions: the one place their defaults are written (storage_class has none; problems()
# refuses it missing with what to give). cleanup and cleanup_timeout act after each repetition (its own namespace).
OPTIONS = {
    "storage_class": dict(type="str"),
    "snapshot_class": dict(type="str"),
    "volumes": dict(type="int", default=100),
    "sweep": dict(type="list", elements="int", default=[]),
    "pvcs_per_pod": dict(type="int", default=4),
    "size": dict(type="str", default="1Gi"),
    "access_modes": dict(type="list", elements="str", default=["ReadWriteOnce"]),
    "steps": dict(type="list", elements="str", choices=list(STEP_NAMES), default=list(STEP_NAMES)),
    "pod_image": dict(type="str", default=M.PAUSE_IMAGE),
    "cleanup": dict(type="bool", default=True),
    "cleanup_timeout": dict(type="float", default=1800.0),
}
# the maxima of its options (docs/limits.md), checked by bench_plan
LIMITS = {"volumes": L.VOLUMES, "sweep": L.SWEEP, "pvcs_per_pod": L.DISKS_PER_NODE, "size": L.ONTAP_VOLUME_SIZE,
          "cleanup_timeout": L.TIMEOUT}
# the help of each option: bench_plan's docs are generated from DOCS, OPTIONS and LIMITS (tests/support/bench_yaml.py)
DOC_TITLE = "CSI lifecycle"
DOCS = {
    "storage_class": [
        "StorageClass of the volumes. Required; it must bind C(Immediate) so the create step can be timed without "
        "pods.",
    ],
    "snapshot_class": [
        "VolumeSnapshotClass; empty picks the (default) class of the StorageClass's driver.",
    ],
    "volumes": [
        "Number of volumes (PVCs).",
    ],
    "sweep": [
        "The sizes (volume counts) of a scaling sweep, e.g. V([10, 100, 1000]); empty measures one size.",
        "Each a whole number of at least 1, each once, at least two; any order (the sweep and the report go "
        "ascending). Recorded as the document's C(parameters.sweep); M(storageperf.k8s.bench_measure) then measures "
        "one size per repetition (its O(storageperf.k8s.bench_measure#module:sweep_point)).",
    ],
    "pvcs_per_pod": [
        "PVCs mounted by each pod of the publish step.",
    ],
    "size": [
        "Size of every volume.",
    ],
    "access_modes": [
        "Access modes of the PVCs.",
    ],
    "steps": [
        "Steps to run; the others are recorded as skipped.",
    ],
    "pod_image": [
        "Image of the pods of the publish step.",
    ],
    "cleanup": [
        "After each repetition, delete its namespace and everything in it and wait until the volumes are gone.",
        "V(false) keeps each repetition's objects for inspection; in a sweep only the run's very last repetition's "
        "(every size must start on a cluster without the previous size's objects).",
    ],
    "cleanup_timeout": [
        "Seconds the cleanup after a repetition may take.",
    ],
}
# what preflight() reads from the cluster into the plan; bench_plan stores it, bench_measure sets it back
READ_BY_PREFLIGHT = ("provisioner", "attach_required", "pv_reclaim_delete", "snapshot_class", "snapshot_skip",
                     "content_deleted")
SWEEP_PARAMETER = "volumes"  # a sweep point sets this option
TITLE = "CSI lifecycle at %(volumes)s volumes (%(pods)s pods x %(pvcs_per_pod)s PVCs)"
SWEEP_TITLE = "CSI lifecycle sweep at %(sweep)s volumes (%(pvcs_per_pod)s PVCs per pod)"


T = TypeVar("T")


class _Lazy(Sequence[T]):
    """A read-only sequence of `length` items, each made by _item(i) when it is read."""

    length = 0

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, i: int) -> T:
        ...

    @overload
    def __getitem__(self, i: slice) -> list[T]:
        ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._item(j) for j in range(*i.indices(self.length))]
        if i < 0:
            i += self.length
        if not 0 <= i < self.length:
            raise IndexError(i)
        return self._item(i)

    def _item(self, i: int) -> T:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Sequence, list)) and len(other) == self.length and list(self) == list(other)

    def __add__(self, other: Iterable[T]) -> list[T]:
        return list(self) + list(other)

    def __radd__(self, other: Iterable[T]) -> list[T]:
        return list(other) + list(self)


class Names(_Lazy[str]):
    """The names <prefix>-<zero-padded index> of count objects."""

    def __init__(self, prefix: str, width: int, count: int) -> None:
        self.prefix, self.width, self.length = prefix, width, count

    def _item(self, i: int) -> str:
        return "%s-%0*d" % (self.prefix, self.width, i)


class Pods(_Lazy[Tuple[str, List[str]]]):
    """(pod name, its volumes' names) of the publish step: per_pod volumes each, in order."""

    def __init__(self, vols: Names, per_pod: int) -> None:
        self.vols, self.per_pod = vols, per_pod
        self.length = (len(vols) + per_pod - 1) // per_pod
        self.width = max(3, len(str(self.length - 1)))

    def _item(self, p: int) -> tuple[str, list[str]]:
        return "pod-%0*d" % (self.width, p), self.vols[p * self.per_pod:(p + 1) * self.per_pod]


class Plan:
    """Names and settings of one repetition, checked before anything is created."""

    def __init__(self, params: Mapping[str, Any] | None) -> None:
        params = complete(OPTIONS, params)
        self.volumes = int(params["volumes"])
        self.per_pod = int(params["pvcs_per_pod"])
        self.size = params["size"]
        self.storage_class = params["storage_class"]
        self.snapshot_class = params["snapshot_class"] or None
        self.access_modes = list(params["access_modes"])
        self.pod_image = params["pod_image"]
        self.steps = list(params["steps"])
        # a sweep measures every size as its own repetition(s), each with `volumes` set to the size
        self.sweep = SW.ordered(params["sweep"])
        # names are made when a step asks for them: a plan's memory does not grow with volumes before it is used
        width = max(4, len(str(self.volumes - 1)))
        self.vols = Names("vol", width, self.volumes)
        self.snaps = Names("snap", width, self.volumes)
        self.clones = Names("clone", width, self.volumes)
        self.pods = Pods(self.vols, self.per_pod)
        # read from the cluster by preflight()
        self.provisioner: str | None = None
        self.attach_required = True
        self.pv_reclaim_delete = True
        self.snapshot_skip: str | None = None
        self.content_deleted = True


def problems(params: Mapping[str, Any] | None) -> list[str]:
    """Bad parameters, each naming the field and the fix (nothing is created when there are any)."""
    params = complete(OPTIONS, params)
    out: list[str] = []
    if int(params["volumes"]) < 1:
        out.append("volumes must be at least 1 (the seed uses 100 and 1000)")
    if int(params["pvcs_per_pod"]) < 1:
        out.append("pvcs_per_pod must be at least 1 (the seed uses 4)")
    sweep = SW.sizes_problem(list(params["sweep"]))
    if sweep:
        out.append(sweep)
    size = quantity_problem("size", params["size"])
    if size:
        out.append(size)
    if not params["storage_class"]:
        out.append("storage_class is required: the StorageClass whose provisioner is measured (kubectl get storageclass)")
    unknown = [s for s in params["steps"] if s not in STEP_NAMES]
    if unknown:
        out.append("steps has unknown step(s) %s: choose from %s" % (", ".join(unknown), ", ".join(STEP_NAMES)))
    return out


def facts(plan: Plan) -> dict[str, Any]:
    """The plan as the result document's parameters and the module's `plan`.

    In a sweep the volume and pod counts differ per variant (each sweep point records its own), so the
    document's parameters hold the sizes instead.
    """
    out: dict[str, Any]
    out = {"volumes": plan.volumes, "pods": len(plan.pods), "pvcs_per_pod": plan.per_pod, "size": plan.size,
           "storage_class": plan.storage_class, "provisioner": plan.provisioner,
           "attach_required": plan.attach_required, "snapshot_class": plan.snapshot_class,
           "snapshot_steps_skipped": plan.snapshot_skip, "steps": plan.steps}
    if plan.sweep:
        del out["volumes"], out["pods"]
        out["sweep"] = plan.sweep
    return out


def sweep_point(plan: Plan) -> dict[str, Any] | None:
    """What makes a measured variant one point of the sweep, or None outside a sweep."""
    return {"parameter": "volumes", "value": plan.volumes} if plan.sweep else None


def cleans_up(options: Mapping[str, Any], last: bool) -> bool:
    """Whether a repetition deletes its namespace: cleanup off keeps each repetition's objects for inspection; in a
    sweep only the run's very last one (every size must start on a cluster without the previous size's objects)."""
    return bool(options["cleanup"] or (options["sweep"] and not last))


def plan_messages(plan: Plan, preflight: bool = False) -> list[str]:
    """What the person running the play should know about the plan; preflight also says which steps it skips."""
    if preflight and plan.snapshot_skip:
        return ["snapshot steps will be skipped: %s" % plan.snapshot_skip]
    return []


def preflight(client: Client, plan: Plan) -> Plan:
    """Read what the steps depend on: the StorageClass, the CSIDriver, a VolumeSnapshotClass.

    Raises K8sError with a message saying what to fix when the benchmark cannot run at all.
    """
    sc = client.get("storage.k8s.io/v1", "StorageClass", plan.storage_class, missing_ok=True)
    if sc is None:
        raise K8sError("storage_class %s does not exist: give the name of an existing StorageClass "
                       "(kubectl get storageclass)" % plan.storage_class, 404, "NotFound")
    if sc.get("volumeBindingMode") == "WaitForFirstConsumer":
        raise K8sError("storage_class %s binds WaitForFirstConsumer, so its PVCs never become Bound without a pod and "
                       "the create_volume step cannot be timed: use a StorageClass with volumeBindingMode Immediate "
                       "(the seed's Trident classes are)" % plan.storage_class, 422, "Invalid")
    plan.provisioner = sc.get("provisioner")
    plan.pv_reclaim_delete = sc.get("reclaimPolicy", "Delete") == "Delete"
    driver = client.get("storage.k8s.io/v1", "CSIDriver", plan.provisioner,  # type: ignore[arg-type]  # the API requires one
                        missing_ok=True)
    # no CSIDriver object: Kubernetes attaches (attachRequired defaults to true)
    plan.attach_required = bool(((driver or {}).get("spec") or {}).get("attachRequired", True))
    plan.snapshot_skip = _snapshot_class(client, plan)
    return plan


def _snapshot_class(client: Client, plan: Plan) -> str | None:
    """Pick the VolumeSnapshotClass; return None, or why the snapshot steps must be skipped."""
    if not any(s in plan.steps for s in SNAPSHOT_STEPS):
        return None
    if not client.has_resource("snapshot.storage.k8s.io/v1", "VolumeSnapshot"):
        return ("the cluster does not serve snapshot.storage.k8s.io/v1 VolumeSnapshot: install the external-snapshotter "
                "CRDs and snapshot-controller")
    classes, _ = client.list("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass")
    if plan.snapshot_class:
        chosen = [c for c in classes if c["metadata"]["name"] == plan.snapshot_class]
        if not chosen:
            return "snapshot_class %s does not exist (kubectl get volumesnapshotclass)" % plan.snapshot_class
    else:
        chosen = [c for c in classes if c.get("driver") == plan.provisioner]
        chosen.sort(key=lambda c: (((c["metadata"].get("annotations") or {}).get(DEFAULT_SNAPSHOT_CLASS_ANNOTATION)
                                    != "true"), c["metadata"]["name"]))
        if not chosen:
            return ("no VolumeSnapshotClass for driver %s: create one, or give snapshot_class"
                    % plan.provisioner)
    plan.snapshot_class = chosen[0]["metadata"]["name"]
    plan.content_deleted = chosen[0].get("deletionPolicy", "Delete") == "Delete"
    return None


# steps ---------------------------------------------------------------------------------------------
def _create(body: dict[str, Any]) -> Callable[[Client], Any]:
    return lambda client: client.create(body)


def _delete(api_version: str, kind: str, name: str, ns: str) -> Callable[[Client], Any]:
    return lambda client: client.delete(api_version, kind, name, namespace=ns, missing_ok=False)


def step_create_volume(ctx: Context, plan: Plan, names: Sequence[str] | None = None, label: str = "Create Volume",
                       step_name: str = "create_volume", snapshots: Sequence[str] | None = None) -> Step:
    ns = ctx.namespace
    names = names or plan.vols

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for i, name in enumerate(names):
            key = ctx.key(name)
            items.append(Item(name, C.pvc_bound(key), subjects=[(C.PVC, key)]))
            body = M.pvc(name, ns, plan.storage_class, plan.size, ctx.labels, plan.access_modes,
                         snapshot=snapshots[i] if snapshots else None)
            subs.append(Submission([name], _create(body)))
        return items, subs
    return Step(step_name, label, "vol", [Watched(K.PVC, ns), Watched(K.EVENT, ns)], make, "Bound")


def step_publish(ctx: Context, plan: Plan) -> Step:
    ns = ctx.namespace

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for pod, vols in plan.pods:
            pod_key = ctx.key(pod)
            for v in vols:
                items.append(Item(v, C.published(pod_key, [ctx.key(v)], plan.attach_required),
                                  subjects=[(C.POD, pod_key), (C.PVC, ctx.key(v))], volumes=[ctx.key(v)]))
            subs.append(Submission(vols, _create(M.pod(pod, ns, vols, ctx.labels, image=plan.pod_image))))
        return items, subs
    watches = [Watched(K.POD, ns), Watched(K.PVC, ns), Watched(K.EVENT, ns)]
    if plan.attach_required:
        watches.append(Watched(K.VA))
    terminal = "pod Ready" + (" and volume attached" if plan.attach_required else "")
    return Step("publish", "Publish (Attach)", "vol", watches, make, terminal,
                attachments="attach" if plan.attach_required else None)


def step_unpublish(ctx: Context, plan: Plan) -> Step:
    ns = ctx.namespace

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for pod, vols in plan.pods:
            pod_key = ctx.key(pod)
            for v in vols:
                items.append(Item(v, C.unpublished(pod_key, [ctx.key(v)]), subjects=[(C.POD, pod_key)],
                                  volumes=[ctx.key(v)]))
            subs.append(Submission(vols, _delete("v1", "Pod", pod, ns)))
        return items, subs
    watches = [Watched(K.POD, ns), Watched(K.PVC, ns), Watched(K.EVENT, ns)]
    if plan.attach_required:
        watches.append(Watched(K.VA))
    return Step("unpublish", "Unpublish (Detach)", "vol", watches, make,
                "pod gone" + (" and no VolumeAttachment left" if plan.attach_required else ""),
                attachments="detach" if plan.attach_required else None)


def step_create_snapshot(ctx: Context, plan: Plan) -> Step:
    ns = ctx.namespace

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for i, snap in enumerate(plan.snaps):
            vol = plan.vols[i]
            key = ctx.key(snap)
            items.append(Item(snap, C.snapshot_ready(key), subjects=[(C.VS, key), (C.PVC, ctx.key(vol))]))
            body = M.volume_snapshot(snap, ns, vol, plan.snapshot_class, ctx.labels)  # type: ignore[arg-type]  # preflight chose one, else the step is skipped
            subs.append(Submission([snap], _create(body)))
        return items, subs
    return Step("create_snapshot", "Create Snapshot", "vol", [Watched(K.VS, ns), Watched(K.EVENT, ns)], make,
                "readyToUse")


def step_delete_pvcs(ctx: Context, plan: Plan, names: Sequence[str], step_name: str, label: str) -> Step:
    ns = ctx.namespace

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for name in names:
            key = ctx.key(name)
            items.append(Item(name, C.pvc_and_pv_gone(key, plan.pv_reclaim_delete), subjects=[(C.PVC, key)]))
            subs.append(Submission([name], _delete("v1", "PersistentVolumeClaim", name, ns)))
        return items, subs
    return Step(step_name, label, "vol", [Watched(K.PVC, ns), Watched(K.PV), Watched(K.EVENT, ns)], make,
                "PVC and PV gone" if plan.pv_reclaim_delete else "PVC gone and PV Released")


def step_delete_snapshot(ctx: Context, plan: Plan) -> Step:
    ns = ctx.namespace

    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        subs: list[Submission] = []
        for snap in plan.snaps:
            key = ctx.key(snap)
            items.append(Item(snap, C.snapshot_gone(key, plan.content_deleted), subjects=[(C.VS, key)]))
            subs.append(Submission([snap], _delete("snapshot.storage.k8s.io/v1", "VolumeSnapshot", snap, ns)))
        return items, subs
    return Step("delete_snapshot", "Delete Snapshot", "vol", [Watched(K.VS, ns), Watched(K.VSC), Watched(K.EVENT, ns)],
                make, "VolumeSnapshot and content gone" if plan.content_deleted else "VolumeSnapshot gone")


def build_step(name: str, ctx: Context, plan: Plan) -> Step:
    if name == "create_volume":
        return step_create_volume(ctx, plan)
    if name == "publish":
        return step_publish(ctx, plan)
    if name == "unpublish":
        return step_unpublish(ctx, plan)
    if name == "create_snapshot":
        return step_create_snapshot(ctx, plan)
    if name == "clone_from_snapshot":
        return step_create_volume(ctx, plan, names=plan.clones, label="Clone from Snapshot",
                                  step_name="clone_from_snapshot", snapshots=plan.snaps)
    if name == "delete_clone":
        return step_delete_pvcs(ctx, plan, plan.clones, "delete_clone", "Delete Clone")
    if name == "delete_snapshot":
        return step_delete_snapshot(ctx, plan)
    return step_delete_pvcs(ctx, plan, plan.vols, "delete_volume", "Delete Volume")


def skip_reason(name: str, plan: Plan, results: Sequence[Mapping[str, Any]]) -> str | None:
    """Why step `name` must not run given the earlier results, or None."""
    if name not in plan.steps:
        return "not selected: steps are %s" % ", ".join(plan.steps)
    for prev in results:
        if prev["status"] in BROKEN_STEP_STATUSES:
            how = {"timeout": "timed out", "failed": "failed", "disturbed": "was disturbed"}[prev["status"]]
            return "not run: step %s %s" % (prev["name"], how)
    if name in SNAPSHOT_STEPS and plan.snapshot_skip:
        return plan.snapshot_skip
    by_name = {r["name"]: r for r in results}
    for need in NEEDS.get(name, ()):
        r = by_name.get(need)
        if r is None or r["status"] == "skipped":
            return "needs step %s, which %s" % (need, "was skipped (%s)" % r.get("reason") if r else "did not run")
    return None


def run(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    """Run the 8 steps in order; each result goes to ctx.record at once. Returns the results."""
    results: list[dict[str, Any]] = []
    for name, label in STEPS:
        why = skip_reason(name, plan, results)
        if why:
            result = skipped(name, label, "vol", why)
        else:
            try:
                result = run_step(ctx.client, build_step(name, ctx, plan), ctx.options)
            except StepError as e:
                result = {"name": name, "label": label, "unit": "vol", "status": "failed", "reason": str(e)}
        results.append(result)
        ctx.record(result)
    return results
