"""The Accept header's media ranges, as kube-apiserver reads them (goautoneg.ParseAccept).

Both the /openapi/v2 handler and aggregated discovery negotiate on them: a clause's parameters (g, v, as)
name the document a client asks for, so they are kept with the range.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MediaRange:
    type: str
    subtype: str
    params: dict[str, str] = field(default_factory=dict)
    q: float = 1.0

    def matches(self, typ: str, subtype: str) -> bool:
        """Whether this range admits the concrete media type typ/subtype (kube's three cases: exact, typ/*, */*)."""
        return (self.type == typ and self.subtype in (subtype, "*")) or (self.type == "*" and self.subtype == "*")


def media_ranges(accept: str) -> list[MediaRange]:
    """The header's ranges, best first: by q, then concrete before a `*` type, then before a `*` subtype, else in the
    order written (goautoneg sorts so; its insertion sort keeps equal ranges in order for short headers)."""
    ranges = []
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        if not fields[0]:
            continue
        q, params = 1.0, {}
        for f in fields[1:]:
            key, _, value = f.partition("=")
            key, value = key.strip(), value.strip()
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            elif key:
                params[key] = value
        typ, _, sub = fields[0].partition("/")
        ranges.append(MediaRange(typ, sub or "*", params, q))
    return sorted(ranges, key=lambda r: (-r.q, r.type == "*", r.subtype == "*"))
