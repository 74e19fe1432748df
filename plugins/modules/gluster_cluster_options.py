#!/usr/bin/python
# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gluster_cluster_options
short_description: Tune glusterd's cluster-wide options for many volumes
version_added: "0.1.0"
description:
  - Sets the cluster-wide (C(volume set all)) options that decide how glusterd copes with thousands of
    volumes, idempotently. Each option is read with C(gluster volume get all <option>) and set only if it differs.
  - C(cluster.brick-multiplex) runs the bricks of many volumes in one process per peer.
  - C(glusterd.vol_count_per_thread) is the number of volumes each thread packs into the peer handshake
    dictionary (the multi-threaded export from the glusterd volume-scale work shipped in GlusterFS 7). glusterd
    accepts 5 to 200; values above 100 turn the threading off.
  - glusterd accepts C(cluster.max-bricks-per-process) and C(glusterd.vol_count_per_thread) only while
    brick multiplexing is on; the module checks that before changing anything, and orders the changes so
    that they are set while it is on (after turning it on, or before turning it off).
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
options:
  brick_multiplex:
    description: Desired C(cluster.brick-multiplex). Omit to leave it as it is.
    type: bool
  max_bricks_per_process:
    description:
      - Desired C(cluster.max-bricks-per-process) (glusterd default 250; 0 means no limit).
      - Needs brick multiplexing on (already, or through O(brick_multiplex=true) in the same task).
      - At most 1000 - 4x glusterd's default of 250 bricks per brick process.
    type: int
  vol_count_per_thread:
    description:
      - Desired C(glusterd.vol_count_per_thread), 5 to 200 (glusterd default 100). Above 100 the handshake
        export is single-threaded again; the module warns.
      - Needs brick multiplexing on (already, or through O(brick_multiplex=true) in the same task).
      - At most 200 - glusterd.vol_count_per_thread takes 5 to 200.
    type: int
  gluster_cli:
    description: Command that runs the gluster CLI for this host; C(--mode=script) is appended.
    type: str
    default: gluster
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Tune glusterd for thousands of volumes
  storageperf.k8s.gluster_cluster_options:
    brick_multiplex: true
    max_bricks_per_process: 250
    vol_count_per_thread: 20

- name: Back to the defaults for brick multiplexing
  storageperf.k8s.gluster_cluster_options:
    brick_multiplex: false
"""

RETURN = r"""
options:
  description: The values of the managed options after the task (planned values in check mode).
  returned: always
  type: dict
  sample: {cluster.brick-multiplex: "on", glusterd.vol_count_per_thread: "20"}
before:
  description: The values read before any change, with whether glusterd reported them as its default.
  returned: always
  type: dict
  sample: {cluster.brick-multiplex: {value: disable, default: true}}
changed_options:
  description: Options that were (or would be) set, with their new values.
  returned: always
  type: dict
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.options import set_cluster_options


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            brick_multiplex=dict(type="bool"),
            max_bricks_per_process=dict(type="int"),
            vol_count_per_thread=dict(type="int"),
            gluster_cli=dict(type="str", default="gluster"),
        ),
        supports_check_mode=True,
        limits={"max_bricks_per_process": L.MAX_BRICKS_PER_PROCESS, "vol_count_per_thread": L.VOL_COUNT_PER_THREAD},
    )
    module.run(lambda m: set_cluster_options(m.params, check_mode=m.check_mode, diff=m.diff_mode, warn=m.warn))


if __name__ == "__main__":
    main()
