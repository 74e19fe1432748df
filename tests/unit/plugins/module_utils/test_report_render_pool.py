"""bench_report with results: the documents spread over a pool of processes render what one process renders,
and a bad path still fails the run naming it (issue 33: the fleet's report.html pages drawn side by side)."""
from __future__ import annotations

import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import render_each
from tests.support import report_samples

PARAMS = {"document": None, "formats": ["json", "markdown"], "output_dir": None, "reports_dir": None}


def _results(root, n):
    paths = []
    for k in range(n):
        doc = report_samples.csi_lifecycle(volumes=10, seed=k)
        run = root / f"twin-{k}" / doc["run_id"]
        run.mkdir(parents=True)
        (run / "result.json").write_text(json.dumps(doc))
        paths.append(str(run / "result.json"))
    return paths


def test_a_pool_renders_what_one_process_renders(tmp_path):
    paths = _results(tmp_path, 3)
    pooled = render_each(dict(PARAMS, results=paths), workers=2)
    markdown = {r["result"]: open(r["paths"]["markdown"]).read() for r in pooled["reports"]}
    one = render_each(dict(PARAMS, results=paths), workers=1)
    assert [r["result"] for r in pooled["reports"]] == paths
    assert all(r["changed_files"] == [] for r in one["reports"]), "the one process found what the pool wrote different"
    assert {r["result"]: open(r["paths"]["markdown"]).read() for r in one["reports"]} == markdown
    assert all("| Operation |" in text for text in markdown.values())


def test_a_bad_path_fails_the_pooled_run_naming_it(tmp_path):
    paths = _results(tmp_path, 2)
    missing = str(tmp_path / "nowhere" / "result.json")
    with pytest.raises(StoragePerfError, match="nowhere"):
        render_each(dict(PARAMS, results=[paths[0], missing, paths[1]]), workers=2)
