# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which cluster goes in which wave.

`waves` reads as Ansible's `serial` list, which the users of a rollout already know from rolling updates:
each entry is a batch size, an integer or a percentage of the whole fleet ("25%" of 8 clusters is 2; never
less than 1), and the last entry repeats until every cluster has a wave. A named canary group replaces the
first entry: its members, in the group's order, are wave 1, and the other entries size the waves of the rest.

    plan(["a", "b", "c", "d"], [1, "50%", "100%"])          -> [["a"], ["b", "c"], ["d"]]
    plan(["a", "b", "c", "d"], [1, "100%"], canary=["c"])   -> [["c"], ["a", "b", "d"]]
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

DEFAULT_WAVES = (1, "25%", "100%")
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


class WavesError(StoragePerfError):
    pass


def batch_size(entry: object, total: int, index: int) -> int:
    """One entry of `waves` as a number of clusters; `index` names the entry in the error."""
    where = "waves[%d]" % index
    if isinstance(entry, bool):
        raise WavesError("%s is %r: give a number of clusters (1) or a share of the fleet (\"25%%\")" % (where, entry))
    if isinstance(entry, int) or (isinstance(entry, str) and entry.strip().isdigit()):
        size = int(entry)
        if size < 1:
            raise WavesError("%s is %s: a wave holds at least 1 cluster" % (where, size))
        return size
    match = _PERCENT.match(entry) if isinstance(entry, str) else None
    if not match:
        raise WavesError("%s is %r: give a number of clusters (1) or a share of the fleet (\"25%%\")" % (where, entry))
    share = float(match.group(1))
    if not 0 < share <= 100:
        raise WavesError("%s is %s%%: a share of the fleet is more than 0%% and at most 100%%" % (where, match.group(1)))
    # as Ansible's serial: the share of the whole fleet rounded down, at least one cluster
    return max(1, int(total * share / 100.0))


def plan(clusters: Iterable[str], waves: Sequence[int | str] | None = DEFAULT_WAVES, canary: Sequence[str] = ()) -> list[list[str]]:
    """The waves, each a list of cluster names in the order given; every cluster in exactly one wave."""
    clusters = list(dict.fromkeys(clusters))
    if not clusters:
        raise WavesError("no cluster to roll out to: the cluster group is empty")
    if waves is None:
        waves = DEFAULT_WAVES
    if not waves:
        raise WavesError("waves is empty: give the wave sizes, e.g. [1, \"25%\", \"100%\"], or leave waves out for "
                         "that default")
    waves = list(waves)
    unknown = [c for c in canary if c not in clusters]
    if unknown:
        raise WavesError("canary names %s, which the cluster group does not hold (%s): name clusters of the group"
                         % (", ".join(unknown), ", ".join(clusters)))
    sizes = [batch_size(w, len(clusters), i) for i, w in enumerate(waves)]
    out, rest = [], clusters
    if canary is None:
        canary = ()
    if canary:
        first = list(dict.fromkeys(canary))
        out.append(first)
        rest = [c for c in clusters if c not in first]
        sizes = sizes[1:] or sizes
    i = 0
    while rest:
        size = sizes[min(i, len(sizes) - 1)]
        out.append(rest[:size])
        rest = rest[size:]
        i += 1
    return out
