"""CronJob schedule parsing and the missed-start-time arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kcm.controllers.cronjob import (
    MAX_MISSED,
    ScheduleError,
    job_name_for,
    most_recent_time,
    parse_schedule,
    resolve_time_zone,
)

UTC_TZ = resolve_time_zone(None)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_most_recent_time_and_count() -> None:
    every5 = parse_schedule("*/5 * * * *", UTC_TZ)
    latest, count = most_recent_time(every5, T0, T0 + timedelta(minutes=12))
    assert latest == T0 + timedelta(minutes=10)
    assert count == 2
    assert most_recent_time(every5, T0, T0 + timedelta(minutes=4)) == (None, 0)


def test_too_many_missed_is_capped_but_still_reports_the_latest() -> None:
    minutely = parse_schedule("* * * * *", UTC_TZ)
    now = T0 + timedelta(days=2, seconds=30)
    latest, count = most_recent_time(minutely, T0, now)
    assert latest == T0 + timedelta(days=2)
    assert count == MAX_MISSED + 1


def test_descriptors_and_time_zones() -> None:
    hourly = parse_schedule("@hourly", UTC_TZ)
    assert hourly.next_after(T0) == T0 + timedelta(hours=1)
    ny = parse_schedule("0 9 * * *", resolve_time_zone("America/New_York"))
    assert ny.next_after(T0).astimezone(UTC) == datetime(2026, 1, 1, 14, tzinfo=UTC)
    # Summer time: 09:00 EDT is 13:00 UTC.
    july = datetime(2026, 7, 1, tzinfo=UTC)
    assert ny.next_after(july).astimezone(UTC) == datetime(2026, 7, 1, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    "bad", ["not a cron", "* * * *", "61 * * * *", "@every 1m", "CRON_TZ=UTC * * * * *"]
)
def test_bad_schedules_are_rejected(bad: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(bad, UTC_TZ)


def test_unknown_time_zone() -> None:
    with pytest.raises(ScheduleError, match="Mars/Olympus"):
        resolve_time_zone("Mars/Olympus")


def test_job_name_is_minutes_since_epoch() -> None:
    assert job_name_for("cj", T0 + timedelta(minutes=1)) == f"cj-{int(T0.timestamp()) // 60 + 1}"
