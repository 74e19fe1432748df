# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upload a directory of reports to an S3-compatible bucket (AWS S3, Alibaba Cloud OSS, MinIO) with boto3.

Credentials come only from boto3's own chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, AWS_PROFILE and the shared files, instance roles): nothing here accepts or
returns a secret. Idempotent: an object whose content is already in the bucket is not uploaded again, judged
by its ETag (the MD5 of a single-part upload) or, where a store computes ETags differently (KMS,
some S3-compatible servers), by the sha256 this code stores in the object's metadata.
"""
from __future__ import annotations

import hashlib
import mimetypes
import os
from typing import Any, Mapping

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

try:
    import boto3
    import botocore.config
    import botocore.exceptions

    HAS_BOTO3 = True
except ImportError:
    boto3 = None  # optional: the module says how to install it
    HAS_BOTO3 = False

META_SHA256 = "storageperf-sha256"
ADDRESSING_STYLES = ("auto", "path", "virtual")
# the options of every module that reaches a bucket (doc fragment storageperf.k8s.s3)
S3_ARG_SPEC = dict(
    endpoint_url=dict(type="str"),
    region=dict(type="str"),
    profile=dict(type="str"),
    addressing_style=dict(type="str", choices=list(ADDRESSING_STYLES), default="auto"),
    signature_version=dict(type="str"),
)


class UploadError(StoragePerfError):
    """Why the upload cannot go on, phrased for the person running it (never with a credential)."""


def local_files(src: str) -> list[tuple[str, str]]:
    """[(relative posix path, absolute path)] of every regular file under src, sorted, dotfiles left out.

    Dotfiles are the atomic writer's temp files (.result.json.XXXX): half-written, never reports.
    """
    out = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            if os.path.isfile(path):
                out.append((os.path.relpath(path, src).replace(os.sep, "/"), path))
    return out


def digests(path: str) -> tuple[str, str]:
    try:  # md5 is what S3 ETags are, not a security check; FIPS hosts allow it only when told so
        md5 = hashlib.md5(usedforsecurity=False)
    except TypeError:
        md5 = hashlib.md5()  # nosec
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md5.update(chunk)
            sha.update(chunk)
    return md5.hexdigest(), sha.hexdigest()


def object_key(prefix: str, rel: str) -> str:
    prefix = (prefix or "").strip("/")
    return "%s/%s" % (prefix, rel) if prefix else rel


def client_from_params(p: Mapping[str, Any]) -> Any:
    """The S3 client of a module's bucket options (S3_ARG_SPEC plus bucket), after checking them."""
    if not HAS_BOTO3:
        raise StoragePerfError(missing_required_lib("boto3") + " Install it with: pip install --no-deps -r "
                               "requirements-s3.txt (docs/fleet.md says why --no-deps).")
    if not p["bucket"].strip() or "/" in p["bucket"]:
        raise StoragePerfError("bucket %r must be a bucket name (no '/'); put the path into prefix" % p["bucket"])
    return client(p["endpoint_url"], p["region"], p["profile"], p["addressing_style"], p["signature_version"])


def client(endpoint_url: str | None = None, region: str | None = None, profile: str | None = None, addressing_style: str = "auto",
           signature_version: str | None = None) -> Any:
    """An S3 client from boto3's credential chain.

    Checksums only "when required": boto3 >= 1.36 adds CRC trailers to every upload by default,
    which S3-compatible stores such as OSS reject.
    """
    if not HAS_BOTO3:
        raise UploadError("boto3 is not installed on the host running the upload; install it there "
                          "(pip install --no-deps -r requirements-s3.txt, see docs/fleet.md)")
    cfg = {"s3": {"addressing_style": addressing_style}, "retries": {"max_attempts": 5, "mode": "standard"},
           "request_checksum_calculation": "when_required", "response_checksum_validation": "when_required"}
    if signature_version:
        cfg["signature_version"] = signature_version
    try:
        session = boto3.session.Session(profile_name=profile or None, region_name=region or None)
    except botocore.exceptions.ProfileNotFound:
        raise UploadError("profile %r is not in the AWS shared config/credentials files (profile)" % profile)
    return session.client("s3", endpoint_url=endpoint_url or None, config=botocore.config.Config(**cfg))


def error_text(exc: BaseException, bucket: str, endpoint_url: str | None) -> str:
    """Why a call to the bucket failed, phrased for the person running it (never with a credential)."""
    where = "bucket %r%s" % (bucket, (" at " + endpoint_url) if endpoint_url else "")
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return ("no credentials for %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
                "temporary ones) or AWS_PROFILE in the environment of the host running the upload" % where)
    if isinstance(exc, botocore.exceptions.EndpointConnectionError):
        return "cannot reach %s: %s; check endpoint_url and region" % (where, exc)
    if isinstance(exc, botocore.exceptions.ClientError):
        err = exc.response.get("Error", {})
        code, status = err.get("Code", ""), exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in ("NoSuchBucket", "404") or (status == 404 and not code):
            return "%s does not exist; create it first or fix bucket/endpoint_url" % where
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            return ("access to %s denied (%s): the credentials in the environment may not write to it, or belong "
                    "to another account or store" % (where, code))
        return "%s: %s %s" % (where, code or status, err.get("Message", ""))
    return "%s: %s" % (where, exc)


def _remote(s3: Any, bucket: str, prefix: str) -> dict[str, str]:
    """{key: ETag without quotes, lower case} of the objects under prefix."""
    out = {}
    kwargs = {"Bucket": bucket}
    if prefix:
        kwargs["Prefix"] = prefix.strip("/") + "/"
    for page in s3.get_paginator("list_objects_v2").paginate(**kwargs):
        for obj in page.get("Contents", []):
            out[obj["Key"]] = obj.get("ETag", "").strip('"').lower()
    return out


def sync(s3: Any, src: str, bucket: str, prefix: str = "", check_mode: bool = False, endpoint_url: str | None = None) -> dict[str, Any]:
    """Upload what is missing or different; returns {"uploaded": [keys], "unchanged": [keys], "diff": {...}}."""
    if not os.path.isdir(src):
        raise UploadError("src %s is not a directory; give a run's or a fleet report's directory" % src)
    files = local_files(src)
    if not files:
        raise UploadError("src %s holds no files to upload" % src)
    try:
        remote = _remote(s3, bucket, prefix)
        uploaded, unchanged, before, after = [], [], {}, {}
        for rel, path in files:
            key = object_key(prefix, rel)
            md5, sha = digests(path)
            if key in remote and (remote[key] == md5 or _stored_sha(s3, bucket, key) == sha):
                unchanged.append(key)
                continue
            before[key] = remote.get(key)
            after[key] = md5
            uploaded.append(key)
            if check_mode:
                continue
            ctype = mimetypes.guess_type(rel)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype == "application/json":
                ctype += "; charset=utf-8"
            with open(path, "rb") as body:
                s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=ctype,
                              ContentMD5=_b64(md5), Metadata={META_SHA256: sha})
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
        raise UploadError(error_text(e, bucket, endpoint_url))
    return {"uploaded": uploaded, "unchanged": unchanged, "diff": {"before": before, "after": after}}


def _stored_sha(s3: Any, bucket: str, key: str) -> str | None:
    head = s3.head_object(Bucket=bucket, Key=key)
    return (head.get("Metadata") or {}).get(META_SHA256)


def _b64(md5_hex: str) -> str:
    import base64
    import binascii

    return base64.b64encode(binascii.unhexlify(md5_hex)).decode("ascii")
