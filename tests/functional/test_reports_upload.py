"""reports_upload against a local S3-compatible server (moto_server): upload, idempotence, errors, no secret shown."""
from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR
from tests.support.s3 import MOTO, moto_s3
from tests.support.twin import REPO, run_playbook

boto3 = pytest.importorskip("boto3", reason="pip install --no-deps -r requirements-s3.txt")

# what a leak would look like: neither string may appear in anything the run prints or returns
ACCESS_KEY = "AKIAFLEETUPLOADTEST01"
SECRET_KEY = "fleet-upload-secret-9f8e7d6c5b4a"
BUCKET = "perf-reports"
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Upload the reports
      storageperf.k8s.reports_upload:
        src: "{{ src }}"
        bucket: "{{ bucket }}"
        prefix: "{{ prefix }}"
        endpoint_url: "{{ endpoint }}"
        region: us-east-1
        addressing_style: path
"""


@pytest.fixture(scope="module")
def s3_endpoint():
    if not MOTO:
        pytest.skip("no moto_server: pip install --no-deps -r requirements-s3-dev.txt")
    with moto_s3(ACCESS_KEY, SECRET_KEY, BUCKET) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def collection():
    subprocess.run(["bash", "scripts/install-collection.sh"], cwd=REPO, check=True, capture_output=True)


@pytest.fixture
def fleet_dir(tmp_path):
    fleet = F.build_fleet([{"cluster": "a", "error": "unreachable"}, {"cluster": "b", "error": "unreachable"}],
                          "fleet-upload")
    FR.write_fleet(fleet, str(tmp_path / "reports"))
    (tmp_path / "reports" / "fleet-upload" / ".fleet.json.tmp123").write_text("half written")
    return tmp_path / "reports" / "fleet-upload"


def upload(tmp_path, endpoint, src, prefix, bucket=BUCKET, check=False, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
                "AWS_EC2_METADATA_DISABLED": "true"})
    env.update(env_extra or {})
    env = {k: v for k, v in env.items() if v is not None}
    playbook = tmp_path / "upload.yml"
    playbook.write_text(PLAYBOOK)
    run = run_playbook(playbook, record_dir=tmp_path, check=check, diff=True, env=env,
                       extra_vars={"src": str(src), "bucket": bucket, "prefix": prefix, "endpoint": endpoint})
    everything = run.stdout + run.stderr + repr(run.results)
    assert ACCESS_KEY not in everything and SECRET_KEY not in everything
    return run, run.task("Upload the reports")["result"]


def test_upload_then_nothing_to_do(collection, tmp_path, s3_endpoint, fleet_dir):
    url, s3 = s3_endpoint
    run, first = upload(tmp_path, url, fleet_dir, "fleets/one")
    assert run.rc == 0, run.stdout + run.stderr
    keys = ["fleets/one/fleet.html", "fleets/one/fleet.json", "fleets/one/fleet.md"]
    assert first["changed"] is True and sorted(first["uploaded"]) == keys and first["unchanged"] == []
    listed = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="fleets/one/")["Contents"])
    assert listed == keys  # the temp file was left behind
    html = s3.get_object(Bucket=BUCKET, Key="fleets/one/fleet.html")
    assert html["ContentType"] == "text/html; charset=utf-8"
    assert html["Body"].read() == (fleet_dir / "fleet.html").read_bytes()

    run, second = upload(tmp_path, url, fleet_dir, "fleets/one")
    assert run.rc == 0 and second["changed"] is False
    assert second["uploaded"] == [] and sorted(second["unchanged"]) == keys

    (fleet_dir / "fleet.md").write_text("# changed\n")
    run, third = upload(tmp_path, url, fleet_dir, "fleets/one")
    assert third["uploaded"] == ["fleets/one/fleet.md"] and len(third["unchanged"]) == 2
    assert s3.get_object(Bucket=BUCKET, Key="fleets/one/fleet.md")["Body"].read() == b"# changed\n"


def test_check_mode_uploads_nothing(collection, tmp_path, s3_endpoint, fleet_dir):
    url, s3 = s3_endpoint
    run, result = upload(tmp_path, url, fleet_dir, "fleets/dry", check=True)
    assert run.rc == 0, run.stdout + run.stderr
    assert result["changed"] is True and len(result["uploaded"]) == 3
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix="fleets/dry/")


def test_missing_bucket_fails_with_a_clear_message(collection, tmp_path, s3_endpoint, fleet_dir):
    url, _ = s3_endpoint
    run, result = upload(tmp_path, url, fleet_dir, "x", bucket="no-such-bucket")
    assert run.rc == 2
    assert result["msg"] == ("bucket 'no-such-bucket' at %s does not exist; create it first or fix "
                             "bucket/endpoint_url" % url)


def test_missing_credentials_fail_with_a_clear_message(collection, tmp_path, s3_endpoint, fleet_dir):
    url, _ = s3_endpoint
    run, result = upload(tmp_path, url, fleet_dir, "x",
                         env_extra={"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None})
    assert run.rc == 2
    assert result["msg"].startswith("no credentials for bucket 'perf-reports' at %s: set AWS_ACCESS_KEY_ID" % url)


def test_local_files_skip_temp_files_and_keep_relative_paths(tmp_path):
    (tmp_path / "run" / "sub").mkdir(parents=True)
    (tmp_path / "run" / "result.json").write_text("{}")
    (tmp_path / "run" / "sub" / "report.html").write_text("<html>")
    (tmp_path / "run" / ".result.json.abc").write_text("partial")
    (tmp_path / "run" / ".git").mkdir()
    (tmp_path / "run" / ".git" / "x").write_text("x")
    assert [r for r, _ in U.local_files(str(tmp_path / "run"))] == ["result.json", "sub/report.html"]
    assert U.object_key("/runs/a/", "sub/report.html") == "runs/a/sub/report.html"
    assert U.object_key("", "result.json") == "result.json"


class StoreWithOtherETags:
    """An S3-compatible store whose ETags are not MD5s (KMS, some gateways): only the stored sha256 can match."""

    def __init__(self, sha):
        self.sha, self.puts = sha, []

    def get_paginator(self, _name):
        class Pages:
            def paginate(self, **_kw):
                return [{"Contents": [{"Key": "p/result.json", "ETag": '"not-an-md5-1"'},
                                      {"Key": "p/report.md", "ETag": '"not-an-md5-2"'}]}]
        return Pages()

    def head_object(self, Bucket, Key):
        return {"Metadata": {U.META_SHA256: self.sha if Key == "p/result.json" else "0" * 64}}

    def put_object(self, **kw):
        self.puts.append(kw["Key"])


def test_sha256_metadata_decides_where_etags_are_not_md5(tmp_path):
    (tmp_path / "result.json").write_text("{}")
    (tmp_path / "report.md").write_text("# r\n")
    store = StoreWithOtherETags(U.digests(str(tmp_path / "result.json"))[1])
    result = U.sync(store, str(tmp_path), "bucket", "p")
    assert result["unchanged"] == ["p/result.json"] and result["uploaded"] == ["p/report.md"]
    assert store.puts == ["p/report.md"]
