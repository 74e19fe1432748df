"""The built collection ships without the twin, tests, reports or .venv, and runs from a fresh path."""
from __future__ import annotations

import subprocess
import tarfile

from tests.support.twin import REPO, VENV_BIN, run_playbook


def _build(tmp_path):
    out = tmp_path / "dist"
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "build", "--force", "--output-path", str(out), str(REPO)],
                   check=True, capture_output=True, text=True)
    (tarball,) = out.glob("storageperf-k8s-*.tar.gz")
    return tarball


def test_tarball_leaves_out_the_twin_and_tests(tmp_path):
    tarball = _build(tmp_path)
    names = tarfile.open(tarball).getnames()
    top = {n.split("/", 1)[0] for n in names}
    for unwanted in ("twin", "tests", ".venv", "reports", "collections", "build", "benchmarks", ".twin"):
        assert unwanted not in top, f"{unwanted} leaked into the build"
    for wanted in ("plugins", "roles", "playbooks", "meta", "MANIFEST.json", "README.md"):
        assert wanted in top
    assert "plugins/modules/cluster_info.py" in names
    assert "plugins/module_utils/k8s.py" in names


def test_installed_tarball_runs_playbooks_from_a_fresh_path(tmp_path, twin):
    tarball = _build(tmp_path)
    fresh = tmp_path / "fresh"
    subprocess.run([str(VENV_BIN / "ansible-galaxy"), "collection", "install", "--force", "--no-deps", "-p", str(fresh), str(tarball)],
                   check=True, capture_output=True, text=True)
    installed = fresh / "ansible_collections" / "storageperf" / "k8s"
    assert (installed / "playbooks" / "cluster_info.yml").exists()
    assert not (installed / "twin").exists()
    run = run_playbook("storageperf.k8s.cluster_info", inventory=REPO / "inventories" / "twin", env=twin.env(),
                       record_dir=tmp_path, collections_path=str(fresh))
    assert run.rc == 0, run.stdout + run.stderr
    assert run.task("Read the cluster's storage facts")["result"]["node_count"] == 3
