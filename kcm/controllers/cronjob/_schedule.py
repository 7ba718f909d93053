"""Cron schedules: parsing (standard 5 fields, ``@hourly``-style descriptors via croniter, and
``@every <duration>``), the default time zone, and the scheduling arithmetic of
kube-controller-manager's CronJob controller."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

__all__ = [
    "MAX_MISSED",
    "Schedule",
    "ScheduleError",
    "local_time_zone",
    "most_recent_time",
    "parse_go_duration",
    "parse_schedule",
    "resolve_time_zone",
]

MAX_MISSED = 100
"""More missed start times than this give a ``TooManyMissedTimes`` warning."""

_DESCRIPTORS = {
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
}
_EVERY = "@every "
_UTC = ZoneInfo("UTC")


class ScheduleError(ValueError):
    """A schedule that cannot be parsed (or uses an unsupported form)."""


_GO_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,  # micro sign
    "\u03bcs": 1e-6,  # Greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string (``time.ParseDuration``): ``"90s"``, ``"1h30m"``,
    ``"1.5h"``, ``"-2m"``, ``"0"``.

    Raises:
        ScheduleError: not a Go duration (a missing unit, an unknown unit, empty).
    """
    s = text
    sign = 1.0
    if s[:1] in ("+", "-"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ScheduleError(f"invalid duration {text!r}")
    total = 0.0
    pos = 0
    while pos < len(s):
        match = _GO_PART.match(s, pos)
        if match is None:
            raise ScheduleError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    return sign * total


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule evaluated in ``tz``: a cron ``expression``, or (``every`` set) a
    constant delay in whole seconds (``@every <duration>``, robfig/cron's
    ``ConstantDelaySchedule``), counted from the CronJob's creation or last start."""

    expression: str
    tz: tzinfo
    every: float | None = None

    def next_after(self, t: datetime) -> datetime:
        """The first start time strictly after ``t`` (for ``@every``: ``t`` cut to the
        second, plus the delay)."""
        if self.every is not None:
            return t.replace(microsecond=0) + timedelta(seconds=self.every)
        it = croniter(self.expression, t.astimezone(self.tz))
        result: datetime = it.get_next(datetime)
        return result

    def prev_at_or_before(self, t: datetime) -> datetime:
        """The latest start time at or before ``t`` (cron expressions only).

        Raises:
            ScheduleError: an ``@every`` schedule (its start times depend on where it
                starts counting; see :func:`most_recent_time`).
        """
        if self.every is not None:
            raise ScheduleError("an @every schedule has no start times of its own")
        local = t.astimezone(self.tz)
        if croniter.match(self.expression, local) and local.second == 0 and not local.microsecond:
            return local
        it = croniter(self.expression, local)
        result: datetime = it.get_prev(datetime)
        return result


def _zone(name: str) -> tzinfo:
    if name.startswith("/"):
        with open(name, "rb") as f:
            return ZoneInfo.from_file(f, key=name)
    return ZoneInfo(name)


def local_time_zone() -> tzinfo:
    """The process's local time zone, found as Go's ``time.Local`` (what kube-controller-
    manager evaluates a CronJob without ``spec.timeZone`` in): ``$TZ`` when set (an IANA
    name or a file path, ``:`` prefix allowed; empty, ``UTC`` or unknown means UTC), else
    ``/etc/localtime``, else the fixed offset the C library reports now."""
    tz = os.environ.get("TZ")
    if tz is not None:
        name = tz.removeprefix(":")
        if name in ("", "UTC"):
            return _UTC
        try:
            return _zone(name)
        except (OSError, ZoneInfoNotFoundError, ValueError):
            return _UTC
    try:
        return _zone("/etc/localtime")
    except (OSError, ZoneInfoNotFoundError, ValueError):
        return datetime.now().astimezone().tzinfo or _UTC


def resolve_time_zone(name: str | None, *, default: tzinfo = _UTC) -> tzinfo:
    """``spec.timeZone`` as a tzinfo; ``default`` when unset (the controller passes its
    default zone, the local one unless configured).

    Raises:
        ScheduleError: an unknown time zone name.
    """
    if not name:
        return default
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name!r}") from exc


def parse_schedule(expression: str, tz: tzinfo) -> Schedule:
    """Parse a standard cron schedule (5 fields), a descriptor such as ``@hourly``, or
    ``@every <Go duration>`` (rounded down to whole seconds, at least 1 s), as
    robfig/cron's ``ParseStandard``.

    Raises:
        ScheduleError: the expression is not valid, or uses ``TZ=``/``CRON_TZ=`` (use
            ``spec.timeZone``; the message then says "not supported").
    """
    text = expression.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise ScheduleError("CRON_TZ or TZ used in schedule is not supported; use spec.timeZone")
    if text.startswith(_EVERY):
        seconds = parse_go_duration(text[len(_EVERY) :].strip())
        return Schedule(text, tz, every=float(max(1, math.floor(seconds))))
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor {text!r}")
    elif len(text.split()) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(text.split())}: {text!r}")
    if not croniter.is_valid(text):
        raise ScheduleError(f"invalid cron expression {text!r}")
    return Schedule(text, tz)


def most_recent_time(
    schedule: Schedule, earliest: datetime, now: datetime
) -> tuple[datetime | None, int]:
    """The latest start time in ``(earliest, now]`` and how many start times fell in that
    window (counting stops at ``MAX_MISSED + 1``).

    Returns:
        ``(None, 0)`` when no start time is due.
    """
    if earliest > now:
        return None, 0
    first = schedule.next_after(earliest)
    if first > now:
        return None, 0
    if schedule.every is not None:
        count = int((now - first).total_seconds() // schedule.every) + 1
        latest = first + timedelta(seconds=schedule.every * (count - 1))
        return latest, min(count, MAX_MISSED + 1)
    latest = schedule.prev_at_or_before(now)
    count = 1
    t = first
    while count <= MAX_MISSED:
        t = schedule.next_after(t)
        if t > now:
            break
        count += 1
    return latest, count
