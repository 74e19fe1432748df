"""The cron schedule syntax of CronJob spec.schedule: robfig/cron v3's ParseStandard (five fields or a
descriptor, an optional TZ=/CRON_TZ= prefix), with its error messages, which the API server returns verbatim."""
from __future__ import annotations

import re
import zoneinfo

# (minimum, maximum, names) of minute, hour, day of month, month, day of week
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 23, {}), (1, 31, {}),
    (1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    (0, 6, {d: i for i, d in enumerate(_WEEKDAYS)}))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_GO_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$")


def _int(expr: str) -> int:
    if not re.fullmatch(r"[-+]?\d+", expr):
        raise ValueError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    n = int(expr)
    if n < 0:
        raise ValueError(f"negative number ({n}) not allowed: {expr}")
    return n


def _value(expr: str, names: dict[str, int]) -> int:
    return names[expr.lower()] if expr.lower() in names else _int(expr)


def _range(expr: str, lo: int, hi: int, names: dict[str, int]) -> None:
    range_step = expr.split("/")
    low_high = range_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start = _value(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _value(low_high[1], names)
        else:
            raise ValueError(f"too many hyphens: {expr}")
    step = 1
    if len(range_step) == 2:
        step = _int(range_step[1])
        if len(low_high) == 1:
            end = hi
    elif len(range_step) > 2:
        raise ValueError(f"too many slashes: {expr}")
    if start < lo:
        raise ValueError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise ValueError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise ValueError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ValueError(f"step of range should be a positive number: {expr}")


def parse_error(spec: str) -> str | None:
    """None for a schedule ParseStandard accepts, else its error text."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        i = spec.find(" ")
        eq = spec.find("=")
        loc = spec[eq + 1:i if i >= 0 else len(spec)]
        try:
            zoneinfo.ZoneInfo(loc)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return f"provided bad location {loc}: unknown time zone {loc}"
        spec = spec[i:].strip() if i >= 0 else ""
    if spec.startswith("@"):
        if spec.startswith("@every "):
            dur = spec[len("@every "):]
            return None if _GO_DURATION.match(dur) else f'failed to parse duration {spec}: time: invalid duration "{dur}"'
        return None if spec in _DESCRIPTORS else f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    try:
        for text, (lo, hi, names) in zip(fields, _FIELDS):
            for expr in text.split(","):
                _range(expr, lo, hi, names)
    except ValueError as e:
        return str(e)
    return None


def time_zone_error(tz: str) -> str | None:
    """batch validation's validateTimeZone: time.LoadLocation's verdict on an IANA name."""
    if tz == "":
        return "timeZone must be nil or non-empty string"
    if tz.lower() == "local":
        return "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {tz}"
    return None
