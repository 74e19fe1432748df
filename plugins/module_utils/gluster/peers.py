# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The trusted pool (gluster_peers): probe only the addresses `peer status` does not list, then wait until
every peer is Connected."""
from __future__ import annotations

import time
from typing import Any, Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import WaitTimeout
from ansible_collections.storageperf.k8s.plugins.module_utils.common.waiter import Predicate, poll
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    GlusterCLI,
    GlusterError,
    parse_peer_status,
    read_pool,
)

# glusterd's answers to a probe that changes nothing: this host's own address, or a peer known by another name.
PROBE_NOT_NEEDED = ("localhost not needed", "already in peer list")


def known_names(peers: list[dict]) -> set[str]:
    names = set()
    for peer in peers:
        names.add(peer["hostname"])
        names.update(peer.get("other_names") or [])
    return names


def pool_connected(addresses: list[str]) -> Predicate:
    """Every peer `peer status` lists is Connected, and the addresses are among them."""
    return Predicate("every peer Connected",
                     lambda peers: all(peer["connected"] for peer in peers) and known_names(peers) >= set(addresses))


def probe_peers(p: dict, check_mode: bool = False, diff: bool = False, sleep: Callable[[float], None] = time.sleep,
                clock: Callable[[], float] = time.monotonic) -> dict:
    """Probe the missing peers of p["peers"] and wait (p["wait"], p["wait_timeout"]); the module's result."""
    if not p["peers"]:
        raise GlusterError("peers is empty: list the addresses of all peers of the pool")
    cli = GlusterCLI(p["gluster_cli"])
    before = parse_peer_status(read_pool(cli, "peer", "status"))
    known = known_names(before)
    # This host's own address is never in its own `peer status`; probing it answers "Probe on localhost not
    # needed" and changes nothing (PROBE_NOT_NEEDED).
    missing = [a for a in p["peers"] if a not in known and a != p["self_address"]]
    probed = list(missing) if check_mode else _probe(cli, missing, before)
    after = before
    if not check_mode and p["wait"] and p["wait_timeout"] > 0:
        try:
            after = poll(lambda: parse_peer_status(cli.check("peer", "status")), pool_connected(missing),
                         p["wait_timeout"], first=0.5, cap=0.5, sleep=sleep, clock=clock)
        except GlusterError as exc:
            exc.result = dict(probed=probed, peers=before, **exc.result)
            raise
        except WaitTimeout as exc:
            raise GlusterError(f"peers not all Connected after {p['wait_timeout']} s: "
                               f"{[(x['hostname'], x['state']) for x in exc.last]}",
                               hint="The probes are done: run the task again to wait again",
                               result=dict(probed=probed, peers=exc.last)) from exc
    result: dict[str, Any] = dict(changed=bool(probed), probed=probed, peers=after)
    if diff:
        result["diff"] = {"before": "".join(f"{x}\n" for x in sorted(known)),
                          "after": "".join(f"{x}\n" for x in sorted(known | set(probed)))}
    return result


def _probe(cli: GlusterCLI, addresses: list[str], before: list[dict]) -> list[str]:
    probed: list[str] = []
    for address in addresses:
        rc, out, err = cli.run("peer", "probe", address)
        text = f"{out}{err}"
        if rc != 0:
            raise GlusterError(f"`gluster peer probe {address}` failed (rc={rc}): {text.strip()}",
                               result=dict(probed=probed, peers=before))
        if not any(answer in text for answer in PROBE_NOT_NEEDED):
            probed.append(address)
    return probed
