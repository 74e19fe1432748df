# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enable or disable parallel disk attach on an ACK cluster: read, plan, then change only what differs.

What "enabled" means (seed 000 and kubernetes-sigs/alibaba-cloud-csi-driver):
- ECS whitelist: tag supportConcurrencyAttach=true (and supportConcurrencyDetach=true for detach) on every
  existing ECS instance of the cluster, and in every node pool's scaling_group.tags so that new nodes get it;
- the provisioner addon (managed-csiprovisioner or csi-provisioner) has DiskADController=true and
  DiskParallelAttach=true (+ DiskParallelDetach=true) in its FeatureGate, then csi-plugin has
  DiskADController=true - controller first, then node, as the driver requires.
Disabling undoes exactly that in reverse order (csi-plugin, provisioner, then the tags) and touches no other
gate, tag or config key.
"Controller attach only" (parallel=False) is the state between: DiskADController=true on both addons (controller
first), DiskParallelAttach/DiskParallelDetach off the provisioner, then the whitelist tags removed, since the
controller then attaches one disk at a time per node (pkg/disk/controllerserver.go: NewSlots(1, 1) unless
DiskParallelAttach) and ECS never sees two operations at once on an instance.

Every step is idempotent and re-planned from what the APIs report, so a run that stopped half-way (a failed
call, a timeout, a killed process) is completed by the next run, and a run with nothing to do makes no write
call. Tagging stops the run before any addon is changed if any tag call failed, because parallel attach
without the ECS whitelist makes ECS reject concurrent attaches.
"""
from __future__ import annotations


import time
from typing import Any, Callable, Mapping, TypeVar

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import featuregates
from ansible_collections.storageperf.k8s.plugins.module_utils.common import versions
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError, WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import Predicate, poll
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.api import (
    CSI_PLUGIN, TAG_RESOURCES_MAX_IDS, AckCluster, cluster_id_problem)
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.aliyun import AliyunClient, batches, first_errors
from ansible_collections.storageperf.k8s.plugins.module_utils.ack.errors import AliyunError

ATTACH_TAG = "supportConcurrencyAttach"
DETACH_TAG = "supportConcurrencyDetach"
MIN_CLUSTER_VERSION = "1.26"
MIN_CSI_VERSION = "v1.30.4"
MANAGED_GATES = ("DiskADController", "DiskParallelAttach", "DiskParallelDetach")
PARALLEL_GATES = ("DiskParallelAttach", "DiskParallelDetach")
SETTLING_STATES = ("updating", "upgrading", "deleting", "installing")

T = TypeVar("T")


class AttachError(StoragePerfError):
    """A failure after which the module reports what it did so far (result) and what went wrong (msg)."""

    def __init__(self, msg: str, result: Mapping[str, Any] | None = None) -> None:
        super().__init__(msg, result=result)


def wanted_tags(detach: bool) -> dict[str, str]:
    tags = {ATTACH_TAG: "true"}
    if detach:
        tags[DETACH_TAG] = "true"
    return tags


def provisioner_gates(detach: bool) -> dict[str, bool]:
    gates = {"DiskADController": True, "DiskParallelAttach": True}
    if detach:
        gates["DiskParallelDetach"] = True
    return gates


NODE_GATES = {"DiskADController": True}
CONTROLLER_ONLY_GATES = {"DiskADController": True}


def tag_state(state: str, parallel: bool) -> str:
    """Whether the ECS whitelist tags should be there: only for parallel attach (serial attach never needs them)."""
    return "present" if state == "present" and parallel else "absent"


def pool_tags_after(tags: list[dict[str, str]], state: str, detach: bool) -> list[dict[str, str]]:
    """The node pool's whole scaling_group.tags list after the change (ModifyClusterNodePool replaces it)."""
    if state == "absent":
        return [t for t in tags if t.get("key") not in (ATTACH_TAG, DETACH_TAG)]
    want = wanted_tags(detach)
    out = [dict(t, value=want[t["key"]]) if t.get("key") in want else dict(t) for t in tags]
    have = {t.get("key") for t in out}
    out += [{"key": k, "value": v} for k, v in sorted(want.items()) if k not in have]
    return out


def instance_groups(nodes: list[dict[str, Any]], tags: Mapping[str, Mapping[str, str]], state: str,
                    detach: bool) -> dict[tuple[Any, ...], list[str]]:
    """{tuple of tag keys/pairs: [instance ids]}: instances that need the same TagResources/UntagResources call.

    present: key is ((key, value), ...) still missing; absent: key is (key, ...) present on the instance."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    want = wanted_tags(detach)
    for n in nodes:
        if not n["is_aliyun_node"]:
            continue  # not an ECS instance (e.g. an on-premises node): there is nothing to tag
        have = tags.get(n["instance_id"]) or {}
        key: tuple[Any, ...]
        if state == "absent":
            key = tuple(k for k in (ATTACH_TAG, DETACH_TAG) if k in have)
        else:
            key = tuple((k, v) for k, v in sorted(want.items()) if have.get(k) != v)
        if key:
            groups.setdefault(key, []).append(n["instance_id"])
    return groups


def addon_order(state: str, provisioner: str | None) -> list[tuple[str | None, str]]:
    """Controller first when enabling, node first when disabling."""
    order = [(provisioner, "controller"), (CSI_PLUGIN, "node")]
    return order if state == "present" else list(reversed(order))


def gate_after(gate: str, role: str, state: str, detach: bool, parallel: bool = True) -> str:
    if state == "absent":
        return featuregates.remove(gate, MANAGED_GATES)
    if role == "controller" and not parallel:
        # DiskADController alone: the controller attaches, one disk at a time per node (NewSlots(1, 1))
        return featuregates.merge(featuregates.remove(gate, PARALLEL_GATES), CONTROLLER_ONLY_GATES)
    return featuregates.merge(gate, provisioner_gates(detach) if role == "controller" else NODE_GATES)


def version_problems(cluster: Mapping[str, Any], addons: Mapping[str, Mapping[str, Any]], provisioner: str | None) -> list[str]:
    problems = [versions.check_minimum("the cluster (Kubernetes)", cluster.get("version"), MIN_CLUSTER_VERSION),
                versions.check_minimum("addon csi-plugin", (addons.get(CSI_PLUGIN) or {}).get("version"),
                                       MIN_CSI_VERSION)]
    if provisioner is None:
        problems.append("neither managed-csiprovisioner nor csi-provisioner is installed: install the provisioner "
                        "addon (%s or later) first" % MIN_CSI_VERSION)
    else:
        problems.append(versions.check_minimum("addon %s" % provisioner, addons[provisioner].get("version"),
                                               MIN_CSI_VERSION))
    return [p for p in problems if p]


class ParallelAttach:
    def __init__(self, client: AliyunClient, params: Mapping[str, Any], check_mode: bool = False, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.params = params
        self.state = params["state"]
        self.detach = bool(params.get("detach"))
        # parallel=False: DiskADController without DiskParallelAttach (the controller attaches, serially)
        self.parallel = params["parallel"] is not False
        self.tags = tag_state(self.state, self.parallel)
        self.check_mode = check_mode
        self.ack = AckCluster(client, params["cluster_id"])
        self._sleep = sleep
        self._clock = clock
        self.warnings: list[str] = []
        self.result: dict[str, Any] = {"changed": False, "state": self.state, "detach": self.detach, "parallel": self.parallel}

    # reading ------------------------------------------------------------------------------------
    def gather(self) -> dict[str, Any]:
        cluster = self.ack.detail()
        addons = self.ack.addons()
        provisioner = AckCluster.provisioner(addons)
        self.result["cluster"] = cluster
        self.result["provisioner"] = provisioner
        if self.state == "present":
            problems = version_problems(cluster, addons, provisioner)
            if problems:
                raise AttachError("parallel disk attach needs: " + "; ".join(problems) + ". Nothing was changed.",
                                  self.result)
        configs = {name: self.ack.addon(name) for name in (provisioner, CSI_PLUGIN) if name in addons}
        pools = self.ack.node_pools()
        nodes = self.ack.nodes()
        tags = self.ack.instance_tags([n["instance_id"] for n in nodes if n["is_aliyun_node"]])
        return {"cluster": cluster, "addons": addons, "provisioner": provisioner, "configs": configs,
                "pools": pools, "nodes": nodes, "tags": tags}

    def preflight_warnings(self, facts: dict[str, Any]) -> None:
        """Disks the controller cannot attach, and instance types that attach few disks."""
        instance_ids = {n["instance_id"] for n in facts["nodes"]}
        types = self.ack.instance_types([n["instance_type"] for n in facts["nodes"]])
        threshold = int(self.params["disk_quantity_warning"])
        low = sorted(t for t, v in types.items() if v.get("disk_quantity") is not None and v["disk_quantity"] <= threshold)
        for t in low:
            count = sum(1 for n in facts["nodes"] if n["instance_type"] == t)
            self.warnings.append("%d node(s) of instance type %s can attach at most %s disks: parallel attach helps "
                                 "little there" % (count, t, types[t]["disk_quantity"]))
        legacy = [d for d in self.ack.disks() if not d["serial_number"] and d["instance_id"] in instance_ids]
        for d in legacy:
            self.warnings.append("disk %s on instance %s has no serial number (created before 2020-06-10): with "
                                 "DiskADController the controller cannot attach it again once it is detached; "
                                 "migrate its data to a new disk" % (d["disk_id"], d["instance_id"]))
        self.result["instance_types"] = types
        self.result["low_disk_quantity_instance_types"] = low
        self.result["disks_without_serial"] = legacy

    # planning -----------------------------------------------------------------------------------
    def plan(self, facts: dict[str, Any]) -> dict[str, Any]:
        after: list[dict[str, str]] | str  # a pool's tags, then an addon's FeatureGate
        pools = []
        for p in facts["pools"]:
            after = pool_tags_after(p["tags"], self.tags, self.detach)
            if after != p["tags"]:
                pools.append({"nodepool_id": p["nodepool_id"], "name": p["name"], "tags_before": p["tags"],
                              "tags_after": after, "state": p.get("state")})
        groups = instance_groups(facts["nodes"], facts["tags"], self.tags, self.detach)
        addons = []
        for name, role in addon_order(self.state, facts["provisioner"]):
            cfg = facts["configs"].get(name)
            if cfg is None:
                continue
            after = gate_after(cfg["feature_gate"], role, self.state, self.detach, self.parallel)
            addons.append({"name": name, "role": role, "feature_gate_before": cfg["feature_gate"],
                           "feature_gate_after": after, "changed": after != cfg["feature_gate"],
                           "state": cfg["state"]})
        return {"pools": pools, "groups": groups, "addons": addons}

    def diff(self, facts: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
        def pool_view(tags_by_pool: Callable[[dict[str, Any]], list[dict[str, str]]]) -> dict[str, dict[str, str]]:
            return {p["name"] or p["nodepool_id"]: {t["key"]: t["value"] for t in tags_by_pool(p)}
                    for p in facts["pools"]}

        changed_pools = {p["nodepool_id"]: p["tags_after"] for p in plan["pools"]}
        keys = (ATTACH_TAG, DETACH_TAG)

        def instance_view(after: bool) -> dict[str, str]:
            """instance id -> "key=value,..." of the two whitelist tags, before or after the change."""
            moved = {i for ids in plan["groups"].values() for i in ids}
            out = {}
            for n in facts["nodes"]:
                if not n["is_aliyun_node"]:
                    continue
                have = {k: v for k, v in (facts["tags"].get(n["instance_id"]) or {}).items() if k in keys}
                if after and n["instance_id"] in moved:
                    have = dict(have, **wanted_tags(self.detach)) if self.tags == "present" else {}
                out[n["instance_id"]] = ",".join("%s=%s" % kv for kv in sorted(have.items()))
            return out

        before = {"node_pool_tags": pool_view(lambda p: p["tags"]),
                  "instance_tags": instance_view(False),
                  "feature_gates": {a["name"]: a["feature_gate_before"] for a in plan["addons"]}}
        after = {"node_pool_tags": pool_view(lambda p: changed_pools.get(p["nodepool_id"], p["tags"])),
                 "instance_tags": instance_view(True),
                 "feature_gates": {a["name"]: a["feature_gate_after"] for a in plan["addons"]}}
        return {"before": before, "after": after}

    # changing -----------------------------------------------------------------------------------
    def tag(self, facts: dict[str, Any], plan: dict[str, Any]) -> None:
        """Node pools and instances, all calls in parallel up to the client's concurrency."""
        def modify_pool(p: dict[str, Any]) -> dict[str, Any]:
            # ACK refuses to modify a node pool that is still updating (scaling, or a change made just before)
            if p.get("state") not in (None, "active"):
                self.wait_for_pool(p["nodepool_id"])
            return self.ack.modify_node_pool_tags(p["nodepool_id"], p["tags_after"])

        calls = []
        for key, ids in sorted(plan["groups"].items()):
            for chunk in batches(ids, TAG_RESOURCES_MAX_IDS):
                calls.append((key, chunk))

        def tag_instances(call: tuple[tuple[Any, ...], list[str]]) -> dict[str, Any]:
            key, chunk = call
            if self.tags == "absent":
                return self.ack.untag_instances(chunk, key)
            return self.ack.tag_instances(chunk, dict(key))

        # one pool of workers for both kinds of call, so node pools and instance batches overlap
        work = [("pool", p) for p in plan["pools"]] + [("instances", c) for c in calls]
        results = self.client.parallel(lambda w: modify_pool(w[1]) if w[0] == "pool" else tag_instances(w[1]), work)
        pool_results = [(w[1], r, e) for w, r, e in results if w[0] == "pool"]
        instance_results = [(w[1], r, e) for w, r, e in results if w[0] == "instances"]
        done_pools = [p["nodepool_id"] for p, _r, e in pool_results if e is None]
        done_instances = sum(len(c[1]) for c, _r, e in instance_results if e is None)
        self.result["node_pools_changed"] = done_pools
        self.result["instances_changed"] = done_instances
        failures = [{"node_pool": p["nodepool_id"], "error": e.msg, "code": e.code}
                    for p, _r, e in pool_results if e is not None]
        failures += [{"instances": len(c[1]), "first_instance": c[1][0], "error": e.msg, "code": e.code}
                     for c, _r, e in instance_results if e is not None]
        if failures:
            self.result["failures"] = failures
            self.result["changed"] = bool(done_pools or done_instances)
            raise AttachError("%d of %d tagging calls failed (%s); %d instance(s) and %d node pool(s) were changed. "
                              "No addon was changed. Fix the cause and run again: the run continues where this one "
                              "stopped." % (len(failures), len(pool_results) + len(instance_results),
                                            failures[0]["error"], done_instances, len(done_pools)), self.result)

    def poll(self, probe: Callable[[], T], done: Callable[[T], object], what: str,
             timed_out: Callable[[T], Exception] | None = None) -> T:
        """probe() until done(value) holds, the delay growing 1.5x from 0.25 s to 10 s, within wait_timeout.

        On timeout: raise timed_out(last value), or return the last value when timed_out is None.
        """
        try:
            return poll(probe, Predicate(what, done), float(self.params["wait_timeout"]), first=0.25,
                        cap=10.0, factor=1.5, sleep=self._sleep, clock=self._clock)
        except WaitTimeout as e:
            if timed_out is None:
                return e.last
            raise timed_out(e.last) from None

    def wait_for_pool(self, nodepool_id: str) -> None:
        what = "node pool %s to become active" % nodepool_id
        self.poll(lambda: self.ack.node_pool_state(nodepool_id), lambda state: state in (None, "active"), what,
                  lambda _state: AliyunError("timed out after %ss waiting for %s (wait_timeout); run again later"
                                             % (self.params.get("wait_timeout"), what), code="Timeout"))

    def settle(self, name: str) -> dict[str, Any]:
        """Wait while the addon is updating; return its fresh view. Fails on timeout."""
        return self.poll(lambda: self.ack.addon(name), lambda cfg: cfg["state"] not in SETTLING_STATES,
                         "addon %s to settle" % name,
                         lambda cfg: AttachError("addon %s is still %s after %ss: wait for it in the ACK console, then "
                                                 "run again (wait_timeout)"
                                                 % (name, cfg["state"], self.params.get("wait_timeout")), self.result))

    def configure_addon(self, name: str, role: str, report: dict[str, Any]) -> None:
        cfg = self.settle(name)
        after = gate_after(cfg["feature_gate"], role, self.state, self.detach, self.parallel)
        if after != cfg["feature_gate"]:
            config = dict(cfg["config"], FeatureGate=after)
            self.ack.modify_addon(name, config)
            report["changed"] = True
            self.result["changed"] = True
            # a change can be accepted before the addon reports `updating`: wait until it shows our gate settled;
            # what it shows at the deadline is judged below
            cfg = self.poll(lambda: self.settle(name),
                            lambda cfg: cfg["feature_gate"] == after or cfg["state"] == "failed",
                            "addon %s to run FeatureGate %s" % (name, after))
        report["state"] = cfg["state"]
        report["feature_gate_after"] = cfg["feature_gate"]
        if cfg["state"] == "failed":
            raise AttachError("addon %s ended in state failed with FeatureGate %r: see its events in the ACK console "
                              "(Operations > Add-ons); run with state=absent to roll the gates back"
                              % (name, cfg["feature_gate"]), self.result)
        if cfg["state"] != "active":
            raise AttachError("addon %s is %s, not active: check it in the ACK console, then run again"
                              % (name, cfg["state"]), self.result)

    # the run ------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        facts = self.gather()
        if self.state == "present":
            self.preflight_warnings(facts)
        plan = self.plan(facts)
        self.result["node_pools"] = plan["pools"]
        self.result["node_pools_total"] = len(facts["pools"])
        self.result["instances_total"] = sum(1 for n in facts["nodes"] if n["is_aliyun_node"])
        self.result["instances_to_change"] = sum(len(v) for v in plan["groups"].values())
        self.result["non_ecs_nodes"] = [n["node_name"] for n in facts["nodes"] if not n["is_aliyun_node"]]
        self.result["addons"] = plan["addons"]
        self.result["diff"] = self.diff(facts, plan)
        tagging = bool(plan["pools"] or plan["groups"])
        addons_pending = any(a["changed"] or a["state"] != "active" for a in plan["addons"])
        if self.check_mode:
            self.result["changed"] = tagging or any(a["changed"] for a in plan["addons"])
            self.result["node_pools_changed"] = [p["nodepool_id"] for p in plan["pools"]]
            self.result["instances_changed"] = self.result["instances_to_change"]
            return self.result
        self.result["node_pools_changed"], self.result["instances_changed"] = [], 0
        # tags before the gates that need them, and removed only after the gates that needed them are gone
        if self.tags == "present" and tagging:
            self.tag(facts, plan)
            self.result["changed"] = True
        if addons_pending:
            for report in plan["addons"]:
                report["changed"] = False
                self.configure_addon(report["name"], report["role"], report)
        if self.tags == "absent" and tagging:
            self.tag(facts, plan)
            self.result["changed"] = True
        return self.result


# The bounds a person can get wrong before any call: (option, low, high).
PARAM_BOUNDS = (("concurrency", 1, 64), ("api_retries", 1, 20), ("wait_timeout", 1, 86400), ("api_timeout", 1, 3600))


def refuse_params(params: Mapping[str, Any]) -> None:
    """Fail (AttachError) on out-of-range options, contradictory ones and a malformed cluster id, before the
    client is built."""
    if params.get("parallel") is False and params.get("detach") and params.get("state") == "present":
        raise AttachError("detach=true needs parallel=true: parallel=false turns on DiskADController alone (serial "
                          "attach and detach by the controller); set parallel=true, or detach=false")
    for name, low, high in PARAM_BOUNDS:
        if not low <= params[name] <= high:
            raise AttachError("%s must be between %d and %d, got %d" % (name, low, high, params[name]))
    problem = cluster_id_problem(params["cluster_id"])
    if problem:
        raise AttachError(problem)


def apply_parallel_attach(client: AliyunClient, params: Mapping[str, Any], check_mode: bool = False, diff_wanted: bool = False,
                          warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The ack_parallel_attach module: check the options, run the plan, report warnings (warn), API call counts and,
    with diff_wanted, the diff. A failure raises AttachError with everything done so far as its result."""
    refuse_params(params)
    runner = ParallelAttach(client, params, check_mode=check_mode)
    error = None
    try:
        runner.run()
    except (AttachError, AliyunError) as e:
        error = e
        if isinstance(e, AliyunError):
            runner.result.setdefault("failures", first_errors([(e.action, None, e)]))
    for warning in runner.warnings:
        if warn is not None:
            warn(warning)
    result = runner.result
    result["api_calls"] = client.stats()
    diff = result.pop("diff", None)
    if diff_wanted and diff is not None:
        result["diff"] = diff
    if error is not None:
        raise AttachError(error.msg, result) from error
    return result
