# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""glusterd's cluster-wide options (gluster_cluster_options): read each, set only those that differ, in
an order glusterd accepts (the options that need brick multiplexing are set while it is on)."""
from __future__ import annotations

from typing import Callable

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    BRICK_MULTIPLEX,
    MAX_BRICKS_PER_PROCESS,
    VOL_COUNT_PER_THREAD,
    VOL_COUNT_THREADING_OFF_ABOVE,
    GlusterCLI,
    GlusterError,
    desired_cluster_options,
    is_true,
    parse_volume_get,
    read_pool,
    same_option_value,
)

# The module option that sets each gluster option needing multiplex, for messages.
NEEDS_MULTIPLEX = (("max_bricks_per_process", MAX_BRICKS_PER_PROCESS), ("vol_count_per_thread", VOL_COUNT_PER_THREAD))


def set_cluster_options(p: dict, check_mode: bool = False, diff: bool = False,
                        warn: Callable[[str], None] | None = None) -> dict:
    """Bring the managed options to p's values; the module's result. Refuses, before any write, what
    glusterd would refuse halfway."""
    wanted, errors = desired_cluster_options(p["brick_multiplex"], p["max_bricks_per_process"],
                                             p["vol_count_per_thread"])
    if errors:
        raise GlusterError("invalid parameters: " + "; ".join(errors), errors=errors)
    if warn is not None and (p["vol_count_per_thread"] or 0) > VOL_COUNT_THREADING_OFF_ABOVE:
        warn(f"vol_count_per_thread={p['vol_count_per_thread']} is above {VOL_COUNT_THREADING_OFF_ABOVE}: "
             "glusterd then builds the handshake dictionary in a single thread (no speed-up)")

    cli = GlusterCLI(p["gluster_cli"])
    before: dict[str, dict] = {}
    # Multiplex is read even when not managed: the other two depend on it.
    for option in [BRICK_MULTIPLEX] + [o for o in wanted if o != BRICK_MULTIPLEX]:
        before.update(parse_volume_get(read_pool(cli, "volume", "get", "all", option)))
    missing = [o for o in [BRICK_MULTIPLEX, *wanted] if o not in before]
    if missing:
        raise GlusterError(f"this glusterd does not know {missing} (GlusterFS 7 or later is needed)",
                           result=dict(before=before))

    multiplex_after = is_true(wanted.get(BRICK_MULTIPLEX, before[BRICK_MULTIPLEX]["value"]))
    changes = {o: v for o, v in wanted.items() if not same_option_value(o, before[o]["value"], v)}
    _check_multiplex(changes, is_true(before[BRICK_MULTIPLEX]["value"]) or multiplex_after, before)
    # Multiplex first: the others are refused until it is on, and turning it off last keeps them valid.
    order = sorted(changes, key=lambda o: (o != BRICK_MULTIPLEX) == multiplex_after)
    if not check_mode:
        for option in order:
            try:
                cli.check("volume", "set", "all", option, changes[option], retries=8)
            except GlusterError as exc:
                raise GlusterError(f"setting {option}={changes[option]} failed: {exc}", result=dict(
                    before=before, changed=bool(changes), changed_options=changes)) from exc
    after = {o: before[o]["value"] for o in before}
    after.update(changes)
    result = dict(changed=bool(changes), options=after, before=before, changed_options=changes)
    if diff:
        result["diff"] = {"before": "".join(f"{o}: {before[o]['value']}\n" for o in sorted(before)),
                          "after": "".join(f"{o}: {after[o]}\n" for o in sorted(after))}
    return result


def _check_multiplex(changes: dict, multiplex_on_at_some_point: bool, before: dict) -> None:
    # Only a change is refused by glusterd: unchanged values are fine whatever multiplex is.
    fields = [field for field, option in NEEDS_MULTIPLEX if option in changes]
    if fields and not multiplex_on_at_some_point:
        raise GlusterError(f"{' and '.join(fields)} can only be set while cluster.brick-multiplex is on "
                           "(glusterd refuses otherwise): add brick_multiplex: true or drop "
                           f"{' and '.join(fields)}", result=dict(before=before))
