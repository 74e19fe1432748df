# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the modules that read or write a bucket reach it: one set of options (report/s3_upload.py S3_ARG_SPEC)."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  endpoint_url:
    description:
      - URL of an S3-compatible endpoint. Empty means AWS S3 in O(region).
      - "Alibaba Cloud OSS: C(https://s3.oss-<region>.aliyuncs.com), with O(addressing_style=virtual) and
        O(signature_version=s3) (OSS rejects the chunked uploads of boto3's V4 signing). MinIO: its URL."
    type: str
  region:
    description: Region of the bucket (for AWS S3 and for signing); falls back to boto3's (E(AWS_DEFAULT_REGION), profile).
    type: str
  profile:
    description: Named profile of the shared AWS config/credentials files (the name only, no secret).
    type: str
  addressing_style:
    description: V(virtual) (bucket in the host name, required by OSS), V(path) (bucket in the path), or V(auto).
    type: str
    choices: [auto, path, virtual]
    default: auto
  signature_version:
    description: botocore signature version, for example V(s3v4) or V(s3) (V2, for OSS). Empty means botocore's default.
    type: str
notes:
  - Credentials come from boto3's chain on the host running the module (E(AWS_ACCESS_KEY_ID),
    E(AWS_SECRET_ACCESS_KEY), E(AWS_SESSION_TOKEN), O(profile), an instance role), never from module arguments.
"""
