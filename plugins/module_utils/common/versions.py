# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Vendor version strings compared by their numbers.

ACK reports versions such as "v1.30.4-8c2e0b1-aliyun" (CSI addons) and "1.32.4-aliyun.1" (clusters).
What orders them is the dotted number after an optional "v"/"V"; the vendor suffix (commit hash, "-aliyun.N")
is ignored. `sort -V`, which the seed script uses, compares the whole string and so gets these wrong: it
rejects "1.31.0-aliyun.1" and "V1.31.0" as older than "v1.30.4" because a digit or capital sorts before "v".
"""
from __future__ import annotations


import re

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

_VERSION = re.compile(r"^\s*[vV]?(\d+(?:\.\d+)*)")


class VersionError(StoragePerfError, ValueError):
    pass


def parse(text: str | None) -> tuple[int, ...]:
    """"v1.30.4-8c2e0b1-aliyun" -> (1, 30, 4). Raises VersionError when there is no leading number."""
    m = _VERSION.match(str(text or ""))
    if not m:
        raise VersionError("%r is not a version: expected digits such as v1.30.4 or 1.26.3-aliyun.1" % (text,))
    return tuple(int(p) for p in m.group(1).split("."))


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as version a is older than, equal to or newer than b (missing parts count as 0)."""
    pa, pb = parse(a), parse(b)
    width = max(len(pa), len(pb))
    pa += (0,) * (width - len(pa))
    pb += (0,) * (width - len(pb))
    return (pa > pb) - (pa < pb)


def at_least(version: str, minimum: str) -> bool:
    return compare(version, minimum) >= 0


def check_minimum(what: str, version: str | None, minimum: str) -> str | None:
    """None when version >= minimum, else a message naming what, both versions and the fix."""
    if not version:
        return "%s is not installed (or reports no version); install it at %s or later" % (what, minimum)
    try:
        ok = at_least(version, minimum)
    except VersionError:
        return "%s reports version %r, which has no numeric part to compare with %s" % (what, version, minimum)
    if ok:
        return None
    return "%s version %s is older than the required %s: upgrade it first" % (what, version, minimum)
