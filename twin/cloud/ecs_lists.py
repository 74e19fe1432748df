"""The ECS list calls as the service answers them: DescribeInstances, DescribeDisks and DescribeInstanceTypes.

Shapes are the response models of alibabacloud_ecs20140526 (7.11.8). Paging both ways ECS offers:
NextToken/MaxResults (recommended; when either is given PageNumber/PageSize do not take effect, and TotalCount
is not to be relied on) and the legacy PageNumber/PageSize (1-100) with TotalCount. MaxResults is clamped as
documented (below 10 -> 10, above the action's maximum -> the maximum). Tag.N.Key/Tag.N.Value filter (N 1-20,
every pair must match; a key without a value matches any value). A parameter the action does not take, or a
value outside its documented set, is refused with 400 InvalidParameter naming the field: stricter than
observed ECS behaviour for unknown names (see docs/reference/alibaba.md), so that a client's typo is caught here.
"""
from __future__ import annotations

import base64
import json
import re
from typing import Any

from .errors import PopError

LEGACY_MAX_PAGE_SIZE = 100
MIN_MAX_RESULTS = 10
MAX_TAG_FILTERS = 20
# what every RPC request carries besides its own parameters (V1 signature fields, the SDKs' extras)
COMMON = {"Action", "Version", "Format", "AccessKeyId", "Signature", "SignatureMethod", "SignatureVersion",
          "SignatureNonce", "SignatureType", "Timestamp", "SecurityToken", "RegionId", "OwnerId", "OwnerAccount",
          "ResourceOwnerId", "ResourceOwnerAccount", "DryRun", "callerBid"}
# indexed parameters: Tag.N.Key / Tag.N.Value, InstanceTypes.N, ...
_INDEXED = re.compile(r"^(?P<base>[A-Za-z]+)\.\d+(?P<suffix>\.[A-Za-z]+)?$")

DISK_STATUS = {"In_use", "Available", "Attaching", "Detaching", "Creating", "ReIniting", "All"}
DISK_CATEGORY = {"all", "cloud", "cloud_efficiency", "cloud_ssd", "cloud_essd", "cloud_auto", "cloud_essd_entry",
                 "local_ssd_pro", "local_hdd_pro", "ephemeral", "ephemeral_ssd", "elastic_ephemeral_disk_standard",
                 "elastic_ephemeral_disk_premium"}
INSTANCE_STATUS = {"Pending", "Running", "Starting", "Stopping", "Stopped"}

# action -> (its own parameters, indexed parameter families, MaxResults maximum, legacy paging allowed)
ACTIONS: dict[str, tuple[set[str], set[str], int, bool]] = {
    "DescribeInstances": ({"ZoneId", "InstanceIds", "InstanceType", "InstanceTypeFamily", "InstanceName", "Status",
                           "VpcId", "VSwitchId", "ImageId", "ResourceGroupId", "InstanceChargeType",
                           "InstanceNetworkType", "PrivateIpAddresses", "MaxResults", "NextToken", "PageNumber",
                           "PageSize"}, {"Tag.Key", "Tag.Value"}, 100, True),
    "DescribeDisks": ({"ZoneId", "DiskIds", "InstanceId", "DiskType", "Category", "Status", "DiskName", "Portable",
                       "DeleteWithInstance", "Encrypted", "ResourceGroupId", "MultiAttach", "SnapshotId",
                       "MaxResults", "NextToken", "PageNumber", "PageSize"}, {"Tag.Key", "Tag.Value"}, 500, True),
    "DescribeInstanceTypes": ({"InstanceTypeFamily", "MaxResults", "NextToken"}, {"InstanceTypes"}, 1600, False),
}


def invalid(field: str, why: str = "") -> PopError:
    return PopError(400, "InvalidParameter", f"The specified parameter {field} is not valid.{' ' + why if why else ''}")


def check_names(action: str, params: dict[str, str]) -> None:
    own, families, _max, _legacy = ACTIONS[action]
    for name in sorted(params):
        if name in COMMON or name in own:
            continue
        m = _INDEXED.match(name)
        if m and (m.group("base") + (m.group("suffix") or "")) in families:
            continue
        raise invalid(name, f"{action} takes no parameter {name}.")


def check_value(field: str, value: str | None, allowed: set[str]) -> None:
    if value and value not in allowed:
        raise invalid(field, f"Valid values: {', '.join(sorted(allowed))}.")


def json_ids(params: dict[str, str], field: str) -> set[str] | None:
    """InstanceIds / DiskIds: a JSON array of up to 100 ids; None when absent."""
    if field not in params:
        return None
    try:
        ids = json.loads(params[field])
    except ValueError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > 100:
        raise invalid(field, "It must be a JSON array of up to 100 ids.")
    return set(ids)


def tag_filters(params: dict[str, str]) -> dict[str, str | None]:
    """Tag.N.Key -> Tag.N.Value (None: any value), N 1-20."""
    out: dict[str, str | None] = {}
    for name, key in params.items():
        m = re.match(r"^Tag\.(\d+)\.Key$", name)
        if not m:
            continue
        n = int(m.group(1))
        if not 1 <= n <= MAX_TAG_FILTERS:
            raise invalid(name, f"N of Tag.N must be 1-{MAX_TAG_FILTERS}.")
        out[key] = params.get(f"Tag.{n}.Value")
    for name in params:
        m = re.match(r"^Tag\.(\d+)\.Value$", name)
        if m and f"Tag.{m.group(1)}.Key" not in params:
            raise invalid(name, f"Tag.{m.group(1)}.Value needs its Tag.{m.group(1)}.Key.")
    return out


def tags_match(tags: dict[str, str], wanted: dict[str, str | None]) -> bool:
    return all(k in tags and (v is None or tags[k] == v) for k, v in wanted.items())


def _token(offset: int, action: str) -> str:
    return base64.urlsafe_b64encode(f"{action}:{offset}".encode()).decode().rstrip("=")


def _offset(token: str, action: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        name, _, offset = text.partition(":")
        if name == action and int(offset) >= 0:
            return int(offset)
    except (ValueError, UnicodeDecodeError):
        pass
    raise invalid("NextToken", "Use the NextToken of the previous answer of this call.")


def page(action: str, params: dict[str, str], items: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """(the items of this page, the paging fields of the answer: NextToken, PageNumber, PageSize, TotalCount)."""
    _own, _families, max_results, legacy = ACTIONS[action]
    if "MaxResults" in params or "NextToken" in params or not legacy:
        try:
            size = int(params.get("MaxResults") or (MIN_MAX_RESULTS if legacy else max_results))
        except ValueError:
            raise invalid("MaxResults", "It must be an integer.") from None
        size = min(max(size, MIN_MAX_RESULTS), max_results)
        start = _offset(params["NextToken"], action) if params.get("NextToken") else 0
        end = start + size
        return items[start:end], {"NextToken": _token(end, action) if end < len(items) else "",
                                  "PageNumber": 1, "PageSize": size, "TotalCount": len(items)}
    try:
        size, number = int(params.get("PageSize", "10")), int(params.get("PageNumber", "1"))
    except ValueError:
        raise invalid("PageSize", "PageSize and PageNumber must be integers.") from None
    if not 1 <= size <= LEGACY_MAX_PAGE_SIZE:
        raise PopError(400, "InvalidParameter.PageSize", f"PageSize must be 1-{LEGACY_MAX_PAGE_SIZE}.")
    if number < 1:
        raise invalid("PageNumber", "It must be 1 or more.")
    paging = {"NextToken": "", "PageNumber": number, "PageSize": size, "TotalCount": len(items)}
    return items[(number - 1) * size: number * size], paging
