# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the result documents that reports_upload put into an S3-compatible bucket (history.py's other source).

    s3 = s3_upload.client(endpoint_url, region, profile)     # boto3's own credential chain, nothing passed here
    entries = find_results(s3, "perf-reports", "storageperf")  # [{"cluster", "source", "document" | "error"}]

Every key under the prefix that ends in <cluster>/<run_id>/result.json is a run, whatever lies between
(compare.yml uploads runs under <prefix>/<cluster>/<run_id>/, and earlier versions under <prefix>/<fleet report
name>/<cluster>/<run_id>/, so the same run can be there twice: history.py keeps one per cluster and run id).
"""
from __future__ import annotations

import json
from typing import Any, Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.report.document import RESULT_FILE


def find_results(s3: Any, bucket: str, prefix: str = "", endpoint_url: str | None = None) -> list[dict[str, Any]]:
    """One entry per result.json under prefix, sorted by key; a document that cannot be read is an entry with its error."""
    top = prefix.strip("/") + "/" if prefix and prefix.strip("/") else ""
    out = []
    for entry in json_objects(s3, bucket, top, lambda key: key.endswith("/" + RESULT_FILE), endpoint_url):
        parts = entry.pop("key").split("/")
        out.append(dict(entry, cluster=parts[-3] if len(parts) >= 3 else None))
    return out


def json_objects(s3: Any, bucket: str, top: str, wanted: Callable[[str], bool], endpoint_url: str | None = None,
                 parse: bool = True) -> list[dict[str, Any]]:
    """[{"key", "source", "document" (or "text" when not parse) | "error"}] of the keys under top that wanted(key)
    accepts, sorted; UploadError when the bucket cannot be listed (rollout/document.py reads its records so too)."""
    kwargs = {"Bucket": bucket}
    if top:
        kwargs["Prefix"] = top
    try:
        keys = sorted(obj["Key"] for page in s3.get_paginator("list_objects_v2").paginate(**kwargs)
                      for obj in page.get("Contents", []) if wanted(obj["Key"]))
    except (U.botocore.exceptions.BotoCoreError, U.botocore.exceptions.ClientError) as e:
        raise U.UploadError(U.error_text(e, bucket, endpoint_url))
    out = []
    for key in keys:
        entry = {"key": key, "source": "s3://%s/%s" % (bucket, key)}
        try:
            text = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode("utf-8")
            if parse:
                entry["document"] = json.loads(text)
            else:
                entry["text"] = text
        except ValueError as e:  # UnicodeDecodeError is one too
            entry["error"] = "not valid JSON: %s" % e
        except (U.botocore.exceptions.BotoCoreError, U.botocore.exceptions.ClientError) as e:
            entry["error"] = U.error_text(e, bucket, endpoint_url)
        out.append(entry)
    return out
