"""The collection's runtime requirements install beside other collections' in one execution environment, and their
lower bounds, with the oldest ansible-core meta/runtime.yml accepts, run a playbook.

Each test makes a throwaway venv (no pip of its own: the development venv's pip installs into it with --python)
and installs from the package index, so it needs the network. The shared one takes about 90 s, nearly all of it
pip's resolver: it takes kubernetes 37.0.2 first, whose python-dateutil>=3 botocore refuses, and reads hundreds of
botocore releases before it steps back to kubernetes 37.0.1. The lower bounds take about 20 s.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.support.twin import COLLECTIONS, REPO, VENV_BIN, run_playbook

# a bound for a stuck download, never a measurement: a slow index simply makes the test slower
PIP_TIMEOUT = 600
pytestmark = pytest.mark.timeout(2 * PIP_TIMEOUT)

KUBERNETES_CORE = COLLECTIONS / "ansible_collections" / "kubernetes" / "core" / "requirements.txt"
# amazon.aws 9 and 10's requirements.txt, as written there (botocore declares python-dateutil<3)
AMAZON_AWS = ("boto3>=1.34.0", "botocore>=1.34.0")
# what the plugins import (tests/functional/test_execution_environment.py holds requirements.txt to that list)
IMPORTS = ("import kubernetes.dynamic, yaml, aliyunsdkcore.client, netapp_lib.api.zapi, jsonschema, matplotlib; "
           "matplotlib.use('Agg'); import matplotlib.pyplot")


def requirements(name: str) -> list[Requirement]:
    lines = (REPO / name).read_text().splitlines()
    return [Requirement(line) for line in (ln.split("#", 1)[0].strip() for ln in lines) if line]


def lower_bound(req: Requirement) -> str:
    (floor,) = [s.version for s in req.specifier if s.operator == ">="]
    return floor


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "pip"), "--python", str(python), "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=PIP_TIMEOUT)


def installed(python: Path) -> dict[str, str]:
    out = pip(python, "list", "--format", "json")
    assert out.returncode == 0, out.stderr
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(out.stdout)}


def assert_consistent_and_importable(python: Path) -> None:
    check = pip(python, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    smoke = subprocess.run([str(python), "-c", IMPORTS], capture_output=True, text=True, timeout=120)
    assert smoke.returncode == 0, smoke.stderr


def test_runtime_installs_beside_kubernetes_core_and_amazon_aws_on_the_ee_base(tmp_path):
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())["dependencies"]
    base = (ee["ansible_core"]["package_pip"], ee["ansible_runner"]["package_pip"])
    python = make_venv(tmp_path / "ee")
    install = pip(python, "install", "-q", *base, "-r", str(REPO / "requirements.txt"), "-r", str(KUBERNETES_CORE),
                  *AMAZON_AWS)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-4000:]
    assert_consistent_and_importable(python)
    versions = installed(python)
    for req in requirements("requirements.txt"):
        assert versions[req.name.lower()] in req.specifier, f"{req.name} {versions[req.name.lower()]} outside {req}"
    assert "boto3" in versions and "jsonpatch" in versions  # the other two collections' own requirements


def test_lower_bounds_with_the_oldest_ansible_core_run_cluster_info(tmp_path, twin):
    floors = {req.name.lower(): lower_bound(req) for req in requirements("requirements.txt")}
    python = make_venv(tmp_path / "lowest")
    install = pip(python, "install", "-q", *(f"{name}=={v}" for name, v in floors.items()),
                  "-r", str(REPO / "requirements-oldest.txt"))
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-4000:]
    assert_consistent_and_importable(python)
    versions = installed(python)
    assert {name: versions[name] for name in floors} == floors
    (oldest,) = requirements("requirements-oldest.txt")
    assert versions["ansible-core"] in oldest.specifier
    # the modules run under this venv's Python (inventories/twin: ansible_playbook_python), so with these versions
    run = run_playbook(REPO / "playbooks" / "cluster_info.yml", inventory=REPO / "inventories" / "twin",
                       env=twin.env(), record_dir=tmp_path, bin_dir=python.parent)
    assert run.rc == 0, run.stdout[-4000:] + run.stderr[-2000:]
    facts = run.task("Read the cluster's storage facts")["result"]
    assert facts["node_count"] == 3 and all(n["ready"] for n in facts["nodes"])
