"""The twin ONTAP's ONTAPI table (twin/netapp/ontapi.py): which version each release serves and what it refuses."""
from __future__ import annotations

import pytest

from twin.netapp import ontap, ontapi


@pytest.mark.parametrize("release, highest", [
    ((9, 0, 0), (1, 100)), ((9, 5, 0), (1, 150)), ((9, 6, 0), (1, 160)), ((9, 7, 0), (1, 170)),
    ((9, 8, 0), (1, 180)), ((9, 13, 1), (1, 231)), ((9, 18, 1), (1, 281)),
])
def test_highest_ontapi_per_release(release, highest):
    assert ontapi.highest_ontapi(release) == highest


def test_the_twin_plays_9_18_1_and_serves_1_281():
    assert ontap.VERSION_TUPLE == (9, 18, 1) and ontap.ONTAPI == (1, 281)


@pytest.mark.parametrize("api, asked, refused", [
    ("system-get-version", "1.281", False), ("system-get-version", "1.170", False),
    ("system-get-version", None, False),  # no version attribute: served at the release's own
    ("system-get-version", "1.290", True), ("volume-get-iter", "2.0", True), ("volume-get-iter", "one", True),
    ("system-get-ontapi-version", "1.999", False),  # how a client learns the version: always answered
])
def test_refusal(api, asked, refused):
    got = ontapi.refusal(api, asked, (9, 18, 1))
    assert got == (("13010", ontapi.UNSUPPORTED_VERSION_REASON) if refused else None)


def test_ontap_8_is_not_in_the_table():
    with pytest.raises(ValueError, match="ONTAP 9 only"):
        ontapi.highest_ontapi((8, 3, 0))
