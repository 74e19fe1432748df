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
    until every requested peer is listed as C(Peer in Cluster (Connected)).
  - The target host's own address may be in O(peers); name it in O(self_address) so it is skipped.
extends_documentation_fragment:
  - storageperf.k8s.attributes
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
  wait_timeout:
    description: Seconds to wait for all peers to be Connected after probing (0 skips waiting).
    type: int
    default: 120
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
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

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import GlusterCLI, GlusterError, parse_peer_status


def known_names(peers: list[dict]) -> set[str]:
    names = set()
    for peer in peers:
        names.add(peer["hostname"])
        names.update(peer.get("other_names") or [])
    return names


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            peers=dict(type="list", elements="str", required=True),
            gluster_cli=dict(type="str", default="gluster"),
            self_address=dict(type="str"),
            wait_timeout=dict(type="int", default=120),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if not p["peers"]:
        module.fail_json(msg="peers is empty: list the addresses of all peers of the pool")
    cli = GlusterCLI(p["gluster_cli"])
    try:
        before = parse_peer_status(cli.check("peer", "status"))
    except GlusterError as exc:
        module.fail_json(msg=f"{exc}; is glusterd running and gluster_cli={p['gluster_cli']!r} right?")
    known = known_names(before)
    # This host's own address is never in its own `peer status`; probing it answers "Probe on localhost not
    # needed" and changes nothing, which the loop below recognises.
    missing = [a for a in p["peers"] if a not in known and a != p["self_address"]]
    probed: list[str] = []
    if not module.check_mode:
        for address in missing:
            rc, out, err = cli.run("peer", "probe", address)
            text = f"{out}{err}"
            if rc != 0:
                module.fail_json(msg=f"`gluster peer probe {address}` failed (rc={rc}): {text.strip()}",
                                 probed=probed, peers=before)
            if "localhost not needed" in text or "already in peer list" in text:
                continue  # our own address, or already known under another name
            probed.append(address)
    else:
        probed = missing
    after = before
    if not module.check_mode and p["wait_timeout"] > 0:
        deadline = time.monotonic() + p["wait_timeout"]
        while True:
            try:
                after = parse_peer_status(cli.check("peer", "status"))
            except GlusterError as exc:
                module.fail_json(msg=str(exc), probed=probed, peers=before)
            if all(peer["connected"] for peer in after) and known_names(after) >= set(missing):
                break
            if time.monotonic() > deadline:
                module.fail_json(msg=f"peers not all Connected after {p['wait_timeout']} s: "
                                     f"{[(x['hostname'], x['state']) for x in after]}", probed=probed, peers=after)
            time.sleep(0.5)
    result = dict(changed=bool(probed), probed=probed, peers=after)
    if module._diff:
        result["diff"] = {"before": "".join(f"{x}\n" for x in sorted(known)),
                          "after": "".join(f"{x}\n" for x in sorted(known | set(probed)))}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
