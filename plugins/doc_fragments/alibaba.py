# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # The Alibaba Cloud options of plugins/module_utils/ack/aliyun.py ALIBABA_AUTH_ARG_SPEC.
    DOCUMENTATION = r"""
options:
  access_key_id:
    description:
      - AccessKey id of a RAM user (or an STS AccessKey id with O(security_token)).
      - Deprecated in playbooks, kept for backwards compatibility - leave O(access_key_id), O(access_key_secret) and
        O(security_token) unset and let the Alibaba Cloud default credential chain find the keys. Ansible writes
        module arguments, C(no_log) ones included, into the module's payload file, which an interrupted run can
        leave on disk; see docs/credentials.md.
      - 'The chain, in the order of the official SDKs (alibabacloud-credentials): E(ALIBABA_CLOUD_ACCESS_KEY_ID),
        E(ALIBABA_CLOUD_ACCESS_KEY_SECRET) and E(ALIBABA_CLOUD_SECURITY_TOKEN); RRSA - STS C(AssumeRoleWithOIDC) with
        E(ALIBABA_CLOUD_ROLE_ARN), E(ALIBABA_CLOUD_OIDC_PROVIDER_ARN) and E(ALIBABA_CLOUD_OIDC_TOKEN_FILE) (endpoint
        E(ALIBABA_CLOUD_STS_ENDPOINT), else from E(ALIBABA_CLOUD_STS_REGION), else C(sts.aliyuncs.com)); the aliyun
        CLI profile in C(~/.aliyun/config.json) named by E(ALIBABA_CLOUD_PROFILE), else its current one (modes
        C(AK), C(StsToken), C(EcsRamRole), C(OIDC)); the ECS instance RAM role named by E(ALIBABA_CLOUD_ECS_METADATA)
        from the metadata service (E(ALIBABA_CLOUD_ECS_METADATA_ENDPOINT), default C(http://100.100.100.200)).'
      - Given as an option it falls back to E(ALIBABA_CLOUD_ACCESS_KEY_ID) for the missing half of the pair.
    type: str
    aliases: [alibaba_access_key_id]
  access_key_secret:
    description:
      - AccessKey secret of O(access_key_id). Never logged or returned. Deprecated in playbooks, see O(access_key_id).
      - Falls back to E(ALIBABA_CLOUD_ACCESS_KEY_SECRET).
    type: str
    aliases: [alibaba_access_key_secret]
  security_token:
    description:
      - STS security token, for temporary credentials. Falls back to E(ALIBABA_CLOUD_SECURITY_TOKEN).
      - Deprecated in playbooks, see O(access_key_id).
    type: str
    aliases: [alibaba_security_token]
  region:
    description:
      - Region of the cluster, for example V(cn-hangzhou). Falls back to E(ALIBABA_CLOUD_REGION_ID).
      - When unset, the cluster's own region (DescribeClusterDetail C(region_id)) is used; when set, it must match it.
    type: str
    aliases: [region_id]
  cs_endpoint:
    description:
      - ACK (Container Service) API endpoint, as C(host[:port]) or C(http(s)://host[:port]); a bare host means HTTPS.
      - Default C(cs.aliyuncs.com).
    type: str
  ecs_endpoint:
    description:
      - ECS API endpoint, as C(host[:port]) or C(http(s)://host[:port]); a bare host means HTTPS.
      - Default C(ecs.<region>.aliyuncs.com).
    type: str
  api_timeout:
    description:
      - Seconds one Alibaba Cloud API call may take.
      - At most 3600 - an hour for one API request.
    type: int
    default: 30
  api_retries:
    description:
      - Tries per call on throttling (C(Throttling*), HTTP 429) and transient server errors (5xx,
        C(ServiceUnavailable), connection errors), with capped, jittered exponential backoff, within the run's retry
        budget; an endpoint that answers nothing for 20 s is reported unreachable (docs/fleet.md).
      - At most 20 - tries per call; with capped backoff 20 already wait several minutes.
    type: int
    default: 10
  concurrency:
    description:
      - How many Alibaba Cloud calls run at once where calls are independent (pages of nodes, batches of 50
        instances for C(TagResources) and C(ListTagResources), node pools).
      - At most 32 - Alibaba Cloud throttles an account's calls per API; more only adds Throttling retries.
    type: int
    default: 8
requirements:
  - aliyun-python-sdk-core >= 2.13 (Python library)
notes:
  - Modules with these options belong to the C(storageperf.k8s.alibaba) action group, so C(module_defaults)
    can set credentials and endpoints once for all of them.
"""
