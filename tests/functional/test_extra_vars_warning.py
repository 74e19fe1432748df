"""An extra var that no playbook of the run reads gets a warning naming the nearest known variable
(storageperf.k8s.check_extra_vars, the last task of playbooks/clusters.yml's first play)."""
from __future__ import annotations

from tests.support.twin import REPO

LIFECYCLE = REPO / "playbooks" / "bench_csi_lifecycle.yml"
TASK = "Warn about extra vars that no playbook of this run reads"


def test_volumse_is_named_with_volumes(twin, tmp_path):
    run = twin.playbook(LIFECYCLE, extra_vars={"volumse": 10, "volumes": 4, "reports_dir": str(tmp_path)}, check=True)
    assert run.rc == 0, run.stdout[-3000:]
    assert run.task(TASK)["result"]["unknown"] == {"volumse": "volumes"}
    warning = "extra var volumse is not a variable of bench_csi_lifecycle.yml: it is ignored; did you mean volumes?"
    assert warning in " ".join((run.stdout + run.stderr).split())


def test_known_extra_vars_and_awx_metadata_give_no_warning(twin, tmp_path):
    run = twin.playbook(REPO / "playbooks" / "cluster_info.yml",
                        extra_vars={"k8s_context": "twin", "awx_job_id": 7, "tower_job_template_name": "t"})
    assert run.task(TASK)["result"]["unknown"] == {}
    assert "is not a variable of" not in run.stdout + run.stderr
