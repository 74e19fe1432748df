#!/usr/bin/python
# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gluster_peers
short_description: Probe peers into a GlusterFS trusted pool and wait until they are Connected
version_added: "0.1.0"
description:
  - Reads C(gluster peer status) once, probes only the addresses that are not yet in the pool, then waits
    until every requested peer is listed as C(Peer in Cluster (Connected)) (O(wait)).
  - The target host's own address may be in O(peers); name it in O(self_address) so it is skipped.
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
  - storageperf.k8s.wait
options:
  peers:
    description: Addresses (or host names) of all peers of the pool.
    type: list
    elements: str
    required: true
  gluster_cli:
    description: Command that runs the gluster CLI for this host; C(--mode=script) is appended.
    type: str
    default: gluster
  self_address:
    description:
      - This host's own address in O(peers). It is never listed in its own C(peer status), so it is left out of
        the comparison; without it, it is probed (glusterd answers "not needed") and check mode counts it.
    type: str
notes:
  - O(wait_timeout=0) skips the wait as O(wait=false) does (it did so before O(wait) existed).
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Form the pool from the first host
  storageperf.k8s.gluster_peers:
    peers: [10.0.0.11, 10.0.0.12, 10.0.0.13]
  run_once: true
"""

RETURN = r"""
probed:
  description: Addresses probed by this task (or that would be, in check mode).
  returned: always
  type: list
  elements: str
peers:
  description: C(gluster peer status) after the task, parsed.
  returned: always
  type: list
  elements: dict
  sample: [{hostname: 10.0.0.12, uuid: 7121cfb4-ce5c-4851-bba1-468c91b2cbae, state: Peer in Cluster (Connected), connected: true}]
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import DEFAULT_WAIT_TIMEOUT
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.peers import probe_peers


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            peers=dict(type="list", elements="str", required=True),
            gluster_cli=dict(type="str", default="gluster"),
            self_address=dict(type="str"),
            wait=dict(type="bool", default=True),
            wait_timeout=dict(type="int", default=DEFAULT_WAIT_TIMEOUT),
        ),
        supports_check_mode=True,
        limits={"wait_timeout": L.TIMEOUT},
    )
    module.run(lambda m: probe_peers(m.params, check_mode=m.check_mode, diff=m.diff_mode))


if __name__ == "__main__":
    main()
