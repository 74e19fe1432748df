"""playbooks/history.yml reading a bucket (moto_server) with reports_upload's settings: runs found under any prefix,
a run uploaded twice counted once, a broken document listed, no secret shown."""
from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from tests.support import report_samples as sample
from tests.support.s3 import MOTO, moto_s3
from tests.support.twin import REPO, run_playbook

pytest.importorskip("boto3", reason="pip install --no-deps -r requirements-s3.txt")

ACCESS_KEY = "AKIAHISTORYREADTEST01"
SECRET_KEY = "history-read-secret-1a2b3c4d5e6f"
BUCKET = "perf-reports"


def run_doc(day: int, create_factor: float = 1.0) -> dict:
    doc = copy.deepcopy(sample.csi_lifecycle(volumes=100, with_objects=False))
    doc["run_id"] = "csi_lifecycle-202606%02dT090000Z-aaaaaa" % day
    doc["started"] = "2026-06-%02dT09:00:00.000000Z" % day
    for v in doc["variants"]:
        for s in v["runs"][0]["steps"]:
            f = 1 + 0.02 * (day % 3)  # run-to-run noise, so that the levels have a spread
            if s["name"] == "create_volume":
                f *= create_factor
            s["wall_s"] *= f
            s["rate"] /= f
        del v["summary"]
    return D.finalize(doc, finished=doc["finished"])


def test_history_of_a_bucket(tmp_path):
    if not MOTO:
        pytest.skip("no moto_server: pip install --no-deps -r requirements-s3-dev.txt")
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)
    # five runs alike, then create_volume three times as slow: a change point at the sixth run
    first, others, slow = run_doc(1), [run_doc(d) for d in range(2, 6)], run_doc(6, create_factor=3.0)
    with moto_s3(ACCESS_KEY, SECRET_KEY, BUCKET) as (url, s3):
        for key, body in (
                ("storageperf/fleet-1/prod-a/%s/result.json" % first["run_id"], D.dumps(first)),
                ("storageperf/fleet-2/prod-a/%s/result.json" % first["run_id"], D.dumps(first)),  # uploaded twice
                *[("storageperf/fleet-2/prod-a/%s/result.json" % d["run_id"], D.dumps(d)) for d in others + [slow]],
                ("storageperf/fleet-2/prod-a/%s/report.md" % slow["run_id"], "# not a document"),
                ("storageperf/fleet-2/prod-b/broken/result.json", "{half"),
                ("elsewhere/prod-c/run/result.json", D.dumps(first))):  # outside the prefix
            s3.put_object(Bucket=BUCKET, Key=key, Body=body.encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                    "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
                    "AWS_EC2_METADATA_DISABLED": "true"})
        (tmp_path / "reports").mkdir()
        run = run_playbook(REPO / "playbooks" / "history.yml", record_dir=tmp_path, env=env, extra_vars={
            "reports_dir": str(tmp_path / "reports"), "reports_bucket": BUCKET, "upload_endpoint_url": url,
            "upload_region": "us-east-1", "upload_addressing_style": "path"})
    assert run.rc == 0, run.stdout[-3000:]
    everything = run.stdout + run.stderr + repr(run.results)
    assert ACCESS_KEY not in everything and SECRET_KEY not in everything
    out = run.task("Read every result document")["result"]
    assert out["summary"]["documents"] == 6 and out["summary"]["clusters"] == 1 and out["summary"]["problems"] == 1
    assert sorted({(r["cluster"], r["run_id"], r["step"]) for r in out["regressions"]}) == [
        ("prod-a", slow["run_id"], "create_volume")]
    history = json.loads((tmp_path / "reports" / "history" / "history.json").read_text())
    assert history["source"]["bucket"] == BUCKET
    assert history["problems"][0]["source"] == "s3://%s/storageperf/fleet-2/prod-b/broken/result.json" % BUCKET
