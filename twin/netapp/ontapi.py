"""ONTAPI (ZAPI) versions: the highest one each ONTAP 9 release serves, and how ONTAP refuses a higher one.

ONTAP 9.0 serves ONTAPI 1.100 and each release adds ten: 9.5 -> 1.150, 9.6 -> 1.160, 9.7 -> 1.170, 9.8 -> 1.180.
From 9.9.1 on, releases are numbered 9.x.1 and the ONTAPI minor carries the .1: 9.13.1 -> 1.231, so 9.18.1 -> 1.281.
Sources and what is derived rather than read: docs/reference/netapp-ontapi.md.

A request whose <netapp version="1.X"> is above the release's highest ONTAPI fails as a ZAPI result, HTTP 200,
errno 13010 (EAPIUNSUPPORTEDVERSION in netapp-lib's errors.py). system-get-ontapi-version is how a client learns
the version, so ONTAP answers it whatever version the request names (netapp-lib and OpenStack's NetApp drivers
ask it first, at version 1.0 or with none set).
"""
from __future__ import annotations

import re

UNSUPPORTED_VERSION_ERRNO = "13010"
UNSUPPORTED_VERSION_REASON = "The request was for an API version which is not supported by the appliance"
ALWAYS_ANSWERED = {"system-get-ontapi-version"}


def highest_ontapi(release: tuple[int, int, int]) -> tuple[int, int]:
    """(1, minor) for ONTAP release (generation, major, minor), e.g. (9, 8, 0) -> (1, 180), (9, 13, 1) -> (1, 231)."""
    generation, major, minor = release
    if generation != 9:
        raise ValueError(f"ONTAP {generation}.{major}.{minor}: the ONTAPI table covers ONTAP 9 only")
    return 1, 100 + 10 * major + minor


def parse(text: str) -> tuple[int, int] | None:
    """"1.170" -> (1, 170); anything else -> None."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def refusal(api: str, requested: str | None, release: tuple[int, int, int]) -> tuple[str, str] | None:
    """(errno, reason) when ONTAP refuses `api` asked at version `requested`; None when it answers.

    No version attribute (a client that never called set_api_version) is served at the release's own version.
    """
    if api in ALWAYS_ANSWERED or requested is None:
        return None
    asked = parse(requested)
    if asked is None or asked > highest_ontapi(release):
        return UNSUPPORTED_VERSION_ERRNO, UNSUPPORTED_VERSION_REASON
    return None
