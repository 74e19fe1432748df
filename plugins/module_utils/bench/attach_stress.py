# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seed 000's attach-stress test: many pods with 2 disks each, pinned to one node, started at once.

Once per run, as in the seed: StorageClass alibabacloud-disk (cloud_auto, WaitForFirstConsumer),
StatefulSet attach-stress with 1 replica (Parallel pod management, nodeAffinity to one node),
wait for it, scale to 0 (waiting for the disks to detach); with prewarm (default) also scale to R
and back, so every disk exists before the first timed step. The StatefulSet lives in one namespace
for the whole run and is reused by every variant and repetition, as the seed reused it for its
second (parallel) run. Then per repetition the two timed steps:

  scale_up    scale to R replicas  -> every pod Ready and each of its volumes' VolumeAttachment
                                      attached on the node (time per pod; per VolumeAttachment in
                                      `attachments` and the attach_* metrics)
  scale_down  scale to 0           -> every pod gone and no VolumeAttachment left (detach included)

R is capped by the node's disk limit: the CSINode's allocatable count for the driver, else the
given disk_limit (the instance type's DescribeInstanceTypes DiskQuantity, 56 for
ecs.g7se.16xlarge), minus the disks already attached there, divided by the volumes per pod.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from ansible_collections.storageperf.k8s.plugins.module_utils.bench import conditions as C
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import kinds as K
from ansible_collections.storageperf.k8s.plugins.module_utils.bench import manifests as M
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.options import complete
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import skipped
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.engine import Step, StepError, Submission, Watched, run_step
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.quantity import quantity_problem
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.tracker import Item
from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError, K8sUnreachable

if TYPE_CHECKING:  # for annotations only: no import arrow
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.context import Context
    from ansible_collections.storageperf.k8s.plugins.module_utils.bench.world import View
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

BENCHMARK = "attach_stress"
# one owner namespace for the whole run: variants reuse the StatefulSet and its disks (see _setup)
SHARED_NAMESPACE = True
STEPS = (("scale_up", "Scale up (pods Ready, disks attached)"),
         ("scale_down", "Scale to 0 (pods gone, disks detached)"))
HOSTNAME_LABEL = "kubernetes.io/hostname"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SEED_STORAGE_CLASS = "alibabacloud-disk"
SEED_REPLICAS = 28
# bench_plan's attach_stress suboptions: the one place their defaults are written (the seed's 28 pods with 2 disks
# of its StorageClass alibabacloud-disk, cloud_auto, on the Alibaba Cloud disk driver)
OPTIONS = {
    "replicas": dict(type="int", default=SEED_REPLICAS),
    "node": dict(type="str"),
    "storage_class": dict(type="str", default=SEED_STORAGE_CLASS),
    "create_storage_class": dict(type="bool", default=False),
    "provisioner": dict(type="str", default="diskplugin.csi.alibabacloud.com"),
    "disk_type": dict(type="str", default="cloud_auto"),
    "volumes_per_pod": dict(type="int", default=2),
    "size": dict(type="str", default="1Gi"),
    "disk_limit": dict(type="int", default=0),
    "statefulset": dict(type="str", default="attach-stress"),
    "prewarm": dict(type="bool", default=True),
    "pod_image": dict(type="str", default=M.SEED_BUSYBOX),
}
# the maxima of its options (docs/limits.md), checked by bench_plan
LIMITS = {"replicas": L.PODS_PER_NODE, "volumes_per_pod": L.DISKS_PER_NODE, "disk_limit": L.DISKS_PER_NODE,
          "size": L.CLOUD_DISK_SIZE}
# the help of each option: bench_plan's docs are generated from DOCS, OPTIONS and LIMITS (tests/support/bench_yaml.py)
DOC_TITLE = "attach-stress"
DOCS = {
    "replicas": [
        "Replicas to scale to (the seed's 28); capped by the node's disk limit.",
    ],
    "node": [
        "Node to pin the pods to; empty picks the first Ready node that has the disk driver.",
    ],
    "storage_class": [
        "StorageClass of the disks; the seed's class is created as in the seed when it does not exist.",
        "Any other missing class is refused (listing the classes that exist) unless "
        "O(attach_stress.create_storage_class) is on.",
    ],
    "create_storage_class": [
        "Create O(attach_stress.storage_class) (O(attach_stress.provisioner), O(attach_stress.disk_type)) when it "
        "does not exist, labelled with the run so the cleanup removes it.",
    ],
    "provisioner": [
        "CSI driver of the disks.",
    ],
    "disk_type": [
        "The StorageClass's C(type) parameter.",
    ],
    "volumes_per_pod": [
        "Disks per pod.",
    ],
    "size": [
        "Size of every disk.",
    ],
    "disk_limit": [
        "Disks the node can take, used when its CSINode has no allocatable count for the driver "
        "(DescribeInstanceTypes C(DiskQuantity), 56 for ecs.g7se.16xlarge). 0 reads the CSINode only.",
    ],
    "statefulset": [
        "Name of the StatefulSet.",
    ],
    "prewarm": [
        "Before the first timed scale-up of the run, scale to O(attach_stress.replicas) and back once, so every "
        "disk exists and each variant times attaching, not provisioning (the seed's parallel run found its disks "
        "there already). V(false) runs the seed's sequence exactly; the first timed scale-up then provisions too.",
    ],
    "pod_image": [
        "Image of the pods.",
    ],
}
# what preflight() reads from the cluster into the plan; bench_plan stores it, bench_measure sets it back
READ_BY_PREFLIGHT = ("replicas", "node", "node_name", "instance_type", "disk_limit", "disk_limit_source",
                     "attached_before", "attach_required", "create_storage_class", "messages")
SWEEP_PARAMETER = None  # attach_stress has no sweep
TITLE = "Attach stress: %(replicas)s pods x %(volumes_per_pod)s disks on one node"
SWEEP_TITLE = TITLE  # attach_stress has no sweep


class Plan:
    def __init__(self, params: Mapping[str, Any] | None) -> None:
        params = complete(OPTIONS, params)
        self.replicas_requested = int(params["replicas"])
        self.replicas = self.replicas_requested
        self.node = params["node"] or None
        self.node_name: str | None = None
        self.instance_type: str | None = None
        self.storage_class = params["storage_class"]
        self.provisioner = params["provisioner"]
        self.disk_type = params["disk_type"]
        self.volumes_per_pod = int(params["volumes_per_pod"])
        self.size = params["size"]
        self.image = params["pod_image"]
        self.name = params["statefulset"]
        self.disk_limit_param = int(params["disk_limit"])
        self.prewarm = params["prewarm"] not in (False, "false", "no", 0)
        self.disk_limit: int | None = None
        self.disk_limit_source: str | None = None
        self.attached_before = 0
        self.attach_required = True
        self.create_storage_class = True
        # a missing class is created only when it is the seed's own or asked for: a typo must not benchmark a new class
        self.create_missing_class = bool(params.get("create_storage_class")) or self.storage_class == SEED_STORAGE_CLASS
        self.messages: list[str] = []

    def pod(self, i: int) -> str:
        return "%s-%d" % (self.name, i)

    def claims(self, i: int) -> list[str]:
        return ["volume-%d-%s" % (v, self.pod(i)) for v in range(self.volumes_per_pod)]


def problems(params: Mapping[str, Any] | None) -> list[str]:
    params = complete(OPTIONS, params)
    out: list[str] = []
    if int(params["replicas"]) < 1:
        out.append("replicas must be at least 1 (the seed scales to %d)" % SEED_REPLICAS)
    if int(params["volumes_per_pod"]) < 1:
        out.append("volumes_per_pod must be at least 1 (the seed mounts 2)")
    if int(params["disk_limit"]) < 0:
        out.append("disk_limit must be 0 (read it from the node's CSINode) or the node's disk limit")
    size = quantity_problem("size", params["size"]) or L.CLOUD_DISK_SIZE.problem("size", params["size"])
    if size:
        out.append(size)
    return out


def cleans_up(options: Mapping[str, Any], last: bool) -> bool:
    """Never after a repetition: the run's one namespace is shared by its variants (bench_cleanup removes it)."""
    return False


def sweep_point(plan: Plan) -> None:
    """attach_stress has no sweep: every variant is measured at one size."""
    return None


def facts(plan: Plan) -> dict[str, Any]:
    """The plan as the result document's parameters and the module's `plan`."""
    return {"replicas": plan.replicas, "replicas_requested": plan.replicas_requested, "node": plan.node_name,
            "volumes_per_pod": plan.volumes_per_pod, "storage_class": plan.storage_class,
            "provisioner": plan.provisioner, "attach_required": plan.attach_required,
            "disk_limit": plan.disk_limit, "disk_limit_source": plan.disk_limit_source,
            "attached_before": plan.attached_before, "instance_type": plan.instance_type, "size": plan.size,
            "prewarm": plan.prewarm}


def plan_messages(plan: Plan, preflight: bool = False) -> list[str]:
    """What preflight found (replicas capped, a class to create), for the module's warnings."""
    return list(plan.messages)


def _ready(node: Mapping[str, Any]) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _csinode_limit(client: Client, node_name: str, driver: str) -> tuple[int | None, bool]:
    csinode = client.get("storage.k8s.io/v1", "CSINode", node_name, missing_ok=True)
    for d in ((csinode or {}).get("spec") or {}).get("drivers") or []:
        if d.get("name") == driver:
            count = (d.get("allocatable") or {}).get("count")
            return int(count) if count is not None else None, True
    return None, False


def preflight(client: Client, plan: Plan) -> Plan:
    """Pick the node, read its disk limit and cap the replicas; check the StorageClass and CSIDriver."""
    nodes, _ = client.list("v1", "Node")
    by_name = {n["metadata"]["name"]: n for n in nodes}
    if plan.node:
        node = by_name.get(plan.node)
        if node is None:
            matches = [n for n in nodes if (n["metadata"].get("labels") or {}).get(HOSTNAME_LABEL) == plan.node]
            node = matches[0] if matches else None
        if node is None:
            raise K8sError("node %s does not exist: give the name of a Ready node (kubectl get nodes)" % plan.node,
                           404, "NotFound")
        if not _ready(node):
            raise K8sError("node %s is not Ready: choose a Ready node" % plan.node, 422, "Invalid")
    else:
        candidates = [n for n in sorted(nodes, key=lambda n: n["metadata"]["name"])
                      if _ready(n) and not (n.get("spec") or {}).get("unschedulable")]
        with_driver = [n for n in candidates if _csinode_limit(client, n["metadata"]["name"], plan.provisioner)[1]]
        chosen = (with_driver or candidates)[:1]
        if not chosen:
            raise K8sError("no Ready, schedulable node to pin the attach-stress pods to: give node", 422, "Invalid")
        node = chosen[0]
    node_name = node["metadata"]["name"]
    plan.node = (node["metadata"].get("labels") or {}).get(HOSTNAME_LABEL, node_name)
    plan.node_name = node_name
    plan.instance_type = (node["metadata"].get("labels") or {}).get(INSTANCE_TYPE_LABEL)

    limit, _ = _csinode_limit(client, node_name, plan.provisioner)
    if limit is not None:
        plan.disk_limit, plan.disk_limit_source = limit, "CSINode %s allocatable count for %s" % (node_name, plan.provisioner)
    elif plan.disk_limit_param:
        plan.disk_limit, plan.disk_limit_source = plan.disk_limit_param, "disk_limit (instance type %s)" % plan.instance_type
    vas, _ = client.list("storage.k8s.io/v1", "VolumeAttachment")
    plan.attached_before = sum(1 for va in vas if (va.get("spec") or {}).get("nodeName") == node_name
                               and (va.get("spec") or {}).get("attacher") == plan.provisioner)
    if plan.disk_limit is None:
        plan.messages.append("the disk limit of node %s is unknown (its CSINode has no allocatable count for %s and "
                             "disk_limit is 0): replicas are not capped; give disk_limit (DescribeInstanceTypes "
                             "DiskQuantity of %s) to cap them" % (node_name, plan.provisioner, plan.instance_type))
    else:
        cap = (plan.disk_limit - plan.attached_before) // plan.volumes_per_pod
        if cap < 1:
            msg = ("node %s has no room for a pod with %d disks: limit %d (%s), %d attached already. Free disks on "
                   "it or choose another node" % (node_name, plan.volumes_per_pod, plan.disk_limit,
                                                  plan.disk_limit_source, plan.attached_before))
            raise K8sError(msg, 422, "Invalid")
        if plan.replicas > cap:
            plan.messages.append("replicas capped from %d to %d: node %s takes %d disks (%s), %d attached already, %d "
                                 "per pod" % (plan.replicas, cap, node_name, plan.disk_limit, plan.disk_limit_source,
                                              plan.attached_before, plan.volumes_per_pod))
            plan.replicas = cap

    sc = client.get("storage.k8s.io/v1", "StorageClass", plan.storage_class, missing_ok=True)
    if sc is None and not plan.create_missing_class:
        existing = sorted(c["metadata"]["name"] for c in client.list("storage.k8s.io/v1", "StorageClass")[0])
        raise K8sError("storage_class %s does not exist; existing classes: %s. Give one of them, or %s (the seed's "
                       "class, created when missing), or set create_storage_class to create %s with provisioner %s "
                       "and type %s" % (plan.storage_class, ", ".join(existing) or "none", SEED_STORAGE_CLASS,
                                        plan.storage_class, plan.provisioner, plan.disk_type), 404, "NotFound")
    if sc is not None:
        if sc.get("provisioner") != plan.provisioner:
            raise K8sError("StorageClass %s exists with provisioner %s, not %s: give another storage_class name, or "
                           "provisioner %s" % (plan.storage_class, sc.get("provisioner"), plan.provisioner,
                                               sc.get("provisioner")), 409, "Conflict")
        plan.create_storage_class = False
        if sc.get("volumeBindingMode") != "WaitForFirstConsumer":
            plan.messages.append("StorageClass %s binds %s, not WaitForFirstConsumer as in the seed"
                                 % (plan.storage_class, sc.get("volumeBindingMode")))
    driver = client.get("storage.k8s.io/v1", "CSIDriver", plan.provisioner, missing_ok=True)
    plan.attach_required = bool(((driver or {}).get("spec") or {}).get("attachRequired", True))
    return plan


def ensure_storage_class(ctx: Context, plan: Plan) -> bool:
    """Create the seed's StorageClass (labelled, so the cleanup removes it) unless one exists."""
    if not plan.create_storage_class:
        return False
    try:
        ctx.client.create(M.attach_stress_storage_class(plan.storage_class, plan.provisioner, plan.disk_type,
                                                        ctx.labels))
    except K8sError as e:
        if e.status != 409:
            raise
    plan.create_storage_class = False
    return True


def _scale(ctx: Context, plan: Plan, replicas: int) -> Callable[[Client], Any]:
    return lambda client: client.patch("apps/v1", "StatefulSet", plan.name, {"spec": {"replicas": replicas}},
                                       namespace=ctx.namespace, subresource="scale")


def _watches(ctx: Context, plan: Plan) -> list[Watched]:
    ns = ctx.namespace
    w = [Watched(K.POD, ns), Watched(K.PVC, ns), Watched(K.EVENT, ns)]
    if plan.attach_required:
        w.append(Watched(K.VA))
    return w


def step_up(ctx: Context, plan: Plan, replicas: int, name: str = "scale_up", label: str = STEPS[0][1],
            create: bool = False) -> Step:
    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        for i in range(replicas):
            pod_key = ctx.key(plan.pod(i))
            claims = [ctx.key(c) for c in plan.claims(i)]
            items.append(Item(plan.pod(i), C.published(pod_key, claims, plan.attach_required),
                              subjects=[(C.POD, pod_key)] + [(C.PVC, c) for c in claims], volumes=claims))
        call: Callable[[Client], Any]
        if create:
            body = M.attach_stress_statefulset(plan.name, ctx.namespace, plan.node,  # type: ignore[arg-type]  # preflight() picked it
                                               plan.storage_class, ctx.labels,
                                               replicas=replicas, volumes=plan.volumes_per_pod, size=plan.size,
                                               image=plan.image)

            def call(client: Client) -> Any:
                return client.create(body)
        else:
            call = _scale(ctx, plan, replicas)
        return items, [Submission([i.name for i in items], call)]
    return Step(name, label, "pod", _watches(ctx, plan), make,
                "Ready" + (" with every disk attached" if plan.attach_required else ""),
                attachments="attach" if plan.attach_required else None,
                metrics={"volumes": replicas * plan.volumes_per_pod})


def step_down(ctx: Context, plan: Plan, replicas: int, name: str = "scale_down", label: str = STEPS[1][1]) -> Step:
    def make(view: View) -> tuple[list[Item], list[Submission]]:
        items: list[Item] = []
        for i in range(replicas):
            pod_key = ctx.key(plan.pod(i))
            claims = [ctx.key(c) for c in plan.claims(i)]
            items.append(Item(plan.pod(i), C.unpublished(pod_key, claims), subjects=[(C.POD, pod_key)], volumes=claims))
        return items, [Submission([i.name for i in items], _scale(ctx, plan, 0))]
    return Step(name, label, "pod", _watches(ctx, plan), make,
                "gone" + (" with every disk detached" if plan.attach_required else ""),
                attachments="detach" if plan.attach_required else None,
                metrics={"volumes": replicas * plan.volumes_per_pod})


def _setup_line(result: Mapping[str, Any]) -> dict[str, Any]:
    return {k: result.get(k) for k in ("name", "status", "reason", "wall_s", "api_requests")}


def _setup(ctx: Context, plan: Plan, setup: list[dict[str, Any]]) -> None:
    """The seed's preparation, once per run: the StatefulSet with 1 replica, waited for, scaled to 0; with
    prewarm also scaled to R and back, so the R x 2 disks exist before any timed scale-up (the seed's second,
    parallel run found them there too: whenScaled Retain) and every variant times attaching, not provisioning.
    A later variant or repetition finds the StatefulSet at 0 replicas and reuses it."""
    ensure_storage_class(ctx, plan)
    sts = ctx.client.get("apps/v1", "StatefulSet", plan.name, namespace=ctx.namespace, missing_ok=True)
    if sts is None:
        steps = [step_up(ctx, plan, 1, name="setup_rollout", label="rollout of 1 replica", create=True),
                 step_down(ctx, plan, 1, name="setup_scale_to_0", label="scale to 0")]
        if plan.prewarm and plan.replicas > 1:
            steps += [step_up(ctx, plan, plan.replicas, name="setup_prewarm_up", label="provision every disk"),
                      step_down(ctx, plan, plan.replicas, name="setup_prewarm_down", label="scale to 0 again")]
    elif (sts.get("spec") or {}).get("replicas", 0) != 0 or (sts.get("status") or {}).get("replicas", 0) != 0:
        # left scaled up by an interrupted repetition: back to 0, disks detached
        steps = [step_down(ctx, plan, max(plan.replicas, (sts.get("spec") or {}).get("replicas", 0)),
                           name="setup_scale_to_0", label="scale to 0")]
    else:
        steps = []
        setup.append({"name": "setup_reuse", "status": "ok", "reason": "StatefulSet %s at 0 replicas reused" % plan.name})
    for step in steps:
        r = run_step(ctx.client, step, ctx.options)
        setup.append(_setup_line(r))
        if r["status"] != "ok":
            first = ("; %s: %s" % (r["errors"][0]["object"], r["errors"][0]["reason"])) if r.get("errors") else ""
            raise StepError("setup %s: %s%s" % (step.name, r.get("reason"), first))


def run(ctx: Context, plan: Plan) -> list[dict[str, Any]]:
    """Set up as the seed does (apply, rollout, scale to 0), then time scale_up and scale_down."""
    results: list[dict[str, Any]] = []
    setup: list[dict[str, Any]] = []
    ctx.info["setup"] = setup
    try:
        _setup(ctx, plan, setup)
    except K8sUnreachable as e:
        if getattr(e, "result", None):
            setup.append(_setup_line(e.result))
        # a setup step is not one of the benchmark's steps: the run records none
        raise K8sUnreachable(e.msg, e.status, e.reason, since=e.details.get("since"), hint=e.hint) from e
    except (StepError, K8sError) as e:
        reason = "setup failed: %s" % (e.msg if isinstance(e, K8sError) else e)
        for name, label in STEPS:
            r = {"name": name, "label": label, "unit": "pod", "status": "failed", "reason": reason}
            results.append(r)
            ctx.record(r)
        return results
    for name, label in STEPS:
        if results and results[-1]["status"] != "ok":
            r = skipped(name, label, "pod", "not run: step %s %s" % (results[-1]["name"], results[-1]["status"]))
        else:
            step = step_up(ctx, plan, plan.replicas) if name == "scale_up" else step_down(ctx, plan, plan.replicas)
            try:
                r = run_step(ctx.client, step, ctx.options)
            except StepError as e:
                r = {"name": name, "label": label, "unit": "pod", "status": "failed", "reason": str(e)}
        results.append(r)
        ctx.record(r)
    return results
