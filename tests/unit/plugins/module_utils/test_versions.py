"""Vendor version strings (ACK addons "v1.30.4-8c2e0b1-aliyun", clusters "1.32.4-aliyun.1") compared by number."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common import versions as V


@pytest.mark.parametrize("text, parsed", [
    ("v1.30.4-8c2e0b1-aliyun", (1, 30, 4)),
    ("1.32.4-aliyun.1", (1, 32, 4)),
    ("V1.31.0", (1, 31, 0)),
    ("v1.30.4.1-0aa-aliyun", (1, 30, 4, 1)),
    ("1.26", (1, 26)),
    (" v1.30.10 ", (1, 30, 10)),
])
def test_parse_takes_the_dotted_number_and_ignores_the_suffix(text, parsed):
    assert V.parse(text) == parsed


@pytest.mark.parametrize("text", ["", None, "latest", "aliyun-1.30", "v", "-1.2"])
def test_parse_rejects_strings_without_a_leading_number(text):
    with pytest.raises(V.VersionError):
        V.parse(text)


@pytest.mark.parametrize("a, b, expected", [
    ("v1.30.4-8c2e0b1-aliyun", "v1.30.4", 0),  # the suffix does not order
    ("v1.30.4-ffffff-aliyun", "v1.30.4-000000-aliyun", 0),
    ("v1.30.10-abc-aliyun", "v1.30.4", 1),  # numeric, not lexical: 10 > 4
    ("v1.30.3-99ffeee-aliyun", "v1.30.4", -1),
    ("1.31.0-aliyun.1", "v1.30.4", 1),  # with or without the v
    ("1.26", "1.26.0", 0),  # missing parts count as zero
    ("1.25.99-aliyun.1", "1.26", -1),
    ("v2.0.0", "v1.99.99", 1),
])
def test_compare(a, b, expected):
    assert V.compare(a, b) == expected
    assert V.compare(b, a) == -expected


def test_check_minimum_names_what_and_both_versions():
    assert V.check_minimum("addon csi-plugin", "v1.30.4-8c2e0b1-aliyun", "v1.30.4") is None
    msg = V.check_minimum("addon csi-plugin", "v1.28.3-aliyun", "v1.30.4")
    assert "csi-plugin" in msg and "v1.28.3-aliyun" in msg and "v1.30.4" in msg and "upgrade" in msg
    assert "not installed" in V.check_minimum("addon csi-provisioner", None, "v1.30.4")
    assert "no numeric part" in V.check_minimum("addon x", "latest", "v1.30.4")


@pytest.mark.skipif(not shutil.which("sort"), reason="needs GNU sort")
@pytest.mark.parametrize("version", ["1.31.0-aliyun.1", "V1.31.0"])
def test_sort_v_as_in_the_seed_rejects_newer_vendor_versions_that_we_accept(version):
    """The seed checks `printf "%s\\n" v1.30.4 "$VERSION" | sort -V -C`: it fails these newer versions."""
    seed = subprocess.run(["sort", "-V", "-C"], input=f"v1.30.4\n{version}\n", text=True).returncode == 0
    assert seed is False
    assert V.at_least(version, "v1.30.4") is True
