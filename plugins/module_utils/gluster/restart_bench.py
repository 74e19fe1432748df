# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gluster_handshake_bench run: check the inputs, read the pool, restart one glusterd and time the
handshake (gluster/handshake.py), then one `volume info all`."""
from __future__ import annotations

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    GlusterCLI,
    GlusterError,
    parse_peer_status,
)
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.handshake import (
    HandshakeTimeout,
    count_volumes,
    measure_handshake,
    observer_clis,
    time_volume_info,
)


def bench_handshake(p: dict, check_mode: bool = False) -> dict:
    """The module's result; always changed, since it restarts a service (in check mode it restarts nothing)."""
    bad = [i for i, o in enumerate(p["observers"]) if not isinstance(o, dict) or not o.get("name") or not o.get("cli")]
    if bad:
        raise GlusterError(f"observers items {bad} need both name and cli (e.g. {{name: gluster2, cli: gluster}})")
    if p["poll_interval"] <= 0 or p["timeout"] <= 0:
        raise GlusterError("poll_interval and timeout must be > 0")
    if check_mode:
        return dict(changed=True, msg="check mode: glusterd not restarted, nothing measured")

    restarted = GlusterCLI(p["gluster_cli"])
    observers = observer_clis(p["observers"]) or {"restarted": restarted}
    try:
        volumes = count_volumes(restarted)
        status_volume = p["status_volume"]
        if status_volume is None and volumes:
            status_volume = restarted.check("volume", "list").split()[0]
        expected = p["expected_peers"]
        if expected is None:
            expected = len(observers) - 1 if len(observers) > 1 else len(
                parse_peer_status(restarted.check("peer", "status")))
        result = measure_handshake(restarted, p["restart_cmd"], observers, expected, status_volume,
                                   p["timeout"], p["poll_interval"])
        if p["volume_info"]:
            result.update(time_volume_info(restarted, p["timeout"]))
    except HandshakeTimeout as exc:
        # the figures so far go into the failed point of the report
        exc.result = dict(exc.result, changed=True, volume_count=volumes, **exc.partial)
        raise
    except GlusterError as exc:
        exc.result = dict(exc.result, changed=True)
        raise
    return dict(changed=True, volume_count=volumes, status_volume=status_volume, expected_peers=expected, **result)
