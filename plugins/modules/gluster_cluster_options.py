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
options:
  brick_multiplex:
    description: Desired C(cluster.brick-multiplex). Omit to leave it as it is.
    type: bool
  max_bricks_per_process:
    description:
      - Desired C(cluster.max-bricks-per-process) (glusterd default 250; 0 means no limit).
      - Needs brick multiplexing on (already, or through O(brick_multiplex=true) in the same task).
    type: int
  vol_count_per_thread:
    description:
      - Desired C(glusterd.vol_count_per_thread), 5 to 200 (glusterd default 100). Above 100 the handshake
        export is single-threaded again; the module warns.
      - Needs brick multiplexing on (already, or through O(brick_multiplex=true) in the same task).
    type: int
  gluster_cli:
    description: Command that runs the gluster CLI for this host; C(--mode=script) is appended.
    type: str
    default: gluster
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    BRICK_MULTIPLEX,
    VOL_COUNT_PER_THREAD,
    VOL_COUNT_THREADING_OFF_ABOVE,
    GlusterCLI,
    GlusterError,
    desired_cluster_options,
    is_true,
    parse_volume_get,
    same_option_value,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            brick_multiplex=dict(type="bool"),
            max_bricks_per_process=dict(type="int"),
            vol_count_per_thread=dict(type="int"),
            gluster_cli=dict(type="str", default="gluster"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    wanted, errors = desired_cluster_options(p["brick_multiplex"], p["max_bricks_per_process"],
                                             p["vol_count_per_thread"])
    if errors:
        module.fail_json(msg="invalid parameters: " + "; ".join(errors), errors=errors)
    if p["vol_count_per_thread"] is not None and p["vol_count_per_thread"] > VOL_COUNT_THREADING_OFF_ABOVE:
        module.warn(f"vol_count_per_thread={p['vol_count_per_thread']} is above {VOL_COUNT_THREADING_OFF_ABOVE}: "
                    "glusterd then builds the handshake dictionary in a single thread (no speed-up)")

    cli = GlusterCLI(p["gluster_cli"])
    before: dict[str, dict] = {}
    try:
        # Multiplex is read even when not managed: the other two depend on it.
        for option in [BRICK_MULTIPLEX] + [o for o in wanted if o != BRICK_MULTIPLEX]:
            before.update(parse_volume_get(cli.check("volume", "get", "all", option)))
    except GlusterError as exc:
        module.fail_json(msg=f"{exc}; is glusterd running, and gluster_cli={p['gluster_cli']!r} right?")
    missing = [o for o in [BRICK_MULTIPLEX, *wanted] if o not in before]
    if missing:
        module.fail_json(msg=f"this glusterd does not know {missing} (GlusterFS 7 or later is needed)", before=before)

    multiplex_before = is_true(before[BRICK_MULTIPLEX]["value"])
    multiplex_after = is_true(wanted.get(BRICK_MULTIPLEX, before[BRICK_MULTIPLEX]["value"]))
    changes = {o: v for o, v in wanted.items() if not same_option_value(o, before[o]["value"], v)}
    # Set while multiplex is on: before it is turned off, or after it is turned on.
    needs_multiplex = [o for o in changes if o != BRICK_MULTIPLEX]
    if needs_multiplex and not (multiplex_before or multiplex_after):
        fields = [f for f, o in (("max_bricks_per_process", "cluster.max-bricks-per-process"),
                                 ("vol_count_per_thread", VOL_COUNT_PER_THREAD)) if o in needs_multiplex]
        # unchanged values are fine: only a change is refused by glusterd
        module.fail_json(msg=f"{' and '.join(fields)} can only be set while cluster.brick-multiplex is on "
                             "(glusterd refuses otherwise): add brick_multiplex: true or drop "
                             f"{' and '.join(fields)}", before=before)

    # Multiplex first: the others are refused until it is on, and turning it off last keeps them valid.
    order = sorted(changes, key=lambda o: (o != BRICK_MULTIPLEX) == multiplex_after)
    if not module.check_mode:
        for option in order:
            try:
                cli.check("volume", "set", "all", option, changes[option], retries=8)
            except GlusterError as exc:
                module.fail_json(msg=f"setting {option}={changes[option]} failed: {exc}", before=before,
                                 changed=bool(changes), changed_options=changes)
    after = {o: before[o]["value"] for o in before}
    after.update(changes)
    result = dict(changed=bool(changes), options=after, before=before, changed_options=changes)
    if module._diff:
        result["diff"] = {
            "before": "".join(f"{o}: {before[o]['value']}\n" for o in sorted(before)),
            "after": "".join(f"{o}: {after[o]}\n" for o in sorted(after)),
        }
    module.exit_json(**result)


if __name__ == "__main__":
    main()
