#!/usr/bin/python
# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: gluster_volumes
short_description: Create or delete many GlusterFS volumes in one task
version_added: "0.1.0"
description:
  - Creates (and starts) or deletes many GlusterFS volumes in a single task, with bounded concurrency.
  - Reads C(gluster volume list) once and acts only on the difference, so a rerun changes nothing. Looping the
    C(gluster.gluster.gluster_volume) module instead runs C(volume info) of every volume per item, which makes
    the cost of N volumes quadratic in N.
  - One brick per peer per volume, at C(<peer>:<bricks root>/<volume name>). glusterd creates brick directories;
    it does not remove them on delete (see the C(cleanup_gluster.yml) playbook).
  - Runs the gluster CLI on the target host; it talks to the glusterd of that host.
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
options:
  names:
    description:
      - Volume names. Mutually exclusive with O(prefix).
      - Names may contain letters, digits, C(_) and C(-), up to 64 characters, and may not start with C(-).
    type: list
    elements: str
  prefix:
    description:
      - Name prefix. With O(count), the volumes are C(<prefix><index>) with the index zero-padded to at least
        4 digits (C(bench0001)).
      - With O(state=absent) and no O(count), every volume whose name starts with the prefix is deleted.
    type: str
  count:
    description:
      - Number of volumes named from O(prefix). Required with O(prefix) when O(state=present).
      - At most 5000 - 2.5x the seed's 2000 volumes, where glusterd's handshake stalled; Heketi caps a cluster at
        1000.
    type: int
  start_index:
    description:
      - First index used with O(prefix) and O(count).
      - At most 1000000 - volume names stay short (<prefix><index>).
    type: int
    default: 1
  replica:
    description:
      - Replica count. The number of O(peers) must be a multiple of it (more peers make distributed-replicate).
      - Use V(1) for plain distributed volumes.
      - At most 16 - bricks per replica set; GlusterFS supports replica 2 and 3 (and arbiter).
    type: int
    default: 3
  peers:
    description:
      - Addresses (as probed into the pool) that each get one brick of every volume, in this order.
      - Required when O(state=present).
    type: list
    elements: str
  bricks_root:
    description: Directory on every peer under which a brick directory per volume is created.
    type: path
  bricks_roots:
    description:
      - Per-peer bricks directory, keyed by peer address; overrides O(bricks_root) for those peers.
      - Needed when several peers share one file system (the local test pool).
    type: dict
  state:
    description: V(present) creates missing volumes; V(absent) stops and deletes the named volumes.
    type: str
    choices: [present, absent]
    default: present
  start:
    description: Start volumes after creating them.
    type: bool
    default: true
  force:
    description:
      - Pass C(force) to C(volume create). glusterd refuses bricks on the root file system without it.
    type: bool
    default: true
  options:
    description:
      - Volume options (C(volume set <vol> <key> <value>)) applied to every created volume before it starts.
      - Existing volumes are read once with C(volume info all) and only options that differ are set.
    type: dict
    default: {}
  parallel:
    description:
      - How many gluster transactions run at once. glusterd takes a lock per volume, so different volumes can
        be created concurrently; refused transactions (lock held) are retried with backoff.
      - Measured on glusterfs 10.3 with 3 peers and 2 vCPU, 4 halves the wall time against 1; more helps little.
      - At most 32 - gluster CLI calls at once; glusterd serialises volume operations behind its lock.
    type: int
    default: 4
  gluster_cli:
    description:
      - The command that runs the gluster CLI for this host, split like a shell would. C(--mode=script) is
        appended.
    type: str
    default: gluster
  timeout:
    description:
      - Seconds one gluster command may take before it counts as failed.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: int
    default: 600
notes:
  - A failure names the volume and carries gluster's own error output; volumes created before the failure are
    reported in RV(created) of the failure result and are kept (a rerun continues from there).
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
- name: Create 500 replica-3 volumes bench0001..bench0500, four transactions at a time
  storageperf.k8s.gluster_volumes:
    prefix: bench
    count: 500
    peers: [10.0.0.11, 10.0.0.12, 10.0.0.13]
    bricks_root: /data/bricks
    options:
      performance.quick-read: "off"
    parallel: 4

- name: Delete every volume whose name starts with bench
  storageperf.k8s.gluster_volumes:
    prefix: bench
    state: absent

- name: One peer of a local test pool (wrapper CLI, per-peer brick roots)
  storageperf.k8s.gluster_volumes:
    names: [pvc-a, pvc-b]
    peers: [10.244.77.11, 10.244.77.12, 10.244.77.13]
    bricks_roots:
      10.244.77.11: /srv/pool/peer1/bricks
      10.244.77.12: /srv/pool/peer2/bricks
      10.244.77.13: /srv/pool/peer3/bricks
    gluster_cli: /srv/pool/peer1/gluster
"""

RETURN = r"""
created:
  description: Volumes this task created (or would create in check mode).
  returned: always
  type: list
  elements: str
  sample: [bench0001, bench0002]
deleted:
  description: Volumes this task deleted (or would delete in check mode).
  returned: always
  type: list
  elements: str
existing:
  description: Requested volumes that already existed and were kept (O(state=present)).
  returned: always
  type: list
  elements: str
reconfigured:
  description: Existing volumes whose options differed from O(options) and were set.
  returned: always
  type: list
  elements: str
created_count:
  description: Length of RV(created).
  returned: always
  type: int
deleted_count:
  description: Length of RV(deleted).
  returned: always
  type: int
existing_count:
  description: Length of RV(existing).
  returned: always
  type: int
volume_count:
  description: Number of volumes in the pool after the task (before it, in check mode plus the planned change).
  returned: always
  type: int
seconds:
  description: Wall time of the create or delete phase, monotonic clock.
  returned: always
  type: float
per_volume_seconds:
  description: Mean, min and max seconds per volume for the volumes acted on (create + set + start, or stop + delete).
  returned: always
  type: dict
  sample: {mean: 0.41, min: 0.3, max: 1.2}
cli_calls:
  description:
    - gluster CLI invocations this task made, retries of lock conflicts included. One C(volume list), then per
      volume acted on one create or stop and delete, one set per option, one start; so it grows linearly.
  returned: always
  type: int
  sample: 2001
failed_volumes:
  description: Volumes that failed, with gluster's error output.
  returned: on failure
  type: list
  elements: dict
  sample: [{name: bench0007, error: "`gluster volume create bench0007 ...` failed (rc=1): ..."}]
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.volumes import reconcile_volumes


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            names=dict(type="list", elements="str"),
            prefix=dict(type="str"),
            count=dict(type="int"),
            start_index=dict(type="int", default=1),
            replica=dict(type="int", default=3),
            peers=dict(type="list", elements="str"),
            bricks_root=dict(type="path"),
            bricks_roots=dict(type="dict"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            start=dict(type="bool", default=True),
            force=dict(type="bool", default=True),
            options=dict(type="dict", default={}),
            parallel=dict(type="int", default=4),
            gluster_cli=dict(type="str", default="gluster"),
            timeout=dict(type="int", default=600),
        ),
        mutually_exclusive=[("names", "prefix")],
        required_one_of=[("names", "prefix")],
        supports_check_mode=True,
        limits={"count": L.GLUSTER_VOLUMES, "start_index": L.GLUSTER_START_INDEX, "replica": L.GLUSTER_REPLICA,
                "parallel": L.GLUSTER_PARALLEL, "timeout": L.TIMEOUT},
    )
    module.run(lambda m: reconcile_volumes(m.params, check_mode=m.check_mode, diff=m.diff_mode))


if __name__ == "__main__":
    main()
