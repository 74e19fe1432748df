# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sizes of a scaling sweep (csi_lifecycle `sweep`: volume counts), checked before anything is created."""
from __future__ import annotations

from typing import Any, Iterable, Sequence


EXAMPLE = "[10, 100, 1000]"


def sizes_problem(sizes: Sequence[Any] | None, name: str = "sweep") -> str | None:
    """None when `sizes` can be swept, else what is wrong, naming `name` and the fix.

    Sizes are volume counts: whole numbers of at least 1, each once, at least two of them (one size is
    the plain benchmark: set volumes). Their order does not matter: the sweep runs them ascending.
    """
    if not sizes:
        return None
    bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, int) or s < 1]
    if bad:
        return ("%s %s: every size must be a whole number of volumes of at least 1, not %s; e.g. %s: %s"
                % (name, _text(sizes), ", ".join(repr(s) for s in bad), name, EXAMPLE))
    twice = sorted({s for s in sizes if sizes.count(s) > 1})
    if twice:
        return ("%s %s: each size once, %s given more than once; e.g. %s: %s"
                % (name, _text(sizes), ", ".join(str(s) for s in twice), name, EXAMPLE))
    if len(sizes) < 2:
        return ("%s %s: a sweep needs at least two sizes (for one size set volumes instead and leave %s empty); "
                "e.g. %s: %s" % (name, _text(sizes), name, name, EXAMPLE))
    return None


def ordered(sizes: Iterable[Any] | None) -> list[int]:
    """The sizes ascending: the order the sweep measures and the report draws them in."""
    return sorted(int(s) for s in sizes or ())


def _text(sizes: Iterable[Any]) -> str:
    return "[%s]" % ", ".join(str(s) for s in sizes)
