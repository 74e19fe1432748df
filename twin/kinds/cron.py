"""The cron schedule syntax of CronJob spec.schedule: robfig/cron v3's ParseStandard (five fields or a
descriptor, an optional TZ=/CRON_TZ= prefix), with its error messages, which the API server returns verbatim, and
the parsed schedule's Next (spec.go), which the CronJob controller runs on.

No cron package is pinned here, and the ones at hand differ from robfig where it matters to a CronJob: APScheduler
(pulled in by alibabacloud-credentials) numbers weekdays from Monday and ANDs day-of-month with day-of-week, where
robfig ORs them unless one of them is `*`."""
from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta, UTC

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


def _range(expr: str, lo: int, hi: int, names: dict[str, int]) -> tuple[int, bool]:
    """getRange: (the bits of the values, whether the field is a star: `*`, `?` or `*/1`)."""
    range_step = expr.split("/")
    low_high = range_step[0].split("-")
    star = False
    if low_high[0] in ("*", "?"):
        start, end = lo, hi
        star = True
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
    return sum(1 << i for i in range(start, end + 1, step)), star and step == 1


def parse_error(spec: str) -> str | None:
    """None for a schedule ParseStandard accepts, else its error text."""
    try:
        parse(spec)
    except ValueError as e:
        return str(e)
    return None


_ALL = (2 ** 60 - 1, 2 ** 24 - 1, 2 ** 32 - 2, 2 ** 13 - 2, 2 ** 7 - 1)
_DESCRIBED = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
              "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the bits of minute, hour, day of month, month, day of week; whether day of month / day
    of week is a star; the location (None: the controller's, UTC); `every` for `@every <duration>`."""
    bits: tuple[int, int, int, int, int] = _ALL
    dom_star: bool = True
    dow_star: bool = True
    location: str | None = None
    every: float = 0.0

    def next(self, t: datetime) -> datetime | None:
        """SpecSchedule.Next: the first activation after t (aware), or None when none comes within five years."""
        if self.every:
            whole = t.replace(microsecond=0)
            return whole + timedelta(seconds=max(self.every, 1.0))
        loc = zoneinfo.ZoneInfo(self.location) if self.location else UTC
        minute, hour, dom, month, dow = self.bits
        # robfig starts at the next second and, the seconds field being 0, moves on to the next whole minute
        t = _absolute(t.astimezone(loc).replace(second=0, microsecond=0), timedelta(minutes=1))
        year_limit = t.year + 5
        # walk down the fields as spec.go does, wrapping back to the top when a field overflows
        while t.year <= year_limit:
            if not (month >> t.month) & 1:
                t = _at(loc, t.year + (t.month == 12), t.month % 12 + 1, 1, 0, 0)
                continue
            dom_ok, dow_ok = (dom >> t.day) & 1, (dow >> ((t.weekday() + 1) % 7)) & 1
            if not ((dom_ok and dow_ok) if self.dom_star or self.dow_star else (dom_ok or dow_ok)):
                t = _at(loc, t.year, t.month, t.day, 0, 0) + timedelta(days=1)
                t = _at(loc, t.year, t.month, t.day, 0, 0)
                continue
            if not (hour >> t.hour) & 1:
                t = _absolute(_at(loc, t.year, t.month, t.day, t.hour, 0), timedelta(hours=1))
                continue
            if not (minute >> t.minute) & 1:
                t = _absolute(t, timedelta(minutes=1))
                continue
            return t
        return None


def _at(loc, year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    """time.Date: a wall time in loc, normalised through UTC (a time that DST skips moves forward)."""
    return datetime(year, month, day, hour, minute, tzinfo=loc).astimezone(UTC).astimezone(loc)


def _absolute(t: datetime, d: timedelta) -> datetime:
    """time.Add: an elapsed duration, not a wall-clock one."""
    return (t.astimezone(UTC) + d).astimezone(t.tzinfo)


def parse(spec: str) -> Schedule:
    """ParseStandard; ValueError with robfig's message."""
    if not spec:
        raise ValueError("empty spec string")
    location = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        i = spec.find(" ")
        eq = spec.find("=")
        loc = spec[eq + 1:i if i >= 0 else len(spec)]
        try:
            zoneinfo.ZoneInfo(loc)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"provided bad location {loc}: unknown time zone {loc}") from None
        location = loc
        spec = spec[i:].strip() if i >= 0 else ""
    if spec.startswith("@"):
        if spec.startswith("@every "):
            dur = spec[len("@every "):]
            if not _GO_DURATION.match(dur):
                raise ValueError(f'failed to parse duration {spec}: time: invalid duration "{dur}"')
            return Schedule(location=location, every=_seconds(dur))
        if spec not in _DESCRIPTORS:
            raise ValueError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIBED[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ValueError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    bits, stars = [], []
    for text, (lo, hi, names) in zip(fields, _FIELDS):
        field, star = 0, False
        for expr in text.split(","):
            b, s = _range(expr, lo, hi, names)
            field |= b
            star = star or s
        bits.append(field)
        stars.append(star)
    return Schedule(bits=(bits[0], bits[1], bits[2], bits[3], bits[4]), dom_star=stars[2], dow_star=stars[4],
                    location=location)


def _seconds(duration: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    sign = -1.0 if duration.startswith("-") else 1.0
    return sign * sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", duration))


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
