"""ONTAP's FlexVol size limits, as the twin's ONTAP (REST, ZAPI) and its Trident enforce them.

A FlexVol is 20 MB to 100 TB (ONTAP counts these units in 1024s: "20MB" is 20971520 bytes) on most platforms; from
9.12.1P2 a volume created with large-volume support may reach 300 TB, which the twin does not offer. A real cluster
refuses a size outside with a message naming the size, in its units and in bytes, and the bound; the too-small
answer is the one a cluster gave to netapp-ontap's POST /api/storage/volumes (HTTP 500, error code "917534",
NetApp/terraform-provider-netapp-ontap#413):

    Size "-1.07GB" ("-1149239296B") is too small.  Minimum size is "20MB" ("20971520B").

The too-large message follows the same pattern; its error code is unverified, so TOO_LARGE_CODE is the twin's guess
and nothing should match on it. ZAPI's volume-create answers errno 13115 (EINVALIDINPUTERROR), also unverified.
"""
from __future__ import annotations

MIN_FLEXVOL = 20 << 20
MAX_FLEXVOL = 100 << 40
TOO_SMALL_CODE = "917534"
TOO_LARGE_CODE = "917535"  # unverified
ZAPI_ERRNO = "13115"  # EINVALIDINPUTERROR; unverified for volume-create's size


def ontap_units(n: int) -> str:
    """Bytes as ONTAP writes a size: the largest unit of 1024s, two decimals unless whole ("100TB", "-1.07GB")."""
    sign, value = ("-" if n < 0 else ""), abs(n)
    for unit, power in (("PB", 5), ("TB", 4), ("GB", 3), ("MB", 2), ("KB", 1)):
        if value >= 1024 ** power:
            q = value / 1024 ** power
            return f"{sign}{int(q)}{unit}" if q == int(q) else f"{sign}{q:.2f}{unit}"
    return f"{sign}{value}B"


def flexvol_size_error(size: int) -> tuple[str, str] | None:
    """(error code, message) when a FlexVol of `size` bytes cannot exist, else None."""
    shown = f'"{ontap_units(size)}" ("{size}B")'
    if size < MIN_FLEXVOL:
        return TOO_SMALL_CODE, (f'Size {shown} is too small.  Minimum size is "{ontap_units(MIN_FLEXVOL)}" '
                                f'("{MIN_FLEXVOL}B"). ')
    if size > MAX_FLEXVOL:
        return TOO_LARGE_CODE, (f'Size {shown} is too large.  Maximum size is "{ontap_units(MAX_FLEXVOL)}" '
                                f'("{MAX_FLEXVOL}B"). ')
    return None
