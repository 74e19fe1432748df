"""The ECS endpoint (API version 2014-05-26): RPC-style, `GET /?Action=...` with a signed query, JSON answers.

Actions: TagResources, UntagResources, ListTagResources, DescribeInstances, DescribeDisks, DescribeInstanceTypes
(the three lists' parameters, filters and paging: ecs_lists.py).
Limits and codes are the documented ones: at most 50 ResourceId.N and 20 Tag.N / TagKey.N per call
(NumberExceed.ResourceIds / NumberExceed.Tags), unknown ids InvalidResourceId.NotFound, PageSize 1-100.

ResourceType: the API documents lower-case values (`instance`). The seed's script sends `Instance` and is
published as working, so, as that suggests, the twin matches the type case-insensitively; it records every
spelling it receives (`resource_types_seen` in the admin stats) so tests can hold clients to the documented one.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from typing import TYPE_CHECKING, Any
from collections.abc import Awaitable, Callable

from aiohttp import web

from . import ecs_lists
from .errors import PopError, request_id
from .gateway import Gateway

if TYPE_CHECKING:
    from ..context import ClusterContext

VERSION = "2014-05-26"
MAX_RESOURCE_IDS = 50
MAX_TAGS = 20
MAX_TAGS_PER_RESOURCE = 20
LIST_TAGS_PAGE = 50
MAX_INSTANCE_TYPES = 10


def _missing(name: str) -> PopError:
    return PopError(400, "MissingParameter",
                    f'The input parameter "{name}" that is mandatory for processing this request is not supplied.')


CREATED = "2019-04-11T08:03Z"  # disks without a serial number were created before 2020-06-10


def _indexed(params: dict[str, str], prefix: str, suffix: str = "") -> dict[int, str]:
    """Collect `Prefix.N[.suffix]` parameters by N."""
    pat = re.compile(re.escape(prefix) + r"\.(\d+)" + (re.escape(suffix) if suffix else "") + "$")
    out = {}
    for k, v in params.items():
        m = pat.match(k)
        if m:
            out[int(m.group(1))] = v
    return out


class EcsApi:
    def __init__(self, cluster: ClusterContext, gateway: Gateway, trusted_token: str = "") -> None:
        self.cluster = cluster
        self.gw = gateway
        self.trusted_token = trusted_token  # a fleet front's calls carry it instead of being signed again
        self.resource_types_seen: Counter = Counter()
        self.actions: dict[str, Callable[[dict[str, str]], Awaitable[dict] | dict]] = {
            "TagResources": self.tag_resources, "UntagResources": self.untag_resources,
            "ListTagResources": self.list_tag_resources, "DescribeDisks": self.describe_disks,
            "DescribeInstanceTypes": self.describe_instance_types, "DescribeInstances": self.describe_instances,
        }
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    @property
    def cloud(self) -> Any:
        return self.cluster.cloud

    async def handle(self, request: web.Request) -> web.Response:
        rid = request_id()
        try:
            name, params = await self.gw.admit_rpc(request, "ecs", self.trusted_token)
        except PopError as e:  # refused or throttled: counted by the gateway, not served
            return e.response(rid)
        action = params.get("Action", "")
        try:
            if params.get("Version") != VERSION:
                raise PopError(400, "InvalidVersion", "Specified parameter Version is not valid.")
            fn = self.actions.get(action)
            if fn is None:
                raise PopError(404, "InvalidAction.NotFound", "Specified api is not found, please check your url and method.")
            # DescribeInstanceTypes takes its region from the endpoint (its request has no RegionId)
            if action != "DescribeInstanceTypes" and not params.get("RegionId"):
                raise _missing("RegionId")
            if params.get("RegionId", self.cloud.region) != self.cloud.region:
                raise PopError(404, "InvalidRegionId.NotFound", "The specified RegionId does not exist.")
            if action in ecs_lists.ACTIONS:
                ecs_lists.check_names(action, params)
            result = fn(params)
            if hasattr(result, "__await__"):
                result = await result
        except PopError as e:
            self.gw.served(name, error=True)
            return e.response(rid)
        self.gw.served(name, detail=str(len(_indexed(params, "ResourceId"))))
        return web.Response(body=json.dumps(dict(result, RequestId=rid)), content_type="application/json")

    # tags -------------------------------------------------------------------------------------
    def _resource_ids(self, params: dict[str, str], required: bool = True) -> list[str]:
        self._check_type(params)
        ids = _indexed(params, "ResourceId")
        if any(n > MAX_RESOURCE_IDS or n < 1 for n in ids) or len(ids) > MAX_RESOURCE_IDS:
            raise PopError(400, "NumberExceed.ResourceIds",
                           f"The ResourceIds parameter's number is exceed , Valid : {MAX_RESOURCE_IDS}")
        if required and not ids:
            raise _missing("ResourceId")
        out = [ids[n] for n in sorted(ids)]
        unknown = [i for i in out if i not in self.cloud.instances]
        if unknown and required:
            raise PopError(404, "InvalidResourceId.NotFound", "The specified ResourceIds are not found in our records.")
        return out

    def _check_type(self, params: dict[str, str]) -> None:
        rtype = params.get("ResourceType")
        if not rtype:
            raise _missing("ResourceType")
        self.resource_types_seen[rtype] += 1
        if rtype.lower() != "instance":
            raise PopError(404, "InvalidResourceType.NotFound", "The ResourceType provided does not exist in our records.")

    def _tags(self, params: dict[str, str]) -> dict[str, str]:
        keys = _indexed(params, "Tag", ".Key")
        values = _indexed(params, "Tag", ".Value")
        if any(n > MAX_TAGS or n < 1 for n in keys) or len(keys) > MAX_TAGS:
            raise PopError(400, "NumberExceed.Tags", f"The Tags parameter's number is exceed , Valid : {MAX_TAGS}")
        out: dict[str, str] = {}
        for n in sorted(keys):
            k, v = keys[n], values.get(n, "")
            if not k or len(k) > 128 or k.startswith(("aliyun", "acs:")) or "http://" in k or "https://" in k:
                raise PopError(400, "InvalidTagKey.Malformed", "The specified Tag.n.Key is not valid.")
            if len(v) > 128 or v.startswith(("aliyun", "acs:")) or "http://" in v or "https://" in v:
                raise PopError(400, "InvalidTagValue.Malformed", "The specified Tag.n.Value is not valid.")
            if k in out:
                raise PopError(400, "Duplicate.TagKey", "The Tag.N.Key contain duplicate key.")
            out[k] = v
        return out

    def tag_resources(self, params: dict[str, str]) -> dict:
        ids = self._resource_ids(params)
        tags = self._tags(params)
        if not tags:
            raise _missing("Tag")
        for i in ids:
            if len(set(self.cloud.instances[i].tags) | set(tags)) > MAX_TAGS_PER_RESOURCE:
                raise PopError(400, "InvalidTagCount", f"The number of tags on resource {i} exceeds {MAX_TAGS_PER_RESOURCE}.")
        self.cloud.tag_instances(ids, tags)
        return {}

    def untag_resources(self, params: dict[str, str]) -> dict:
        ids = self._resource_ids(params)
        keys = _indexed(params, "TagKey")
        if len(keys) > MAX_TAGS or any(n > MAX_TAGS for n in keys):
            raise PopError(400, "NumberExceed.Tags", f"The Tags parameter's number is exceed , Valid : {MAX_TAGS}")
        if keys:
            self.cloud.untag_instances(ids, [keys[n] for n in sorted(keys)])
        elif str(params.get("All", "")).lower() == "true":
            for i in ids:
                self.cloud.untag_instances([i], list(self.cloud.instances[i].tags))
        return {}

    def list_tag_resources(self, params: dict[str, str]) -> dict:
        ids = self._resource_ids(params, required=False)
        tags = self._tags(params)
        if not ids and not tags:
            raise PopError(400, "MissingParameter", "ResourceId.N or Tag.N must be specified.")
        rows = []
        for iid in (ids or list(self.cloud.instances)):
            inst = self.cloud.instances.get(iid)
            if inst is None:
                continue
            if any(k not in inst.tags or (v and inst.tags[k] != v) for k, v in tags.items()):
                continue
            for k, v in inst.tags.items():
                rows.append({"ResourceId": iid, "ResourceType": "instance", "TagKey": k, "TagValue": v})
        start = int(params.get("NextToken") or 0)
        page = rows[start:start + LIST_TAGS_PAGE]
        nxt = start + LIST_TAGS_PAGE
        return {"NextToken": str(nxt) if nxt < len(rows) else "", "TagResources": {"TagResource": page}}

    # disks and instance types -----------------------------------------------------------------
    def describe_instances(self, params: dict[str, str]) -> dict:
        ecs_lists.check_value("Status", params.get("Status"), ecs_lists.INSTANCE_STATUS)
        wanted_ids = ecs_lists.json_ids(params, "InstanceIds")
        tags = ecs_lists.tag_filters(params)
        found = [i for i in self.cloud.instances.values()
                 if i.is_aliyun_node and (wanted_ids is None or i.id in wanted_ids)
                 and (not params.get("ZoneId") or i.zone == params["ZoneId"])
                 and (not params.get("InstanceType") or i.instance_type == params["InstanceType"])
                 and (not params.get("InstanceName") or i.node_name == params["InstanceName"])
                 and (not params.get("Status") or _instance_status(i) == params["Status"])
                 and ecs_lists.tags_match(i.tags, tags)]
        items, paging = ecs_lists.page("DescribeInstances", params, sorted(found, key=lambda i: i.id))
        return dict(paging, Instances={"Instance": [self._instance_doc(i) for i in items]})

    def _instance_doc(self, i: Any) -> dict:
        """The DescribeInstances fields a client reads (ids, type, state, placement, tags), with the catalogue's
        CPU and memory of the type."""
        t = self.cloud.instance_types.get(i.instance_type, {})
        cores = int(t.get("CpuCoreCount", 4))
        return {"InstanceId": i.id, "InstanceName": i.node_name, "HostName": i.node_name, "Description": "",
                "InstanceType": i.instance_type, "InstanceTypeFamily": ".".join(i.instance_type.split(".")[:2]),
                "Cpu": cores, "Memory": int(t.get("MemorySize", cores * 4)) * 1024, "Status": _instance_status(i),
                "RegionId": self.cloud.region, "ZoneId": i.zone, "InstanceChargeType": "PostPaid",
                "InternetChargeType": "PayByTraffic", "InstanceNetworkType": "vpc", "OSType": "linux",
                "OSName": "Alibaba Cloud Linux 3.2104 LTS 64 bit", "ImageId": "aliyun_3_x64_20G_alibase_20240819.vhd",
                "CreationTime": CREATED, "StartTime": CREATED, "ExpiredTime": "2099-12-31T15:59Z",
                "ResourceGroupId": "rg-twin", "IoOptimized": True, "DeletionProtection": False,
                "VpcAttributes": {"VpcId": "vpc-twin", "VSwitchId": "vsw-twin", "NatIpAddress": "",
                                  "PrivateIpAddress": {"IpAddress": []}},
                "SecurityGroupIds": {"SecurityGroupId": ["sg-twin"]},
                "Tags": {"Tag": [{"TagKey": k, "TagValue": v} for k, v in sorted(i.tags.items())]},
                "OperationLocks": {"LockReason": []}}

    def describe_disks(self, params: dict[str, str]) -> dict:
        ecs_lists.check_value("Status", params.get("Status"), ecs_lists.DISK_STATUS)
        ecs_lists.check_value("Category", params.get("Category"), ecs_lists.DISK_CATEGORY)
        check_disk_type(params.get("DiskType"))
        wanted = ecs_lists.json_ids(params, "DiskIds")
        tags = ecs_lists.tag_filters(params)
        status = params.get("Status")
        disks = [d for d in self.cloud.disks.values()
                 if (not params.get("InstanceId") or d.instance_id == params["InstanceId"])
                 and (wanted is None or d.id in wanted)
                 and (not status or status == "All" or d.status == status)
                 and (not params.get("Category") or params["Category"] == "all" or d.category == params["Category"])
                 and (not params.get("ZoneId") or d.zone == params["ZoneId"])
                 and ecs_lists.tags_match(d.tags, tags)]
        items, paging = ecs_lists.page("DescribeDisks", params, disks)
        return dict(paging, Disks={"Disk": [self._disk_doc(d) for d in items]})

    def _disk_doc(self, d: Any) -> dict:
        """A DescribeDisks item with every field of the SDK's model. Performance follows the ESSD AutoPL and
        PL1 formulas (IOPS 1800 + 50/GiB, throughput 120 MB/s + 0.5 per GiB); SerialNumber is absent for
        disks created before 2020-06-10, as ECS leaves it out."""
        iops = min(1800 + 50 * d.size_gib, 50000)
        throughput = min(120 + d.size_gib // 2, 350)
        attached = [{"InstanceId": d.instance_id, "Device": d.device, "AttachedTime": CREATED}] if d.instance_id else []
        doc = {"DiskId": d.id, "DiskName": d.pv_name or "", "Description": "", "RegionId": self.cloud.region,
               "ZoneId": d.zone, "Category": d.category, "Size": d.size_gib, "Status": d.status, "Type": "data",
               "InstanceId": d.instance_id or "", "Device": d.device, "Portable": True, "DeleteWithInstance": False,
               "DeleteAutoSnapshot": True, "EnableAutoSnapshot": True, "EnableAutomatedSnapshotPolicy": False,
               "AutoSnapshotPolicyId": "", "Encrypted": False, "KMSKeyId": "", "CreationTime": CREATED,
               "AttachedTime": CREATED if d.instance_id else "", "DetachedTime": "", "ExpiredTime": "2999-09-08T16:00Z",
               "DiskChargeType": "PostPaid", "ImageId": "", "SourceSnapshotId": "", "SourceDiskId": "",
               "ProductCode": "", "ResourceGroupId": "rg-twin", "StorageSetId": "", "StorageSetPartitionNumber": 0,
               "StorageClusterId": "", "BdfId": "", "MultiAttach": "Disabled", "MountInstanceNum": len(attached),
               "MountInstances": {"MountInstance": attached}, "Attachments": {"Attachment": attached},
               "PerformanceLevel": "" if d.category == "cloud_auto" else "PL1",
               "BurstingEnabled": d.category == "cloud_auto", "ProvisionedIops": 0, "IOPS": iops,
               "IOPSRead": iops // 2, "IOPSWrite": iops // 2, "Throughput": throughput,
               "ThroughputRead": throughput // 2, "ThroughputWrite": throughput // 2,
               "DataSource": {"Type": "", "Id": ""}, "Placement": {"ZoneIds": d.zone},
               "OperationLocks": {"OperationLock": []},
               "Tags": {"Tag": [{"TagKey": k, "TagValue": v} for k, v in sorted(d.tags.items())]}}
        if d.serial_number:  # disks created before 2020-06-10 have none, and the field is absent
            doc["SerialNumber"] = d.serial_number
        return doc

    def describe_instance_types(self, params: dict[str, str]) -> dict:
        wanted = _indexed(params, "InstanceTypes")
        if len(wanted) > MAX_INSTANCE_TYPES or any(n > MAX_INSTANCE_TYPES for n in wanted):
            raise PopError(400, "InvalidParameter.InstanceTypes",
                           f"InstanceTypes.N accepts at most {MAX_INSTANCE_TYPES} values.")
        names = set(wanted.values())
        family = params.get("InstanceTypeFamily")
        types = [instance_type_doc(t) for name, t in sorted(self.cloud.instance_types.items())
                 if (not names or name in names) and (not family or name.startswith(family + "."))]
        items, paging = ecs_lists.page("DescribeInstanceTypes", params, types)
        return {"NextToken": paging["NextToken"], "InstanceTypes": {"InstanceType": items}}


def _instance_status(i: Any) -> str:
    return "Running" if i.state == "running" else "Stopped"


def check_disk_type(value: str | None) -> None:
    ecs_lists.check_value("DiskType", value, {"all", "system", "data"})


def instance_type_doc(t: dict[str, Any]) -> dict[str, Any]:
    """A DescribeInstanceTypes item with every field of the SDK's model: the catalogue's figures (twin/cloud_state.py)
    over the shape of an x86 enterprise-level type without GPU, local disks or burstable credit. Network figures
    scale with the vCPU count as the g7 family's do; they are typical values, not a price-list lookup."""
    cores = int(t.get("CpuCoreCount", 4))
    enis = int(t.get("EniQuantity", 4))
    queues = min(32, max(2, cores // 2))
    doc: dict[str, Any] = {
        "InstanceTypeId": "", "InstanceTypeFamily": "", "InstanceCategory": "General-purpose",
        "InstanceFamilyLevel": "EnterpriseLevel", "CpuCoreCount": cores, "MemorySize": float(cores * 4),
        "CpuArchitecture": "X86", "PhysicalProcessorModel": "Intel Xeon(Ice Lake) Platinum 8369B",
        "CpuSpeedFrequency": 2.7, "CpuTurboFrequency": 3.5, "DiskQuantity": 16,
        "EniQuantity": enis, "EniTotalQuantity": enis * 2, "EniPrivateIpAddressQuantity": min(30, 6 + cores // 2),
        "EniIpv6AddressQuantity": min(30, 6 + cores // 2), "EniTrunkSupported": True, "EriQuantity": 0,
        "MaximumQueueNumberPerEni": queues, "PrimaryEniQueueNumber": queues, "SecondaryEniQueueNumber": queues,
        "TotalEniQueueQuantity": queues * enis, "QueuePairNumber": 0,
        "InstanceBandwidthRx": 1_600_000 * max(1, cores // 4), "InstanceBandwidthTx": 1_600_000 * max(1, cores // 4),
        "InstancePpsRx": 250_000 * max(1, cores // 4), "InstancePpsTx": 250_000 * max(1, cores // 4),
        "NetworkCardQuantity": 1, "NetworkCards": {"NetworkCardInfo": [{"NetworkCardIndex": 0}]},
        "NetworkEncryptionSupport": False, "JumboFrameSupport": True, "NvmeSupport": "required",
        "GPUAmount": 0, "GPUSpec": "", "GPUMemorySize": 0.0, "BaselineCredit": 0, "InitialCredit": 0,
        "LocalStorageAmount": 0, "LocalStorageCapacity": 0, "LocalStorageCategory": "",
        "CpuOptions": {"Core": max(1, cores // 2), "ThreadsPerCore": 2, "CoreFactor": 2,
                       "HyperThreadingAdjustable": True, "NestedVirtualizationSupport": False,
                       "SupportedTopologyTypes": {"SupportedTopologyType": ["DiscreteCoreToHyperThreadMapping"]}},
        "EnhancedNetwork": {"SriovSupport": False, "RssSupport": True, "VfQueueNumberPerEni": 0,
                            "ExpressSupport": False},
        "NetworkInfo": {"BandwidthWeighting": {"WeightingInfos": {"WeightingInfo": [
            {"Name": "Vpc-L1", "VpcBandwidth": 0, "VpcBurstBandwidth": 0, "EbsBandwidth": 0, "EbsBurstBandwidth": 0}]}}},
        "Clock": {"PtpSupport": "unsupported"}, "SecurityOptions": {"SecureBootSupport": True},
        "SupportedBootModes": {"SupportedBootMode": ["BIOS", "UEFI"]},
        "Attributes": {"Attribute": []},
    }
    doc.update(t)
    return doc
