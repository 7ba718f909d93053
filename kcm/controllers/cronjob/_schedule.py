"""Cron schedules: parsing (standard 5 fields and ``@hourly``-style descriptors, via croniter)
and the scheduling arithmetic of kube-controller-manager's CronJob controller."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

__all__ = [
    "MAX_MISSED",
    "Schedule",
    "ScheduleError",
    "most_recent_time",
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


class ScheduleError(ValueError):
    """A schedule that cannot be parsed (or uses an unsupported form)."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule evaluated in ``tz``."""

    expression: str
    tz: tzinfo

    def next_after(self, t: datetime) -> datetime:
        """The first start time strictly after ``t``."""
        it = croniter(self.expression, t.astimezone(self.tz))
        result: datetime = it.get_next(datetime)
        return result

    def prev_at_or_before(self, t: datetime) -> datetime:
        """The latest start time at or before ``t``."""
        local = t.astimezone(self.tz)
        if croniter.match(self.expression, local) and local.second == 0 and not local.microsecond:
            return local
        it = croniter(self.expression, local)
        result: datetime = it.get_prev(datetime)
        return result


def resolve_time_zone(name: str | None) -> tzinfo:
    """``spec.timeZone`` as a tzinfo (UTC when unset).

    Raises:
        ScheduleError: an unknown time zone name.
    """
    if not name:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name!r}") from exc


def parse_schedule(expression: str, tz: tzinfo) -> Schedule:
    """Parse a standard cron schedule (5 fields) or a descriptor such as ``@hourly``.

    Raises:
        ScheduleError: the expression is not valid, uses ``TZ=``/``CRON_TZ=`` (use
            ``spec.timeZone``), or is a form croniter does not support (``@every``).
    """
    text = expression.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        raise ScheduleError("CRON_TZ or TZ used in schedule is not supported; use spec.timeZone")
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unsupported descriptor {text!r}")
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
    latest = schedule.prev_at_or_before(now)
    count = 1
    t = first
    while count <= MAX_MISSED:
        t = schedule.next_after(t)
        if t > now:
            break
        count += 1
    return latest, count
