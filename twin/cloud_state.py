"""The cloud side of the twin's ACK cluster: addons and their FeatureGates, node pools, ECS instances and disks.

One CloudState lives on the cluster (`cluster.cloud`). The ACK (CS, ROA) and ECS (RPC) endpoints serve it and
change it; the storage controllers (attach-detach, provisioner) read it. It is plain data plus a change
notification, so it runs on the event loop thread like the store (no locks).

What reads what (docs/reference/alibaba.md, seed 000):
- The driver's per-node attach/detach slots come from FeatureGates only (pkg/disk/attachdetach_slot.go):
  `driver_limits(instance)`, from the gates the addon's pods run with (`effective_gates`: a config change
  applies when the addon is `active` again; `feature_gates` is the submitted config).
- The ECS tags `supportConcurrencyAttach` / `supportConcurrencyDetach` are an ECS-side whitelist the driver
  never reads: `ecs_allows_concurrent(instance, op)` is what ECS checks before it accepts a
  second concurrent AttachDisk/DetachDisk on one instance (else InvalidOperation.Conflict).
- `attach_limits(instance)` is the concurrency that actually succeeds (gates AND tags), for reports and preflights.

Change notification: `subscribe(callback)` (called with a short reason string after every change) and
`changed`, an asyncio.Event-like generation counter (`await wait_changed(gen)`), so a controller blocked on a
slot re-reads the limits when the ACK API flips a gate or ECS tags an instance.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any
from collections.abc import Callable

REGION = "cn-hangzhou"
ZONE = "cn-hangzhou-k"
CLUSTER_VERSION = "1.32.4-aliyun.1"
CSI_VERSION = "v1.30.4-8c2e0b1-aliyun"  # >= v1.30.4, the seed's minimum for parallel attach
PROVISIONER_ADDONS = ("managed-csiprovisioner", "csi-provisioner")  # managed clusters use the first

# pkg/disk/attachdetach_slot.go defaults: DISK_ATTACH_CONCURRENCY 32, detach 5 (what ECS allows)
PARALLEL_ATTACH = 32
PARALLEL_DETACH = 5

INSTANCE_TYPES: dict[str, dict[str, Any]] = {
    # DescribeInstanceTypes fields the collection reads; DiskQuantity 56 is the seed's figure
    "ecs.g7se.16xlarge": {"InstanceTypeId": "ecs.g7se.16xlarge", "InstanceTypeFamily": "ecs.g7se",
                          "CpuCoreCount": 64, "MemorySize": 256.0, "DiskQuantity": 56,
                          "EniQuantity": 8, "InstanceCategory": "General-purpose"},
    "ecs.g7.xlarge": {"InstanceTypeId": "ecs.g7.xlarge", "InstanceTypeFamily": "ecs.g7",
                      "CpuCoreCount": 4, "MemorySize": 16.0, "DiskQuantity": 16,
                      "EniQuantity": 4, "InstanceCategory": "General-purpose"},
}


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """"A=true,B=false" -> {"A": True, "B": False}; a bare name means true, as component-base parses it."""
    out: dict[str, bool] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip().lower() != "false" if v else True
    return out


def format_feature_gates(gates: dict[str, bool]) -> str:
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))


@dataclass
class Addon:
    name: str
    version: str = CSI_VERSION
    state: str = "active"  # active | updating | upgrading | deleting | failed
    config: dict[str, Any] = field(default_factory=dict)  # holds "FeatureGate": "A=true,B=false"

    def doc(self) -> dict[str, Any]:
        """GetClusterAddonInstance shape: config is a JSON string."""
        return {"name": self.name, "version": self.version, "state": self.state, "config": json.dumps(self.config)}


@dataclass
class NodePool:
    id: str
    name: str
    instance_type: str
    scaling_group_tags: list[dict[str, str]] = field(default_factory=list)


@dataclass
class Instance:
    id: str
    node_name: str
    nodepool_id: str
    instance_type: str
    tags: dict[str, str] = field(default_factory=dict)
    is_aliyun_node: bool = True
    zone: str = ZONE
    state: str = "running"


@dataclass
class Disk:
    id: str
    serial_number: str | None  # None: a disk created before 2020-06-10 (cannot be attached by the controller)
    instance_id: str | None = None
    category: str = "cloud_auto"
    size_gib: int = 20
    pv_name: str | None = None
    zone: str = ZONE
    status: str = "Available"  # Available | Attaching | In_use | Detaching
    device: str = ""  # DescribeDisks' Device; unreliable once parallel attach is on (seed 000)
    tags: dict[str, str] = field(default_factory=dict)  # DescribeDisks' Tags and its Tag.N filter


class CloudState:
    def __init__(self, cluster_id: str, region: str = REGION) -> None:
        self.region = region
        self.cluster_id = cluster_id
        self.cluster_name = "storageperf-twin"
        self.cluster_version = CLUSTER_VERSION
        self.cluster_type = "ManagedKubernetes"
        self.cluster_tags: list[dict[str, str]] = []  # DescribeClusterDetail/DescribeClustersV1 tags [{key, value}]
        self.addons: dict[str, Addon] = {}
        self.node_pools: dict[str, NodePool] = {}
        self.instances: dict[str, Instance] = {}
        self._by_node: dict[str, Instance] = {}  # node name -> instance, rebuilt when stale (instance_by_node)
        self.disks: dict[str, Disk] = {}
        self.instance_types: dict[str, dict[str, Any]] = {k: dict(v) for k, v in INSTANCE_TYPES.items()}
        # gates the running CSI pods were started with: an addon's new config applies once the addon is active again
        # (ModifyClusterAddon: updating -> pods rolled -> active); a failed rollout leaves the old pods running
        self.applied: dict[str, dict[str, bool]] = {}
        self.generation = 0
        self._callbacks: list[Callable[[str], None]] = []
        self._waiters: list[asyncio.Future] = []

    # construction ----------------------------------------------------------------------------
    @classmethod
    def from_nodes(cls, nodes: list[dict], seed: str = "", instance_type: str = "ecs.g7se.16xlarge") -> CloudState:
        """One node pool per distinct nodepool_id; one instance per node; the default CSI addons."""
        st = cls("c" + hashlib.sha1(f"{seed}cluster".encode()).hexdigest()[:32])
        for name in ("csi-plugin", "managed-csiprovisioner"):
            st.addons[name] = Addon(name, config={"FeatureGate": ""})
        for n in nodes:
            pid = n["nodepool_id"]
            if pid not in st.node_pools:
                st.node_pools[pid] = NodePool(pid, f"pool-{len(st.node_pools)}", instance_type)
            st.instances[n["instance_id"]] = Instance(n["instance_id"], n["name"], pid, instance_type)
        return st

    # change notification ---------------------------------------------------------------------
    def subscribe(self, callback: Callable[[str], None]) -> None:
        self._callbacks.append(callback)

    def notify(self, reason: str) -> None:
        for name, a in self.addons.items():
            if a.state == "active":
                self.applied[name] = self.feature_gates(name)
        for name in [n for n in self.applied if n not in self.addons]:
            del self.applied[name]
        self.generation += 1
        for cb in list(self._callbacks):
            cb(reason)
        waiters, self._waiters = self._waiters, []
        for f in waiters:
            if not f.done():
                f.set_result(self.generation)

    async def wait_changed(self, since: int, timeout: float | None = None) -> int:
        """Return once generation > since (or after timeout seconds of real time)."""
        if self.generation > since:
            return self.generation
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return self.generation

    # addons and gates ------------------------------------------------------------------------
    def provisioner_addon(self) -> str | None:
        for name in PROVISIONER_ADDONS:
            if name in self.addons:
                return name
        return None

    def feature_gates(self, addon: str) -> dict[str, bool]:
        a = self.addons.get(addon)
        return parse_feature_gates(a.config.get("FeatureGate")) if a else {}

    def set_feature_gates(self, addon: str, gates: dict[str, bool], replace: bool = False) -> dict[str, bool]:
        a = self.addons[addon]
        merged = {} if replace else self.feature_gates(addon)
        merged.update({k: bool(v) for k, v in gates.items()})
        a.config = dict(a.config, FeatureGate=format_feature_gates(merged))
        self.notify(f"addon {addon}")
        return merged

    def set_addon_config(self, addon: str, config: dict[str, Any]) -> None:
        """ModifyClusterAddon: replace the config (the endpoint parses the JSON string)."""
        self.addons[addon].config = dict(config)
        self.notify(f"addon {addon}")

    def effective_gates(self, addon: str) -> dict[str, bool]:
        """The gates the addon's running pods use (what the driver obeys), see `applied`."""
        if addon not in self.applied and addon in self.addons and self.addons[addon].state == "active":
            self.applied[addon] = self.feature_gates(addon)
        return self.applied.get(addon, {})

    def _gate(self, addon: str | None, name: str) -> bool:
        if not addon:
            return False
        return self.effective_gates(addon).get(name, False)

    # instances and tags ----------------------------------------------------------------------
    def instance_by_node(self, node_name: str) -> Instance | None:
        # called once per node and per attach: a scan of 5000 instances each time made start-up quadratic
        i = self._by_node.get(node_name)
        if i is None or i.node_name != node_name or self.instances.get(i.id) is not i:
            self._by_node = {x.node_name: x for x in self.instances.values()}
            i = self._by_node.get(node_name)
        return i

    def tag_instances(self, ids: list[str], tags: dict[str, str]) -> None:
        for i in ids:
            self.instances[i].tags.update({k: str(v) for k, v in tags.items()})
        self.notify("tags")

    def untag_instances(self, ids: list[str], keys: list[str]) -> None:
        for i in ids:
            for k in keys:
                self.instances[i].tags.pop(k, None)
        self.notify("tags")

    def set_node_pool_tags(self, pool_id: str, tags: list[dict[str, str]]) -> None:
        """ModifyClusterNodePool scaling_group.tags: new instances get them; existing ones do not (as on ACK)."""
        self.node_pools[pool_id].scaling_group_tags = [dict(t) for t in tags]
        self.notify(f"nodepool {pool_id}")

    def disk_quantity(self, instance_id: str) -> int:
        return int(self.instance_types.get(self.instances[instance_id].instance_type, {}).get("DiskQuantity", 16))

    # attach/detach concurrency ---------------------------------------------------------------
    def controller_attach(self) -> bool:
        """DiskADController on the provisioner (which then attaches) and on csi-plugin (which then does not)."""
        prov = self.provisioner_addon()
        return self._gate(prov, "DiskADController") and self._gate("csi-plugin", "DiskADController")

    def driver_limits(self, instance_id: str | None = None) -> tuple[int, int]:
        """(attach, detach) slots per node as pkg/disk/attachdetach_slot.go computes them from the gates.

        (1, 1) means ONE slot shared by attach and detach, detach first."""
        prov = self.provisioner_addon()
        if not self.controller_attach():
            return 1, 1
        attach = PARALLEL_ATTACH if self._gate(prov, "DiskParallelAttach") else 1
        detach = PARALLEL_DETACH if self._gate(prov, "DiskParallelDetach") else 1
        return attach, detach

    def ecs_allows_concurrent(self, instance_id: str, op: str) -> bool:
        """ECS's whitelist: may a second AttachDisk (op "attach") / DetachDisk ("detach") run on this instance?"""
        key = "supportConcurrencyAttach" if op == "attach" else "supportConcurrencyDetach"
        inst = self.instances.get(instance_id)
        return inst is not None and str(inst.tags.get(key, "")).lower() == "true"

    def attach_limits(self, instance_id: str) -> tuple[int, int]:
        """Concurrency that actually succeeds on this instance: the driver's slots where ECS accepts them."""
        attach, detach = self.driver_limits(instance_id)
        if attach > 1 and not self.ecs_allows_concurrent(instance_id, "attach"):
            attach = 1
        if detach > 1 and not self.ecs_allows_concurrent(instance_id, "detach"):
            detach = 1
        return attach, detach

    # disks -----------------------------------------------------------------------------------
    def create_disk(self, size_gib: int, category: str = "cloud_auto", pv_name: str | None = None,
                    zone: str = ZONE, serial: bool = True, disk_id: str | None = None) -> Disk:
        did = disk_id or "d-" + secrets.token_hex(10)
        d = Disk(did, ("bp" + secrets.token_hex(9)) if serial else None, None, category, size_gib, pv_name, zone)
        self.disks[did] = d
        return d

    def delete_disk(self, disk_id: str) -> None:
        self.disks.pop(disk_id, None)

    # views -----------------------------------------------------------------------------------
    def doc(self) -> dict[str, Any]:
        return {"region": self.region, "cluster_id": self.cluster_id, "cluster_version": self.cluster_version,
                "cluster_type": self.cluster_type,
                "addons": {k: dict(asdict(v), effective_gates=self.effective_gates(k)) for k, v in self.addons.items()},
                "node_pools": {k: asdict(v) for k, v in self.node_pools.items()},
                "instances": {k: dict(asdict(v), limits=list(self.attach_limits(k)),
                                      driver_limits=list(self.driver_limits(k))) for k, v in self.instances.items()},
                "controller_attach": self.controller_attach(), "disks": len(self.disks)}

    async def admin(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /_twin/cloud: {"addon": name, "feature_gates": {..}|"A=true,..", "version": .., "state": ..};
        {"instance": id|"all", "tags": {..}} / {"untag": [keys]}; {"disk": {id, serial_number|null, size_gib,
        category, tags}} registers a (pre-existing) disk; {} returns the state."""
        if "addon" in body:
            name = body["addon"]
            if name not in self.addons:
                if not body.get("create"):
                    return {"error": f"no addon {name}"}
                self.addons[name] = Addon(name, config={"FeatureGate": ""})
            a = self.addons[name]
            if "version" in body:
                a.version = body["version"]
            if "state" in body:
                a.state = body["state"]
            if body.get("remove"):
                del self.addons[name]
                self.notify(f"addon {name}")
            elif "feature_gates" in body:
                fg = body["feature_gates"]
                self.set_feature_gates(name, parse_feature_gates(fg) if isinstance(fg, str) else fg,
                                       replace=bool(body.get("replace")))
            else:
                self.notify(f"addon {name}")
        if "instance" in body:
            ids = list(self.instances) if body["instance"] == "all" else [body["instance"]]
            if body.get("tags"):
                self.tag_instances(ids, body["tags"])
            if body.get("untag"):
                self.untag_instances(ids, body["untag"])
        if "disk" in body:
            d = body["disk"]
            disk = self.create_disk(int(d.get("size_gib", 20)), d.get("category", "cloud_efficiency"),
                                    serial=d.get("serial_number", "x") is not None, disk_id=d.get("id"))
            if d.get("serial_number"):
                disk.serial_number = d["serial_number"]
            disk.tags = {str(k): str(v) for k, v in (d.get("tags") or {}).items()}
            self.notify(f"disk {disk.id}")
        return self.doc()
