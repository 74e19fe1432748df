#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: reports_upload
short_description: Upload a directory of benchmark or fleet reports to an S3-compatible bucket
version_added: "0.2.0"
description:
  - Uploads every file under O(src) (a run's C(reports/<run_id>/) or a fleet report's C(reports/<name>/)) to
    C(s3://<bucket>/<prefix>/<path relative to src>) with boto3, so the reports outlive the job that made them.
  - Works with AWS S3 and S3-compatible stores such as Alibaba Cloud OSS (see O(endpoint_url)) and MinIO.
  - Idempotent. An object already in the bucket with the same content is skipped. The content is compared
    through the object's ETag (the MD5 of a single-part upload) or the sha256 this module stores in the object's
    metadata (C(x-amz-meta-storageperf-sha256)).
  - Credentials come only from boto3's credential chain on the host running the module. That means
    E(AWS_ACCESS_KEY_ID), E(AWS_SECRET_ACCESS_KEY), E(AWS_SESSION_TOKEN), E(AWS_PROFILE) or O(profile) with
    the shared credentials file, or an instance role. They are never module options, and they never appear
    in results or errors.
  - Files whose name starts with a dot (the atomic writer's temporary files) are not uploaded.
options:
  src:
    description: Local directory to upload, on the host running the module (normally the controller).
    type: path
    required: true
  bucket:
    description: Bucket name. It must exist.
    type: str
    required: true
  prefix:
    description:
      - Key prefix; objects are named C(<prefix>/<relative path>). Empty puts them at the top of the bucket.
      - For example C(storageperf/{{ tower_job_id | default('manual') }}) or the run id.
    type: str
    default: ""
requirements:
  - boto3 on the host running the module (C(requirements-s3.txt) of the collection)
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - Check mode lists the bucket and reports which objects would be uploaded, but uploads nothing.
  - Objects are uploaded with one PUT each (reports are small); the size limit of a single PUT (5 GiB on S3) applies.
seealso:
  - module: storageperf.k8s.fleet_report
  - module: storageperf.k8s.bench_report
extends_documentation_fragment:
  - storageperf.k8s.s3
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
"""

EXAMPLES = r"""
- name: Keep the fleet report in S3
  storageperf.k8s.reports_upload:
    src: "{{ storageperf_fleet_report.output_dir }}"
    bucket: perf-reports
    prefix: "fleets/{{ storageperf_fleet_report.name }}"
    region: eu-central-1
  delegate_to: localhost
  run_once: true

- name: Keep a run's reports in Alibaba Cloud OSS (credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)
  storageperf.k8s.reports_upload:
    src: "reports/{{ run_id }}"
    bucket: perf-reports-hz
    prefix: "runs/{{ run_id }}"
    endpoint_url: https://s3.oss-cn-hangzhou.aliyuncs.com
    region: cn-hangzhou
    addressing_style: virtual
    signature_version: s3
  delegate_to: localhost
"""

RETURN = r"""
uploaded:
  description: Keys uploaded (in check mode, that would be uploaded) because they were missing or different.
  returned: always
  type: list
  elements: str
  sample: [fleets/fleet-20260620T093000Z/fleet.html, fleets/fleet-20260620T093000Z/fleet.json]
unchanged:
  description:
    - Keys already in the bucket with the same content, not uploaded again.
    - (Not called C(skipped), which in a task result would mark the task itself as skipped.)
  returned: always
  type: list
  elements: str
  sample: [fleets/fleet-20260620T093000Z/fleet.md]
bucket:
  description: The bucket.
  returned: always
  type: str
  sample: perf-reports
urls:
  description: C(s3://bucket/key) of every file of O(src), uploaded or unchanged.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import s3_upload as U
from ansible_collections.storageperf.k8s.plugins.module_utils.report.modules import reports_upload


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            src=dict(type="path", required=True),
            bucket=dict(type="str", required=True),
            prefix=dict(type="str", default=""),
            **U.S3_ARG_SPEC,
        ),
        supports_check_mode=True,
    )
    module.run(lambda m: reports_upload(m.params, check_mode=m.check_mode, diff=m.diff_mode))


if __name__ == "__main__":
    main()
