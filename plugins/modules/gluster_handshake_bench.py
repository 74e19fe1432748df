#!/usr/bin/python
# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gluster_handshake_bench
short_description: Restart one glusterd and time the peer handshake until the pool answers again
version_added: "0.1.0"
description:
  - Restarts glusterd on the target host and measures, with one monotonic clock started just before the
    restart, when every peer again shows all its peers C(Connected) in C(gluster peer status), when
    C(gluster volume list) answers on the restarted peer, and when C(gluster volume status <volume>) (which
    needs the cluster-wide lock, so a finished handshake) answers there.
  - Then times one C(gluster volume info all) on the restarted peer.
  - This is the measurement of the glusterd volume-scale work (GlusterFS 7) whose handshake took 7.5 minutes at
    about 2000 volumes on 3 peers before the change and 2 minutes 18 seconds after it.
  - Always reports changed, since it restarts a service. In check mode it restarts nothing and measures nothing.
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_only
options:
  restart_cmd:
    description: Shell command that restarts glusterd on this host and returns when it runs again.
    type: str
    default: systemctl restart glusterd
  gluster_cli:
    description: Command that runs the gluster CLI of the restarted peer; C(--mode=script) is appended.
    type: str
    default: gluster
  observers:
    description:
      - One entry per peer in the pool (the restarted one included), each with a C(name) and the C(cli) that
        runs C(gluster) against that peer's glusterd.
      - On separate hosts the CLI of another peer can be C(gluster --remote-host=<address>) (read-only commands
        such as C(peer status) work remotely).
      - Defaults to the restarted peer alone.
    type: list
    elements: dict
    default: []
  expected_peers:
    description:
      - How many peers each observer must list as Connected. Defaults to the number of O(observers) minus one,
        or the number of peers the restarted glusterd listed before the restart.
      - At most 128 - peers of one trusted storage pool.
    type: int
  status_volume:
    description:
      - Volume whose C(volume status) must answer on the restarted peer. Defaults to the first volume of
        C(volume list) before the restart; with no volumes the status milestone equals the connect milestone.
    type: str
  volume_info:
    description: Also time one C(gluster volume info all) on the restarted peer after the handshake.
    type: bool
    default: true
  timeout:
    description:
      - Seconds after the restart by which the pool must answer again; past it the task fails with a message
        saying how far the handshake got, and every command still running is killed.
      - The default is glusterd's RPC timeout (600 s). A handshake that takes longer has seen its RPC expire, the
        failure of the seed (CLI commands hang), so a longer wait measures nothing more.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: int
    default: 600
  poll_interval:
    description:
      - Seconds between polls; the error of every figure is at most this.
      - At most 600 - ten minutes between two progress lines or polls.
    type: float
    default: 0.2
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Restart glusterd on the first peer and time the handshake
  storageperf.k8s.gluster_handshake_bench:
    observers:
      - {name: gluster1, cli: gluster}
      - {name: gluster2, cli: "gluster --remote-host=10.0.0.12"}
      - {name: gluster3, cli: "gluster --remote-host=10.0.0.13"}
  register: handshake

- name: Local pool peer with wrapper CLIs (scripts/gluster-pool.sh)
  storageperf.k8s.gluster_handshake_bench:
    gluster_cli: .cache/gluster-pool/peer1/gluster
    restart_cmd: .cache/gluster-pool/peer1/restart
    observers:
      - {name: peer1, cli: .cache/gluster-pool/peer1/gluster}
      - {name: peer2, cli: .cache/gluster-pool/peer2/gluster}
      - {name: peer3, cli: .cache/gluster-pool/peer3/gluster}
"""

RETURN = r"""
volume_count:
  description: Volumes in the pool when the restart was issued.
  returned: success
  type: int
  sample: 500
handshake_seconds:
  description: From the restart command to the last milestone (all peers Connected, volume list and volume status answered).
  returned: success
  type: float
  sample: 9.4
restart_seconds:
  description: How long the restart command itself took.
  returned: success
  type: float
peers_connected_seconds:
  description: From the restart to the moment the last observer listed all peers Connected.
  returned: success
  type: float
volume_list_seconds:
  description: From the restart to the first answer of C(volume list) on the restarted peer.
  returned: success
  type: float
volume_status_seconds:
  description: From the restart to the first answer of C(volume status <status_volume>) on the restarted peer.
  returned: success
  type: float
connected_seconds_by_peer:
  description: Per observer, from the restart to the moment it listed all peers Connected.
  returned: success
  type: dict
volume_info_seconds:
  description: Duration of one C(volume info all) on the restarted peer after the handshake.
  returned: when O(volume_info=true)
  type: float
volume_info_count:
  description: Volumes listed by that C(volume info all).
  returned: when O(volume_info=true)
  type: int
polls:
  description: Poll rounds needed.
  returned: success
  type: int
rpc_timeout_exceeded:
  description: On a handshake timeout, whether the wait went past glusterd's 600 s RPC timeout.
  returned: on handshake timeout (the task fails)
  type: bool
waited_seconds:
  description: On a handshake timeout, how long the task waited after the restart.
  returned: on handshake timeout (the task fails)
  type: float
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.handshake import GLUSTERD_RPC_TIMEOUT
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.restart_bench import bench_handshake


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            restart_cmd=dict(type="str", default="systemctl restart glusterd"),
            gluster_cli=dict(type="str", default="gluster"),
            observers=dict(type="list", elements="dict", default=[]),
            expected_peers=dict(type="int"),
            status_volume=dict(type="str"),
            volume_info=dict(type="bool", default=True),
            timeout=dict(type="int", default=GLUSTERD_RPC_TIMEOUT),
            poll_interval=dict(type="float", default=0.2),
        ),
        supports_check_mode=True,
        limits={"expected_peers": L.GLUSTER_PEERS, "timeout": L.TIMEOUT, "poll_interval": L.INTERVAL},
    )
    module.run(lambda m: bench_handshake(m.params, check_mode=m.check_mode))


if __name__ == "__main__":
    main()
