# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Edit "A=true,B=false" feature-gate strings without losing or reordering anyone else's gates.

The string is kept as a list of entries, each with its original text, so that a merge changes only the
gates it was asked about: others keep their position and spelling ("True", "1", even a malformed entry the
component would reject is passed through untouched rather than dropped). Values are read as Go's
strconv.ParseBool reads them, because the CSI components parse the flag with k8s.io/component-base; when a
name appears twice the last one wins, as there.
"""
from __future__ import annotations


from typing import Iterable, Mapping

TRUE_VALUES = ("1", "t", "T", "TRUE", "true", "True")
FALSE_VALUES = ("0", "f", "F", "FALSE", "false", "False")


def _entries(text: str | None) -> list[tuple[str, str | None, str]]:
    """[(name, value or None, original text)] for every non-empty comma-separated entry."""
    out = []
    for part in str(text or "").split(","):
        raw = part.strip()
        if not raw:
            continue
        name, eq, value = raw.partition("=")
        out.append((name.strip(), value.strip() if eq else None, raw))
    return out


def _render(entries: Iterable[tuple[str, str | None, str]]) -> str:
    return ",".join(raw for _name, _value, raw in entries)


def to_bool(value: str | None) -> bool | None:
    """True, False, or None for a value component-base would not accept."""
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    return None


def parse(text: str | None) -> dict[str, bool | None]:
    """{name: bool or None} with the last entry of a name winning; None marks a value that is not a bool."""
    out = {}
    for name, value, _raw in _entries(text):
        out[name] = to_bool(value)
    return out


def names(text: str | None) -> list[str]:
    """Gate names in first-appearance order."""
    seen = []
    for name, _value, _raw in _entries(text):
        if name not in seen:
            seen.append(name)
    return seen


def merge(text: str | None, wanted: Mapping[str, object]) -> str:
    """Set the gates in `wanted` ({name: bool}, applied in its iteration order) and keep everything else.

    A gate that already has the wanted meaning keeps its text; one with another value is rewritten where it
    stands (every occurrence, so the last-wins reading agrees); a missing one is appended. Returns the new
    string; merge(merge(s, w), w) == merge(s, w).
    """
    entries = _entries(text)
    current = parse(text)
    changed = False
    for name, want in wanted.items():
        want = bool(want)
        rendered = "%s=%s" % (name, "true" if want else "false")
        if name not in current:
            entries.append((name, "true" if want else "false", rendered))
        elif current[name] is not want:
            entries = [(n, ("true" if want else "false"), rendered) if n == name else (n, v, r)
                       for n, v, r in entries]
        else:
            continue
        current[name] = want
        changed = True
    # nothing to change: hand back the text itself, so spacing alone never counts as a change
    return _render(entries) if changed else str(text or "")


def remove(text: str | None, gates: Iterable[str]) -> str:
    """Drop every entry of the named gates; everything else stays as it was."""
    gates = set(gates)
    entries = _entries(text)
    kept = [e for e in entries if e[0] not in gates]
    return _render(kept) if len(kept) != len(entries) else str(text or "")


def changes(before: str | None, after: str | None) -> dict[str, tuple[bool | None, bool | None]]:
    """{name: (old, new)} for gates whose meaning differs between two strings (None: absent or not a bool)."""
    a, b = parse(before), parse(after)
    return {n: (a.get(n), b.get(n)) for n in sorted(set(a) | set(b))
            if (n in a, a.get(n)) != (n in b, b.get(n))}
