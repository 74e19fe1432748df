# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # The connection options of plugins/module_utils/k8s/client.py K8S_AUTH_ARG_SPEC.
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig, or the kubeconfig itself as a dictionary.
      - Falls back to E(K8S_AUTH_KUBECONFIG), then E(KUBECONFIG), then C(~/.kube/config).
    type: raw
  context:
    description: Kubeconfig context to use. Falls back to E(K8S_AUTH_CONTEXT), then the current context.
    type: str
  host:
    description: API server URL, overriding the kubeconfig. Falls back to E(K8S_AUTH_HOST).
    type: str
  api_key:
    description: Bearer token, overriding the kubeconfig. Falls back to E(K8S_AUTH_API_KEY).
    type: str
  validate_certs:
    description: Verify the API server's certificate. Falls back to E(K8S_AUTH_VERIFY_SSL).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description: CA bundle to verify the API server with. Falls back to E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description: Client certificate for TLS authentication. Falls back to E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description: Key of O(client_cert). Falls back to E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  request_timeout:
    description:
      - Seconds to wait for one API request.
      - At most 3600 - an hour for one API request.
    type: float
    default: 30.0
  api_retries:
    description:
      - Tries per request on 429 (after its C(Retry-After)), 5xx and connection errors, with capped, jittered
        exponential backoff (client-go's default is 10 too). Every request of a run also shares a retry budget,
        and a server that answers nothing for O(api_unreachable_after) seconds is reported unreachable; see
        docs/fleet.md.
      - At most 20 - tries per request; with capped backoff 20 already wait several minutes.
    type: int
    default: 10
  api_unreachable_after:
    description:
      - Seconds an API server may answer nothing (connections refused, reset or timed out) before the run reports
        it unreachable and fails the cluster, instead of retrying on. Throttled and 5xx answers are answers and do
        not count.
      - Lower it for a fleet, where a dead cluster should cost its host seconds, not minutes; raise it for a
        control plane that restarts slowly (a single-master upgrade).
      - Falls back to E(STORAGEPERF_API_UNREACHABLE_AFTER).
      - At most 600 - ten minutes of a server answering nothing.
    type: float
    default: 20.0
requirements:
  - kubernetes >= 30 (Python library)
notes:
  - Modules with these options belong to the C(storageperf.k8s.k8s) action group, so C(module_defaults)
    can set the connection once for all of them.
"""
