"""rollout/document.py read_records_s3: the records reports_upload put into a bucket (moto_server on 127.0.0.1),
merged with a directory's; a broken object named, records elsewhere in the bucket not read."""
from __future__ import annotations

import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import document as D
from tests.support import rollout_samples as sample
from tests.support.s3 import MOTO, moto_s3

pytest.importorskip("boto3", reason="pip install --no-deps -r requirements-s3.txt")
pytestmark = pytest.mark.skipif(not MOTO, reason="no moto_server: pip install --no-deps -r requirements-s3-dev.txt")

BUCKET = "perf-reports"
PREFIX = "rollouts/rollout-trident_concurrency-1a2b3c"


def test_records_of_a_bucket_merge_with_the_directorys(tmp_path):
    records = sample.records()
    pending = D.new_record(sample.ROLLOUT, "twin-3", 2, "pending", "not started yet", updated="2026-12-06T04:59:00Z")
    D.write_record(str(tmp_path), pending)  # this host's older view of twin-3
    with moto_s3("AKIAROLLOUTREADTEST1", "rollout-read-secret", BUCKET) as (url, s3):
        for name, record in records.items():
            s3.put_object(Bucket=BUCKET, Key="%s/clusters/%s.json" % (PREFIX, name), Body=json.dumps(record).encode())
        s3.put_object(Bucket=BUCKET, Key="%s/clusters/twin-9.json" % PREFIX, Body=b"{half")
        s3.put_object(Bucket=BUCKET, Key="%s/rollout.json" % PREFIX, Body=b"{}")  # not a record
        s3.put_object(Bucket=BUCKET, Key="rollouts/other/clusters/twin-1.json", Body=b"{}")  # another prefix
        remote = D.read_records_s3(s3, BUCKET, PREFIX + "/", endpoint_url=url)
        with pytest.raises(U.UploadError, match="does not exist"):
            D.read_records_s3(s3, "no-such-bucket", PREFIX, endpoint_url=url)
    assert sorted(remote) == ["twin-1", "twin-2", "twin-3"]
    assert remote.sources == ["s3://%s/%s/clusters/" % (BUCKET, PREFIX)]
    assert remote.problems == [{"source": "s3://%s/%s/clusters/twin-9.json" % (BUCKET, PREFIX),
                                "error": remote.problems[0]["error"]}]
    assert remote.problems[0]["error"].startswith("not valid JSON")
    merged = D.merge(D.read_records(str(tmp_path)), remote)
    assert merged["twin-3"]["decision"] == "rolled_back"
    assert [h["decision"] for h in merged["twin-3"]["history"]] == ["pending"]
    doc = D.assemble(merged)
    assert doc["sources"] == [str(tmp_path), "s3://%s/%s/clusters/" % (BUCKET, PREFIX)]
    assert doc["summary"]["rolled_back"] == ["twin-3"] and len(doc["problems"]) == 1


def test_the_plan_reads_the_buckets_copy_of_the_rollout(tmp_path, monkeypatch):
    """rollout_plan with a bucket: another AWX job's records (under <prefix>/rollout-<id>/) decide what this run does."""
    from ansible_collections.storageperf.k8s.plugins.module_utils.rollout import plan as P

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAROLLOUTPLANTEST1")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "rollout-plan-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    params = {"change": "trident_concurrency", "change_parameters": {}, "clusters": ["a", "b"], "canary": [],
              "waves": ["100%"], "first_wave": 1, "rollout_id": None, "reports_dir": str(tmp_path),
              "retry_rolled_back": False, "max_fail_percentage": 0, "baseline_max_age": 3600,
              "bucket": BUCKET, "prefix": "rollouts/", "region": None, "profile": None, "addressing_style": "path",
              "signature_version": None, "rollout_action": "run", "pause_after_wave": None}
    _, rollout_id, _ = P.identity(params)
    promoted = sample.promoted("a", 1, 0)
    with moto_s3("AKIAROLLOUTPLANTEST1", "rollout-plan-secret", BUCKET) as (url, s3):
        s3.put_object(Bucket=BUCKET, Key="rollouts/rollout-%s/clusters/a.json" % rollout_id,
                      Body=json.dumps(promoted).encode())
        s3.put_object(Bucket=BUCKET, Key="rollouts/rollout-%s/clusters/b.json" % rollout_id, Body=b"{half")
        got = P.plan_with_records(dict(params, endpoint_url=url))
        with pytest.raises(Exception, match="bucket 'x/y' must be a bucket name"):
            P.plan_with_records(dict(params, endpoint_url=url, bucket="x/y"))
    assert got["clusters"]["a"]["record"]["decision"] == "promoted" and got["clusters"]["b"]["record"] is None
    assert len(got["warnings"]) == 1 and "b.json" in got["warnings"][0]
